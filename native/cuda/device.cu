// Devices, contexts, pinned memory, errors. Also compiles sppark's device
// list (util/all_gpus.cpp), which every sppark call goes through.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include <util/all_gpus.cpp>

#include "cuda_ok.cuh"
#include "device_impl.cuh"
#include "cuzk/cuda/device.hpp"
#include "cuzk/cuda/error.hpp"

namespace cuzk {

// The codes cuzk/cuda/error.hpp names (and classifies) are the runtime's.
static_assert(cuda_code::memory_allocation == cudaErrorMemoryAllocation &&
                  cuda_code::invalid_configuration == cudaErrorInvalidConfiguration &&
                  cuda_code::ecc_uncorrectable == cudaErrorECCUncorrectable &&
                  cuda_code::nvlink_uncorrectable == cudaErrorNvlinkUncorrectable &&
                  cuda_code::illegal_address == cudaErrorIllegalAddress &&
                  cuda_code::launch_timeout == cudaErrorLaunchTimeout &&
                  cuda_code::assert_failed == cudaErrorAssert &&
                  cuda_code::hardware_stack_error == cudaErrorHardwareStackError &&
                  cuda_code::illegal_instruction == cudaErrorIllegalInstruction &&
                  cuda_code::misaligned_address == cudaErrorMisalignedAddress &&
                  cuda_code::invalid_address_space == cudaErrorInvalidAddressSpace &&
                  cuda_code::invalid_pc == cudaErrorInvalidPc &&
                  cuda_code::launch_failure == cudaErrorLaunchFailure &&
                  cuda_code::unknown == cudaErrorUnknown,
              "cuda_code constants match cudaError_t");

namespace {

// Writes through `target`: given an address no allocation covers, an
// illegal memory access.
__global__ void cuzk_fault_kernel(int* target) { *target = 1; }

}  // namespace

void cuda_raise_fault(int ordinal, injected_fault_t fault)
{
    CUZK_CUDA_OK(cudaSetDevice(ordinal));
    switch (fault) {
    case injected_fault_t::none:
        return;
    case injected_fault_t::sticky:
        // Address 8 is never mapped: the kernel faults, the context is lost.
        cuzk_fault_kernel<<<1, 1>>>(reinterpret_cast<int*>(uintptr_t(8)));
        CUZK_CUDA_LAUNCHED(cuzk_fault_kernel);
        CUZK_CUDA_OK(cudaDeviceSynchronize());
        break;
    case injected_fault_t::transient:
        // More threads per block than any device allows: refused at launch.
        cuzk_fault_kernel<<<1, 4096>>>(nullptr);
        CUZK_CUDA_LAUNCHED(cuzk_fault_kernel);
        break;
    case injected_fault_t::alloc: {
        void* never = nullptr;
        CUZK_CUDA_OK(cudaMalloc(&never, size_t(1) << 60));
        (void)cudaFree(never);
        break;
    }
    }
    // Only reached if the device did not fail as it should have.
    throw std::logic_error("injected fault " + std::to_string(static_cast<int>(fault)) +
                           " did not fail on device " + std::to_string(ordinal));
}

int cuda_device_count() noexcept
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

cuda_device_info_t cuda_device_info(int ordinal)
{
    cudaDeviceProp prop;
    CUZK_CUDA_OK(cudaGetDeviceProperties(&prop, ordinal));
    cuda_device_info_t info;
    info.ordinal = ordinal;
    info.name = prop.name;
    info.major = prop.major;
    info.minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.total_bytes = prop.totalGlobalMem;
    info.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
    info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
    info.cooperative_launch = prop.cooperativeLaunch != 0;
    info.pci_bus = prop.pciBusID;
    return info;
}

void cuda_select_device(int ordinal) { CUZK_CUDA_OK(cudaSetDevice(ordinal)); }

cuda_mem_info_t cuda_mem_info(int ordinal)
{
    int current = 0;
    CUZK_CUDA_OK(cudaGetDevice(&current));
    CUZK_CUDA_OK(cudaSetDevice(ordinal));
    cuda_mem_info_t info;
    const cudaError_t code = cudaMemGetInfo(&info.free_bytes, &info.total_bytes);
    (void)cudaSetDevice(current);
    if (code != cudaSuccess)
        throw_cuda(code, "cudaMemGetInfo(&free, &total)", __FILE__, __LINE__);
    return info;
}

// ---------------------------------------------------------------- context

cuda_device_t::impl_t::impl_t(int ord) : ordinal(ord)
{
    info = cuda_device_info(ordinal);
    if (const char* v = std::getenv("CUZK_ONES_KERNEL"))
        ones_by_sppark = std::strcmp(v, "sppark") == 0;
    for (const gpu_t* g : all_gpus()) {
        if (g->cid() == ordinal) {
            gpu = g;
            sppark_id = g->id();
        }
    }
    if (gpu == nullptr)
        throw cuda_error_t(static_cast<int>(cudaErrorInvalidDevice), "cuda_device_t(ordinal)",
                           __FILE__, __LINE__,
                           "device " + std::to_string(ordinal) +
                               " is not usable by sppark (needs compute capability >= 7.0 and "
                               "cooperative launch)");
    select();

    // sppark's msm_t takes its temporaries from the default pool on every
    // call; keep what is freed instead of handing it back at each sync.
    cudaMemPool_t pool;
    CUZK_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, ordinal));
    uint64_t keep = std::numeric_limits<uint64_t>::max();
    CUZK_CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

    for (int i = 0; i < nstreams; i++) {
        CUZK_SPPARK("stream_t(sppark_id)", streams[i] = std::make_unique<stream_t>(sppark_id));
        CUZK_CUDA_OK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming));
    }
}

