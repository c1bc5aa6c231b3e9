// G1 MSM over a fixed point set with precomputed shifted copies
// (cuzk/cuda/msm_table.hpp). The r windows (bucket sets) one at a time, each
// in chunks of scalars of at most 2^28 terms (a term a scalar and level),
// the steps of a pass all on stream 0:
//   digits      each scalar cut into k signed c-bit digits, those of the
//               window kept: the key (|d|, the bucket) and the value
//               (table index, sign in bit 31) of every term
//   sort        CUB's radix sort of the terms by key
//   accumulate  the sorted terms cut into equal shares, one per thread;
//               each thread sums its runs of equal keys (XYZZ += affine):
//               runs inside its share are whole buckets, written directly;
//               its first and last runs go to a list of partial sums
//   fix up      each bucket that has partial sums gets their total
//   merge       a later chunk's buckets added to the window's
// then once per call:
//   weigh       sum_b b * S_b: each thread takes a range of buckets and
//               returns sum (b - lo) S_b + lo * sum S_b
//   sum         the threads' results, in two block-level passes per window
// The host converts each window's XYZZ sum and combines the windows
// (Horner, c doublings each). A window at a time, rather than every
// window of a chunk of scalars, leaves a merge only where one window's
// terms outgrow a pass: 4 of 2^21 buckets at 2^27 instead of 24.

#include "blst_compat.cuh"

#include "sppark_g1.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
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
constexpr uint32_t weigh_span = 64;  // buckets per weighing thread

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
    void report(size_t n, size_t passes, unsigned c, unsigned levels, unsigned r) const
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
                     "msm_table n=%zu c=%u levels=%u windows/level=%u passes=%zu: digits %.2f "
                     "sort %.2f accumulate %.2f fix-up+merge %.2f weigh %.2f sum %.2f ms\n",
                     n, c, levels, r, passes, ms[digits], ms[sort], ms[accumulate], ms[fix_up],
                     ms[weigh], ms[sum]);
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

