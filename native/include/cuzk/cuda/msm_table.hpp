// G1 MSM over a fixed, device-resident point set with precomputed shifted
// copies (issue 14: the H MSM).
//
// A scalar s_i is cut into k = ceil(256 / c) signed c-bit digits d_iw
// (|d_iw| <= 2^(c-1)), s_i = sum_w d_iw 2^(c w). With all k levels stored
// (level j: the affine points 2^(c j) P_i), s_i P_i = sum_w d_iw (2^(c w)
// P_i): every term lands in one set of 2^(c-1) buckets, with no per-window
// buckets, no window doubling and one bucket reduction. With fewer levels
// (memory), each level 2^(c r j) P_i serves r consecutive windows, each
// with its own bucket set, and the r window sums are combined on the host
// (Horner, r - 1 times c doublings). Level 0 is the point set itself. The
// terms are sorted by bucket (CUB's radix sort) and summed in equal
// shares by every thread, so the work stays balanced whatever the digits'
// distribution. Scalars are taken in equal passes of at most 2^28 terms,
// all summed into the same buckets.
//
// Costs: levels - 1 times the points' device memory for the table, and
// 16 bytes a term of a pass for the sort plus 192 bytes a bucket, all
// allocated with the table. Calls on one table run one at a time (the
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
    // Device bytes a table over n points with this width (0: the default)
    // and at most `levels` levels (0: all k) takes, working buffers
    // included.
    static uint64_t bytes_for(size_t n, unsigned window_bits, unsigned levels = 0) noexcept;
    // The most levels whose table fits in `budget` bytes; 0 when none does.
    static unsigned levels_within(size_t n, unsigned window_bits, uint64_t budget) noexcept;

    // Builds the table from points[0..points.size()) on their device (the
    // caller holds the device's lock); window_bits 0 = default_window_bits,
    // levels 0 = all, pass_terms 0 = 2^28 (fewer: more passes, for tests).
    // `points` is level 0: it must outlive the table. Throws cuda_error_t
    // (out of memory, say) or std::invalid_argument.
    cuda_msm_table_t(const cuda_points_t& points, unsigned window_bits = 0, unsigned levels = 0,
                     uint64_t pass_terms = 0);
    ~cuda_msm_table_t();
    cuda_msm_table_t(const cuda_msm_table_t&) = delete;
    cuda_msm_table_t& operator=(const cuda_msm_table_t&) = delete;

    size_t size() const noexcept;
    unsigned window_bits() const noexcept;
    // Levels stored, the point set included (windows_for(c) when all).
    unsigned levels() const noexcept;
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
