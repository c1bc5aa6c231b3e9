#include "cuzk/ntt.hpp"

#include <string>
#include <utility>
#include <vector>

#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"

namespace cuzk {

namespace {

// Blocks of this many elements (128 KiB) run their first stages alone, in cache.
constexpr unsigned local_log = 12;

unsigned checked_log2(size_t n, const char* who)
{
    CUZK_REQUIRE(n != 0 && (n & (n - 1)) == 0,
                 std::string(who) + ": length must be a power of two, got " + std::to_string(n));
    unsigned log_n = 0;
    while ((size_t(1) << log_n) < n)
        log_n++;
    CUZK_REQUIRE(log_n <= 32, std::string(who) + ": length above 2^32");
    return log_n;
}

size_t reverse_bits(size_t i, unsigned bits)
{
    size_t r = 0;
    for (unsigned b = 0; b < bits; b++, i >>= 1)
        r = (r << 1) | (i & 1);
    return r;
}

void bit_reverse(blst_fr* v, size_t n, unsigned log_n, thread_pool_t& pool)
{
    pool.parallel_range(n, 1 << 14, [&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; i++) {
            const size_t j = reverse_bits(i, log_n);
            if (i < j)
                std::swap(v[i], v[j]);
        }
    });
}

// tw[j] = omega^j for j < half.
std::vector<blst_fr> twiddles(const blst_fr& omega, size_t half, thread_pool_t& pool)
{
    std::vector<blst_fr> tw(half);
    pool.parallel_range(half, 1 << 12, [&](size_t lo, size_t hi) {
        blst_fr power = fr_pow(omega, static_cast<uint64_t>(lo));
        for (size_t j = lo; j < hi; j++) {
            tw[j] = power;
            blst_fr_mul(&power, &power, &omega);
        }
    });
    return tw;
}

// Cooley-Tukey: (x0, x1) <- (x0 + w*x1, x0 - w*x1).
inline void butterfly(blst_fr& x0, blst_fr& x1, const blst_fr& w)
{
    blst_fr t;
    blst_fr_mul(&t, &x1, &w);
    blst_fr_sub(&x1, &x0, &t);
    blst_fr_add(&x0, &x0, &t);
}

// Decimation in time over bit-reversed input: the stage of span m pairs
// i with i + m in groups of 2m, with twiddles w_2m^j = tw[j * n / 2m].
void stages(blst_fr* v, size_t n, const std::vector<blst_fr>& tw, thread_pool_t& pool)
{
    const size_t block = std::min(n, size_t(1) << local_log);
    pool.parallel_for(n / block, [&](size_t b) {
        blst_fr* x = v + b * block;
        for (size_t m = 1; m < block; m <<= 1) {
            const size_t stride = n / (2 * m);
            for (size_t g = 0; g < block; g += 2 * m)
                for (size_t j = 0; j < m; j++)
                    butterfly(x[g + j], x[g + j + m], tw[j * stride]);
        }
    });
    for (size_t m = block; m < n; m <<= 1) {
        const size_t stride = n / (2 * m);
        pool.parallel_range(n / 2, 1 << 12, [&](size_t lo, size_t hi) {
            for (size_t k = lo; k < hi; k++) {
                const size_t j = k & (m - 1);
                const size_t i = 2 * (k - j) + j;  // group k / m, offset j
                butterfly(v[i], v[i + m], tw[j * stride]);
            }
        });
    }
}

void scale(blst_fr* v, size_t n, const blst_fr& factor, thread_pool_t& pool)
{
    pool.parallel_range(n, 1 << 14, [&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; i++)
            blst_fr_mul(&v[i], &v[i], &factor);
    });
}

}  // namespace

void ntt(blst_fr* values, size_t n, bool inverse, thread_pool_t& pool)
{
    const unsigned log_n = checked_log2(n, "ntt");
    if (n == 1)
        return;
    blst_fr omega = fr_root_of_unity(log_n);
    if (inverse)
        omega = fr_inverse(omega);
    bit_reverse(values, n, log_n, pool);
    stages(values, n, twiddles(omega, n / 2, pool), pool);
    if (inverse)
        scale(values, n, fr_inverse(fr_from_u64(n)), pool);
}

void coset_ntt(blst_fr* values, size_t n, bool inverse, thread_pool_t& pool)
{
    checked_log2(n, "coset_ntt");
    if (inverse) {
        ntt(values, n, true, pool);
        fr_distribute_powers(values, n, fr_inverse(fr_generator()), pool);
    } else {
        fr_distribute_powers(values, n, fr_generator(), pool);
        ntt(values, n, false, pool);
    }
}

}  // namespace cuzk
