// Ordinary host memory for large vectors that the GPU copies from (a, b, c):
// 64-byte aligned. Page-locked memory for the same purpose comes from the
// CUDA half, cuzk/cuda/host_memory.hpp; supraseal-c2's HostVec picks one.
#pragma once

#include <cstddef>

namespace cuzk {

constexpr size_t host_alignment = 64;

// `bytes` of uninitialised memory aligned to host_alignment; nullptr when
// `bytes` is 0 or the system refuses. Free with host_free.
void* host_alloc(size_t bytes) noexcept;
void host_free(void* data) noexcept;

}  // namespace cuzk
