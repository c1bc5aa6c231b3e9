#include "cuzk/quotient.hpp"

#include <algorithm>
#include <string>

#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"
#include "cuzk/ntt.hpp"

namespace cuzk {

namespace {

// values padded with zeros to n, then moved onto the coset g*<w>: their
// interpolating polynomial (iNTT) evaluated at g*w^i (coset NTT).
std::vector<blst_fr> on_coset(span_t<blst_fr> values, size_t n, thread_pool_t& pool)
{
    std::vector<blst_fr> v(n);  // zero-initialised: 0 in Montgomery form too
    std::copy(values.begin(), values.end(), v.begin());
    ntt(v.data(), n, true, pool);
    coset_ntt(v.data(), n, false, pool);
    return v;
}

}  // namespace

size_t domain_size(size_t constraints)
{
    size_t n = 1;
    for (unsigned log_n = 0; n < constraints; log_n++) {
        CUZK_REQUIRE(log_n < 32, "domain_size: " + std::to_string(constraints) +
                                     " constraints need a domain above 2^32");
        n <<= 1;
    }
    return n;
}

std::vector<blst_scalar> h_coefficients(const circuit_t& circuit, size_t domain,
                                        thread_pool_t& pool)
{
    CUZK_REQUIRE(circuit.a.size <= domain && circuit.b.size <= domain && circuit.c.size <= domain,
                 "h_coefficients: more constraints than the domain " + std::to_string(domain));
    std::vector<blst_fr> a = on_coset(circuit.a, domain, pool);
    {
        const std::vector<blst_fr> b = on_coset(circuit.b, domain, pool);
        const std::vector<blst_fr> c = on_coset(circuit.c, domain, pool);
        // Z(x) = x^n - 1 is the constant g^n - 1 on the whole coset.
        const blst_fr z = fr_sub(fr_pow(fr_generator(), static_cast<uint64_t>(domain)), fr_one());
        const blst_fr z_inv = fr_inverse(z);
        pool.parallel_range(domain, 1 << 12, [&](size_t lo, size_t hi) {
            for (size_t i = lo; i < hi; i++)
                a[i] = fr_mul(fr_sub(fr_mul(a[i], b[i]), c[i]), z_inv);
        });
    }
    coset_ntt(a.data(), domain, true, pool);
    std::vector<blst_scalar> h(domain - 1);
    fr_to_scalars(h.data(), a.data(), domain - 1, pool);
    return h;
}

}  // namespace cuzk
