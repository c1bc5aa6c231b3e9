// The CPU backend of the kernel region: blst on the thread pool.
#include <memory>
#include <string>
#include <vector>

#include "cuzk/cuda/error.hpp"
#include "cuzk/gather.hpp"
#include "cuzk/kernel_backend.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/quotient.hpp"
#include "cuzk/uninit.hpp"

namespace cuzk {

namespace {

class cpu_batch_t final : public kernel_batch_t {
public:
    // The tails live in one heap block owned by the batch.
    cpu_batch_t(const srs_t& srs, const std::vector<circuit_t>& circuits,
                std::vector<circuit_terms_t>& terms, thread_pool_t& pool)
        : srs_(srs), circuits_(circuits), terms_(terms)
    {
        size_t bytes = 0;
        for (const circuit_terms_t& t : terms)
            bytes += t.tail_bytes();
        tails_.resize(bytes / 256 + 1);
        char* at = reinterpret_cast<char*>(tails_.data());
        for (circuit_terms_t& t : terms) {
            t.fill(at, pool);
            at += t.tail_bytes();
        }
    }

    void run(std::vector<kernel_sums_t>& sums, thread_pool_t& pool) override
    {
        for (size_t i = 0; i < circuits_.size(); i++) {
            kernel_sums_t& out = sums[i];
            const std::vector<blst_scalar> h = h_coefficients(circuits_[i], srs_.domain(), pool);
            msm(out.h, gather_t<blst_p1_affine>::contiguous(srs_.h.data(), srs_.h.size()),
                gather_t<blst_scalar>::contiguous(h.data(), h.size()), pool);
            msm(out.l, srs_.l.data(), terms_[i].l, pool);
            msm(out.a, srs_.a.data(), terms_[i].a, pool);
            msm(out.b_g1, srs_.b_g1.data(), terms_[i].b, pool);
        }
    }

    kernel_report_t report() const override { return {}; }

private:
    const srs_t& srs_;
    const std::vector<circuit_t>& circuits_;
    const std::vector<circuit_terms_t>& terms_;
    // 256-byte blocks (alignas), as circuit_terms_t::fill wants.
    struct alignas(256) block_t {
        char bytes[256];
    };
    uninit_vector_t<block_t> tails_;
};

class cpu_backend_t final : public kernel_backend_t {
public:
    backend_t kind() const noexcept override { return backend_t::cpu; }

    std::unique_ptr<kernel_batch_t> prepare(const srs_t& srs,
                                            const std::vector<circuit_t>& circuits,
                                            std::vector<circuit_terms_t>& terms,
                                            thread_pool_t& pool, bool,
                                            std::unique_ptr<early_inputs_t>) override
    {
        return std::make_unique<cpu_batch_t>(srs, circuits, terms, pool);
    }

    // What the CUDA backend's real fault would throw (the same code, so the
    // same kind); there is no context to lose, so gpu_lock_t's lost state
    // alone makes a sticky fault stick.
    void raise(uint32_t device, injected_fault_t fault) override
    {
        const std::string call = "injected fault on CPU device " + std::to_string(device);
        switch (fault) {
        case injected_fault_t::none:
            return;
        case injected_fault_t::sticky:
            throw cuda_error_t(cuda_code::illegal_address, call, __FILE__, __LINE__,
                               "cudaErrorIllegalAddress: an illegal memory access was "
                               "encountered");
        case injected_fault_t::transient:
            throw cuda_error_t(cuda_code::invalid_configuration, call, __FILE__, __LINE__,
                               "cudaErrorInvalidConfiguration: invalid configuration argument");
        case injected_fault_t::alloc:
            throw cuda_error_t(cuda_code::memory_allocation, call, __FILE__, __LINE__,
                               "cudaErrorMemoryAllocation: out of memory");
        }
    }
};

}  // namespace

std::unique_ptr<kernel_backend_t> make_cpu_kernel_backend()
{
    return std::make_unique<cpu_backend_t>();
}

}  // namespace cuzk
