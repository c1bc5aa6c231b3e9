#include "cuzk/clock.hpp"

#include <chrono>

namespace cuzk {

uint64_t monotonic_ns() noexcept
{
    // libstdc++ and libc++ implement steady_clock with CLOCK_MONOTONIC.
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

}  // namespace cuzk