cuda_device_t::impl_t::~impl_t()
{
    (void)cudaSetDevice(ordinal);
    for (int i = 0; i < nstreams; i++) {
        if (streams[i])
            (void)cudaStreamSynchronize(*streams[i]);
    }
    free_scratch();
    for (int i = 0; i < nstreams; i++) {
        if (events[i])
            (void)cudaEventDestroy(events[i]);
        streams[i].reset();
    }
}

void* cuda_device_t::impl_t::alloc(size_t bytes)
{
    if (bytes == 0)
        return nullptr;
    select();
    void* ptr = nullptr;
    CUZK_CUDA_OK(cudaMalloc(&ptr, bytes));
    owned += bytes;
    return ptr;
}

void cuda_device_t::impl_t::release(void* ptr, size_t bytes) noexcept
{
    if (ptr == nullptr)
        return;
    (void)cudaSetDevice(ordinal);
    (void)cudaFree(ptr);
    owned -= bytes;
}

void* cuda_device_t::impl_t::scratch_at_least(size_t bytes)
{
    if (bytes <= scratch_size)
        return scratch;
    sync_all();
    free_scratch();
    // Grow by at least an eighth so that slowly rising sizes do not
    // reallocate on every call.
    const size_t want = align256(std::max(bytes, scratch_size + scratch_size / 8));
    scratch = alloc(want);
    scratch_size = want;
    return scratch;
}

void cuda_device_t::impl_t::free_scratch() noexcept
{
    release(scratch, scratch_size);
    scratch = nullptr;
    scratch_size = 0;
}

void cuda_device_t::impl_t::sync_all() const
{
    select();
    for (int i = 0; i < nstreams; i++)
        CUZK_CUDA_OK(cudaStreamSynchronize(stream(i)));
}

cuda_device_t::cuda_device_t(int ordinal) : impl_(std::make_unique<impl_t>(ordinal)) {}

cuda_device_t::~cuda_device_t() = default;

int cuda_device_t::ordinal() const noexcept { return impl_->ordinal; }

const cuda_device_info_t& cuda_device_t::info() const noexcept { return impl_->info; }

void cuda_device_t::synchronize() { impl_->sync_all(); }

size_t cuda_device_t::bytes_owned() const noexcept { return impl_->owned.load(); }

size_t cuda_device_t::scratch_bytes() const noexcept { return impl_->scratch_size; }

