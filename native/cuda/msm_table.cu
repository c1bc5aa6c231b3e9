// G1 MSM over a fixed point set with precomputed shifted copies
// (cuzk/cuda/msm_table.hpp). The r sub-windows (bucket sets) one at a time,
// each in chunks of scalars of at most the plan's pass terms (a term a
// scalar and level), the steps of a pass all on stream 0:
//   digits      each scalar plus a constant (one half-window a window) cut
//               into the sub-window's digits, each minus its half-window:
//               balanced digits with no carry to pass along; the key (|d|,
//               the bucket) and the value (table index, sign in bit 31) of
//               every term
//   sort        CUB's radix sort of the terms by key
//   accumulate  the sorted terms cut into equal shares, one per thread;
//               each thread sums its runs of equal keys (XYZZ += affine):
//               runs inside its share are whole buckets, written directly;
//               its first and last runs go to a list of partial sums
//   fix up      each bucket that has partial sums gets their total
//   merge       a later chunk's buckets added to the window's
// then once per call:
//   weigh       sum_b b * S_b in levels: a thread of level 1 takes a range
//               of buckets, A = sum (b - lo) S_b and R = sum S_b; the R are
//               weighed in turn by the next level, until one is left
//   sum         each level's A, in two block-level passes per sub-window
// The host converts the XYZZ sums and combines them (Horner: each level's
// span, then each sub-window's width, in doublings). A sub-window at a
// time, rather than every window of a chunk of scalars, leaves a merge
// only where one sub-window's terms outgrow a pass.

#include "blst_compat.cuh"

#include "sppark_g1.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "xyzz_add.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/msm_table.hpp"

