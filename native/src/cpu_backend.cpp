// The CPU backend of the kernel region: blst on the thread pool.
#include <memory>
#include <vector>

#include "cuzk/gather.hpp"
#include "cuzk/kernel_backend.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/msm_split.hpp"
#include "cuzk/quotient.hpp"

namespace cuzk {

namespace {

// One circuit's L, A and B_G1 terms sorted by scalar (0 / 1 / other). The
// splits point into the preamble's scalars and the SRS: never copied.
struct cpu_circuit_t {
    msm_split_t<blst_p1_affine> l, a, b_g1;
};

class cpu_batch_t final : public kernel_batch_t {
public:
    cpu_batch_t(const srs_t& srs, const std::vector<circuit_t>& circuits,
                const std::vector<circuit_scalars_t>& scalars, thread_pool_t& pool)
        : srs_(srs), circuits_(circuits), prepared_(circuits.size())
    {
        for (size_t i = 0; i < circuits.size(); i++) {
            cpu_circuit_t& p = prepared_[i];
            const circuit_scalars_t& s = scalars[i];
            p.l.assign(
                s.aux.size(), [&](size_t k) { return &srs.l[k]; },
                [&](size_t k) { return &s.aux[k]; }, pool);
            p.a.assign(
                s.a_terms.size(), [&](size_t k) { return &srs.a[k]; },
                [&](size_t k) { return s.a_terms[k]; }, pool);
            p.b_g1.assign(
                s.b_terms.size(), [&](size_t k) { return &srs.b_g1[k]; },
                [&](size_t k) { return s.b_terms[k]; }, pool);
        }
    }

    void run(std::vector<kernel_sums_t>& sums, thread_pool_t& pool) override
    {
        for (size_t i = 0; i < circuits_.size(); i++) {
            kernel_sums_t& out = sums[i];
            const std::vector<blst_scalar> h = h_coefficients(circuits_[i], srs_.domain(), pool);
            msm(out.h, gather_t<blst_p1_affine>::contiguous(srs_.h.data(), srs_.h.size()),
                gather_t<blst_scalar>::contiguous(h.data(), h.size()), pool);
            prepared_[i].l.evaluate(out.l, pool);
            prepared_[i].a.evaluate(out.a, pool);
            prepared_[i].b_g1.evaluate(out.b_g1, pool);
        }
    }

    kernel_report_t report() const override { return {}; }

private:
    const srs_t& srs_;
    const std::vector<circuit_t>& circuits_;
    std::vector<cpu_circuit_t> prepared_;
};

class cpu_backend_t final : public kernel_backend_t {
public:
    backend_t kind() const noexcept override { return backend_t::cpu; }

    std::unique_ptr<kernel_batch_t> prepare(const srs_t& srs,
                                            const std::vector<circuit_t>& circuits,
                                            const std::vector<circuit_scalars_t>& scalars,
                                            thread_pool_t& pool) override
    {
        return std::make_unique<cpu_batch_t>(srs, circuits, scalars, pool);
    }
};

}  // namespace

std::unique_ptr<kernel_backend_t> make_cpu_kernel_backend()
{
    return std::make_unique<cpu_backend_t>();
}

}  // namespace cuzk
