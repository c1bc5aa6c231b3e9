// Gathering points by index into a contiguous run, so that sppark's msm_t
// (which reads points[0..n)) can sum a sparse set of terms: the G1 tails
// and B_G2's tail (msm.cu).
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_impl.cuh"
#include "cuzk/check.hpp"
#include "cuzk/cuda/device.hpp"

namespace cuzk {

// out[i] = in[idx[i] - base], words_per_point 16-byte words per point, one
// word per thread; an index out of range (below base, or at limit + base
// and above) raises *bad and leaves its point unwritten.
template <unsigned words_per_point>
__global__ void gather_points(uint4* __restrict__ out, const uint4* __restrict__ in,
                              const uint32_t* __restrict__ idx, uint32_t base, size_t n,
                              uint32_t limit, uint32_t* bad)
{
    const size_t total = n * words_per_point;
    for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < total;
         t += size_t(gridDim.x) * blockDim.x) {
        const size_t point = t / words_per_point;
        const uint32_t word = static_cast<uint32_t>(t % words_per_point);
        const uint32_t src = idx[point] - base;  // wraps when below base
        if (src >= limit) {
            *bad = 1;
            continue;
        }
        out[t] = in[size_t(src) * words_per_point + word];
    }
}

// A grid for `items` work items of `block` threads each, at most eight
// blocks per SM (the kernels loop over the rest).
inline unsigned grid_for(const cuda_device_t::impl_t& impl, size_t items, unsigned block)
{
    const size_t blocks = (items + block - 1) / block;
    const size_t cap = size_t(impl.info.sm_count) * 8;
    return static_cast<unsigned>(blocks < cap ? (blocks ? blocks : 1) : cap);
}

// Throws when a gather or index check raised *d_bad; waits for stream 0.
inline void require_no_bad_index(cuda_device_t::impl_t& impl, const uint32_t* d_bad)
{
    uint32_t bad = 0;
    CUZK_CUDA_OK(cudaMemcpyAsync(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost,
                                 impl.stream(0)));
    CUZK_CUDA_OK(cudaStreamSynchronize(impl.stream(0)));
    CUZK_REQUIRE(bad == 0, "cuda: a point index is out of range");
}

// Uploads n indices into scratch at `at` on stream 0 (pageable lists through
// the pinned host staging); returns the device address. The caller waits
// for stream 0 before the staging is used again.
inline uint32_t* upload_indices(cuda_device_t::impl_t& impl, char* at, const uint32_t* indices, size_t n)
{
    auto* d_idx = reinterpret_cast<uint32_t*>(at);
    const size_t bytes = n * sizeof(uint32_t);
    const void* src = indices;
    if (impl.stage_pageable && bytes >= (size_t(1) << 20) && !cuda_is_pinned(indices)) {
        void* staged = impl.host_staging_at_least(bytes);
        parallel_copy(staged, indices, bytes);
        src = staged;
    }
    CUZK_CUDA_OK(cudaMemcpyAsync(d_idx, src, bytes, cudaMemcpyHostToDevice, impl.stream(0)));
    return d_idx;
}

}  // namespace cuzk
