#include "cuzk/host_memory.hpp"

#include <cstdint>
#include <cstdlib>

namespace cuzk {

void* host_alloc(size_t bytes) noexcept
{
    if (bytes == 0 || bytes > SIZE_MAX - host_alignment)
        return nullptr;
    // aligned_alloc wants a multiple of the alignment.
    const size_t rounded = (bytes + host_alignment - 1) / host_alignment * host_alignment;
    return std::aligned_alloc(host_alignment, rounded);
}

void host_free(void* data) noexcept { std::free(data); }

}  // namespace cuzk
