// What the cxx bridge (supraseal-c2/src/bridge.rs) calls: thin shims that
// turn Rust slices of u64 limbs into native views and back. Types and
// functions of the native layer proper live in the other headers.
#pragma once

#include <cstdint>
#include <memory>

#include "rust/cxx.h"

#include "cuzk/bridge_error.hpp"
#include "cuzk/clock.hpp"
#include "cuzk/gpu_lock.hpp"
#include "cuzk/host_memory.hpp"
#include "cuzk/kernel_backend.hpp"
#include "cuzk/srs.hpp"

namespace cuzk::ffi {

// Shared structs, defined by the generated bridge header. A function that
// can fail reports it in its NativeError& (bridge_error.hpp).
struct LockCounters;
struct PhaseTimes;
struct SrsView;
struct CircuitView;

std::unique_ptr<gpu_lock_t> new_gpu_lock(uint32_t device, NativeError& error) noexcept;
uint32_t lock_device(const gpu_lock_t& lock);
uint64_t lock_acquire(const gpu_lock_t& lock, NativeError& error) noexcept;
bool lock_try_acquire(const gpu_lock_t& lock);
uint64_t lock_release(const gpu_lock_t& lock);
bool lock_lost(const gpu_lock_t& lock);
LockCounters lock_counters(const gpu_lock_t& lock);

std::unique_ptr<srs_t> new_srs(const SrsView& parts, NativeError& error) noexcept;

// cuzk::host_alloc / host_free as bytes (cxx has no void*).
uint8_t* host_alloc(size_t bytes) noexcept;
void host_free(uint8_t* data) noexcept;

void msm_g1(rust::Slice<const uint64_t> points, rust::Slice<const uint64_t> scalars,
            rust::Slice<uint64_t> out, NativeError& error) noexcept;
void msm_g2(rust::Slice<const uint64_t> points, rust::Slice<const uint64_t> scalars,
            rust::Slice<uint64_t> out, NativeError& error) noexcept;
void batch_add_g1(rust::Slice<const uint64_t> points, rust::Slice<const size_t> indices,
                  rust::Slice<uint64_t> out, NativeError& error) noexcept;
void batch_add_g2(rust::Slice<const uint64_t> points, rust::Slice<const size_t> indices,
                  rust::Slice<uint64_t> out, NativeError& error) noexcept;
void ntt(rust::Slice<uint64_t> values, bool inverse, bool coset, NativeError& error) noexcept;

// `fault`: an injected_fault_t for the kernel region (0: none).
PhaseTimes prove(const gpu_lock_t& lock, const srs_t& srs, rust::Slice<const CircuitView> circuits,
                 rust::Slice<const uint64_t> r, rust::Slice<const uint64_t> s,
                 rust::Slice<uint64_t> proof_a, rust::Slice<uint64_t> proof_b,
                 rust::Slice<uint64_t> proof_c, uint8_t fault, NativeError& error) noexcept;

}  // namespace cuzk::ffi
