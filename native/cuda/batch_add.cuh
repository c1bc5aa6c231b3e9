// The sums of the points whose bit is set in a bitmap (the ones of the L,
// A, B_G1 and B_G2 sums), as msm.cu (G1) and g2.cu (G2) launch them: by
// default cuzk's share sum below, or sppark's bitmap batch addition
// (msm/batch_addition.cuh) with CUZK_ONES_KERNEL=sppark (or
// cuda_device_t::set_ones_kernel). Include after sppark's headers and
// device_impl.cuh. The share sum adds G1 points with cuzk's fused addition
// (xyzz_add.cuh), G2 points with sppark's.
#pragma once

#include <algorithm>

#include <cub/device/device_scan.cuh>
#include <msm/batch_addition.cuh>

#include "xyzz_add.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/msm.hpp"

namespace cuzk {

// A host bitmap copied into the context's scratch at `at` (room for
// cuda_bitmap_device_bytes(nbits)), zero-padded to 1024 bits, on stream 0.
inline const uint64_t* upload_bitmap(cuda_device_t::impl_t& impl, char* at, const uint64_t* bitmap,
                                     size_t nbits)
{
    const cudaStream_t s = impl.stream(0);
    CUZK_CUDA_OK(cudaMemsetAsync(at, 0, cuda_bitmap_device_bytes(nbits), s));
    CUZK_CUDA_OK(cudaMemcpyAsync(at, bitmap, (nbits + 63) / 64 * sizeof(uint64_t),
                                 cudaMemcpyHostToDevice, s));
    return reinterpret_cast<const uint64_t*>(at);
}

// ---- sppark's kernel

// Starts summing the points of d_points whose bit is set in the device
// bitmap d_bitmap[0..nbits) (readable up to cuda_bitmap_device_bytes(nbits);
// bits past nbits are ignored) on stream 0: one XYZZ bucket per warp,
// `nbuckets` of them, at d_buckets, which has room for them. The caller
// reduces the buckets (on the same stream).
template <class bucket_t, class affine_mem_t>
void launch_bitmap_batch_add(cuda_device_t::impl_t& impl, const void* d_points,
                             const uint64_t* d_bitmap, size_t nbits,
                             typename bucket_t::mem_t* d_buckets, uint32_t nbuckets)
{
    using bucket_mem_t = typename bucket_t::mem_t;
    const unsigned grid = static_cast<unsigned>(impl.info.sm_count);
    CUZK_CHECK(nbuckets == grid * BATCH_ADD_BLOCK_SIZE / WARP_SZ, "batch addition: bucket count");
    void (*kernel)(bucket_mem_t*, const affine_mem_t*, uint32_t, const uint32_t*, bool, uint32_t) =
        batch_addition<bucket_t, affine_mem_t>;
    bucket_mem_t* ret = d_buckets;
    const auto* pts = static_cast<const affine_mem_t*>(d_points);
    uint32_t npoints = static_cast<uint32_t>(nbits);
    // Little-endian: 64-bit word k holds 32-bit words 2k and 2k+1, bit order kept.
    const auto* map = reinterpret_cast<const uint32_t*>(d_bitmap);
    bool accumulate = false;
    uint32_t sid = 0;
    void* args[] = {&ret, &pts, &npoints, &map, &accumulate, &sid};
    CUZK_CUDA_OK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(grid),
                                             dim3(BATCH_ADD_BLOCK_SIZE), args, 0, impl.stream(0)));
    CUZK_CUDA_LAUNCHED(batch_addition);
}

// ---- cuzk's share sum
//
// sppark's kernel walks the bitmap inside the addition loop, one block of
// 8 warps an SM (its registers allow no more). The share sum first lists
// the set bits' indices (a popcount per 32-bit word, CUB's scan, a write
// of the indices), then gives each thread an equal share of the list, as
// the table MSM's accumulation does: the thread loads its next point while
// it adds the one before, and the warps' sums are folded by shuffles.

// 32-bit word w of the bitmap, its bits from nbits on cleared.
static __device__ __forceinline__ uint32_t word_below(const uint32_t* words, uint32_t w,
                                                      uint32_t nwords, uint32_t nbits)
{
    const uint32_t word = words[w];
    return w == nwords - 1 && nbits % 32 != 0 ? word & ((1u << (nbits % 32)) - 1) : word;
}

