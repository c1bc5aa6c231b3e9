// Arithmetic in Fr, the BLS12-381 scalar field, over blst (Montgomery form).
#pragma once

#include <cstddef>
#include <cstdint>

#include <blst.h>

#include "cuzk/thread_pool.hpp"

namespace cuzk {

inline blst_fr fr_add(const blst_fr& a, const blst_fr& b)
{
    blst_fr r;
    blst_fr_add(&r, &a, &b);
    return r;
}

inline blst_fr fr_sub(const blst_fr& a, const blst_fr& b)
{
    blst_fr r;
    blst_fr_sub(&r, &a, &b);
    return r;
}

inline blst_fr fr_mul(const blst_fr& a, const blst_fr& b)
{
    blst_fr r;
    blst_fr_mul(&r, &a, &b);
    return r;
}

blst_fr fr_from_u64(uint64_t v);
blst_fr fr_one();
// base^exp for a 256-bit exponent given as little-endian 64-bit limbs.
blst_fr fr_pow(const blst_fr& base, const uint64_t exp[4]);
blst_fr fr_pow(const blst_fr& base, uint64_t exp);
// 1/a; throws std::invalid_argument for a = 0.
blst_fr fr_inverse(const blst_fr& a);

// The multiplicative generator g = 7 (ff's MULTIPLICATIVE_GENERATOR).
blst_fr fr_generator();
// The primitive 2^log_n-th root of unity ff uses: ROOT_OF_UNITY =
// 7^((r-1)/2^32), squared 32 - log_n times. log_n <= 32.
blst_fr fr_root_of_unity(unsigned log_n);

// Canonical (non-Montgomery) little-endian bytes, as blst's MSM reads them.
inline blst_scalar fr_to_scalar(const blst_fr& a)
{
    blst_scalar s;
    blst_scalar_from_fr(&s, &a);
    return s;
}

// out[i] = fr_to_scalar(in[i]) for i < n, on the pool.
void fr_to_scalars(blst_scalar* out, const blst_fr* in, size_t n, thread_pool_t& pool);
// values[i] *= base^i for i < n, on the pool.
void fr_distribute_powers(blst_fr* values, size_t n, const blst_fr& base, thread_pool_t& pool);

}  // namespace cuzk
