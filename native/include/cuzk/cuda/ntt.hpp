// Number-theoretic transforms over Fr on the GPU (sppark's NTT), and the
// device-resident Fr vectors they work on.
//
// Roots of unity: sppark's BLS12-381 tables hold, for every k <= 32, the same
// 2^k-th root ff/blstrs use (ROOT_OF_UNITY = 7^((r-1)/2^32), squared 32 - k
// times), and its coset generator is 7 (Scalar::MULTIPLICATIVE_GENERATOR);
// the harness checks both against blst at run time
// (cuda_ntt_root_of_unity / cuda_ntt_coset_generator below). So these
// transforms agree with cuzk::ntt and cuzk::coset_ntt on the CPU.
#pragma once

#include <cstddef>

#include <blst.h>

#include "cuzk/cuda/device.hpp"

namespace cuzk {

// How an MSM's scalars lie in a device buffer (cuda_msm_table_t::msm).
struct cuda_scalar_layout_t {
    // Integers below r (the H polynomial's last kernel can write them so),
    // not Montgomery form.
    bool canonical = false;
    // 0: scalars[i] pairs with P_i. L > 0: scalars[p] pairs with
    // P_rev(p), rev reversing L bits (the order an NTT leaves); the call's
    // n must then be 2^L or 2^L - 1.
    unsigned bit_reversed_log = 0;
};

// n Fr values (Montgomery form, the bytes of blst_fr) in device memory.
class cuda_fr_buffer_t {
public:
    cuda_fr_buffer_t(cuda_device_t& device, size_t n);
    ~cuda_fr_buffer_t();
    cuda_fr_buffer_t(const cuda_fr_buffer_t&) = delete;
    cuda_fr_buffer_t& operator=(const cuda_fr_buffer_t&) = delete;

    size_t size() const noexcept { return size_; }
    size_t bytes() const noexcept { return size_ * sizeof(blst_fr); }
    cuda_device_t& device() const noexcept { return device_; }

    // Copies host[0..n) to [offset, offset + n), or back; both wait for the
    // copy. Pinned host memory is copied directly, pageable memory through
    // the driver's staging.
    void upload(const blst_fr* host, size_t n, size_t offset = 0);
    void download(blst_fr* host, size_t n, size_t offset = 0) const;
    // Sets [offset, offset + n) to zero.
    void zero(size_t offset, size_t n);

    void* device_data() noexcept { return data_; }
    const void* device_data() const noexcept { return data_; }

private:
    cuda_device_t& device_;
    void* data_ = nullptr;
    size_t size_ = 0;
};

// In place over values[0..2^log_n), natural order in and out, log_n <= 28.
// Forward: coefficients -> evaluations at w^i (w = the 2^log_n-th root above);
// inverse: back, the 1/n factor included. Coset: at g*w^i, g = 7 (forward
// scales coefficient i by g^i first, inverse scales by g^-i after).
// Waits for the result.
void cuda_ntt(cuda_fr_buffer_t& values, unsigned log_n, bool inverse, bool coset);

// The same on host memory: uploads, transforms, downloads. n a power of two.
void cuda_ntt(cuda_device_t& device, blst_fr* values, size_t n, bool inverse, bool coset);

// sppark's table entries (host-side constants, no device needed): the
// forward 2^log_n-th root of unity (log_n <= 32) and the coset generator.
blst_fr cuda_ntt_root_of_unity(unsigned log_n);
blst_fr cuda_ntt_coset_generator();

}  // namespace cuzk
