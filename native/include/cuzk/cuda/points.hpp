// Device-resident G1 point sets: a proving key's points uploaded once and
// kept in device memory for every MSM and batch addition that uses them.
#pragma once

#include <cstddef>

#include <blst.h>

#include "cuzk/cuda/device.hpp"

namespace cuzk {

// Where a point set's points live: always device memory. Keys larger than
// the device are streamed a level up (the prover's CUDA backend keeps two
// cuda_points_t windows and refills them with upload_async).
enum class cuda_residency_t { device };

// n affine G1 points (blst_p1_affine: x, y in Montgomery form; the point at
// infinity is x = y = 0, as blst writes it) copied into device memory.
class cuda_points_t {
public:
    // Uploads points[0..n); n < 2^31. Throws cuda_error_t (out of memory,
    // say) or std::invalid_argument.
    cuda_points_t(cuda_device_t& device, const blst_p1_affine* points, size_t n);
    // Room for n points, contents undefined (a window to upload into).
    cuda_points_t(cuda_device_t& device, size_t n);
    ~cuda_points_t();
    cuda_points_t(const cuda_points_t&) = delete;
    cuda_points_t& operator=(const cuda_points_t&) = delete;

    size_t size() const noexcept { return size_; }
    size_t bytes() const noexcept { return bytes_; }
    cuda_residency_t residency() const noexcept { return cuda_residency_t::device; }
    cuda_device_t& device() const noexcept { return device_; }

    // Overwrites points [offset, offset + n) from the host; waits.
    void upload(const blst_p1_affine* points, size_t n, size_t offset);

    // The same without waiting: the copy runs on the context's copy stream
    // (asynchronously when `points` is pinned or registered host memory,
    // which must stay unchanged until then). wait_upload() blocks until the
    // last one has landed; calls that read the points must come after it.
    void upload_async(const blst_p1_affine* points, size_t n, size_t offset);
    void wait_upload();

    // The device address of point 0 (for the .cu files).
    const void* device_data() const noexcept { return data_; }

private:
    cuda_device_t& device_;
    void* data_ = nullptr;
    size_t size_ = 0;
    size_t bytes_ = 0;
    void* upload_event_ = nullptr;  // a cudaEvent_t, made by the first upload_async
};

}  // namespace cuzk