namespace cuzk {

namespace {

using bucket_mem_t = bucket_t::mem_t;
using affine_mem_t = affine_t::mem_t;

constexpr uint32_t no_key = 0xffffffffu;  // a share with no terms
// Accumulation blocks: 384 threads (at most 170 registers, a few spilled)
// or, with CUZK_MSM_THREADS=256 (tuning), 256 threads and no spills.
constexpr unsigned accumulate_threads = 384;
constexpr unsigned accumulate_threads_lean = 256;
constexpr unsigned weigh_threads = 128;
constexpr unsigned sum_threads = 128;
// The weighing's first level: at most 64 buckets a thread (at least 4),
// fewer while that leaves fewer than weigh_groups_wanted groups (waves of
// short threads balance better than a few long ones); later levels: 16.
constexpr uint32_t weigh_span_max = 64;
constexpr uint32_t weigh_span_min = 4;
constexpr uint32_t weigh_span_later = 16;

__host__ __device__ __forceinline__ uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
__host__ __device__ __forceinline__ uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// CUZK_MSM_TRACE=1: each step's device time on stderr, summed over the
// passes (events on the call's stream; tuning only).
class step_clock_t {
public:
    enum step_t { digits, sort, accumulate, fix_up, weigh, sum, steps };
    explicit step_clock_t(cudaStream_t s) : stream_(s)
    {
        static const bool on = std::getenv("CUZK_MSM_TRACE") != nullptr;
        on_ = on;
        if (on_)
            mark(steps);  // the start
    }
    ~step_clock_t()
    {
        for (auto& e : events_)
            (void)cudaEventDestroy(e.second);
    }
    step_clock_t(const step_clock_t&) = delete;
    step_clock_t& operator=(const step_clock_t&) = delete;
    // Marks the end of `step` (which began at the previous mark).
    void mark(int step)
    {
        if (!on_)
            return;
        cudaEvent_t e;
        CUZK_CUDA_OK(cudaEventCreate(&e));
        events_.emplace_back(step, e);
        CUZK_CUDA_OK(cudaEventRecord(e, stream_));
    }
    // After the stream has been waited for.
    void report(size_t n, size_t passes, const cuda_msm_table_t::plan_t& plan) const
    {
        if (!on_)
            return;
        float ms[steps] = {};
        for (size_t i = 1; i < events_.size(); i++) {
            float t = 0;
            CUZK_CUDA_OK(cudaEventElapsedTime(&t, events_[i - 1].second, events_[i].second));
            ms[events_[i].first] += t;
        }
        std::fprintf(stderr,
                     "msm_table n=%zu widths=%s windows=%u levels=%u passes=%zu: digits %.2f "
                     "sort %.2f accumulate %.2f fix-up+merge %.2f weigh %.2f sum %.2f ms\n",
                     n, plan.widths_text().c_str(), plan.windows, plan.levels(), passes,
                     ms[digits], ms[sort], ms[accumulate], ms[fix_up], ms[weigh], ms[sum]);
    }

private:
    cudaStream_t stream_;
    bool on_ = false;
    std::vector<std::pair<int, cudaEvent_t>> events_;
};

// The fields of the device types, for the steps sppark's classes do not
// offer (a doubling, the affine form written in blst's layout).
struct xyzz_fields_t {
    fp_t X, Y, ZZZ, ZZ;
};
struct affine_fields_mem_t {
    fp_t::mem_t X, Y;
};
static_assert(sizeof(affine_fields_mem_t) == sizeof(affine_mem_t), "affine layout");

// 2P in XYZZ (a = 0): U = 2Y, V = U^2, W = U V, S = X V, M = 3 X^2,
// X' = M^2 - 2S, Y' = M (S - X') - W Y, ZZ' = V ZZ, ZZZ' = W ZZZ. The point
// at infinity (ZZ = ZZZ = 0) stays there.
__device__ __forceinline__ void xyzz_double(xyzz_fields_t& p)
{
    const fp_t u = p.Y + p.Y;
    const fp_t v = u ^ 2;
    const fp_t w = u * v;
    const fp_t s = p.X * v;
    fp_t m = p.X ^ 2;
    m = m + m + m;
    fp_t x = m ^ 2;
    x -= s;
    x -= s;
    fp_t y = s - x;
    y *= m;
    y -= w * p.Y;
    p.X = x;
    p.Y = y;
    p.ZZ *= v;
    p.ZZZ *= w;
}

// next[i] = 2^c prev[i] in affine form for i < n (n > 0). The inversion
// pairs neighbouring lanes (sppark's reciprocal), so threads past the end
// repeat the last point and store nothing.
__global__ void table_level(affine_fields_mem_t* next, const affine_fields_mem_t* prev,
                            uint32_t n, uint32_t c)
{
#ifdef __CUDA_ARCH__  // sppark's device field types
    const uint32_t at = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t i = at < n ? at : n - 1;
    xyzz_fields_t p;
    p.X = prev[i].X;
    p.Y = prev[i].Y;
    const bool input_infinity = p.X.is_zero(p.Y);  // blst's affine infinity: zeros
    p.ZZ = fp_t::one(input_infinity);
    p.ZZZ = p.ZZ;
#pragma unroll 1
    for (uint32_t d = 0; d < c; d++)
        xyzz_double(p);
    fp_t denominator = p.ZZ * p.ZZZ;
    const bool infinity = denominator.is_zero();
    if (infinity)
        denominator = fp_t::one();
    const fp_t inverse = denominator.reciprocal();
    const fp_t x = p.X * (p.ZZZ * inverse);
    const fp_t y = p.Y * (p.ZZ * inverse);
    if (at < n) {
        next[i].X = czero(x, infinity);
        next[i].Y = czero(y, infinity);
    }
#endif
}

// One pass's digits: sub-window q's windows, one a level. With t = s + add
// (add = sum over the windows of 2^(off + width - 1)), the window at `off`
// has the digit d = ((t >> off) mod 2^width) - 2^(width - 1), in
// [-2^(width-1), 2^(width-1)), and s = sum d 2^off; the top window keeps
// every bit of t above it (mod 2^(width + 1)), which for s < r < 2^255
// and windows covering 256 bits leaves |d| <= 2^(width-1). No carry goes
// from one window to the next, so a pass reads only its own windows' bits.
struct digit_pass_t {
    uint32_t add[9];
    uint32_t off0;    // the sub-window's offset in level 0
    uint32_t stride;  // W: a level's bits
    uint32_t width;
    uint32_t levels;  // its windows (levels j with j r + q < K)
    uint32_t top;     // the level of the top window, or levels when not here
};

// The terms of scalars at positions first .. first + count: scalar position
// p pairs with point g = p, or g = rev(p) (rev_log bits reversed) when
// rev_log != 0. The term for level j lands at j * count + (p - first), with
// the key |d| (0 for d = 0, skipped) and the value (j * n + g) | sign << 31.
__global__ void make_digits(uint32_t* keys, uint32_t* values, const fr_t* scalars, uint32_t count,
                            uint32_t first, uint32_t n, digit_pass_t pass, bool canonical,
                            uint32_t rev_log)
{
#ifdef __CUDA_ARCH__
    const uint32_t mask = (1u << pass.width) - 1;
    const uint32_t top_mask = 2 * mask + 1;
    const uint32_t half = 1u << (pass.width - 1);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += gridDim.x * blockDim.x) {
        const uint32_t at = first + i;
        fr_t s = scalars[at];
        if (!canonical)
            s.from();
        uint32_t t[9];
        uint64_t carry = 0;
#pragma unroll
        for (int x = 0; x < 8; x++) {
            const uint64_t v = uint64_t(s[x]) + pass.add[x] + carry;
            t[x] = uint32_t(v);
            carry = v >> 32;
        }
        t[8] = pass.add[8] + uint32_t(carry);
        const uint32_t g = rev_log != 0 ? (__brev(at) >> (32 - rev_log)) : at;
#pragma unroll 1
        for (uint32_t j = 0; j < pass.levels; j++) {
            const uint32_t off = pass.off0 + j * pass.stride;
            const uint32_t word = off / 32;
            uint32_t lo = 0, hi = 0;
#pragma unroll
            for (uint32_t x = 0; x < 9; x++) {  // selects: t stays in registers
                lo = x == word ? t[x] : lo;
                hi = x == word + 1 ? t[x] : hi;
            }
            const uint64_t bits = ((uint64_t(hi) << 32) | lo) >> (off % 32);
            const uint32_t raw = uint32_t(bits) & (j == pass.top ? top_mask : mask);
            const bool negative = raw < half;
            const size_t to = size_t(j) * count + i;
            keys[to] = negative ? half - raw : raw - half;
            values[to] = (j * n + g) | (uint32_t(negative) << 31);
        }
    }
#endif
}

// The sorted terms [first nonzero key, m) in equal shares, one per thread.
// Runs of one key strictly inside a share are whole buckets of this pass,
// stored (the pass's buckets start at infinity); a share's first run goes
// to partial slot 2t, its last to 2t + 1 (a share of one
// run: the run at 2t, infinity with the same key at 2t + 1). Shares
// without terms (only at the end) mark both slots no_key.
template <unsigned block, bool fused>
__launch_bounds__(block) __global__
void accumulate_shares(bucket_mem_t* buckets, uint32_t* part_keys, bucket_mem_t* parts,
                       const uint32_t* keys, const uint32_t* values, const affine_mem_t* points,
                       const affine_mem_t* table, uint32_t n, uint32_t m)
{
    // Value index v: level 0 (v < n) is the point set itself, level j the
    // table's rows from (j - 1) n.
    auto load = [&](uint32_t v) -> affine_t {
        const uint32_t idx = v & 0x7fffffff;
        return idx < n ? points[idx] : table[idx - n];
    };
    const uint32_t threads = gridDim.x * blockDim.x;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t lo = 0, hi = m;  // the first term with a nonzero key
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] == 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const uint32_t share = (m - lo + threads - 1) / threads;
    const uint64_t begin64 = lo + uint64_t(t) * share;
    const uint32_t begin = begin64 < m ? uint32_t(begin64) : m;
    const uint32_t end = uint32_t(min64(begin64 + share, m));
    if (begin >= end) {
        part_keys[2 * t] = no_key;
        part_keys[2 * t + 1] = no_key;
        return;
    }
    uint32_t key = keys[begin];
    bool first = true;
    bucket_t acc;
    acc.inf();
    uint32_t value = values[begin];
    affine_t p = load(value);
#pragma unroll 1
    for (uint32_t x = begin; x < end;) {
        const uint32_t sign = value >> 31;
        const affine_t here = p;
        x++;
        uint32_t next_key = no_key;
        if (x < end) {  // load the next term before adding this one
            next_key = keys[x];
            value = values[x];
            p = load(value);
        }
        if (fused)
            add_mixed(acc, here, sign);
        else
            acc.add(here, sign);
        if (next_key != key) {
            if (first) {
                part_keys[2 * t] = key;
                parts[2 * t] = acc;
                if (x == end) {
                    part_keys[2 * t + 1] = key;
                    parts[2 * t + 1].inf();
                }
                first = false;
            } else if (x == end) {
                part_keys[2 * t + 1] = key;
                parts[2 * t + 1] = acc;
            } else {  // a whole bucket: a plain store keeps the warp together
                buckets[key] = acc;
            }
            acc.inf();
            key = next_key;
        }
    }
}

