// Fixed-base scalar multiplication on a device: k_i * base for many scalars
// and one base point, in G1 and in G2 (parameter generation's bulk work).
//
// The host builds a table of the base's multiples, d * 2^(8w) * base for
// the 32 windows w of 8 bits and every digit d (digit 0 is the point at
// infinity), and uploads it once per call; one thread per scalar (two in G2)
// then adds one table point per non-zero digit and makes the sum affine
// with one field inversion. Results come back in blst's affine layout
// (zeros for the point at infinity), so nothing is left for the host to do.
#pragma once

#include <cstddef>

#include <blst.h>

#include "cuzk/cuda/device.hpp"

namespace cuzk {

// out[i] = scalars[i] * base for i < n. Scalars are blst_fr values
// (Montgomery form, as blstrs keeps them); a zero scalar gives the point at
// infinity.
// Inputs are cut into chunks of a few million scalars; the call waits for
// the last one. Throws cuda_error_t or std::invalid_argument.
void cuda_fixed_base_g1(cuda_device_t& device, const blst_p1_affine& base,
                        const blst_fr* scalars, size_t n, blst_p1_affine* out);
void cuda_fixed_base_g2(cuda_device_t& device, const blst_p2_affine& base,
                        const blst_fr* scalars, size_t n, blst_p2_affine* out);

}  // namespace cuzk
