// The proving key's points, copied into native memory.
#pragma once

#include <vector>

#include <blst.h>

namespace cuzk {

// Groth16 proving-key points in bellperson's compacted form: `a`, `b_g1` and
// `b_g2` hold only the points of variables with density.
struct srs_t {
    blst_p1_affine alpha_g1{};
    blst_p1_affine beta_g1{};
    blst_p2_affine beta_g2{};
    blst_p1_affine delta_g1{};
    blst_p2_affine delta_g2{};
    std::vector<blst_p1_affine> h;     // domain - 1 points
    std::vector<blst_p1_affine> l;     // one per aux variable
    std::vector<blst_p1_affine> a;     // every input, then aux with A density
    std::vector<blst_p1_affine> b_g1;  // inputs then aux, with B density
    std::vector<blst_p2_affine> b_g2;  // the same variables as b_g1

    // The evaluation domain the key was made for: h.size() + 1.
    size_t domain() const { return h.size() + 1; }

    // Throws std::invalid_argument unless b_g1 and b_g2 match and the
    // domain is a power of two.
    void validate() const;
};

}  // namespace cuzk