// Window q's terms of scalars first .. first + count (global indices into
// the point set of n points), scalars[0..count) being theirs. Window w of
// scalar g reads level j = w / r (2^(c r j) P_g) at sub-window q = w % r;
// the pass for q takes the windows j r + q, each scalar's term for level j
// at j * count + (g - first), with the key |d| (0 for d = 0, skipped) and
// the value (j * n + g) | sign << 31. Digits are signed: a digit above
// 2^(c-1) becomes d - 2^c with a carry into the next window, so every
// window below is cut too.
__global__ void make_digits(uint32_t* keys, uint32_t* values, const fr_t* scalars, uint32_t count,
                            uint32_t first, uint32_t n, uint32_t c, uint32_t k, uint32_t r,
                            uint32_t q)
{
#ifdef __CUDA_ARCH__
    const uint32_t mask = (1u << c) - 1;
    const uint32_t half = 1u << (c - 1);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += gridDim.x * blockDim.x) {
        fr_t s = scalars[i];
        s.from();
        uint32_t w[8];
#pragma unroll
        for (int x = 0; x < 8; x++)
            w[x] = s[x];
        uint32_t carry = 0;
#pragma unroll 1
        for (uint32_t win = 0; win < k; win++) {
            const uint32_t off = win * c;
            const uint32_t at_word = off / 32;
            uint64_t bits = at_word < 8 ? w[at_word] : 0;
            if (at_word + 1 < 8)
                bits |= uint64_t(w[at_word + 1]) << 32;
            uint32_t d = (uint32_t(bits >> (off % 32)) & mask) + carry;
            uint32_t sign = 0;
            if (d > half) {
                d = (1u << c) - d;
                sign = 1;
                carry = 1;
            } else {
                carry = 0;
            }
            if (win % r != q)
                continue;
            const uint32_t level = win / r;
            const size_t at = size_t(level) * count + i;
            keys[at] = d;
            values[at] = (level * n + first + i) | (sign << 31);
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

// Window q's buckets are buckets[q * slots + b] for b < slots (b = 0
// unused). out[g] for group g = q * per_window + l: sum_{b in [lo, hi)}
// b S_b with lo = l * span, hi = min(lo + span, slots). With R = sum S_b
// and A = sum (b - lo) S_b (running sums from the top) that is A + lo R.
__launch_bounds__(weigh_threads) __global__
void weigh(bucket_mem_t* out, const bucket_mem_t* buckets, uint32_t slots, uint32_t span,
           uint32_t per_window, uint32_t groups)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups)
        return;
    const bucket_mem_t* window = buckets + size_t(g / per_window) * slots;
    const uint32_t lo = (g % per_window) * span;
    const uint32_t hi = min32(lo + span, slots);
    bucket_t running, acc;
    running.inf();
    acc.inf();
#pragma unroll 1
    for (uint32_t b = hi - 1; b > lo; b--) {
        bucket_t s = window[b];
        running.add(s);
        acc.add(running);
    }
    {
        bucket_t s = window[lo];
        running.add(s);
    }
    // lo R by double-and-add from the top bit.
    bucket_t scaled;
    scaled.inf();
#pragma unroll 1
    for (int bit = 31 - __clz(lo | 1); bit >= 0 && lo != 0; bit--) {
        bucket_t twice = scaled;
        scaled.add(twice);
        if ((lo >> bit) & 1)
            scaled.add(running);
    }
    acc.add(scaled);
    out[g] = acc;
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

struct cuda_msm_table_t::impl_t {
    cuda_device_t& device;
    const cuda_points_t& points;  // level 0
    size_t n = 0;
    unsigned c = 0, k = 0;
    unsigned levels = 0;   // stored: 1 .. levels - 1 in `table`
    unsigned r = 0;        // windows (bucket sets) per level
    uint32_t slots = 0;    // per window: 2^(c-1) + 1, slot 0 unused
    uint32_t span = 0;     // buckets per weighing thread
    uint32_t per_window = 0;
    uint32_t sum_blocks_first = 0;  // blocks per window in the first sum pass
    size_t chunk = 0;      // scalars per pass (chunk * k terms)
    uint32_t share_threads = 0;
    accumulate_choice_t accumulate{};
    unsigned sort_bits = 0;
    size_t sort_temp_bytes = 0;
    uint64_t total_bytes = 0;
    void* base = nullptr;  // one allocation, carved below
    affine_mem_t* table = nullptr;
    uint32_t* keys[2] = {nullptr, nullptr};
    uint32_t* values[2] = {nullptr, nullptr};
    void* sort_temp = nullptr;
    bucket_mem_t* buckets = nullptr;       // the first pass's, then the sums
    bucket_mem_t* pass_buckets = nullptr;  // a later pass's (null: one pass)
    uint32_t* part_keys = nullptr;
    bucket_mem_t* parts = nullptr;
    bucket_mem_t* weighed = nullptr;
    bucket_mem_t* sums = nullptr;
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

// Terms per pass at most (4 sort buffers of 4 bytes a term: 4 GiB).
constexpr uint64_t max_chunk_terms = uint64_t(1) << 28;
// Accumulation threads assumed by bytes_for (the real count is the
// device's resident maximum, 50,688 on an H200).
constexpr uint32_t planned_share_threads = uint32_t(1) << 17;

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

// The shape of a table: n points, width c, at most `levels` stored levels.
struct shape_t {
    unsigned c, k, levels, r;
    uint32_t slots, span, per_window, sum_blocks_first;
    size_t chunk;
    unsigned sort_bits;

    shape_t(size_t n, unsigned c_, unsigned levels_, uint64_t pass_terms = 0) : c(c_)
    {
        k = cuda_msm_table_t::windows_for(c);
        const unsigned want = levels_ == 0 ? k : std::min(levels_, k);
        r = (k + want - 1) / want;
        levels = (k + r - 1) / r;
        slots = (1u << (c - 1)) + 1;
        span = std::min<uint32_t>(weigh_span, 1u << (c - 1));
        per_window = ceil_div(slots, span);
        sum_blocks_first = ceil_div(per_window, sum_threads);
        const uint64_t terms = pass_terms == 0 ? max_chunk_terms : pass_terms;
        // A pass: one window's terms (one per level) of `chunk` scalars.
        chunk = static_cast<size_t>(std::min<uint64_t>(n, std::max<uint64_t>(terms / levels, 1)));
        const uint64_t top_key = slots - 1;
        sort_bits = 1;
        while ((top_key >> sort_bits) != 0)
            sort_bits++;
    }
    uint64_t buckets() const { return uint64_t(r) * slots; }
};

struct layout_t {
    uint64_t table, keys, sort_temp, buckets, pass_buckets, parts, weighed, sums, total;
};

layout_t layout(size_t n, const shape_t& sh, uint32_t share_threads, size_t sort_temp_bytes)
{
    const uint64_t terms = uint64_t(sh.chunk) * sh.levels;
    layout_t l;
    l.table = align256(uint64_t(sh.levels - 1) * n * sizeof(affine_mem_t));
    l.keys = align256(terms * sizeof(uint32_t));
    l.sort_temp = align256(sort_temp_bytes);
    l.buckets = align256(sh.buckets() * sizeof(bucket_mem_t));
    l.parts = align256(uint64_t(share_threads) * 2 * sizeof(bucket_mem_t)) +
              align256(uint64_t(share_threads) * 2 * sizeof(uint32_t));
    l.weighed = align256(uint64_t(sh.r) * sh.per_window * sizeof(bucket_mem_t));
    l.sums = align256(uint64_t(sh.r) * (sh.sum_blocks_first + 1) * sizeof(bucket_mem_t));
    // A window's buckets for its later chunks of scalars, when there are.
    l.pass_buckets = sh.chunk < n ? align256(uint64_t(sh.slots) * sizeof(bucket_mem_t)) : 0;
    l.total = l.table + 4 * l.keys + l.sort_temp + l.buckets + l.pass_buckets + l.parts +
              l.weighed + l.sums;
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

}  // namespace

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
    if (window_bits == 0)
        window_bits = default_window_bits(n);
    const shape_t sh(n, window_bits, levels);
    // Sort temporaries: CUB's double-buffer sort needs little beyond the
    // buffers; count a buffer's worth.
    const uint64_t terms = uint64_t(sh.chunk) * sh.levels;
    return layout(n, sh, planned_share_threads, terms * sizeof(uint32_t)).total;
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

cuda_msm_table_t::cuda_msm_table_t(const cuda_points_t& points, unsigned window_bits,
                                   unsigned levels, uint64_t pass_terms)
    : impl_(std::make_unique<impl_t>(points))
{
    const size_t n = points.size();
    if (window_bits == 0)
        window_bits = default_window_bits(n);
    CUZK_REQUIRE(window_bits >= min_window_bits && window_bits <= max_window_bits,
                 "cuda_msm_table_t: window bits out of range");
    CUZK_REQUIRE(n > 0, "cuda_msm_table_t: no points");
    CUZK_REQUIRE(pass_terms <= max_chunk_terms, "cuda_msm_table_t: passes of at most 2^28 terms");
    const shape_t sh(n, window_bits, levels, pass_terms);
    CUZK_REQUIRE(uint64_t(sh.levels) * n < (uint64_t(1) << 31),
                 "cuda_msm_table_t: more than 2^31 stored points");
    auto& st = *impl_;
    auto& impl = points.device().impl();
    impl.select();
    st.n = n;
    st.c = sh.c;
    st.k = sh.k;
    st.levels = sh.levels;
    st.r = sh.r;
    st.slots = sh.slots;
    st.span = sh.span;
    st.per_window = sh.per_window;
    st.sum_blocks_first = sh.sum_blocks_first;
    st.chunk = sh.chunk;
    st.sort_bits = sh.sort_bits;
    st.accumulate = accumulate_choice();
    st.share_threads = share_threads_for(impl, st.accumulate);
    st.sort_temp_bytes = sort_temp_for(uint64_t(sh.chunk) * sh.levels, sh.sort_bits);
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
    st.weighed = reinterpret_cast<bucket_mem_t*>(carve(l.weighed));
    st.sums = reinterpret_cast<bucket_mem_t*>(carve(l.sums));
    st.totals = cuda_pinned_buffer_t(size_t(sh.r) * sizeof(bucket_mem_t));

    // Level j = 2^(c r) times level j - 1; level 0 is the point set.
    const cudaStream_t s = impl.stream(0);
    const unsigned block = 128;
    for (unsigned j = 1; j < sh.levels; j++) {
        const auto* prev = reinterpret_cast<const affine_fields_mem_t*>(
            j == 1 ? static_cast<const affine_mem_t*>(points.device_data())
                   : st.table + size_t(j - 2) * n);
        auto* next = reinterpret_cast<affine_fields_mem_t*>(st.table + size_t(j - 1) * n);
        table_level<<<ceil_div(n, block), block, 0, s>>>(next, prev, static_cast<uint32_t>(n),
                                                          sh.c * sh.r);
        CUZK_CUDA_LAUNCHED(table_level);
    }
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
}

cuda_msm_table_t::~cuda_msm_table_t() = default;

size_t cuda_msm_table_t::size() const noexcept { return impl_->n; }
unsigned cuda_msm_table_t::window_bits() const noexcept { return impl_->c; }
unsigned cuda_msm_table_t::levels() const noexcept { return impl_->levels; }
uint64_t cuda_msm_table_t::bytes() const noexcept { return impl_->total_bytes; }
cuda_device_t& cuda_msm_table_t::device() const noexcept { return impl_->device; }

void cuda_msm_table_t::msm(blst_p1& out, const cuda_fr_buffer_t& scalars, size_t n) const
{
    CUZK_REQUIRE(n <= impl_->n && n <= scalars.size(),
                 "cuda_msm_table_t::msm: n exceeds the points or the scalars");
    CUZK_REQUIRE(&scalars.device() == &impl_->device,
                 "cuda_msm_table_t::msm: scalars on another device");
    std::memset(&out, 0, sizeof(out));
    if (n == 0)
        return;
    auto& st = *impl_;
    std::lock_guard<std::mutex> guard(st.busy);
    auto& impl = st.device.impl();
    impl.select();
    const cudaStream_t s = impl.stream(0);
    const auto* all = static_cast<const fr_t*>(scalars.device_data());
    const auto* points = static_cast<const affine_mem_t*>(st.points.device_data());
    const size_t shared = sum_threads * sizeof(bucket_mem_t);
    const uint32_t groups = st.r * st.per_window;
    blst_fp* totals = st.totals.as<blst_fp>();
    static_assert(sizeof(blst_fp) * 4 == sizeof(bucket_mem_t), "XYZZ layout");

    // One window (its levels' terms) at a time, in equal chunks of at most
    // st.chunk scalars: the first chunk sums into the window's buckets, a
    // later one into pass_buckets, then added to them; then one weighing.
    const size_t chunks = (n + st.chunk - 1) / st.chunk;
    const size_t per_chunk = (n + chunks - 1) / chunks;
    const size_t window_bytes = size_t(st.slots) * sizeof(bucket_mem_t);
    step_clock_t clock(s);
    for (unsigned q = 0; q < st.r; q++) {
        bucket_mem_t* window = st.buckets + size_t(q) * st.slots;
        const unsigned levels = (st.k - q + st.r - 1) / st.r;
        for (size_t first = 0; first < n; first += per_chunk) {
            const size_t count = std::min(per_chunk, n - first);
            bucket_mem_t* buckets = first == 0 ? window : st.pass_buckets;
            CUZK_CUDA_OK(cudaMemsetAsync(buckets, 0, window_bytes, s));
            const uint32_t m = static_cast<uint32_t>(count * levels);
            // One wave of full occupancy (23 registers a thread).
            const uint32_t digit_blocks =
                std::min(ceil_div(count, 256), uint32_t(impl.info.sm_count) * 8);
            make_digits<<<digit_blocks, 256, 0, s>>>(
                st.keys[0], st.values[0], all + first, static_cast<uint32_t>(count),
                static_cast<uint32_t>(first), static_cast<uint32_t>(st.n), st.c, st.k, st.r, q);
            CUZK_CUDA_LAUNCHED(make_digits);
            clock.mark(step_clock_t::digits);

            cub::DoubleBuffer<uint32_t> keys(st.keys[0], st.keys[1]);
            cub::DoubleBuffer<uint32_t> values(st.values[0], st.values[1]);
            size_t temp_bytes = st.sort_temp_bytes;
            CUZK_CUDA_OK(cub::DeviceRadixSort::SortPairs(st.sort_temp, temp_bytes, keys, values,
                                                         static_cast<int>(m), 0,
                                                         int(st.sort_bits), s));
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
                                                                                st.slots);
                CUZK_CUDA_LAUNCHED(merge_buckets);
            }
            clock.mark(step_clock_t::fix_up);
        }
    }
    const size_t passes = size_t(st.r) * chunks;
    weigh<<<ceil_div(groups, weigh_threads), weigh_threads, 0, s>>>(
        st.weighed, st.buckets, st.slots, st.span, st.per_window, groups);
    CUZK_CUDA_LAUNCHED(weigh);
    clock.mark(step_clock_t::weigh);
    // Per window: blocks of sum_threads groups, then the blocks.
    sum_blocks<<<st.r * st.sum_blocks_first, sum_threads, shared, s>>>(
        st.sums, st.weighed, st.per_window, sum_threads, st.sum_blocks_first);
    CUZK_CUDA_LAUNCHED(sum_blocks);
    bucket_mem_t* window_totals = st.sums + size_t(st.r) * st.sum_blocks_first;
    sum_blocks<<<st.r, sum_threads, shared, s>>>(window_totals, st.sums, st.sum_blocks_first,
                                                 st.sum_blocks_first, 1);
    CUZK_CUDA_LAUNCHED(sum_blocks);
    CUZK_CUDA_OK(cudaMemcpyAsync(totals, window_totals, st.r * sizeof(bucket_mem_t),
                                 cudaMemcpyDeviceToHost, s));
    clock.mark(step_clock_t::sum);
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
    clock.report(n, passes, st.c, st.levels, st.r);

    // sum_q 2^(c q) T_q, by Horner from the top window.
    for (unsigned q = st.r; q-- > 0;) {
        for (unsigned d = 0; d < st.c && q + 1 < st.r; d++)
            blst_p1_double(&out, &out);
        out = p1_add(out, xyzz_to_jacobian(&totals[4 * size_t(q)]));
    }
}

}  // namespace cuzk
