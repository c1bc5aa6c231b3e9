// G1 MSM over a fixed point set with precomputed shifted copies
// (cuzk/cuda/msm_table.hpp). The steps of one call, all on stream 0:
//   digits      each scalar cut into k signed c-bit digits: the key |d| and
//               the value (table index, sign in bit 31) of every term
//   sort        CUB's radix sort of the terms by key (c bits)
//   accumulate  the sorted terms cut into equal shares, one per thread;
//               each thread sums its runs of equal keys (XYZZ += affine):
//               runs inside its share are whole buckets, written directly;
//               its first and last runs go to a list of partial sums
//   fix up      each bucket that has partial sums gets their total
//   weigh       sum_b b * S_b: each thread takes a range of buckets and
//               returns sum (b - lo) S_b + lo * sum S_b
//   sum         the threads' results, in two block-level passes
// The only host work is the last XYZZ-to-Jacobian conversion.

#include "blst_compat.cuh"

#include "sppark_g1.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/msm_table.hpp"

namespace cuzk {

namespace {

using bucket_mem_t = bucket_t::mem_t;
using affine_mem_t = affine_t::mem_t;

constexpr uint32_t no_key = 0xffffffffu;  // a share with no terms
constexpr unsigned accumulate_threads = 384;  // at most 170 registers: one block an SM
constexpr unsigned weigh_threads = 128;
constexpr unsigned sum_threads = 128;
constexpr uint32_t weigh_span = 64;  // buckets per weighing thread

__host__ __device__ __forceinline__ uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
__host__ __device__ __forceinline__ uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

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

// Term (i, j) for scalar i < n, window j < k: key |d_ij| and value
// (j * stride + i) | sign << 31, at j * n + i. Digits are signed: a digit
// above 2^(c-1) becomes d - 2^c with a carry into the next window.
__global__ void make_digits(uint32_t* keys, uint32_t* values, const fr_t* scalars, uint32_t n,
                            uint32_t stride, uint32_t c, uint32_t k)
{
#ifdef __CUDA_ARCH__
    const uint32_t mask = (1u << c) - 1;
    const uint32_t half = 1u << (c - 1);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t s = scalars[i];
        s.from();
        uint32_t w[8];
#pragma unroll
        for (int q = 0; q < 8; q++)
            w[q] = s[q];
        uint32_t carry = 0;
#pragma unroll 1
        for (uint32_t j = 0; j < k; j++) {
            const uint32_t off = j * c;
            const uint32_t q = off / 32;
            uint64_t bits = q < 8 ? w[q] : 0;
            if (q + 1 < 8)
                bits |= uint64_t(w[q + 1]) << 32;
            uint32_t d = (uint32_t(bits >> (off % 32)) & mask) + carry;
            uint32_t sign = 0;
            if (d > half) {
                d = (1u << c) - d;
                sign = 1;
                carry = 1;
            } else {
                carry = 0;
            }
            const size_t at = size_t(j) * n + i;
            keys[at] = d;
            values[at] = (j * stride + i) | (sign << 31);
        }
    }
#endif
}

// The sorted terms [first nonzero key, m) in equal shares, one per thread.
// Runs of one key strictly inside a share are whole buckets; a share's
// first run goes to partial slot 2t, its last to 2t + 1 (a share of one
// run: the run at 2t, infinity with the same key at 2t + 1). Shares
// without terms (only at the end) mark both slots no_key.
__launch_bounds__(accumulate_threads) __global__
void accumulate_shares(bucket_mem_t* buckets, uint32_t* part_keys, bucket_mem_t* parts,
                       const uint32_t* keys, const uint32_t* values, const affine_mem_t* table,
                       uint32_t m)
{
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
    affine_t p = table[value & 0x7fffffff];
#pragma unroll 1
    for (uint32_t x = begin; x < end;) {
        const uint32_t sign = value >> 31;
        const affine_t here = p;
        x++;
        uint32_t next_key = no_key;
        if (x < end) {  // load the next term before adding this one
            next_key = keys[x];
            value = values[x];
            p = table[value & 0x7fffffff];
        }
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
            } else {
                buckets[key] = acc;
            }
            acc.inf();
            key = next_key;
        }
    }
}

