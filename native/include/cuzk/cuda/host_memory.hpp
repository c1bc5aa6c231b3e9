// Page-locked host memory for synthesis output (a, b, c) that the prover
// copies to the device without staging, and the check the prover makes
// before skipping its staging copy. Plain C++ (no CUDA header); the
// implementation is native/cuda/host_memory.cu.
#pragma once

#include <cstddef>

namespace cuzk {

// `bytes` of uninitialised page-locked memory, portable to every device
// (cudaHostAlloc with cudaHostAllocPortable); nullptr, never an exception,
// when `bytes` is 0, this process sees no CUDA device, or the allocation
// fails (the CUDA error is cleared). Free with cuda_host_free.
void* cuda_host_alloc(size_t bytes) noexcept;
void cuda_host_free(void* data) noexcept;

// Whether the first and the last byte of [data, data + bytes) are in
// page-locked host memory known to CUDA (cudaHostAlloc'ed or
// cudaHostRegister'ed), so that copies from the range run as DMA without
// staging. False for an empty range, pageable memory, or no device.
bool cuda_host_range_pinned(const void* data, size_t bytes) noexcept;

}  // namespace cuzk
