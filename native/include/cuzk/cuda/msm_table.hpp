// G1 MSM over a fixed, device-resident point set with precomputed shifted
// copies (issue 14: the H MSM).
//
// A scalar s_i is cut into K signed digits d_iw of the windows' widths
// (|d_iw| <= 2^(width-1)): s_i = sum_w d_iw 2^(off_w), the windows tiling at
// least 256 bits (a scalar's 255 and the last digit's carry). The windows
// lie in `levels` levels of r sub-windows each: level j is the affine points
// 2^(W j) P_i, W the sum of the r sub-windows' widths, and window w = j r +
// q (offset W j plus the widths of sub-windows 0 .. q - 1) puts its term
// d_iw (2^(W j) P_i) into sub-window q's bucket set. So the levels share the
// buckets: with all levels stored (r = 1) every term lands in one bucket
// set, with no window doubling and one bucket reduction; with fewer levels
// (memory) the r bucket sets are combined on the host (Horner). Level 0 is
// the point set itself. Sub-windows may have different widths (a plan): at
// 2^27 with 3 levels, 11 windows of 24, 23, 23 and 23 bits instead of 12 of
// 22, a twelfth fewer terms for more buckets to weigh. The terms are sorted
// by bucket (CUB's radix sort) and summed in equal shares by every thread,
// so the work stays balanced whatever the digits' distribution. Scalars are
// taken in equal passes of at most the plan's terms (2^28 unless it says
// more), each pass after a sub-window's first merged into its buckets.
//
// Costs: levels - 1 times the points' device memory for the table, and
// 16 bytes a term of a pass for the sort plus 192 bytes a bucket, all
// allocated with the table. Calls on one table run one at a time (the
// kernel region holds the device's lock; the table also has its own mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
    // Windows per scalar at one width: ceil(256 / c) (255-bit scalars plus
    // the carry of the signed digits).
    static unsigned windows_for(unsigned window_bits) noexcept;

    // A table's shape: the sub-windows' widths (r of them) and the number
    // of windows K (terms a scalar); levels = ceil(K / r) are stored.
    struct plan_t {
        std::vector<unsigned> widths;
        unsigned windows = 0;
        // Terms a pass at most (0: 2^28): a sub-window's scalars go in
        // passes of at most this many terms, each after the first merged
        // into its buckets; room for all of them saves the merges.
        uint64_t pass_terms = 0;
        unsigned levels() const noexcept;
        bool valid() const noexcept;  // widths in range, 256 bits covered
        std::string widths_text() const;  // "24,23,23,23"
    };
    // The uniform plan of width c (0: the default) and at most `levels`
    // levels (0: all): what the (c, levels) constructor builds.
    static plan_t uniform_plan(size_t n, unsigned window_bits, unsigned levels) noexcept;
    // The cheapest plan (an estimate of the accumulation, weighing and
    // merging times) whose table takes at most `budget` device bytes: the
    // most levels that fit, with mixed widths where they save terms, in one
    // pass a sub-window where that fits.
    // plan.windows == 0 when nothing fits.
    static plan_t plan_within(size_t n, uint64_t budget) noexcept;
    // Device bytes of a table over n points in this plan, buffers included
    // (the most a uint64_t holds when the plan is not valid()).
    static uint64_t bytes_for(size_t n, const plan_t& plan) noexcept;

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
    // The same for a plan (std::invalid_argument unless plan.valid()).
    cuda_msm_table_t(const cuda_points_t& points, const plan_t& plan);
    ~cuda_msm_table_t();
    cuda_msm_table_t(const cuda_msm_table_t&) = delete;
    cuda_msm_table_t& operator=(const cuda_msm_table_t&) = delete;

    size_t size() const noexcept;
    // The widest sub-window.
    unsigned window_bits() const noexcept;
    // Levels stored, the point set included (windows_for(c) when all).
    unsigned levels() const noexcept;
    const plan_t& plan() const noexcept;
    uint64_t bytes() const noexcept;
    cuda_device_t& device() const noexcept;

    // out = sum(scalars[i] * P_i) for i < n <= size(), the scalars on the
    // table's device, laid out as `layout` says (default: Montgomery form,
    // in the points' order). n = 0 gives infinity.
    void msm(blst_p1& out, const cuda_fr_buffer_t& scalars, size_t n,
             cuda_scalar_layout_t layout = {}) const;

    struct impl_t;

private:
    std::unique_ptr<impl_t> impl_;
};

}  // namespace cuzk
