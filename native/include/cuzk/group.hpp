// blst's G1 and G2 functions behind one interface, so that code over points
// is written once for both groups: group_t<blst_p1_affine>, group_t<blst_p2_affine>.
#pragma once

#include <cstddef>

#include <blst.h>

namespace cuzk {

template <class Affine>
struct group_t;

template <>
struct group_t<blst_p1_affine> {
    using affine_t = blst_p1_affine;
    using point_t = blst_p1;

    static void add(point_t& out, const point_t& a, const point_t& b) { blst_p1_add_or_double(&out, &a, &b); }
    static void dbl(point_t& out, const point_t& a) { blst_p1_double(&out, &a); }
    static void neg(point_t& p) { blst_p1_cneg(&p, true); }
    static void from_affine(point_t& out, const affine_t& a) { blst_p1_from_affine(&out, &a); }
    static void to_affine(affine_t& out, const point_t& p) { blst_p1_to_affine(&out, &p); }
    static void mult(point_t& out, const point_t& p, const blst_scalar& s) { blst_p1_mult(&out, &p, s.b, 255); }

    // Bytes of one Pippenger bucket.
    static size_t bucket_bytes() { return blst_p1s_mult_pippenger_scratch_sizeof(1); }
    static size_t pippenger_scratch_bytes(size_t n) { return blst_p1s_mult_pippenger_scratch_sizeof(n); }
    static void pippenger(point_t& out, const affine_t* const pts[], size_t n,
                          const byte* const scalars[], limb_t* scratch)
    {
        blst_p1s_mult_pippenger(&out, pts, n, scalars, 255, scratch);
    }
    static void tile(point_t& out, const affine_t* const pts[], size_t n, const byte* const scalars[],
                     size_t nbits, limb_t* scratch, size_t bit0, size_t window)
    {
        blst_p1s_tile_pippenger(&out, pts, n, scalars, nbits, scratch, bit0, window);
    }
    static void sum(point_t& out, const affine_t* const pts[], size_t n) { blst_p1s_add(&out, pts, n); }
};

template <>
struct group_t<blst_p2_affine> {
    using affine_t = blst_p2_affine;
    using point_t = blst_p2;

    static void add(point_t& out, const point_t& a, const point_t& b) { blst_p2_add_or_double(&out, &a, &b); }
    static void dbl(point_t& out, const point_t& a) { blst_p2_double(&out, &a); }
    static void neg(point_t& p) { blst_p2_cneg(&p, true); }
    static void from_affine(point_t& out, const affine_t& a) { blst_p2_from_affine(&out, &a); }
    static void to_affine(affine_t& out, const point_t& p) { blst_p2_to_affine(&out, &p); }
    static void mult(point_t& out, const point_t& p, const blst_scalar& s) { blst_p2_mult(&out, &p, s.b, 255); }

    static size_t bucket_bytes() { return blst_p2s_mult_pippenger_scratch_sizeof(1); }
    static size_t pippenger_scratch_bytes(size_t n) { return blst_p2s_mult_pippenger_scratch_sizeof(n); }
    static void pippenger(point_t& out, const affine_t* const pts[], size_t n,
                          const byte* const scalars[], limb_t* scratch)
    {
        blst_p2s_mult_pippenger(&out, pts, n, scalars, 255, scratch);
    }
    static void tile(point_t& out, const affine_t* const pts[], size_t n, const byte* const scalars[],
                     size_t nbits, limb_t* scratch, size_t bit0, size_t window)
    {
        blst_p2s_tile_pippenger(&out, pts, n, scalars, nbits, scratch, bit0, window);
    }
    static void sum(point_t& out, const affine_t* const pts[], size_t n) { blst_p2s_add(&out, pts, n); }
};

}  // namespace cuzk