// counts[w] = the set bits of 32-bit word w below nbits.
static __global__ void count_ones(uint32_t* counts, const uint32_t* words, uint32_t nwords,
                                  uint32_t nbits)
{
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords;
         w += gridDim.x * blockDim.x)
        counts[w] = __popc(word_below(words, w, nwords, nbits));
}

// The indices of the set bits below nbits, in order, from offsets[w] (the
// exclusive prefix sum of count_ones' counts); the count at total.
static __global__ void list_ones(uint32_t* indices, uint32_t* total, const uint32_t* offsets,
                                 const uint32_t* counts, const uint32_t* words, uint32_t nwords,
                                 uint32_t nbits)
{
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords;
         w += gridDim.x * blockDim.x) {
        uint32_t word = word_below(words, w, nwords, nbits);
        for (uint32_t at = offsets[w]; word != 0; word &= word - 1)
            indices[at++] = w * 32 + (__ffs(word) - 1);
        if (w == nwords - 1)
            *total = offsets[w] + counts[w];
    }
}

constexpr unsigned share_sum_block = 256;

// Thread pair (or single thread, degree 1) p of `lanes` sums the points
// indices[p * share, (p + 1) * share) of the *total listed; each warp's
// sums are folded into its lane 0, stored at sums[warp].
template <class bucket_t, class affine_mem_t>
__launch_bounds__(share_sum_block) __global__
void share_sum(typename bucket_t::mem_t* sums, const affine_mem_t* points,
               const uint32_t* indices, const uint32_t* total)
{
    using affine_t = typename bucket_t::affine_t;
    constexpr uint32_t degree = bucket_t::degree;
    constexpr uint32_t warp_lanes = WARP_SZ / degree;
    const uint32_t lanes = gridDim.x * blockDim.x / degree;
    const uint32_t lane = (blockIdx.x * blockDim.x + threadIdx.x) / degree;
    const uint32_t m = *total;
    const uint32_t share = (m + lanes - 1) / lanes;
    const uint64_t begin64 = uint64_t(lane) * share;
    const uint32_t begin = begin64 < m ? uint32_t(begin64) : m;
    const uint32_t end = uint32_t(min(begin64 + share, uint64_t(m)));
    bucket_t acc;
    acc.inf();
    if (begin < end) {
        affine_t p = points[indices[begin]];
#pragma unroll 1
        for (uint32_t x = begin; x < end;) {
            const affine_t here = p;
            if (++x < end)  // load the next point before adding this one
                p = points[indices[x]];
            if constexpr (degree == 2)
                acc.uadd(here);
            else
                add_mixed(acc, here);
        }
    }
    const uint32_t xid = lane % warp_lanes;
    for (uint32_t off = 1; off < warp_lanes;) {
        auto down = shfl_down(acc, off * degree);
        off <<= 1;
        if ((xid & (off - 1)) == 0)
            acc.uadd(down);
    }
    if (xid == 0)
        sums[lane / warp_lanes] = acc;
}

// The share sum's grid: as many blocks as fit on the device at once.
template <class bucket_t, class affine_mem_t>
unsigned share_sum_grid(const cuda_device_t::impl_t& impl)
{
    static const int per_sm = [] {
        int n = 0;
        void (*kernel)(typename bucket_t::mem_t*, const affine_mem_t*, const uint32_t*,
                       const uint32_t*) = share_sum<bucket_t, affine_mem_t>;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &n, reinterpret_cast<const void*>(kernel), share_sum_block, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            n = 1;
        }
        return n < 1 ? 1 : n;
    }();
    return static_cast<unsigned>(impl.info.sm_count) * static_cast<unsigned>(per_sm);
}

// The buckets a bitmap sum leaves for the caller to fold: one per warp.
template <class bucket_t, class affine_mem_t>
uint32_t bitmap_buckets(const cuda_device_t::impl_t& impl)
{
    if (impl.ones_by_sppark)
        return static_cast<uint32_t>(impl.info.sm_count) * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    return share_sum_grid<bucket_t, affine_mem_t>(impl) * share_sum_block / WARP_SZ;
}

// Where the share sum's list, counts, offsets, scan space and total lie in
// its scratch (byte offsets), and the bytes it needs in all.
struct ones_layout_t {
    size_t counts, offsets, temp, total, bytes;
};