void cuda_device_t::trim()
{
    impl_->sync_all();
    impl_->gpu->sync();
    impl_->free_scratch();
    impl_->host_stage = cuda_pinned_buffer_t();
    cudaMemPool_t pool;
    CUZK_CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, impl_->ordinal));
    CUZK_CUDA_OK(cudaMemPoolTrimTo(pool, 0));
}

void* cuda_device_t::impl_t::host_staging_at_least(size_t bytes)
{
    if (bytes > host_stage.bytes()) {
        host_stage = cuda_pinned_buffer_t();  // free first: pinned memory is precious
        host_stage = cuda_pinned_buffer_t(align256(bytes + bytes / 8));
    }
    return host_stage.data();
}

void parallel_copy(void* dst, const void* src, size_t bytes)
{
    const size_t min_piece = size_t(8) << 20;
    unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    threads = static_cast<unsigned>(std::min<size_t>(threads, bytes / min_piece));
    if (threads <= 1) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const size_t piece = (bytes / threads + 4095) & ~size_t(4095);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; t++) {
        const size_t begin = std::min(bytes, t * piece);
        const size_t end = std::min(bytes, begin + piece);
        if (begin == end)
            break;
        pool.emplace_back([=] {
            std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin,
                        end - begin);
        });
    }
    for (auto& th : pool)
        th.join();
}

void cuda_device_t::set_stage_pageable(bool on) noexcept { impl_->stage_pageable = on; }

bool cuda_device_t::stage_pageable() const noexcept { return impl_->stage_pageable; }

void cuda_device_t::set_ones_kernel(cuda_ones_kernel_t kernel) noexcept
{
    impl_->ones_by_sppark = kernel == cuda_ones_kernel_t::sppark;
}

cuda_ones_kernel_t cuda_device_t::ones_kernel() const noexcept
{
    return impl_->ones_by_sppark ? cuda_ones_kernel_t::sppark : cuda_ones_kernel_t::share_sum;
}

size_t cuda_device_t::host_staging_bytes() const noexcept { return impl_->host_stage.bytes(); }

void cuda_device_t::set_msm_window_bias(int bias) noexcept { impl_->msm_bias = bias; }

int cuda_device_t::msm_window_bias() const noexcept { return impl_->msm_bias; }

// ------------------------------------------------------------ pinned memory

cuda_pinned_buffer_t::cuda_pinned_buffer_t(size_t bytes) : bytes_(bytes)
{
    if (bytes != 0)
        CUZK_CUDA_OK(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable));
}

cuda_pinned_buffer_t::~cuda_pinned_buffer_t()
{
    if (data_ != nullptr)
        (void)cudaFreeHost(data_);
}

cuda_pinned_buffer_t::cuda_pinned_buffer_t(cuda_pinned_buffer_t&& other) noexcept
    : data_(other.data_), bytes_(other.bytes_)
{
    other.data_ = nullptr;
    other.bytes_ = 0;
}

cuda_pinned_buffer_t& cuda_pinned_buffer_t::operator=(cuda_pinned_buffer_t&& other) noexcept
{
    if (this != &other) {
        if (data_ != nullptr)
            (void)cudaFreeHost(data_);
        data_ = other.data_;
        bytes_ = other.bytes_;
        other.data_ = nullptr;
        other.bytes_ = 0;
    }
    return *this;
}

cuda_host_registration_t::cuda_host_registration_t(const void* ptr, size_t bytes) noexcept
{
    if (ptr == nullptr || bytes == 0)
        return;
    ptr_ = const_cast<void*>(ptr);
    const cudaError_t code = cudaHostRegister(ptr_, bytes, cudaHostRegisterPortable);
    if (code == cudaSuccess) {
        registered_ = pinned_ = true;
        return;
    }
    (void)cudaGetLastError();
    pinned_ = code == cudaErrorHostMemoryAlreadyRegistered || cuda_is_pinned(ptr);
}

cuda_host_registration_t::~cuda_host_registration_t()
{
    if (registered_)
        (void)cudaHostUnregister(ptr_);
}

bool cuda_is_pinned(const void* ptr) noexcept
{
    if (ptr == nullptr)
        return false;
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

}  // namespace cuzk
