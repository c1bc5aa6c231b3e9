// sppark's bitmap batch addition (msm/batch_addition.cuh) as the G1 (msm.cu)
// and G2 (g2.cu) sums launch it. Include after sppark's headers and
// device_impl.cuh.
#pragma once

#include <msm/batch_addition.cuh>

namespace cuzk {

// Starts summing the points of d_points whose bit is set in bitmap[0..nbits)
// on stream 0: one XYZZ bucket per warp, `nbuckets` of them, at the returned
// device address in the context's scratch, followed by `spare` more buckets
// for the caller. The caller reduces the buckets (on the same stream).
template <class bucket_t, class affine_mem_t>
typename bucket_t::mem_t* launch_bitmap_batch_add(cuda_device_t::impl_t& impl,
                                                   const void* d_points, const uint64_t* bitmap,
                                                   size_t nbits, uint32_t spare,
                                                   uint32_t& nbuckets)
{
    using bucket_mem_t = typename bucket_t::mem_t;
    const unsigned grid = static_cast<unsigned>(impl.info.sm_count);
    nbuckets = grid * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
    // sppark reads the map 32 words (1024 bits) at a time: pad to that.
    const size_t map_words = (nbits + 1023) / 1024 * 32;
    const size_t map_bytes = align256(map_words * sizeof(uint32_t));
    const size_t bucket_bytes = align256((nbuckets + spare) * sizeof(bucket_mem_t));
    char* base = static_cast<char*>(impl.scratch_at_least(map_bytes + bucket_bytes));
    auto* d_map = reinterpret_cast<uint32_t*>(base);
    auto* d_buckets = reinterpret_cast<bucket_mem_t*>(base + map_bytes);
    const cudaStream_t s = impl.stream(0);
    CUZK_CUDA_OK(cudaMemsetAsync(d_map, 0, map_bytes, s));
    // Little-endian: 64-bit word k holds 32-bit words 2k and 2k+1, bit order kept.
    CUZK_CUDA_OK(cudaMemcpyAsync(d_map, bitmap, (nbits + 63) / 64 * sizeof(uint64_t),
                                 cudaMemcpyHostToDevice, s));

    void (*kernel)(bucket_mem_t*, const affine_mem_t*, uint32_t, const uint32_t*, bool, uint32_t) =
        batch_addition<bucket_t, affine_mem_t>;
    bucket_mem_t* ret = d_buckets;
    const auto* pts = static_cast<const affine_mem_t*>(d_points);
    uint32_t npoints = static_cast<uint32_t>(nbits);
    const uint32_t* map = d_map;
    bool accumulate = false;
    uint32_t sid = 0;
    void* args[] = {&ret, &pts, &npoints, &map, &accumulate, &sid};
    CUZK_CUDA_OK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(grid),
                                             dim3(BATCH_ADD_BLOCK_SIZE), args, 0, s));
    CUZK_CUDA_LAUNCHED(batch_addition);
    return d_buckets;
}

}  // namespace cuzk