// Buckets with partial sums: the first slot of each key stores the sum of
// the run of slots with that key (the slots' keys never decrease).
__global__ void fix_up(bucket_mem_t* buckets, const uint32_t* part_keys,
                       const bucket_mem_t* parts, uint32_t slots)
{
    for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < slots;
         s += gridDim.x * blockDim.x) {
        const uint32_t key = part_keys[s];
        if (key == no_key || (s > 0 && part_keys[s - 1] == key))
            continue;
        bucket_t acc = parts[s];
        for (uint32_t u = s + 1; u < slots && part_keys[u] == key; u++) {
            bucket_t q = parts[u];
            acc.add(q);
        }
        buckets[key] = acc;
    }
}

// total[b] += pass[b] for b < count: a later pass's buckets into the
// first's. (Adding them inside accumulate_shares instead, a full addition
// at every bucket's end, split the warps: 3 times slower at 2^27.)
__global__ void merge_buckets(bucket_mem_t* total, const bucket_mem_t* pass, uint32_t count)
{
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < count;
         b += gridDim.x * blockDim.x) {
        bucket_t p = pass[b];
        if (p.is_inf())
            continue;
        bucket_t t = total[b];
        t.add(p);
        total[b] = t;
    }
}

// Where a sub-window's buckets lie: buckets[offset + b] for b < slots
// (b = 0 unused).
struct window_info_t {
    uint64_t offset;
    uint32_t slots;
    uint32_t unused;
};

// One level of the weighing, sum_b b S_b for each sub-window, with no
// scalar multiplication in any thread. Group g = q * per_window + l of
// sub-window q takes its entries [lo, hi), lo = l * span, and returns
// A_g = sum (b - lo) S_b (running sums from the top: two additions an
// entry) and R_g = sum S_b; then sum_b b S_b = sum_l A_l + span sum_l l R_l,
// and the second sum is the same problem over the R_l: the next level,
// until one group is left (whose l is 0). Level 1 reads the buckets
// (`windows`: each sub-window's offset and size); a later level reads the
// previous level's R, per_window entries a sub-window (`windows` null,
// `len` = stride = its per_window). Groups past a sub-window's end return
// infinity. sppark's addition: an inlined copy (its buckets in registers,
// 255 of them with spills) was 2 % slower (session 15).
__launch_bounds__(weigh_threads) __global__
void weigh_level(bucket_mem_t* A, bucket_mem_t* R, const bucket_mem_t* in,
                 const window_info_t* windows, uint32_t len, uint32_t span, uint32_t per_window,
                 uint32_t groups)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups)
        return;
    const uint32_t q = g / per_window;
    uint64_t offset = uint64_t(q) * len;
    uint32_t size = len;
    if (windows != nullptr) {
        const window_info_t info = windows[q];
        offset = info.offset;
        size = info.slots;
    }
    const bucket_mem_t* entries = in + offset;
    const uint32_t lo = (g % per_window) * span;
    bucket_t running, acc;
    running.inf();
    acc.inf();
    if (lo < size) {
        const uint32_t hi = min32(lo + span, size);
#pragma unroll 1
        for (uint32_t b = hi - 1; b > lo; b--) {
            const bucket_t e = entries[b];
            running.add(e);
            acc.add(running);
        }
        const bucket_t e = entries[lo];
        running.add(e);
    }
    A[g] = acc;
    R[g] = running;
}

