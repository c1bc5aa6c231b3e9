// sppark's bitmap batch addition (msm/batch_addition.cuh) as the G1 (msm.cu)
// and G2 (g2.cu) sums launch it. Include after sppark's headers and
// device_impl.cuh.
#pragma once

#include <msm/batch_addition.cuh>

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

// The buckets launch_bitmap_batch_add fills on this device.
inline uint32_t bitmap_buckets(const cuda_device_t::impl_t& impl)
{
    return static_cast<uint32_t>(impl.info.sm_count) * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
}

}  // namespace cuzk
