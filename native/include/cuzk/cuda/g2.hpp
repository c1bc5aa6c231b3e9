// The key's B_G2 points on a device, the batch addition of the ones among
// them (the B_G2 terms whose scalar is 1) and the MSM of the rest (the
// tail): the CPU's largest share of a proof, moved into the kernel region.
#pragma once

#include <cstddef>
#include <cstdint>

#include <blst.h>

#include "cuzk/cuda/device.hpp"

namespace cuzk {

// n affine G2 points (blst_p2_affine, Montgomery form; infinity is all
// zeros) copied into device memory.
class cuda_g2_points_t {
public:
    // Uploads points[0..n); n < 2^31. Throws cuda_error_t or
    // std::invalid_argument.
    cuda_g2_points_t(cuda_device_t& device, const blst_p2_affine* points, size_t n);
    ~cuda_g2_points_t();
    cuda_g2_points_t(const cuda_g2_points_t&) = delete;
    cuda_g2_points_t& operator=(const cuda_g2_points_t&) = delete;

    size_t size() const noexcept { return size_; }
    size_t bytes() const noexcept { return size_ * sizeof(blst_p2_affine); }
    cuda_device_t& device() const noexcept { return device_; }
    const void* device_data() const noexcept { return data_; }

private:
    cuda_device_t& device_;
    void* data_ = nullptr;
    size_t size_ = 0;
};

// out = the sum of points[i] for every i < nbits whose bit is set (bit i of
// bitmap[i / 64]); nbits <= points.size(). Waits for the result.
void cuda_batch_add_bitmap(blst_p2& out, const cuda_g2_points_t& points, const uint64_t* bitmap,
                           size_t nbits);
// The same with the bitmap in this device's memory, readable in whole runs
// of 1024 bits (cuda_bitmap_device_bytes, msm.hpp).
void cuda_batch_add_bitmap_on_device(blst_p2& out, const cuda_g2_points_t& points,
                                     const uint64_t* d_bitmap, size_t nbits);

// out = sum_k scalars[k] * points[indices[k]] over k < n, canonical
// scalars, indices and scalars in host memory; n < 2^31. Throws
// std::invalid_argument for an index out of range. Waits for the result.
void cuda_msm_gather(blst_p2& out, const cuda_g2_points_t& points, const uint32_t* indices,
                     const blst_scalar* scalars, size_t n);
// The same with the indices and the scalars (16-byte aligned) in this
// device's memory, each index less `base` naming its point.
void cuda_msm_gather_on_device(blst_p2& out, const cuda_g2_points_t& points,
                               const uint32_t* d_indices, uint32_t base,
                               const blst_scalar* d_scalars, size_t n);

}  // namespace cuzk