// Segments of `len` entries, each cut into blocks of `per`: block b sums
// entries [seg * len + part * per, + per) of its segment (seg = b / blocks,
// part = b % blocks) into out[b].
__launch_bounds__(sum_threads) __global__
void sum_blocks(bucket_mem_t* out, const bucket_mem_t* in, uint32_t len, uint32_t per,
                uint32_t blocks)
{
    extern __shared__ uint4 shared_words[];
    auto* partial = reinterpret_cast<bucket_mem_t*>(shared_words);
    const uint32_t seg = blockIdx.x / blocks, part = blockIdx.x % blocks;
    const uint32_t lo = part * per;
    const uint32_t hi = min32(lo + per, len);
    const bucket_mem_t* segment = in + size_t(seg) * len;
    bucket_t acc;
    acc.inf();
    for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        bucket_t p = segment[i];
        acc.add(p);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (uint32_t half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            bucket_t a = partial[threadIdx.x];
            bucket_t b = partial[threadIdx.x + half];
            a.add(b);
            partial[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = static_cast<bucket_t>(partial[0]);
}

// XYZZ (X, Y, ZZZ, ZZ) to Jacobian (X*ZZ, Y*ZZZ, ZZ), in blst's types.
blst_p1 xyzz_to_jacobian(const blst_fp xyzz[4])
{
    blst_p1 out;
    blst_fp_mul(&out.x, &xyzz[0], &xyzz[3]);
    blst_fp_mul(&out.y, &xyzz[1], &xyzz[2]);
    out.z = xyzz[3];
    return out;
}


using accumulate_kernel_t = void (*)(bucket_mem_t*, uint32_t*, bucket_mem_t*, const uint32_t*,
                                     const uint32_t*, const affine_mem_t*, const affine_mem_t*,
                                     uint32_t, uint32_t);
struct accumulate_choice_t {
    accumulate_kernel_t kernel;
    unsigned block;
    bool fused;
};

}  // namespace

// ------------------------------------------------------------------ table

namespace {

// Terms per pass at most (4 sort buffers of 4 bytes a term: 4 GiB).
constexpr uint64_t max_chunk_terms = uint64_t(1) << 28;
// Accumulation threads assumed by bytes_for (the real count is the
// device's resident maximum, 50,688 on an H200).
constexpr uint32_t planned_share_threads = uint32_t(1) << 17;
constexpr uint64_t weigh_groups_wanted = uint64_t(1) << 18;
// The most terms a pass may have (CUB's sort counts in int).
constexpr uint64_t max_pass_terms = (uint64_t(1) << 31) - 1;
// The planner's estimates (H200, 2^27, sessions 14-15): a term's digits,
// sort and accumulation, a bucket's weighing, and a bucket's merge (each
// pass of a sub-window after its first), in picoseconds.
constexpr double term_ps = 420;
constexpr double bucket_ps = 1600;
constexpr double merge_ps = 550;

struct weigh_level_t {
    uint32_t span, per_window, blocks_first;
    uint64_t at;  // A's offset in the scratch (in buckets); R's follows
};

// The whole shape of a table: the plan, where each sub-window's bits and
// buckets lie, its passes at the table's size, and the buffers' sizes.
struct shape_t {
    cuda_msm_table_t::plan_t plan;
    unsigned r = 0, k = 0, levels = 0, stride = 0;
    std::vector<uint32_t> pre;           // sub-window q's offset in a level
    std::vector<uint32_t> slots;         // 2^(width - 1) + 1, slot 0 unused
    std::vector<uint64_t> bucket_at;     // its buckets' offset
    std::vector<uint32_t> window_levels;  // its windows (one a level)
    std::vector<size_t> chunk;           // its scalars a pass at most
    uint64_t total_slots = 0;
    uint32_t pass_slots = 0;  // the widest sub-window with several passes at n
    uint64_t pass_terms_max = 0;
    std::vector<weigh_level_t> weighing;
    uint64_t weigh_scratch = 0;  // buckets: every level's A and R
    uint32_t blocks_first_max = 0;
    uint32_t add[9] = {};  // sum over the windows of 2^(off + width - 1)

    shape_t(size_t n, const cuda_msm_table_t::plan_t& p) : plan(p)
    {
        r = unsigned(plan.widths.size());
        k = plan.windows;
        levels = plan.levels();
        uint32_t widest = 0;
        for (unsigned q = 0; q < r; q++) {
            pre.push_back(stride);
            stride += plan.widths[q];
            slots.push_back((1u << (plan.widths[q] - 1)) + 1);
            bucket_at.push_back(total_slots);
            total_slots += slots[q];
            widest = std::max(widest, slots[q]);
            window_levels.push_back((k - q + r - 1) / r);
        }
        const uint64_t terms = plan.pass_terms != 0 ? plan.pass_terms : max_chunk_terms;
        for (unsigned q = 0; q < r; q++) {
            const uint64_t cap = std::max<uint64_t>(terms / window_levels[q], 1);
            chunk.push_back(static_cast<size_t>(std::max<uint64_t>(std::min<uint64_t>(n, cap), 1)));
            pass_terms_max = std::max<uint64_t>(pass_terms_max, uint64_t(chunk[q]) * window_levels[q]);
            if (chunk[q] < n)
                pass_slots = std::max(pass_slots, slots[q]);
        }
        uint32_t span = weigh_span_max;
        while (span > weigh_span_min && total_slots / span < weigh_groups_wanted)
            span /= 2;
        for (uint32_t len = widest;;) {
            const uint32_t per = ceil_div(len, span);
            weighing.push_back({span, per, ceil_div(per, sum_threads), weigh_scratch});
            weigh_scratch += 2 * uint64_t(r) * per;
            blocks_first_max = std::max(blocks_first_max, weighing.back().blocks_first);
            if (per <= 1)
                break;
            len = per;
            span = weigh_span_later;
        }
        for (unsigned w = 0; w < k; w++) {
            const unsigned q = w % r;
            const uint32_t bit = (w / r) * stride + pre[q] + plan.widths[q] - 1;
            // Add 2^bit to the 288-bit constant.
            uint64_t carry = uint64_t(1) << (bit % 32);
            for (unsigned x = bit / 32; x < 9 && carry != 0; x++) {
                const uint64_t v = uint64_t(add[x]) + carry;
                add[x] = uint32_t(v);
                carry = v >> 32;
            }
        }
    }
    // Sub-window q's pass description.
    digit_pass_t pass(unsigned q) const
    {
        digit_pass_t d{};
        std::memcpy(d.add, add, sizeof(add));
        d.off0 = pre[q];
        d.stride = stride;
        d.width = plan.widths[q];
        d.levels = window_levels[q];
        d.top = (k - 1) % r == q ? d.levels - 1 : d.levels;
        return d;
    }
};

struct layout_t {
    uint64_t table, keys, sort_temp, buckets, pass_buckets, parts, sums, windows, total;
};

layout_t layout(size_t n, const shape_t& sh, uint32_t share_threads, size_t sort_temp_bytes)
{
    layout_t l;
    l.table = align256(uint64_t(sh.levels - 1) * n * sizeof(affine_mem_t));
    // The sort's four buffers also hold the weighing's levels afterwards.
    const uint64_t scratch = sh.weigh_scratch * sizeof(bucket_mem_t);
    l.keys = align256(std::max(sh.pass_terms_max * sizeof(uint32_t), (scratch + 3) / 4));
    l.sort_temp = align256(sort_temp_bytes);
    l.buckets = align256(sh.total_slots * sizeof(bucket_mem_t));
    l.parts = align256(uint64_t(share_threads) * 2 * sizeof(bucket_mem_t)) +
              align256(uint64_t(share_threads) * 2 * sizeof(uint32_t));
    // A level's first-pass sums, then each level's sub-window totals.
    l.sums = align256(uint64_t(sh.r) * (sh.blocks_first_max + sh.weighing.size()) *
                      sizeof(bucket_mem_t));
    // A sub-window's buckets for its later chunks of scalars, when there are.
    l.pass_buckets = align256(uint64_t(sh.pass_slots) * sizeof(bucket_mem_t));
    l.windows = align256(uint64_t(sh.r) * sizeof(window_info_t));
    l.total = l.table + 4 * l.keys + l.sort_temp + l.buckets + l.pass_buckets + l.parts +
              l.sums + l.windows;
    return l;
}

size_t sort_temp_for(uint64_t terms, unsigned bits)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
    CUZK_CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, static_cast<int>(terms), 0,
                                                 int(bits)));
    return bytes;
}

