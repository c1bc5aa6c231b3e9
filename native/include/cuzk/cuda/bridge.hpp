// What the CUDA half of the cxx bridge (supraseal-c2/src/cuda/bridge.rs, built
// only with the `cuda` feature) calls. The kernel functions expect the
// caller to hold the lock, which must have the CUDA backend. Failures come
// back in the NativeError (bridge_error.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "rust/cxx.h"

#include "cuzk/bridge.hpp"

namespace cuzk::ffi {

uint32_t cuda_device_count();
// A lock whose kernel region runs on CUDA device `device`.
std::unique_ptr<gpu_lock_t> new_cuda_gpu_lock(uint32_t device, NativeError& error) noexcept;
void cuda_set_memory_limit(const gpu_lock_t& lock, uint64_t bytes, NativeError& error) noexcept;
void cuda_set_stream_srs(const gpu_lock_t& lock, bool on, NativeError& error) noexcept;

// These need the lock held by the calling thread (else InvalidInput); each
// is a kernel region (gpu_lock_t::run_kernel_region): a sticky error marks
// the device lost.
void cuda_probe_alloc(const gpu_lock_t& lock, uint64_t bytes, NativeError& error) noexcept;
void cuda_msm_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> points,
                 rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                 NativeError& error) noexcept;
void cuda_batch_add_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> points,
                       rust::Slice<const size_t> indices, rust::Slice<uint64_t> out,
                       NativeError& error) noexcept;
void cuda_ntt(const gpu_lock_t& lock, rust::Slice<uint64_t> values, bool inverse, bool coset,
              NativeError& error) noexcept;
// out[i] = scalars[i] * base (cuzk/cuda/fixed_base.hpp): the base an affine
// point (12 / 24 limbs), scalars in Montgomery form (blst_fr, 4 limbs
// each), out affine (12 / 24 limbs each, zeros for infinity).
void cuda_fixed_base_g1(const gpu_lock_t& lock, rust::Slice<const uint64_t> base,
                        rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                        NativeError& error) noexcept;
void cuda_fixed_base_g2(const gpu_lock_t& lock, rust::Slice<const uint64_t> base,
                        rust::Slice<const uint64_t> scalars, rust::Slice<uint64_t> out,
                        NativeError& error) noexcept;

// cuzk/cuda/host_memory.hpp as bytes (cxx has no void*).
uint8_t* cuda_host_alloc(size_t bytes) noexcept;
void cuda_host_free(uint8_t* data) noexcept;
bool cuda_host_range_pinned(const uint8_t* data, size_t bytes) noexcept;

}  // namespace cuzk::ffi
