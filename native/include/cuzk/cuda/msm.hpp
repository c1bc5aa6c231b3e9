// G1 multi-scalar multiplication and batch addition over device-resident
// point sets (sppark's Pippenger with XYZZ buckets underneath).
//
// Scalars come in either form, chosen by type:
//   blst_scalar  canonical little-endian bytes (blst_scalar_from_fr), < r;
//   blst_fr      Montgomery form, the bytes of blst_fr (converted on the GPU).
// Host scalars may be pageable or pinned (pinned copies overlap the kernels
// better). Every call waits for its result; the result is a Jacobian blst_p1.
#pragma once

#include <cstddef>
#include <cstdint>

#include <blst.h>

#include "cuzk/cuda/device.hpp"
#include "cuzk/cuda/ntt.hpp"
#include "cuzk/cuda/points.hpp"

namespace cuzk {

// out = sum(scalars[i] * points[i]) for i < n; n <= points.size(). n = 0
// gives the point at infinity.
void cuda_msm(blst_p1& out, const cuda_points_t& points, const blst_scalar* scalars, size_t n);
void cuda_msm(blst_p1& out, const cuda_points_t& points, const blst_fr* scalars, size_t n);

// The same with device-resident Montgomery scalars: scalars[0..n), e.g. the
// H coefficients cuda_h_poly_t leaves on the device.
void cuda_msm(blst_p1& out, const cuda_points_t& points, const cuda_fr_buffer_t& scalars, size_t n);
// points[0..n) against scalars[offset..offset + n): one window of a point
// set streamed through `points` (the H MSM of a key too large to keep).
void cuda_msm(blst_p1& out, const cuda_points_t& points, const cuda_fr_buffer_t& scalars,
              size_t offset, size_t n);

// out = sum(scalars[i] * points[indices[i]]) for i < n: a subset of a
// resident set. The indices (any order, repeats allowed, each < points.size())
// are uploaded and the points gathered on the device into the context's
// scratch (96 bytes a point), then one MSM runs over the gathered points.
// Throws std::invalid_argument for an index out of range.
void cuda_msm_gather(blst_p1& out, const cuda_points_t& points, const uint32_t* indices,
                     const blst_scalar* scalars, size_t n);
void cuda_msm_gather(blst_p1& out, const cuda_points_t& points, const uint32_t* indices,
                     const blst_fr* scalars, size_t n);

// out = sum(points[indices[i]]) for i < n (the terms whose scalar is 1).
// Throws std::invalid_argument for an index out of range.
void cuda_batch_add(blst_p1& out, const cuda_points_t& points, const uint32_t* indices, size_t n);

// out = the sum of points[i] for every i < nbits whose bit is set: bit i is
// (bitmap[i / 64] >> (i % 64)) & 1. nbits <= points.size(); bits past nbits
// in the last word are ignored.
void cuda_batch_add_bitmap(blst_p1& out, const cuda_points_t& points, const uint64_t* bitmap,
                           size_t nbits);

}  // namespace cuzk