blst_p1 p1_add(const blst_p1& a, const blst_p1& b)
{
    blst_p1 r;
    blst_p1_add_or_double(&r, &a, &b);
    return r;
}

// The estimated time of a plan's accumulation, weighing and merges at n
// scalars.
double plan_cost(size_t n, const cuda_msm_table_t::plan_t& plan)
{
    const shape_t sh(n, plan);
    double cost = double(plan.windows) * double(n) * term_ps;
    for (unsigned q = 0; q < sh.r; q++) {
        const double chunks = double((n + sh.chunk[q] - 1) / sh.chunk[q]);
        cost += double(sh.slots[q]) * (bucket_ps + (chunks - 1) * merge_ps);
    }
    return cost;
}

}  // namespace

struct cuda_msm_table_t::impl_t {
    cuda_device_t& device;
    const cuda_points_t& points;  // level 0
    size_t n = 0;
    std::unique_ptr<shape_t> shape;
    uint32_t share_threads = 0;
    accumulate_choice_t accumulate{};
    size_t sort_temp_bytes = 0;
    uint64_t total_bytes = 0;
    void* base = nullptr;  // one allocation, carved below
    affine_mem_t* table = nullptr;
    uint32_t* keys[2] = {nullptr, nullptr};
    uint32_t* values[2] = {nullptr, nullptr};
    void* sort_temp = nullptr;
    bucket_mem_t* buckets = nullptr;       // every sub-window's, then the sums
    bucket_mem_t* pass_buckets = nullptr;  // a later pass's (null: one pass)
    uint32_t* part_keys = nullptr;
    bucket_mem_t* parts = nullptr;
    bucket_mem_t* sums = nullptr;
    window_info_t* windows = nullptr;
    // The window totals read back, page-locked: a pageable copy goes through
    // the host thread's staging, so a stalled host held the stream with it
    // (once 4.6 s at 2^27, the host's memory mostly in use).
    cuda_pinned_buffer_t totals;
    mutable std::mutex busy;

    impl_t(const cuda_points_t& p) : device(p.device()), points(p) {}
    ~impl_t()
    {
        if (base != nullptr) {
            device.impl().sync_all();
            device.impl().release(base, total_bytes);
        }
    }
};

namespace {

// The accumulation kernel and its block: 384 threads and the fused
// addition unless CUZK_MSM_THREADS=256 or CUZK_MSM_ADD=sppark (tuning and
// comparison; read when a table is built).
accumulate_choice_t accumulate_choice()
{
    const char* threads = std::getenv("CUZK_MSM_THREADS");
    const char* add = std::getenv("CUZK_MSM_ADD");
    const bool lean = threads != nullptr && std::strcmp(threads, "256") == 0;
    const bool fused = add == nullptr || std::strcmp(add, "sppark") != 0;
    if (lean)
        return {fused ? accumulate_shares<accumulate_threads_lean, true>
                      : accumulate_shares<accumulate_threads_lean, false>,
                accumulate_threads_lean, fused};
    return {fused ? accumulate_shares<accumulate_threads, true>
                  : accumulate_shares<accumulate_threads, false>,
            accumulate_threads, fused};
}

// Shares for the accumulation: as many threads as fit on the device at once.
uint32_t share_threads_for(const cuda_device_t::impl_t& impl, const accumulate_choice_t& choice)
{
    int per_sm = 0;
    const cudaError_t e =
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, choice.kernel, choice.block, 0);
    if (e != cudaSuccess || per_sm < 1)
        per_sm = 1;
    return uint32_t(impl.info.sm_count) * uint32_t(per_sm) * choice.block;
}

// CUB's temporaries for every sub-window's largest pass.
size_t sort_temp_for(const shape_t& sh)
{
    size_t bytes = 0;
    for (unsigned q = 0; q < sh.r; q++)
        bytes = std::max(bytes, sort_temp_for(uint64_t(sh.chunk[q]) * sh.window_levels[q],
                                              sh.plan.widths[q]));
    return bytes;
}

}  // namespace

// ------------------------------------------------------------------- plans

std::string cuda_msm_table_t::plan_t::widths_text() const
{
    std::string text;
    for (unsigned w : widths)
        text += (text.empty() ? "" : ",") + std::to_string(w);
    return text;
}

unsigned cuda_msm_table_t::plan_t::levels() const noexcept
{
    return widths.empty() ? 0 : unsigned((windows + widths.size() - 1) / widths.size());
}

bool cuda_msm_table_t::plan_t::valid() const noexcept
{
    const size_t r = widths.size();
    if (r == 0 || windows == 0 || windows < r)
        return false;
    for (unsigned w : widths)
        if (w < min_window_bits || w > max_window_bits)
            return false;
    // The windows tile [0, off_top + width_top): at least 256 bits, so that
    // the top digit, (s >> off_top) plus the carry below it, is at most
    // 2^(width_top - 1) for every s < r < 2^255; and the top window's bits
    // (one more than its width) within the 288 of s plus the constant.
    uint64_t covered = 0;
    for (unsigned w = 0; w < windows; w++)
        covered += widths[w % r];
    return covered >= 256 && covered + 1 <= 288 && pass_terms <= max_pass_terms;
}

