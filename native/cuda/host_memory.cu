// Page-locked host memory for synthesis output; see cuzk/cuda/host_memory.hpp.
#include "cuzk/cuda/host_memory.hpp"

#include <cuda_runtime.h>

#include "cuzk/cuda/device.hpp"

namespace cuzk {

void* cuda_host_alloc(size_t bytes) noexcept
{
    if (bytes == 0 || cuda_device_count() == 0)
        return nullptr;
    void* data = nullptr;
    if (cudaHostAlloc(&data, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return data;
}

void cuda_host_free(void* data) noexcept
{
    if (data != nullptr)
        (void)cudaFreeHost(data);
}

bool cuda_host_range_pinned(const void* data, size_t bytes) noexcept
{
    if (data == nullptr || bytes == 0)
        return false;
    const char* first = static_cast<const char*>(data);
    return cuda_is_pinned(first) && cuda_is_pinned(first + bytes - 1);
}

}  // namespace cuzk
