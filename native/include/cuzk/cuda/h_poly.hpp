// The quotient polynomial H = (A*B - C) / Z on the GPU, its coefficients
// left in device memory for the H MSM.
#pragma once

#include <cstddef>
#include <memory>

#include <blst.h>

#include "cuzk/cuda/device.hpp"
#include "cuzk/cuda/ntt.hpp"
#include "cuzk/cuda/points.hpp"

namespace cuzk {

// One circuit's kernel-region inputs copied to a device: first its terms
// (any page-locked bytes: for the prover, the L, A and B tails and bitmaps,
// so that the sums can start), then a, b, c. On their own stream (a copy
// engine): ahead of the kernel region, the copies run outside the lock while
// another worker's kernels use the device. The device memory comes from the
// device's stream-ordered pool.
class cuda_circuit_upload_t {
public:
    // Starts copying terms[0..terms_bytes), then a, b, c (len values each),
    // all page-locked host memory that must stay unchanged until the upload
    // is destroyed, to device `ordinal`. Either part may be empty. Throws
    // cuda_error_t (out of device memory, say).
    cuda_circuit_upload_t(int ordinal, const void* terms, size_t terms_bytes, const blst_fr* a,
                          const blst_fr* b, const blst_fr* c, size_t len);
    // Waits for the copies; gives the memory back. Whoever read the values
    // (the kernel region, cuda_h_poly_t::compute) has waited for its own work.
    ~cuda_circuit_upload_t();
    cuda_circuit_upload_t(const cuda_circuit_upload_t&) = delete;
    cuda_circuit_upload_t& operator=(const cuda_circuit_upload_t&) = delete;

    int ordinal() const noexcept { return ordinal_; }
    size_t len() const noexcept { return len_; }
    // The device address of the terms' copy.
    const void* terms() const noexcept { return data_; }
    // Makes the device's stream 0 (where the kernel region sums) wait for
    // the terms' copy.
    void wait_terms(cuda_device_t& device) const;
    // Device addresses of a (0), b (1), c (2).
    const blst_fr* device_data(unsigned which) const noexcept;
    // A cudaEvent_t recorded after all the copies.
    void* ready() const noexcept { return event_; }

private:
    void release() noexcept;

    int ordinal_;
    size_t terms_bytes_;
    size_t len_;
    void* stream_ = nullptr;
    void* terms_event_ = nullptr;
    void* event_ = nullptr;
    void* data_ = nullptr;
};

// A workspace for one evaluation domain n = 2^k (3n Fr of device memory),
// reused across the circuits of a batch. compute() does what
// cuzk::h_coefficients does on the CPU, in six NTTs instead of seven:
//   a, b, c (evaluations on <w>, zero-padded to n)  --iNTT-->  coefficients
//   a, b  --coset NTT (g = 7)-->  values on g<w>
//   a*b  --coset iNTT-->  A*B mod (x^n - g^n); minus C, times 1/(g^n - 1):
//   H's n coefficients (the same vector as the coset iNTT of
//   (a*b - c) / (g^n - 1) on g<w>, as the CPU computes it).
// H's degree is below n - 1, so coefficient n - 1 is zero and the first
// n - 1 feed the MSM against the key's n - 1 h points.
class cuda_h_poly_t {
public:
    // domain: a power of two, 2 <= domain <= 2^28.
    cuda_h_poly_t(cuda_device_t& device, size_t domain);
    ~cuda_h_poly_t();
    cuda_h_poly_t(const cuda_h_poly_t&) = delete;
    cuda_h_poly_t& operator=(const cuda_h_poly_t&) = delete;

    size_t domain() const noexcept { return domain_; }
    cuda_device_t& device() const noexcept { return device_; }

    // Pinned host arrays of `domain` values (0 = a, 1 = b, 2 = c) the caller
    // may fill in place, so that compute_staged() copies with no extra pass.
    // Allocated on first use (3 * 32 * domain bytes of pinned memory).
    blst_fr* staging(unsigned which);

    // a, b, c: `len` <= domain values each, Montgomery form, anywhere in host
    // memory (pinned memory is copied asynchronously, overlapping the NTTs).
    // Waits for the result.
    void compute(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len);
    // The same from staging(0..2).
    void compute_staged(size_t len);
    // The same from values already on this device (waits for the upload).
    void compute(const cuda_circuit_upload_t& abc);

    // compute()'s work, enqueued without waiting for it: on streams 1-3 of
    // the device, so that what the caller starts next on stream 0 and on
    // sppark's MSM streams (the kernel region's L, A and B sums) runs
    // beside it. finish() waits; until then the inputs must stay as they
    // are and coefficients() is not ready.
    void start(const blst_fr* a, const blst_fr* b, const blst_fr* c, size_t len);
    void start(const cuda_circuit_upload_t& abc);
    void finish();

    // How the next computations leave H: natural (the default: Montgomery
    // form, natural order) or as the table MSM reads it with the least
    // work (canonical integers, bit-reversed order: the last kernel
    // multiplies by 1/(g^n - 1) as an integer, which leaves its Montgomery
    // factor out, and the final bit reversal is skipped).
    enum class output_t { natural, for_table };
    void set_output(output_t output) noexcept { output_ = output; }

    // H's `domain` coefficients, valid after compute(), as layout() says
    // (natural output: Montgomery form, natural order).
    const cuda_fr_buffer_t& coefficients() const noexcept { return *a_; }
    cuda_scalar_layout_t layout() const noexcept;
    // The coefficients in Montgomery form and natural order (either output).
    void download(blst_fr* out) const;

    // out = sum(h_i * h_points[i]) for i < domain - 1 (h_points.size() must
    // be at least domain - 1), straight from device memory.
    void msm(blst_p1& out, const cuda_points_t& h_points) const;

private:
    // inputs: host (device_event null) or device addresses (after the event).
    void compute_from(const blst_fr* const inputs[3], size_t len, void* device_event);

    cuda_device_t& device_;
    size_t domain_;
    unsigned log_domain_;
    std::unique_ptr<cuda_fr_buffer_t> a_, b_, c_;
    cuda_pinned_buffer_t staging_;
    output_t output_ = output_t::natural;
    output_t computed_ = output_t::natural;  // how the coefficients lie now
};

}  // namespace cuzk