cuda_msm_table_t::plan_t cuda_msm_table_t::uniform_plan(size_t n, unsigned window_bits,
                                                         unsigned levels) noexcept
{
    const unsigned c = window_bits == 0 ? default_window_bits(n) : window_bits;
    const unsigned k = windows_for(c);
    const unsigned want = levels == 0 ? k : std::min(levels, k);
    const unsigned r = (k + want - 1) / want;
    return plan_t{std::vector<unsigned>(r, c), k};
}

uint64_t cuda_msm_table_t::bytes_for(size_t n, const plan_t& plan) noexcept
{
    if (!plan.valid())
        return ~uint64_t(0);  // never fits
    const shape_t sh(n, plan);
    // Sort temporaries: CUB's double-buffer sort needs little beyond the
    // buffers (29 MiB for 2^28 terms on the H200); count a sixteenth of a
    // buffer and 64 MiB.
    return layout(n, sh, planned_share_threads, sh.pass_terms_max / 4 + (uint64_t(64) << 20))
        .total;
}

cuda_msm_table_t::plan_t cuda_msm_table_t::plan_within(size_t n, uint64_t budget) noexcept
{
    const unsigned c = default_window_bits(n);
    const unsigned k = windows_for(c);
    for (unsigned want = k; want >= 1; want--) {
        const plan_t uniform = uniform_plan(n, c, want);
        if (uniform.levels() != want)
            continue;  // the same as a plan of fewer levels
        const unsigned r = unsigned(uniform.widths.size());
        // The uniform plan and fewer windows over the same levels and
        // sub-windows, some wider: a base width b for all, one bit more for
        // the first m or the last m; each in passes of 2^28 terms and, where
        // a sub-window has more, in one pass each (its first has the most
        // terms, n a level). Of equal estimates, the smaller table.
        plan_t best;
        double best_cost = 0;
        uint64_t best_bytes = 0;
        auto consider = [&](plan_t p) {
            if (p.levels() != want)
                return;
            const uint64_t one_pass = uint64_t(n) * want;
            for (const uint64_t pass : {uint64_t(0), one_pass}) {
                if (pass != 0 && pass <= max_chunk_terms)
                    break;
                p.pass_terms = pass;
                const uint64_t bytes = bytes_for(n, p);  // never fits when not valid
                if (bytes > budget)
                    continue;
                const double cost = plan_cost(n, p);
                if (best.windows == 0 || cost < best_cost ||
                    (cost == best_cost && bytes < best_bytes)) {
                    best = p;
                    best_cost = cost;
                    best_bytes = bytes;
                }
            }
        };
        consider(uniform);
        for (unsigned windows = k - 1; windows > (want - 1) * r && windows >= r; windows--)
            for (unsigned b = c; b <= std::min(c + 3, max_window_bits - 1); b++)
                for (unsigned m = 0; m <= r; m++)
                    for (bool last : {false, true}) {
                        plan_t p{std::vector<unsigned>(r, b), windows};
                        for (unsigned q = 0; q < m; q++)
                            p.widths[last ? r - 1 - q : q] = b + 1;
                        consider(p);
                    }
        if (best.windows != 0)
            return best;
    }
    return plan_t{};
}

unsigned cuda_msm_table_t::default_window_bits(size_t n) noexcept
{
    unsigned lg = 0;
    while ((size_t(1) << lg) < n)
        lg++;
    // 2^(lg - 1) buckets, at most 2^21: the fastest of c = 16-24 on the
    // H200 at 2^20, 2^22 and 2^24 (harness --table-sweep, docs/cuda.md).
    // Wider, the weighing (2 additions a bucket) outgrows what the fewer
    // windows save.
    return std::max(10u, std::min(22u, lg));
}

unsigned cuda_msm_table_t::windows_for(unsigned window_bits) noexcept
{
    return (256 + window_bits - 1) / window_bits;
}

uint64_t cuda_msm_table_t::bytes_for(size_t n, unsigned window_bits, unsigned levels) noexcept
{
    return bytes_for(n, uniform_plan(n, window_bits, levels));
}

unsigned cuda_msm_table_t::levels_within(size_t n, unsigned window_bits, uint64_t budget) noexcept
{
    if (window_bits == 0)
        window_bits = default_window_bits(n);
    for (unsigned levels = windows_for(window_bits); levels >= 1; levels--)
        if (bytes_for(n, window_bits, levels) <= budget)
            return levels;
    return 0;
}

// ------------------------------------------------------------------- build

namespace {

cuda_msm_table_t::plan_t checked_uniform_plan(size_t n, unsigned window_bits, unsigned levels,
                                              uint64_t pass_terms)
{
    CUZK_REQUIRE(window_bits == 0 || (window_bits >= cuda_msm_table_t::min_window_bits &&
                                      window_bits <= cuda_msm_table_t::max_window_bits),
                 "cuda_msm_table_t: window bits out of range");
    CUZK_REQUIRE(pass_terms <= max_chunk_terms, "cuda_msm_table_t: passes of at most 2^28 terms");
    cuda_msm_table_t::plan_t plan = cuda_msm_table_t::uniform_plan(n, window_bits, levels);
    plan.pass_terms = pass_terms;
    return plan;
}

}  // namespace

cuda_msm_table_t::cuda_msm_table_t(const cuda_points_t& points, unsigned window_bits,
                                   unsigned levels, uint64_t pass_terms)
    : cuda_msm_table_t(points, checked_uniform_plan(points.size(), window_bits, levels, pass_terms))
{}

