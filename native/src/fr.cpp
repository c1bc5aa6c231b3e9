#include "cuzk/fr.hpp"

#include <algorithm>
#include <string>

#include "cuzk/check.hpp"

namespace cuzk {

namespace {

// The scalar field modulus r, little-endian 64-bit limbs.
constexpr uint64_t modulus[4] = {0xffffffff00000001, 0x53bda402fffe5bfe,
                                 0x3339d80809a1d805, 0x73eda753299d7d48};
// r - 1 = 2^32 * t with t odd: the 2-adicity ff calls S.
constexpr unsigned two_adicity = 32;

bool fr_is_zero(const blst_fr& a)
{
    return std::all_of(std::begin(a.l), std::end(a.l), [](uint64_t x) { return x == 0; });
}

}  // namespace

blst_fr fr_from_u64(uint64_t v)
{
    const uint64_t limbs[4] = {v, 0, 0, 0};
    blst_fr r;
    blst_fr_from_uint64(&r, limbs);
    return r;
}

blst_fr fr_one() { return fr_from_u64(1); }

blst_fr fr_pow(const blst_fr& base, const uint64_t exp[4])
{
    blst_fr acc = fr_one();
    for (int bit = 255; bit >= 0; bit--) {
        blst_fr_sqr(&acc, &acc);
        if ((exp[bit / 64] >> (bit % 64)) & 1)
            blst_fr_mul(&acc, &acc, &base);
    }
    return acc;
}

blst_fr fr_pow(const blst_fr& base, uint64_t exp)
{
    const uint64_t limbs[4] = {exp, 0, 0, 0};
    return fr_pow(base, limbs);
}

blst_fr fr_inverse(const blst_fr& a)
{
    CUZK_REQUIRE(!fr_is_zero(a), "fr_inverse: zero has no inverse");
    blst_fr r;
    blst_fr_inverse(&r, &a);
    return r;
}

blst_fr fr_generator() { return fr_from_u64(7); }

blst_fr fr_root_of_unity(unsigned log_n)
{
    CUZK_REQUIRE(log_n <= two_adicity,
                 "fr_root_of_unity: Fr has no 2^" + std::to_string(log_n) + "-th root of unity");
    // t = (r - 1) >> 32; r - 1 only clears the low bit, below the shift.
    uint64_t t[4];
    for (int i = 0; i < 4; i++) {
        const uint64_t limb = modulus[i] - (i == 0 ? 1 : 0);
        const uint64_t above = i < 3 ? modulus[i + 1] : 0;
        t[i] = (limb >> two_adicity) | (above << (64 - two_adicity));
    }
    blst_fr root = fr_pow(fr_generator(), t);  // a primitive 2^32-th root
    for (unsigned k = log_n; k < two_adicity; k++)
        blst_fr_sqr(&root, &root);
    return root;
}

void fr_to_scalars(blst_scalar* out, const blst_fr* in, size_t n, thread_pool_t& pool)
{
    pool.parallel_range(n, 1 << 14, [&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; i++)
            blst_scalar_from_fr(&out[i], &in[i]);
    });
}

void fr_distribute_powers(blst_fr* values, size_t n, const blst_fr& base, thread_pool_t& pool)
{
    pool.parallel_range(n, 1 << 12, [&](size_t lo, size_t hi) {
        blst_fr power = fr_pow(base, static_cast<uint64_t>(lo));
        for (size_t i = lo; i < hi; i++) {
            blst_fr_mul(&values[i], &values[i], &power);
            blst_fr_mul(&power, &power, &base);
        }
    });
}

}  // namespace cuzk
