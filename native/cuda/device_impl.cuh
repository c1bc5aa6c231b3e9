// cuda_device_t's state, shared by the .cu files.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include <cuda_runtime.h>

#include <util/gpu_t.cuh>

#include "cuda_ok.cuh"
#include "cuzk/align.hpp"
#include "cuzk/cuda/device.hpp"

namespace cuzk {

struct cuda_device_t::impl_t {
    // Stream 0: single operations and the MSM helpers (gathers, batch
    // additions); 1-3: the H polynomial's a, b, c (cuda_h_poly_t), so that
    // it runs beside them; 4: copies of points started ahead (upload_async).
    static constexpr int nstreams = 5;

    int ordinal = -1;
    int sppark_id = -1;        // index into sppark's all_gpus()
    const gpu_t* gpu = nullptr;  // sppark's per-device object (MSM streams, pool)
    cuda_device_info_t info;
    // Our own streams. sppark's stream_t so that its NTT can run on them.
    std::unique_ptr<stream_t> streams[nstreams];
    cudaEvent_t events[nstreams] = {};
    std::atomic<size_t> owned{0};
    int msm_bias = cuda_device_t::msm_bias_auto;
    bool stage_pageable = true;
    // The ones' sums by sppark's bitmap batch addition instead of cuzk's
    // share sum (batch_add.cuh): CUZK_ONES_KERNEL=sppark, or set_ones_kernel.
    bool ones_by_sppark = false;
    cuda_pinned_buffer_t host_stage;  // pinned staging for pageable inputs

    // Scratch: one growing device region carved per call (gathered points,
    // index lists, bitmaps, batch-addition buckets).
    void* scratch = nullptr;
    size_t scratch_size = 0;

    explicit impl_t(int ordinal);
    ~impl_t();

    void select() const { CUZK_CUDA_OK(cudaSetDevice(ordinal)); }
    cudaStream_t stream(int i) const { return *streams[i]; }
    stream_t& sppark_stream(int i) const { return *streams[i]; }

    // cudaMalloc / cudaFree with the byte count kept in `owned`.
    void* alloc(size_t bytes);
    void release(void* ptr, size_t bytes) noexcept;

    // At least `bytes` of scratch (the old contents are lost). Waits for the
    // context's streams before replacing a smaller region.
    void* scratch_at_least(size_t bytes);
    void free_scratch() noexcept;

    // Waits for every stream of the context.
    void sync_all() const;

    // At least `bytes` of pinned host staging (old contents lost). The
    // caller must have waited for every copy out of it.
    void* host_staging_at_least(size_t bytes);
};

// memcpy on several threads (one below 8 MiB).
void parallel_copy(void* dst, const void* src, size_t bytes);

}  // namespace cuzk