// Buckets with partial sums: the first slot of each key adds up the run
// of slots with that key (the slots' keys never decrease).
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

// out[g] = sum_{b in [lo, hi)} b S_b for lo = g * weigh_span, hi = lo +
// weigh_span (at most nbuckets): with R = sum S_b and A = sum (b - lo) S_b
// (running sums from the top), the result is A + lo R.
__launch_bounds__(weigh_threads) __global__
void weigh(bucket_mem_t* out, const bucket_mem_t* buckets, uint32_t nbuckets, uint32_t groups)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups)
        return;
    const uint32_t lo = g * weigh_span;
    const uint32_t hi = min32(lo + weigh_span, nbuckets);
    bucket_t running, acc;
    running.inf();
    acc.inf();
#pragma unroll 1
    for (uint32_t b = hi - 1; b > lo; b--) {
        bucket_t s = buckets[b];
        running.add(s);
        acc.add(running);
    }
    {
        bucket_t s = buckets[lo];
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

// out[blockIdx.x] = the sum of in[blockIdx.x * per .. + per) (below n).
__launch_bounds__(sum_threads) __global__
void sum_blocks(bucket_mem_t* out, const bucket_mem_t* in, uint32_t n, uint32_t per)
{
    extern __shared__ uint4 shared_words[];
    auto* partial = reinterpret_cast<bucket_mem_t*>(shared_words);
    const uint32_t lo = blockIdx.x * per;
    const uint32_t hi = min32(lo + per, n);
    bucket_t acc;
    acc.inf();
    for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        bucket_t p = in[i];
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


}  // namespace

// ------------------------------------------------------------------ table

struct cuda_msm_table_t::impl_t {
    cuda_device_t& device;
    size_t n = 0;
    unsigned c = 0, k = 0;
    uint32_t nbuckets = 0;  // keys 0..2^(c-1); 0 is never summed
    uint32_t share_threads = 0;
    uint32_t groups = 0;
    uint32_t sum_blocks_first = 0;
    size_t sort_temp_bytes = 0;
    uint64_t total_bytes = 0;
    void* base = nullptr;  // one allocation, carved below
    affine_mem_t* table = nullptr;
    uint32_t* keys[2] = {nullptr, nullptr};
    uint32_t* values[2] = {nullptr, nullptr};
    void* sort_temp = nullptr;
    bucket_mem_t* buckets = nullptr;
    uint32_t* part_keys = nullptr;
    bucket_mem_t* parts = nullptr;
    bucket_mem_t* weighed = nullptr;
    bucket_mem_t* sums = nullptr;
    mutable std::mutex busy;

    explicit impl_t(cuda_device_t& d) : device(d) {}
    ~impl_t()
    {
        if (base != nullptr) {
            device.impl().sync_all();
            device.impl().release(base, total_bytes);
        }
    }
};

namespace {

// Shares for the accumulation: as many threads as fit on the device at once.
uint32_t share_threads_for(const cuda_device_t::impl_t& impl)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, accumulate_shares,
                                                       accumulate_threads, 0) != cudaSuccess ||
        per_sm < 1)
        per_sm = 1;
    return uint32_t(impl.info.sm_count) * uint32_t(per_sm) * accumulate_threads;
}

struct layout_t {
    uint64_t table, keys, sort_temp, buckets, parts, weighed, sums, total;
};

layout_t layout(size_t n, unsigned c, uint32_t share_threads, size_t sort_temp_bytes)
{
    const unsigned k = cuda_msm_table_t::windows_for(c);
    const uint64_t terms = uint64_t(n) * k;
    const uint32_t nbuckets = (1u << (c - 1)) + 1;
    const uint32_t groups = ceil_div(nbuckets, weigh_span);
    layout_t l;
    l.table = align256(terms * sizeof(affine_mem_t));
    l.keys = align256(terms * sizeof(uint32_t));
    l.sort_temp = align256(sort_temp_bytes);
    l.buckets = align256(uint64_t(nbuckets) * sizeof(bucket_mem_t));
    l.parts = align256(uint64_t(share_threads) * 2 * (sizeof(bucket_mem_t) + sizeof(uint32_t)));
    l.weighed = align256(uint64_t(groups) * sizeof(bucket_mem_t));
    l.sums = align256(uint64_t(ceil_div(groups, sum_threads) + 1) * sizeof(bucket_mem_t));
    l.total = l.table + 4 * l.keys + l.sort_temp + l.buckets + l.parts + l.weighed + l.sums;
    return l;
}

