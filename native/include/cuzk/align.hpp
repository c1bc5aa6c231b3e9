// Rounding sizes up so that pieces carved one after another from one block
// stay 256-byte aligned (staging arenas, device scratch, term tails).
#pragma once

#include <cstddef>

namespace cuzk {

inline size_t align256(size_t bytes) { return (bytes + 255) & ~size_t(255); }

}  // namespace cuzk
