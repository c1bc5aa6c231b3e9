// The monotonic clock shared by every layer's timestamps.
#pragma once

#include <cstdint>

namespace cuzk {

// Nanoseconds on CLOCK_MONOTONIC (std::chrono::steady_clock on Linux).
uint64_t monotonic_ns() noexcept;

}  // namespace cuzk