// The layout for nbits, with CUB's scan needing scan_bytes: the indices
// from 0, then the counts and the offsets of nwords words, the scan's
// space, the total.
inline ones_layout_t ones_layout(size_t nbits, size_t scan_bytes)
{
    const size_t words = align256((nbits + 31) / 32 * sizeof(uint32_t));
    ones_layout_t l;
    l.counts = align256(nbits * sizeof(uint32_t));
    l.offsets = l.counts + words;
    l.temp = l.offsets + words;
    l.total = l.temp + align256(scan_bytes);
    l.bytes = l.total + 256;
    return l;
}

// The bytes CUB's exclusive scan needs over nwords counts.
inline size_t ones_scan_bytes(size_t nwords)
{
    size_t temp = 0;
    const uint32_t* none_in = nullptr;
    uint32_t* none_out = nullptr;
    CUZK_CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, temp, none_in, none_out,
                                               static_cast<int>(nwords)));
    return temp;
}

// The scratch a bitmap sum of nbits needs past its buckets (the list of
// the set bits, the counts and their scan); none for sppark's kernel.
inline size_t ones_list_bytes(const cuda_device_t::impl_t& impl, size_t nbits)
{
    if (impl.ones_by_sppark)
        return 0;
    return ones_layout(nbits, ones_scan_bytes((nbits + 31) / 32)).bytes;
}

// Starts the sum of the points of d_points whose bit is set in the device
// bitmap d_bitmap[0..nbits) (as launch_bitmap_batch_add), on stream 0, by
// the chosen kernel: bitmap_buckets() XYZZ sums at d_buckets, with
// ones_list_bytes(impl, nbits) of scratch at `list` (unused by sppark's
// kernel).
template <class bucket_t, class affine_mem_t>
void launch_ones_sum(cuda_device_t::impl_t& impl, const void* d_points, const uint64_t* d_bitmap,
                     size_t nbits, typename bucket_t::mem_t* d_buckets, uint32_t nbuckets,
                     char* list)
{
    if (impl.ones_by_sppark) {
        launch_bitmap_batch_add<bucket_t, affine_mem_t>(impl, d_points, d_bitmap, nbits,
                                                        d_buckets, nbuckets);
        return;
    }
    const unsigned grid = share_sum_grid<bucket_t, affine_mem_t>(impl);
    CUZK_CHECK(nbuckets == grid * share_sum_block / WARP_SZ, "share sum: bucket count");
    CUZK_CHECK(nbits < (size_t(1) << 32), "share sum: at most 2^32 - 1 bits");
    const cudaStream_t s = impl.stream(0);
    const size_t nwords = (nbits + 31) / 32;
    size_t scan_bytes = ones_scan_bytes(nwords);  // CUB takes it by reference
    const ones_layout_t layout = ones_layout(nbits, scan_bytes);
    auto* indices = reinterpret_cast<uint32_t*>(list);
    auto* counts = reinterpret_cast<uint32_t*>(list + layout.counts);
    auto* offsets = reinterpret_cast<uint32_t*>(list + layout.offsets);
    void* temp = list + layout.temp;
    auto* total = reinterpret_cast<uint32_t*>(list + layout.total);
    const auto* words = reinterpret_cast<const uint32_t*>(d_bitmap);
    const auto n32 = static_cast<uint32_t>(nwords), bits = static_cast<uint32_t>(nbits);
    const unsigned word_blocks = static_cast<unsigned>(
        std::min<size_t>((nwords + 255) / 256, size_t(impl.info.sm_count) * 8));
    count_ones<<<word_blocks, 256, 0, s>>>(counts, words, n32, bits);
    CUZK_CUDA_LAUNCHED(count_ones);
    CUZK_CUDA_OK(cub::DeviceScan::ExclusiveSum(temp, scan_bytes, counts, offsets,
                                               static_cast<int>(nwords), s));
    list_ones<<<word_blocks, 256, 0, s>>>(indices, total, offsets, counts, words, n32, bits);
    CUZK_CUDA_LAUNCHED(list_ones);
    share_sum<bucket_t, affine_mem_t><<<grid, share_sum_block, 0, s>>>(
        d_buckets, static_cast<const affine_mem_t*>(d_points), indices, total);
    CUZK_CUDA_LAUNCHED(share_sum);
}

}  // namespace cuzk
