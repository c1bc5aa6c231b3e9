// The quotient polynomial H = (A*B - C) / Z of one circuit.
#pragma once

#include <cstddef>
#include <vector>

#include <blst.h>

#include "cuzk/circuit.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

// The evaluation domain for `constraints`: the least power of two >= it (at
// least 1). Throws std::invalid_argument above 2^32.
size_t domain_size(size_t constraints);

// H's coefficients h_0..h_(n-2), canonical, for the MSM against srs.h:
// a, b, c padded to n = `domain` and interpolated (iNTT), evaluated on the
// coset g*<w> (coset NTT), combined as (a*b - c) / (g^n - 1) there, and
// interpolated back (coset iNTT). Their degree is below n - 1.
std::vector<blst_scalar> h_coefficients(const circuit_t& circuit, size_t domain,
                                        thread_pool_t& pool);

}  // namespace cuzk
