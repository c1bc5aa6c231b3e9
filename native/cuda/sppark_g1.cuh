// sppark's BLS12-381 G1 types, and the checks that they have blst's bytes.
// Include after blst_compat.cuh.
#pragma once

#include <ff/bls12-381.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

// The names sppark's pippenger.cuh instantiates its kernels with.
typedef jacobian_t<fp_t> point_t;  // X, Y, Z: x = X/Z^2, y = Y/Z^3; Z = 0 is infinity
typedef xyzz_t<fp_t> bucket_t;     // X, Y, ZZZ, ZZ: x = X/ZZ, y = Y/ZZZ
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

// blst keeps Fp and Fr in Montgomery form as little-endian 64-bit limbs,
// exactly as sppark's host (blst_t) and device (mont_t, 32-bit limbs of the
// same bytes) types do; affine infinity is x = y = 0 in both.
static_assert(sizeof(fp_t) == sizeof(blst_fp), "Fp size");
static_assert(sizeof(fr_t) == sizeof(blst_fr), "Fr size");
static_assert(sizeof(fr_t) == sizeof(blst_scalar), "scalar size");
static_assert(sizeof(affine_t) == sizeof(blst_p1_affine), "affine G1 size");
static_assert(sizeof(affine_t::mem_t) == sizeof(blst_p1_affine), "affine G1 (device) size");
static_assert(sizeof(point_t) == sizeof(blst_p1), "Jacobian G1 size");
static_assert(sizeof(bucket_t::mem_t) == 4 * sizeof(blst_fp), "XYZZ bucket size");
static_assert(sizeof(blst_p1_affine) % 16 == 0, "affine points copy as 16-byte words");
