// CUDA devices: discovery, the per-device context every GPU call goes
// through, and pinned host memory. Plain C++ declarations (no CUDA header):
// the implementations live in native/cuda/*.cu.
//
// Threading: one cuda_device_t, and everything created on it, is used by one
// thread at a time. The prover serialises its kernel region per device with
// gpu_lock_t; sppark's MSM kernels keep per-device work counters in device
// memory, so two MSMs must never run on one device at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cuzk/cuda/error.hpp"

namespace cuzk {

struct cuda_device_info_t {
    int ordinal = -1;
    std::string name;
    int major = 0;  // compute capability
    int minor = 0;
    int sm_count = 0;
    size_t total_bytes = 0;
    size_t l2_bytes = 0;
    size_t shared_per_block_optin = 0;
    bool cooperative_launch = false;
    int pci_bus = -1;
};

struct cuda_mem_info_t {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
};

// The number of CUDA devices usable here; 0 (never an exception) when there
// is no driver, no device, or the driver is older than the runtime.
int cuda_device_count() noexcept;

// Throws cuda_error_t for an ordinal that is not a device.
cuda_device_info_t cuda_device_info(int ordinal);
// Makes `ordinal` the calling thread's current device (cudaSetDevice).
void cuda_select_device(int ordinal);
// Makes device `ordinal` fail as `fault` says, for real (an illegal address
// loses its context for the rest of the process): throws the cuda_error_t
// of that failure. Called under the device's lock.
void cuda_raise_fault(int ordinal, injected_fault_t fault);
cuda_mem_info_t cuda_mem_info(int ordinal);

// The kernels that can sum a bitmap's points (cuda_device_t::set_ones_kernel).
enum class cuda_ones_kernel_t { share_sum, sppark };

// One device's context: its streams, its scratch memory (gather buffers,
// batch-addition buckets, index lists) and its byte counts. Everything that
// lives on a device (cuda_points_t, cuda_fr_buffer_t, cuda_h_poly_t) is made
// from a cuda_device_t and must not outlive it.
//
// Constructing one sets the device's default memory pool to keep freed
// memory (sppark's MSM allocates its temporaries from it on every call);
// trim() gives that memory back.
class cuda_device_t {
public:
    // Throws cuda_error_t when `ordinal` is not a usable device (sppark needs
    // compute capability 7.0 or newer and cooperative launch).
    explicit cuda_device_t(int ordinal);
    ~cuda_device_t();
    cuda_device_t(const cuda_device_t&) = delete;
    cuda_device_t& operator=(const cuda_device_t&) = delete;

    int ordinal() const noexcept;
    const cuda_device_info_t& info() const noexcept;

    // Waits for every stream of this context.
    void synchronize();

    // Device bytes held by objects made from this context (point sets, Fr
    // buffers, H workspaces) plus its scratch; sppark's own cached twiddles
    // and buckets are not counted (cuda_mem_info() sees everything).
    size_t bytes_owned() const noexcept;
    size_t scratch_bytes() const noexcept;

    // Frees the scratch and returns the memory pool's cached memory.
    void trim();

    // MSM tuning. sppark sizes its Pippenger window from the MSM length n
    // (wbits = log2(1.5 n) - 8, kept within [10, 18]); a bias of b shifts
    // that by b bits (within the same bounds). msm_bias_auto, the default,
    // uses cuzk's choice per size (see docs/cuda.md for the measurements).
    static constexpr int msm_bias_auto = -1000;
    void set_msm_window_bias(int bias) noexcept;
    int msm_window_bias() const noexcept;

    // Pageable (not pinned) host inputs of at least 1 MiB (MSM scalars,
    // index lists, the a, b, c of cuda_h_poly_t) are first copied, on
    // several threads, into pinned memory (the H workspace's staging, or a
    // buffer this context keeps, grown to the largest input; trim() frees
    // it), so that the device copies run at full speed and overlap the
    // kernels. On by default; off, pageable inputs go to the driver as they
    // are, which the driver copies several times slower (docs/cuda.md).
    void set_stage_pageable(bool on) noexcept;
    bool stage_pageable() const noexcept;
    size_t host_staging_bytes() const noexcept;

    // The kernel that sums the points whose bit is set in a bitmap (the
    // ones of the L, A and B sums): cuzk's share sum (the default) or
    // sppark's bitmap batch addition (CUZK_ONES_KERNEL=sppark; tuning).
    void set_ones_kernel(cuda_ones_kernel_t kernel) noexcept;
    cuda_ones_kernel_t ones_kernel() const noexcept;

    // The implementation's state; only the .cu files see inside.
    struct impl_t;
    impl_t& impl() noexcept { return *impl_; }
    const impl_t& impl() const noexcept { return *impl_; }

private:
    std::unique_ptr<impl_t> impl_;
};

// Page-locked host memory (cudaHostAlloc, portable to every device): copies
// from it run asynchronously at full PCIe speed. Contents are uninitialised.
class cuda_pinned_buffer_t {
public:
    cuda_pinned_buffer_t() noexcept = default;
    explicit cuda_pinned_buffer_t(size_t bytes);
    ~cuda_pinned_buffer_t();
    cuda_pinned_buffer_t(cuda_pinned_buffer_t&& other) noexcept;
    cuda_pinned_buffer_t& operator=(cuda_pinned_buffer_t&& other) noexcept;
    cuda_pinned_buffer_t(const cuda_pinned_buffer_t&) = delete;
    cuda_pinned_buffer_t& operator=(const cuda_pinned_buffer_t&) = delete;

    void* data() const noexcept { return data_; }
    size_t bytes() const noexcept { return bytes_; }
    template <class T>
    T* as() const noexcept
    {
        return static_cast<T*>(data_);
    }

private:
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

// Whether `ptr` is page-locked host memory known to CUDA (pinned buffers,
// cudaHostRegister'ed ranges). False for ordinary pageable memory.
bool cuda_is_pinned(const void* ptr) noexcept;

// Page-locks existing host memory for this object's lifetime
// (cudaHostRegister, portable to every device), so that copies from it run
// asynchronously at full speed. Never throws for a range that cannot be
// registered (already registered by someone else, or the system refuses):
// pinned() then says whether it is page-locked anyway, and copies from
// unpinned memory still work, only slower.
class cuda_host_registration_t {
public:
    cuda_host_registration_t(const void* ptr, size_t bytes) noexcept;
    ~cuda_host_registration_t();
    cuda_host_registration_t(const cuda_host_registration_t&) = delete;
    cuda_host_registration_t& operator=(const cuda_host_registration_t&) = delete;

    bool pinned() const noexcept { return pinned_; }

private:
    void* ptr_ = nullptr;
    bool registered_ = false;  // by this object: unregistered by it
    bool pinned_ = false;
};

}  // namespace cuzk
