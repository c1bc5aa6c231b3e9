#include "cuzk/msm.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "cuzk/check.hpp"
#include "cuzk/group.hpp"

namespace cuzk {

namespace {

// Canonical scalars are below r < 2^255, so bit 255 is always clear. Tiling
// 256 bits means the top window never produces a (lost) Booth carry.
constexpr size_t scalar_bits = 256;
// Below this many points blst's own single-threaded MSM is the better choice
// (it also covers n = 1, which tiles cannot: a tile needs two points).
constexpr size_t serial_below = 32;
constexpr size_t max_window = 20;

// How one MSM is cut: `ranges` point ranges times `windows` bit windows of
// `window` bits, one tile each.
struct plan_t {
    size_t ranges = 1;
    size_t window = 2;
    size_t windows = scalar_bits / 2;
};

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// A tile of m points and w-bit windows costs about m + 2^w additions (one per
// point into its bucket, two per bucket to sum them). The plan minimises the
// makespan on `threads` threads, then the total work.
plan_t plan_msm(size_t n, size_t threads)
{
    plan_t best;
    double best_span = std::numeric_limits<double>::max(), best_work = best_span;
    for (size_t ranges = 1; ranges <= 2 * threads && n / ranges >= 2; ranges *= 2) {
        const double per_tile_points = double(ceil_div(n, ranges));
        for (size_t w = 2; w <= max_window; w++) {
            const size_t tiles = ranges * ceil_div(scalar_bits, w);
            const double tile_cost = per_tile_points + double(size_t(1) << w);
            const double span = double(ceil_div(tiles, threads)) * tile_cost + double(tiles);
            const double work = double(tiles) * tile_cost;
            if (span < best_span || (span == best_span && work < best_work)) {
                best_span = span;
                best_work = work;
                best = {ranges, w, ceil_div(scalar_bits, w)};
            }
        }
    }
    return best;
}

template <class Affine>
void msm_serial(typename group_t<Affine>::point_t& out, const gather_t<Affine>& points,
                const gather_t<blst_scalar>& scalars)
{
    using G = group_t<Affine>;
    std::vector<limb_t> scratch(G::pippenger_scratch_bytes(points.size) / sizeof(limb_t) + 1);
    blst_list_t<Affine> pts(points, 0);
    blst_scalars_t scs(scalars, 0);
    G::pippenger(out, pts.get(), points.size, scs.get(), scratch.data());
}

template <class Affine>
void msm_tiled(typename group_t<Affine>::point_t& out, const gather_t<Affine>& points,
               const gather_t<blst_scalar>& scalars, thread_pool_t& pool)
{
    using G = group_t<Affine>;
    using point_t = typename G::point_t;
    const size_t n = points.size;
    const plan_t plan = plan_msm(n, pool.size());
    std::vector<point_t> tiles(plan.ranges * plan.windows);
    pool.parallel_for(tiles.size(), [&](size_t t) {
        const size_t range = t / plan.windows, window = t % plan.windows;
        // Balanced ranges: each has at least n / ranges >= 2 points.
        const size_t first = range * n / plan.ranges;
        const size_t count = (range + 1) * n / plan.ranges - first;
        // Zeroed buckets: blst clears them again after use, not before.
        std::vector<limb_t> buckets((G::bucket_bytes() << (plan.window - 1)) / sizeof(limb_t));
        blst_list_t<Affine> pts(points, first);
        blst_scalars_t scs(scalars, first);
        G::tile(tiles[t], pts.get(), count, scs.get(), scalar_bits, buckets.data(),
                window * plan.window, plan.window);
    });
    // Horner over the windows, from the top: acc = acc * 2^window + W_k.
    point_t acc{};
    for (size_t k = plan.windows; k-- > 0;) {
        for (size_t d = 0; k + 1 < plan.windows && d < plan.window; d++)
            G::dbl(acc, acc);
        for (size_t range = 0; range < plan.ranges; range++)
            G::add(acc, acc, tiles[range * plan.windows + k]);
    }
    out = acc;
}

template <class Affine>
void msm_any(typename group_t<Affine>::point_t& out, const gather_t<Affine>& points,
             const gather_t<blst_scalar>& scalars, thread_pool_t& pool)
{
    CUZK_REQUIRE(points.size == scalars.size,
                 "msm: " + std::to_string(points.size) + " points but " +
                     std::to_string(scalars.size) + " scalars");
    out = {};
    if (points.size == 0)
        return;
    if (points.size < serial_below)
        msm_serial(out, points, scalars);
    else
        msm_tiled(out, points, scalars, pool);
}

template <class Affine>
void batch_add_any(typename group_t<Affine>::point_t& out, const gather_t<Affine>& points,
                   thread_pool_t& pool)
{
    using G = group_t<Affine>;
    out = {};
    const size_t n = points.size;
    if (n == 0)
        return;
    const size_t chunks = std::min(ceil_div(n, size_t(1) << 12), 4 * pool.size());
    const size_t step = ceil_div(n, chunks);
    std::vector<typename G::point_t> partial(ceil_div(n, step));
    pool.parallel_for(partial.size(), [&](size_t c) {
        const size_t first = c * step, count = std::min(n, first + step) - first;
        blst_list_t<Affine> pts(points, first);
        G::sum(partial[c], pts.get(), count);
    });
    for (const auto& p : partial)
        G::add(out, out, p);
}

template <class Affine>
void sum_ones_any(typename group_t<Affine>::point_t& out, const Affine* points,
                  const term_plan_t& plan, thread_pool_t& pool)
{
    using G = group_t<Affine>;
    // Each task sums the points of its words' set bits.
    const size_t words = plan.ones.size();
    const size_t tasks = std::min(ceil_div(words, 64), 4 * pool.size());
    const size_t step = tasks == 0 ? 0 : ceil_div(words, tasks);
    std::vector<typename G::point_t> partial(tasks == 0 ? 0 : ceil_div(words, step));
    pool.parallel_for(partial.size(), [&](size_t c) {
        std::vector<const Affine*> picked;
        for (size_t w = c * step; w < std::min(words, (c + 1) * step); w++)
            for (uint64_t bits = plan.ones[w]; bits != 0; bits &= bits - 1)
                picked.push_back(points + w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
        partial[c] = {};
        if (!picked.empty())
            G::sum(partial[c], picked.data(), picked.size());
    });
    out = {};
    for (const auto& p : partial)
        G::add(out, out, p);
}

template <class Affine>
void msm_tail_any(typename group_t<Affine>::point_t& out, const Affine* points,
                  const term_plan_t& plan, thread_pool_t& pool)
{
    std::vector<const Affine*> tail(plan.tail);
    pool.parallel_range(plan.tail, size_t(1) << 14, [&](size_t lo, size_t hi) {
        for (size_t k = lo; k < hi; k++)
            tail[k] = points + plan.tail_index[k];
    });
    msm_any(out, gather_t<Affine>::indirect(tail.data(), tail.size()),
            gather_t<blst_scalar>::contiguous(plan.tail_scalar, plan.tail), pool);
}

template <class Affine>
void msm_plan_any(typename group_t<Affine>::point_t& out, const Affine* points,
                  const term_plan_t& plan, thread_pool_t& pool)
{
    typename group_t<Affine>::point_t ones, tail;
    sum_ones_any(ones, points, plan, pool);
    msm_tail_any(tail, points, plan, pool);
    group_t<Affine>::add(out, ones, tail);
}

}  // namespace

void msm(blst_p1& out, const blst_p1_affine* points, const term_plan_t& plan, thread_pool_t& pool)
{
    msm_plan_any(out, points, plan, pool);
}

void msm(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan, thread_pool_t& pool)
{
    msm_plan_any(out, points, plan, pool);
}

void sum_ones(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan,
              thread_pool_t& pool)
{
    sum_ones_any(out, points, plan, pool);
}

void msm_tail(blst_p1& out, const blst_p1_affine* points, const term_plan_t& plan,
              thread_pool_t& pool)
{
    msm_tail_any(out, points, plan, pool);
}

void msm_tail(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan,
              thread_pool_t& pool)
{
    msm_tail_any(out, points, plan, pool);
}

void msm(blst_p1& out, const gather_t<blst_p1_affine>& points,
         const gather_t<blst_scalar>& scalars, thread_pool_t& pool)
{
    msm_any(out, points, scalars, pool);
}

void msm(blst_p2& out, const gather_t<blst_p2_affine>& points,
         const gather_t<blst_scalar>& scalars, thread_pool_t& pool)
{
    msm_any(out, points, scalars, pool);
}

void batch_add(blst_p1& out, const gather_t<blst_p1_affine>& points, thread_pool_t& pool)
{
    batch_add_any(out, points, pool);
}

void batch_add(blst_p2& out, const gather_t<blst_p2_affine>& points, thread_pool_t& pool)
{
    batch_add_any(out, points, pool);
}

}  // namespace cuzk
