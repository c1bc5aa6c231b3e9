// G1 MSM over a fixed, device-resident point set with precomputed shifted
// copies (issue 14: the H MSM).
//
// For window width c the table holds, for every point P_i and every window
// j < k = ceil(256 / c), the affine point 2^(c j) P_i. A scalar s_i is cut
// into k signed c-bit digits d_ij (|d_ij| <= 2^(c-1)), so that
// s_i P_i = sum_j d_ij (2^(c j) P_i): every (i, j) term lands in one set of
// 2^(c-1) buckets, with no per-window buckets, no window doubling and one
// bucket reduction. The terms are sorted by digit (CUB's radix sort) and
// summed in equal shares by every thread, so the work stays balanced
// whatever the digits' distribution.
//
// Costs: k (~11-16) times the points' device memory for the table, and per
// call about 16 k bytes a scalar of sort buffers plus 192 bytes a bucket,
// all allocated with the table. Calls on one table run one at a time (the
// kernel region holds the device's lock; the table also has its own mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <blst.h>

#include "cuzk/cuda/device.hpp"
#include "cuzk/cuda/ntt.hpp"
#include "cuzk/cuda/points.hpp"

namespace cuzk {

class cuda_msm_table_t {
public:
    // Window widths accepted (the bucket index must fit the sort's keys and
    // a table index 31 bits).
    static constexpr unsigned min_window_bits = 4;
    static constexpr unsigned max_window_bits = 26;

    // The width cuzk picks for n scalars (tuned on the H200: docs/cuda.md).
    static unsigned default_window_bits(size_t n) noexcept;
    // Windows per scalar: ceil(256 / c) (255-bit scalars plus the carry of
    // the signed digits).
    static unsigned windows_for(unsigned window_bits) noexcept;
    // Device bytes a table over n points with this width takes, working
    // buffers included.
    static uint64_t bytes_for(size_t n, unsigned window_bits) noexcept;

    // Builds the table from points[0..points.size()) on their device (the
    // caller holds the device's lock); window_bits 0 = default_window_bits.
    // Throws cuda_error_t (out of memory, say) or std::invalid_argument.
    cuda_msm_table_t(const cuda_points_t& points, unsigned window_bits = 0);
    ~cuda_msm_table_t();
    cuda_msm_table_t(const cuda_msm_table_t&) = delete;
    cuda_msm_table_t& operator=(const cuda_msm_table_t&) = delete;

    size_t size() const noexcept;
    unsigned window_bits() const noexcept;
    uint64_t bytes() const noexcept;
    cuda_device_t& device() const noexcept;

    // out = sum(scalars[i] * P_i) for i < n <= size(), the scalars in
    // Montgomery form on the table's device. n = 0 gives infinity.
    void msm(blst_p1& out, const cuda_fr_buffer_t& scalars, size_t n) const;

    struct impl_t;

private:
    std::unique_ptr<impl_t> impl_;
};

}  // namespace cuzk