cuda_msm_table_t::cuda_msm_table_t(const cuda_points_t& points, const plan_t& plan)
    : impl_(std::make_unique<impl_t>(points))
{
    const size_t n = points.size();
    CUZK_REQUIRE(plan.valid(),
                 "cuda_msm_table_t: widths out of range, windows short of 256 bits, or passes "
                 "above 2^31 - 1 terms");
    CUZK_REQUIRE(n > 0, "cuda_msm_table_t: no points");
    CUZK_REQUIRE(uint64_t(plan.levels()) * n < (uint64_t(1) << 31),
                 "cuda_msm_table_t: more than 2^31 stored points");
    auto& st = *impl_;
    st.shape = std::make_unique<shape_t>(n, plan);
    const shape_t& sh = *st.shape;
    auto& impl = points.device().impl();
    impl.select();
    st.n = n;
    st.accumulate = accumulate_choice();
    st.share_threads = share_threads_for(impl, st.accumulate);
    st.sort_temp_bytes = sort_temp_for(sh);
    const layout_t l = layout(n, sh, st.share_threads, st.sort_temp_bytes);
    st.total_bytes = l.total;
    st.base = impl.alloc(l.total);
    char* at = static_cast<char*>(st.base);
    auto carve = [&](uint64_t bytes) {
        char* p = at;
        at += bytes;
        return p;
    };
    st.table = reinterpret_cast<affine_mem_t*>(carve(l.table));
    // Four sort buffers in a row: the weighing's levels span them afterwards.
    for (int i = 0; i < 2; i++) {
        st.keys[i] = reinterpret_cast<uint32_t*>(carve(l.keys));
        st.values[i] = reinterpret_cast<uint32_t*>(carve(l.keys));
    }
    st.sort_temp = carve(l.sort_temp);
    st.buckets = reinterpret_cast<bucket_mem_t*>(carve(l.buckets));
    if (l.pass_buckets != 0)
        st.pass_buckets = reinterpret_cast<bucket_mem_t*>(carve(l.pass_buckets));
    const uint64_t part_bytes = align256(uint64_t(st.share_threads) * 2 * sizeof(bucket_mem_t));
    st.parts = reinterpret_cast<bucket_mem_t*>(carve(part_bytes));
    st.part_keys = reinterpret_cast<uint32_t*>(carve(l.parts - part_bytes));
    st.sums = reinterpret_cast<bucket_mem_t*>(carve(l.sums));
    st.windows = reinterpret_cast<window_info_t*>(carve(l.windows));
    st.totals = cuda_pinned_buffer_t(size_t(sh.r) * sh.weighing.size() * sizeof(bucket_mem_t));

    const cudaStream_t s = impl.stream(0);
    std::vector<window_info_t> info(sh.r);
    for (unsigned q = 0; q < sh.r; q++)
        info[q] = window_info_t{sh.bucket_at[q], sh.slots[q], 0};
    CUZK_CUDA_OK(cudaMemcpyAsync(st.windows, info.data(), sh.r * sizeof(window_info_t),
                                 cudaMemcpyHostToDevice, s));
    // Level j = 2^W times level j - 1 (W: a level's bits); level 0 is the
    // point set.
    const unsigned block = 128;
    for (unsigned j = 1; j < sh.levels; j++) {
        const auto* prev = reinterpret_cast<const affine_fields_mem_t*>(
            j == 1 ? static_cast<const affine_mem_t*>(points.device_data())
                   : st.table + size_t(j - 2) * n);
        auto* next = reinterpret_cast<affine_fields_mem_t*>(st.table + size_t(j - 1) * n);
        table_level<<<ceil_div(n, block), block, 0, s>>>(next, prev, static_cast<uint32_t>(n),
                                                          sh.stride);
        CUZK_CUDA_LAUNCHED(table_level);
    }
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
}

cuda_msm_table_t::~cuda_msm_table_t() = default;

size_t cuda_msm_table_t::size() const noexcept { return impl_->n; }
unsigned cuda_msm_table_t::window_bits() const noexcept
{
    const auto& w = impl_->shape->plan.widths;
    return *std::max_element(w.begin(), w.end());
}
unsigned cuda_msm_table_t::levels() const noexcept { return impl_->shape->levels; }
const cuda_msm_table_t::plan_t& cuda_msm_table_t::plan() const noexcept
{
    return impl_->shape->plan;
}
uint64_t cuda_msm_table_t::bytes() const noexcept { return impl_->total_bytes; }
cuda_device_t& cuda_msm_table_t::device() const noexcept { return impl_->device; }