size_t sort_temp_for(uint64_t terms, unsigned c)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
    CUZK_CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, static_cast<int>(terms), 0,
                                                 int(c)));
    return bytes;
}

}  // namespace

unsigned cuda_msm_table_t::default_window_bits(size_t n) noexcept
{
    unsigned lg = 0;
    while ((size_t(1) << lg) < n)
        lg++;
    // About 2^(lg - 1) buckets: each sees ~2k terms, and the weighing (2
    // additions a bucket) stays a few percent of the accumulation.
    return std::max(10u, std::min(22u, lg > 0 ? lg - 1 : 0));
}

unsigned cuda_msm_table_t::windows_for(unsigned window_bits) noexcept
{
    return (256 + window_bits - 1) / window_bits;
}

uint64_t cuda_msm_table_t::bytes_for(size_t n, unsigned window_bits) noexcept
{
    if (window_bits == 0)
        window_bits = default_window_bits(n);
    // Sort temporaries: CUB's double-buffer sort needs little beyond the
    // buffers; count a buffer's worth. Shares: up to 2^17 threads.
    const uint64_t terms = uint64_t(n) * windows_for(window_bits);
    return layout(n, window_bits, uint32_t(1) << 17, terms * sizeof(uint32_t)).total;
}

cuda_msm_table_t::cuda_msm_table_t(const cuda_points_t& points, unsigned window_bits)
    : impl_(std::make_unique<impl_t>(points.device()))
{
    const size_t n = points.size();
    if (window_bits == 0)
        window_bits = default_window_bits(n);
    CUZK_REQUIRE(window_bits >= min_window_bits && window_bits <= max_window_bits,
                 "cuda_msm_table_t: window bits out of range");
    CUZK_REQUIRE(n > 0, "cuda_msm_table_t: no points");
    const unsigned k = windows_for(window_bits);
    const uint64_t terms = uint64_t(n) * k;
    CUZK_REQUIRE(terms < (uint64_t(1) << 31), "cuda_msm_table_t: more than 2^31 terms");
    auto& st = *impl_;
    auto& impl = points.device().impl();
    impl.select();
    st.n = n;
    st.c = window_bits;
    st.k = k;
    st.nbuckets = (1u << (window_bits - 1)) + 1;
    st.share_threads = share_threads_for(impl);
    st.groups = ceil_div(st.nbuckets, weigh_span);
    st.sum_blocks_first = ceil_div(st.groups, sum_threads);
    st.sort_temp_bytes = sort_temp_for(terms, window_bits);
    const layout_t l = layout(n, window_bits, st.share_threads, st.sort_temp_bytes);
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
    st.parts = reinterpret_cast<bucket_mem_t*>(
        carve(align256(uint64_t(st.share_threads) * 2 * sizeof(bucket_mem_t))));
    st.part_keys = reinterpret_cast<uint32_t*>(st.parts + 2 * size_t(st.share_threads));
    at = reinterpret_cast<char*>(st.parts) + l.parts;
    st.weighed = reinterpret_cast<bucket_mem_t*>(carve(l.weighed));
    st.sums = reinterpret_cast<bucket_mem_t*>(carve(l.sums));

    // Level 0: the points; level j: 2^c times level j - 1.
    const cudaStream_t s = impl.stream(0);
    CUZK_CUDA_OK(cudaMemcpyAsync(st.table, points.device_data(), n * sizeof(affine_mem_t),
                                 cudaMemcpyDeviceToDevice, s));
    const unsigned block = 128;
    for (unsigned j = 1; j < k; j++) {
        auto* prev = reinterpret_cast<affine_fields_mem_t*>(st.table + size_t(j - 1) * n);
        auto* next = reinterpret_cast<affine_fields_mem_t*>(st.table + size_t(j) * n);
        table_level<<<ceil_div(n, block), block, 0, s>>>(next, prev, static_cast<uint32_t>(n),
                                                          window_bits);
        CUZK_CUDA_LAUNCHED(table_level);
    }
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
}

