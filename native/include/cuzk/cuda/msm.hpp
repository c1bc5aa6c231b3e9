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

// The same sums from inputs already in this device's memory (the kernel
// region's terms, cuda_circuit_upload_t): canonical scalars d_scalars[0..n)
// against points[0..n); and against points[d_indices[i] - base] (a tail
// within a window that starts at point `base` of its set). The scalars must
// be 16-byte aligned. An index out of range, or misaligned scalars, throw
// std::invalid_argument.
void cuda_msm_on_device(blst_p1& out, const cuda_points_t& points, const blst_scalar* d_scalars,
                        size_t n);
void cuda_msm_gather_on_device(blst_p1& out, const cuda_points_t& points,
                               const uint32_t* d_indices, uint32_t base,
                               const blst_scalar* d_scalars, size_t n);
// out = sum(points[indices[i]]) for i < n (the terms whose scalar is 1).
// Throws std::invalid_argument for an index out of range.
void cuda_batch_add(blst_p1& out, const cuda_points_t& points, const uint32_t* indices, size_t n);

// out = the sum of points[i] for every i < nbits whose bit is set: bit i is
// (bitmap[i / 64] >> (i % 64)) & 1. nbits <= points.size(); bits past nbits
// in the last word are ignored.
void cuda_batch_add_bitmap(blst_p1& out, const cuda_points_t& points, const uint64_t* bitmap,
                           size_t nbits);
// The same with the bitmap in this device's memory, readable in whole runs
// of 1024 bits (cuda_bitmap_device_bytes: sppark reads 1024 at a time).
void cuda_batch_add_bitmap_on_device(blst_p1& out, const cuda_points_t& points,
                                     const uint64_t* d_bitmap, size_t nbits);
// Bytes a device bitmap of nbits takes: whole runs of 1024 bits.
constexpr size_t cuda_bitmap_device_bytes(size_t nbits) { return (nbits + 1023) / 1024 * 128; }

}  // namespace cuzk