void cuda_msm_table_t::msm(blst_p1& out, const cuda_fr_buffer_t& scalars, size_t n,
                           cuda_scalar_layout_t layout) const
{
    CUZK_REQUIRE(n <= impl_->n && n <= scalars.size(),
                 "cuda_msm_table_t::msm: n exceeds the points or the scalars");
    CUZK_REQUIRE(&scalars.device() == &impl_->device,
                 "cuda_msm_table_t::msm: scalars on another device");
    const unsigned rev = layout.bit_reversed_log;
    CUZK_REQUIRE(
        rev == 0 || (rev <= 31 && ((size_t(1) << rev) == n || (size_t(1) << rev) == n + 1)),
        "cuda_msm_table_t::msm: bit-reversed scalars need n = 2^L or 2^L - 1");
    std::memset(&out, 0, sizeof(out));
    if (n == 0)
        return;
    auto& st = *impl_;
    const shape_t& sh = *st.shape;
    std::lock_guard<std::mutex> guard(st.busy);
    auto& impl = st.device.impl();
    impl.select();
    const cudaStream_t s = impl.stream(0);
    const auto* all = static_cast<const fr_t*>(scalars.device_data());
    const auto* points = static_cast<const affine_mem_t*>(st.points.device_data());
    const size_t shared = sum_threads * sizeof(bucket_mem_t);
    blst_fp* totals = st.totals.as<blst_fp>();
    static_assert(sizeof(blst_fp) * 4 == sizeof(bucket_mem_t), "XYZZ layout");

    // One sub-window (its levels' terms) at a time, in equal chunks of at
    // most its chunk of scalars: the first chunk sums into the sub-window's
    // buckets, a later one into pass_buckets, then added to them; then one
    // weighing.
    size_t passes = 0;
    step_clock_t clock(s);
    for (unsigned q = 0; q < sh.r; q++) {
        bucket_mem_t* window = st.buckets + sh.bucket_at[q];
        const unsigned levels = sh.window_levels[q];
        const digit_pass_t pass = sh.pass(q);
        const size_t chunks = (n + sh.chunk[q] - 1) / sh.chunk[q];
        const size_t per_chunk = (n + chunks - 1) / chunks;
        const size_t window_bytes = size_t(sh.slots[q]) * sizeof(bucket_mem_t);
        for (size_t first = 0; first < n; first += per_chunk) {
            const size_t count = std::min(per_chunk, n - first);
            bucket_mem_t* buckets = first == 0 ? window : st.pass_buckets;
            CUZK_CUDA_OK(cudaMemsetAsync(buckets, 0, window_bytes, s));
            const uint32_t m = static_cast<uint32_t>(count * levels);
            // One wave of full occupancy.
            const uint32_t digit_blocks =
                std::min(ceil_div(count, 256), uint32_t(impl.info.sm_count) * 8);
            make_digits<<<digit_blocks, 256, 0, s>>>(
                st.keys[0], st.values[0], all, static_cast<uint32_t>(count),
                static_cast<uint32_t>(first), static_cast<uint32_t>(st.n), pass,
                layout.canonical, rev);
            CUZK_CUDA_LAUNCHED(make_digits);
            clock.mark(step_clock_t::digits);

            cub::DoubleBuffer<uint32_t> keys(st.keys[0], st.keys[1]);
            cub::DoubleBuffer<uint32_t> values(st.values[0], st.values[1]);
            size_t temp_bytes = st.sort_temp_bytes;
            CUZK_CUDA_OK(cub::DeviceRadixSort::SortPairs(st.sort_temp, temp_bytes, keys, values,
                                                         static_cast<int>(m), 0,
                                                         int(sh.plan.widths[q]), s));
            clock.mark(step_clock_t::sort);

            const unsigned block = st.accumulate.block;
            st.accumulate.kernel<<<st.share_threads / block, block, 0, s>>>(
                buckets, st.part_keys, st.parts, keys.Current(), values.Current(), points,
                st.table, static_cast<uint32_t>(st.n), m);
            CUZK_CUDA_LAUNCHED(accumulate_shares);
            clock.mark(step_clock_t::accumulate);
            const uint32_t slots = 2 * st.share_threads;
            fix_up<<<ceil_div(slots, 256), 256, 0, s>>>(buckets, st.part_keys, st.parts, slots);
            CUZK_CUDA_LAUNCHED(fix_up);
            if (first != 0) {
                merge_buckets<<<uint32_t(impl.info.sm_count) * 8, 256, 0, s>>>(window, buckets,
                                                                                sh.slots[q]);
                CUZK_CUDA_LAUNCHED(merge_buckets);
            }
            clock.mark(step_clock_t::fix_up);
            passes++;
        }
    }
    // The weighing, level by level (each level's A and R in the sort's
    // buffers, free now), then each level's A summed per sub-window: two
    // block passes, the totals of level v at totals_at[v * r + q].
    const size_t levels_w = sh.weighing.size();
    bucket_mem_t* const weighed = reinterpret_cast<bucket_mem_t*>(st.keys[0]);
    for (size_t v = 0; v < levels_w; v++) {
        const weigh_level_t& w = sh.weighing[v];
        const uint32_t groups = sh.r * w.per_window;
        bucket_mem_t* A = weighed + w.at;
        bucket_mem_t* R = A + groups;
        const bucket_mem_t* in = st.buckets;
        const window_info_t* windows = st.windows;
        uint32_t len = 0;
        if (v != 0) {
            const weigh_level_t& before = sh.weighing[v - 1];
            in = weighed + before.at + uint64_t(sh.r) * before.per_window;  // its R
            windows = nullptr;
            len = before.per_window;
        }
        weigh_level<<<ceil_div(groups, weigh_threads), weigh_threads, 0, s>>>(
            A, R, in, windows, len, w.span, w.per_window, groups);
        CUZK_CUDA_LAUNCHED(weigh_level);
    }
    clock.mark(step_clock_t::weigh);
    bucket_mem_t* totals_at = st.sums + size_t(sh.r) * sh.blocks_first_max;
    for (size_t v = 0; v < levels_w; v++) {
        const weigh_level_t& w = sh.weighing[v];
        const bucket_mem_t* A = weighed + w.at;
        sum_blocks<<<sh.r * w.blocks_first, sum_threads, shared, s>>>(
            st.sums, A, w.per_window, sum_threads, w.blocks_first);
        CUZK_CUDA_LAUNCHED(sum_blocks);
        sum_blocks<<<sh.r, sum_threads, shared, s>>>(totals_at + v * sh.r, st.sums,
                                                     w.blocks_first, w.blocks_first, 1);
        CUZK_CUDA_LAUNCHED(sum_blocks);
    }
    CUZK_CUDA_OK(cudaMemcpyAsync(totals, totals_at, levels_w * sh.r * sizeof(bucket_mem_t),
                                 cudaMemcpyDeviceToHost, s));
    clock.mark(step_clock_t::sum);
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
    clock.report(n, passes, sh.plan);

    // Sub-window q's sum_b b S_b = T_q1 + span_1 (T_q2 + span_2 (T_q3 + ...)),
    // T_qv the level-v total; then sum_q 2^(pre_q) of those, by Horner from
    // the top sub-window.
    for (unsigned q = sh.r; q-- > 0;) {
        for (unsigned d = 0; d < sh.plan.widths[q] && q + 1 < sh.r; d++)
            blst_p1_double(&out, &out);
        blst_p1 window;
        std::memset(&window, 0, sizeof(window));
        for (size_t v = levels_w; v-- > 0;) {
            for (uint32_t m = 1; m < sh.weighing[v].span && v + 1 < levels_w; m *= 2)
                blst_p1_double(&window, &window);
            window = p1_add(window, xyzz_to_jacobian(&totals[4 * (v * sh.r + q)]));
        }
        out = p1_add(out, window);
    }
}

}  // namespace cuzk