cuda_msm_table_t::~cuda_msm_table_t() = default;

size_t cuda_msm_table_t::size() const noexcept { return impl_->n; }
unsigned cuda_msm_table_t::window_bits() const noexcept { return impl_->c; }
uint64_t cuda_msm_table_t::bytes() const noexcept { return impl_->total_bytes; }
cuda_device_t& cuda_msm_table_t::device() const noexcept { return impl_->device; }

void cuda_msm_table_t::msm(blst_p1& out, const cuda_fr_buffer_t& scalars, size_t n) const
{
    CUZK_REQUIRE(n <= impl_->n && n <= scalars.size(),
                 "cuda_msm_table_t::msm: n exceeds the points or the scalars");
    CUZK_REQUIRE(&scalars.device() == &impl_->device,
                 "cuda_msm_table_t::msm: scalars on another device");
    if (n == 0) {
        std::memset(&out, 0, sizeof(out));
        return;
    }
    auto& st = *impl_;
    std::lock_guard<std::mutex> guard(st.busy);
    auto& impl = st.device.impl();
    impl.select();
    const cudaStream_t s = impl.stream(0);
    const uint32_t m = static_cast<uint32_t>(n * st.k);

    make_digits<<<uint32_t(impl.info.sm_count) * 4, 256, 0, s>>>(
        st.keys[0], st.values[0], static_cast<const fr_t*>(scalars.device_data()),
        static_cast<uint32_t>(n), static_cast<uint32_t>(st.n), st.c, st.k);
    CUZK_CUDA_LAUNCHED(make_digits);

    cub::DoubleBuffer<uint32_t> keys(st.keys[0], st.keys[1]);
    cub::DoubleBuffer<uint32_t> values(st.values[0], st.values[1]);
    size_t temp_bytes = st.sort_temp_bytes;
    CUZK_CUDA_OK(cub::DeviceRadixSort::SortPairs(st.sort_temp, temp_bytes, keys, values,
                                                 static_cast<int>(m), 0, int(st.c), s));

    CUZK_CUDA_OK(cudaMemsetAsync(st.buckets, 0, size_t(st.nbuckets) * sizeof(bucket_mem_t), s));
    accumulate_shares<<<st.share_threads / accumulate_threads, accumulate_threads, 0, s>>>(
        st.buckets, st.part_keys, st.parts, keys.Current(), values.Current(), st.table, m);
    CUZK_CUDA_LAUNCHED(accumulate_shares);
    const uint32_t slots = 2 * st.share_threads;
    fix_up<<<ceil_div(slots, 256), 256, 0, s>>>(st.buckets, st.part_keys, st.parts, slots);
    CUZK_CUDA_LAUNCHED(fix_up);
    weigh<<<ceil_div(st.groups, weigh_threads), weigh_threads, 0, s>>>(st.weighed, st.buckets,
                                                                        st.nbuckets, st.groups);
    CUZK_CUDA_LAUNCHED(weigh);
    const size_t shared = sum_threads * sizeof(bucket_mem_t);
    sum_blocks<<<st.sum_blocks_first, sum_threads, shared, s>>>(st.sums, st.weighed, st.groups,
                                                                  sum_threads);
    CUZK_CUDA_LAUNCHED(sum_blocks);
    bucket_mem_t* total = st.sums + st.sum_blocks_first;
    sum_blocks<<<1, sum_threads, shared, s>>>(total, st.sums, st.sum_blocks_first,
                                              st.sum_blocks_first);
    CUZK_CUDA_LAUNCHED(sum_blocks);
    blst_fp xyzz[4];
    static_assert(sizeof(xyzz) == sizeof(bucket_mem_t), "XYZZ layout");
    CUZK_CUDA_OK(cudaMemcpyAsync(xyzz, total, sizeof(xyzz), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA_OK(cudaStreamSynchronize(s));
    out = xyzz_to_jacobian(xyzz);
}

}  // namespace cuzk
