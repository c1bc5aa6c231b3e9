// The key's B_G2 points on a device, and the batch addition of the ones
// among them (the B_G2 terms whose scalar is 1): the CPU's largest share of
// a proof for bit-heavy circuits, moved into the kernel region.
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

}  // namespace cuzk
