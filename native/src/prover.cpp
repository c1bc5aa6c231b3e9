#include "cuzk/prover.hpp"

#include <cstring>
#include <string>

#include <pthread.h>

#include "cuzk/background.hpp"
#include "cuzk/check.hpp"
#include "cuzk/clock.hpp"
#include "cuzk/fr.hpp"
#include "cuzk/group.hpp"
#include "cuzk/kernel_backend.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/terms.hpp"
#include "cuzk/quotient.hpp"

namespace cuzk {

namespace {

using g1_t = group_t<blst_p1_affine>;
using g2_t = group_t<blst_p2_affine>;

void require_count(size_t index, const char* quantity, size_t expected, size_t got)
{
    CUZK_REQUIRE(expected == got, "prove: circuit " + std::to_string(index) + ": " + quantity +
                                      ": expected " + std::to_string(expected) + ", got " +
                                      std::to_string(got));
}

void validate(const circuit_t& c, const srs_t& srs, size_t i)
{
    require_count(i, "B evaluations vs A evaluations", c.a.size, c.b.size);
    require_count(i, "C evaluations vs A evaluations", c.a.size, c.c.size);
    require_count(i, "domain vs SRS h + 1", srs.domain(), domain_size(c.a.size));
    require_count(i, "aux assignment vs SRS l", srs.l.size(), c.aux.size);
    require_count(i, "A aux density bits vs aux assignment", c.aux.size, c.a_aux.bits);
    require_count(i, "B input density bits vs inputs", c.input.size, c.b_input.bits);
    require_count(i, "B aux density bits vs aux assignment", c.aux.size, c.b_aux.bits);
    CUZK_REQUIRE(c.a_aux.well_formed() && c.b_input.well_formed() && c.b_aux.well_formed(),
                 "prove: circuit " + std::to_string(i) + ": a density has too few words");
    require_count(i, "inputs + A aux density vs SRS a", srs.a.size(),
                  c.input.size + c.a_aux.count());
    require_count(i, "B densities vs SRS b_g1", srs.b_g1.size(),
                  c.b_input.count() + c.b_aux.count());
}

blst_p1 affine_g1(const blst_p1_affine& a)
{
    blst_p1 p;
    g1_t::from_affine(p, a);
    return p;
}

blst_p2 affine_g2(const blst_p2_affine& a)
{
    blst_p2 p;
    g2_t::from_affine(p, a);
    return p;
}

// A = alpha + sum_A + r delta_1;  B = beta_2 + sum_B2 + s delta_2;
// C = s A + r (beta_1 + sum_B1 + s delta_1) - r s delta_1 + H + L
//   = s alpha + r beta_1 + r s delta_1 + s sum_A + r sum_B1 + H + L.
proof_t assemble(const srs_t& srs, const kernel_sums_t& k, const blst_p2& b_g2_sum,
                 const blst_fr& r, const blst_fr& s)
{
    const blst_scalar rc = fr_to_scalar(r), sc = fr_to_scalar(s), rsc = fr_to_scalar(fr_mul(r, s));
    const blst_p1 delta_1 = affine_g1(srs.delta_g1);
    blst_p1 a, b1, c, t;
    g1_t::add(a, affine_g1(srs.alpha_g1), k.a);
    g1_t::mult(t, delta_1, rc);
    g1_t::add(a, a, t);

    blst_p2 b, t2;
    g2_t::add(b, affine_g2(srs.beta_g2), b_g2_sum);
    g2_t::mult(t2, affine_g2(srs.delta_g2), sc);
    g2_t::add(b, b, t2);

    g1_t::add(b1, affine_g1(srs.beta_g1), k.b_g1);
    g1_t::mult(t, delta_1, sc);
    g1_t::add(b1, b1, t);

    g1_t::mult(c, a, sc);
    g1_t::mult(t, b1, rc);
    g1_t::add(c, c, t);
    g1_t::mult(t, delta_1, rsc);
    g1_t::neg(t);
    g1_t::add(c, c, t);
    g1_t::add(c, c, k.h);
    g1_t::add(c, c, k.l);

    proof_t proof;
    g1_t::to_affine(proof.a, a);
    g2_t::to_affine(proof.b, b);
    g1_t::to_affine(proof.c, c);
    return proof;
}

}  // namespace

prove_output_t prove(gpu_lock_t& lock, const srs_t& srs, const std::vector<circuit_t>& batch,
                     span_t<blst_fr> r, span_t<blst_fr> s, injected_fault_t fault,
                     thread_pool_t& pool)
{
    const uint64_t started_ns = monotonic_ns();
    const size_t n = batch.size();
    CUZK_REQUIRE(r.size == n && s.size == n,
                 "prove: " + std::to_string(n) + " circuits but " + std::to_string(r.size) +
                     " r and " + std::to_string(s.size) + " s blinding factors");
    srs.validate();
    for (size_t i = 0; i < n; i++)
        validate(batch[i], srs, i);

    // 1. Preamble, lock not held: sort each circuit's terms by scalar, then
    // let the backend stage them. The CPU's share of B_G2 then runs beside
    // the kernel region, at background priority on the pool: it is needed
    // only by the epilogue, so it must not hold up another worker's preamble.
    kernel_backend_t& backend = lock.backend();
    prove_timings_t timings;
    std::vector<circuit_terms_t> terms(n);
    // Lets the backend start copying a, b, c to the device now (the CUDA
    // backend does when they are page-locked), beside the classification.
    std::unique_ptr<early_inputs_t> early = backend.start_inputs(srs, batch);
    const uint64_t classify_started_ns = monotonic_ns();
    for (size_t i = 0; i < n; i++)
        terms[i].classify(batch[i], pool);
    const uint64_t classified_ns = monotonic_ns();
    timings.classify_ns = classified_ns - classify_started_ns;
    const std::unique_ptr<kernel_batch_t> kernels =
        backend.prepare(srs, batch, terms, pool, lock.in_use(), std::move(early));
    timings.backend_prepare_ns = monotonic_ns() - classified_ns;
    // What of B_G2 the kernel region may sum (the CUDA backend: the ones,
    // or all of it, when the key's G2 points are on the device; none when
    // its last kernel region for this key had them not); the CPU sums the
    // rest beside it, at background priority on the pool: it is needed
    // only by the epilogue, so it must not hold up another worker's
    // preamble. Whatever the plan, the kernel region's sums are used only
    // where the plan left them to it.
    const bool device_had_b_g2 = srs.b_g2_on_device(lock.device());
    std::vector<b_g2_share_t> offered(n), planned(n);
    for (size_t i = 0; i < n; i++) {
        offered[i] = backend.b_g2_share(terms[i].b);
        planned[i] = device_had_b_g2 ? offered[i] : b_g2_share_t::none;
    }
    std::vector<blst_p2> b_g2(n);
    background_t b_g2_task([&] {
        pthread_setname_np(pthread_self(), "cuzk-b-g2");
        const uint64_t b_g2_started = monotonic_ns();
        thread_pool_t::with_priority(thread_pool_t::priority_t::background, [&] {
            for (size_t i = 0; i < n; i++) {
                switch (planned[i]) {
                case b_g2_share_t::none:
                    msm(b_g2[i], srs.b_g2.data(), terms[i].b, pool);
                    break;
                case b_g2_share_t::ones:
                    msm_tail(b_g2[i], srs.b_g2.data(), terms[i].b, pool);
                    break;
                case b_g2_share_t::all:
                    std::memset(&b_g2[i], 0, sizeof(b_g2[i]));  // infinity
                    break;
                }
            }
        });
        timings.b_g2_ns = monotonic_ns() - b_g2_started;
    });

    // 2. Kernel region, lock held once for the whole batch.
    std::vector<kernel_sums_t> sums(n);
    gpu_lock_guard_t held(lock);
    lock.run_kernel_region(fault, [&] { kernels->run(sums, pool); });
    held.release();

    // 3. Epilogue, lock not held: what the kernel region left of its share
    // (it may not have held the G2 points: the first batch of a key
    // streamed through the device) is summed here, and what it did noted
    // for the next batch's plan.
    b_g2_task.join();
    if (n > 0 && offered[0] != b_g2_share_t::none)
        srs.note_b_g2_on_device(lock.device(), sums[0].b_g2_done != b_g2_share_t::none);
    for (size_t i = 0; i < n; i++) {
        if (planned[i] == b_g2_share_t::none)
            continue;
        const b_g2_share_t done = sums[i].b_g2_done;
        CUZK_CHECK(done != b_g2_share_t::all || planned[i] == b_g2_share_t::all,
                   "prove: the kernel region summed B_G2's tail, which the CPU also did");
        blst_p2 part;
        if (done != b_g2_share_t::none)
            part = sums[i].b_g2;
        else
            sum_ones(part, srs.b_g2.data(), terms[i].b, pool);
        g2_t::add(b_g2[i], b_g2[i], part);
        if (planned[i] == b_g2_share_t::all && done != b_g2_share_t::all) {
            msm_tail(part, srs.b_g2.data(), terms[i].b, pool);
            g2_t::add(b_g2[i], b_g2[i], part);
        }
    }
    prove_output_t out;
    out.timings = timings;
    out.proofs.reserve(n);
    for (size_t i = 0; i < n; i++)
        out.proofs.push_back(assemble(srs, sums[i], b_g2[i], r[i], s[i]));

    prove_timings_t& t = out.timings;
    t.preamble_ns = held.requested_ns() - started_ns;
    t.lock_wait_ns = held.taken_ns() - held.requested_ns();
    t.kernel_ns = held.released_ns() - held.taken_ns();
    t.lock_taken_ns = held.taken_ns();
    t.lock_released_ns = held.released_ns();
    t.backend = backend.kind();
    const kernel_report_t report = kernels->report();
    t.residency = report.residency;
    t.srs_upload_ns = report.srs_upload_ns;
    t.epilogue_ns = monotonic_ns() - held.released_ns();
    return out;
}

}  // namespace cuzk
