// Radix-2 number-theoretic transforms over Fr, in place, multi-threaded.
#pragma once

#include <cstddef>

#include <blst.h>

#include "cuzk/thread_pool.hpp"

namespace cuzk {

// Forward: coefficients -> evaluations at w^0..w^(n-1), w = fr_root_of_unity(log2 n).
// Inverse: the reverse, the 1/n factor included. n must be a power of two
// (at most 2^32); input and output are in natural order, Montgomery form.
void ntt(blst_fr* values, size_t n, bool inverse, thread_pool_t& pool);

// Over the coset g*<w>, g = fr_generator(): forward evaluates at g*w^i
// (scale coefficient i by g^i, then ntt); inverse undoes it (ntt inverse,
// then scale by g^-i).
void coset_ntt(blst_fr* values, size_t n, bool inverse, thread_pool_t& pool);

}  // namespace cuzk
