// The CUDA backend's two halves of one batch: the plans the preamble makes
// (lock not held) and the kernel region that runs them (lock held).
#include <algorithm>
#include <cstring>
#include <string>

#include "backend.hpp"
#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"

namespace cuzk {

namespace {

// Terms per classification chunk: a multiple of 64, so that a chunk owns
// whole bitmap words.
constexpr size_t chunk_terms = size_t(1) << 16;

size_t align256(size_t bytes) { return (bytes + 255) & ~size_t(255); }

// One MSM of one circuit while it is being planned: where each chunk's tail
// starts. Its terms in SRS order are the preamble's (circuit_scalars_t): aux
// for L, a_terms and b_terms for A and B.
struct msm_terms_t {
    std::vector<size_t> chunk_tail;  // chunks + 1 prefix sums
};

// Pass 1: the bitmap of ones, and the tail's length per chunk.
template <class At>
void classify(msm_plan_t& plan, msm_terms_t& t, size_t n, At at, thread_pool_t& pool)
{
    plan.points = n;
    plan.ones.assign((n + 63) / 64, 0);
    const size_t chunks = (n + chunk_terms - 1) / chunk_terms;
    t.chunk_tail.assign(chunks + 1, 0);
    pool.parallel_for(chunks, [&](size_t c) {
        size_t tail = 0;
        const size_t end = std::min(n, (c + 1) * chunk_terms);
        for (size_t k = c * chunk_terms; k < end; k++) {
            const blst_scalar& s = at(k);
            if (scalar_is_one(s))
                plan.ones[k / 64] |= uint64_t(1) << (k % 64);
            else if (!scalar_is_zero(s))
                tail++;
        }
        t.chunk_tail[c + 1] = tail;
    });
    for (size_t c = 0; c < chunks; c++)
        t.chunk_tail[c + 1] += t.chunk_tail[c];
    plan.tail = t.chunk_tail[chunks];
}

// Pass 2: the tail's indices (ascending) and scalars, into staging.
template <class At>
void write_tail(msm_plan_t& plan, const msm_terms_t& t, At at, thread_pool_t& pool)
{
    const size_t n = plan.points;
    pool.parallel_for(t.chunk_tail.size() - 1, [&](size_t c) {
        size_t out = t.chunk_tail[c];
        const size_t end = std::min(n, (c + 1) * chunk_terms);
        for (size_t k = c * chunk_terms; k < end; k++) {
            const blst_scalar& s = at(k);
            if (scalar_is_one(s) || scalar_is_zero(s))
                continue;
            plan.tail_index[out] = static_cast<uint32_t>(k);
            plan.tail_scalar[out] = s;
            out++;
        }
    });
}

void copy_parallel(void* dst, const void* src, size_t bytes, thread_pool_t& pool)
{
    pool.parallel_range(bytes, size_t(1) << 22, [&](size_t lo, size_t hi) {
        std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
    });
}

blst_p1 infinity()
{
    blst_p1 p;
    std::memset(&p, 0, sizeof(p));
    return p;
}

void add(blst_p1& sum, const blst_p1& part) { blst_p1_add_or_double(&sum, &sum, &part); }

// sum(scalar_k * points[k]) over one point set, by its plan: batch addition
// of the ones and a gathered MSM of the tail, window by window. A plan with
// neither zeros nor ones (a dense circuit) is one contiguous MSM instead.
blst_p1 evaluate(const srs_points_t& set, const msm_plan_t& plan)
{
    CUZK_CHECK(set.size() == plan.points, "cuda backend: a plan does not fit its point set");
    blst_p1 sum = infinity();
    const bool dense = plan.tail == plan.points;
    std::vector<uint32_t> rebased;
    size_t lo = 0;  // the first tail entry not yet summed
    set.for_each_window([&](const cuda_points_t& points, size_t offset, size_t count) {
        blst_p1 part;
        if (dense) {
            cuda_msm(part, points, plan.tail_scalar + offset, count);
            add(sum, part);
            return;
        }
        cuda_batch_add_bitmap(part, points, plan.ones.data() + offset / 64, count);
        add(sum, part);
        const uint32_t* tail = plan.tail_index;
        const size_t hi = static_cast<size_t>(
            std::lower_bound(tail + lo, tail + plan.tail, offset + count) - tail);
        if (hi > lo) {
            const uint32_t* indices = plan.tail_index + lo;
            if (offset != 0) {  // indices into this window
                rebased.assign(indices, indices + (hi - lo));
                for (uint32_t& i : rebased)
                    i -= static_cast<uint32_t>(offset);
                indices = rebased.data();
            }
            cuda_msm_gather(part, points, indices, plan.tail_scalar + lo, hi - lo);
            add(sum, part);
        }
        lo = hi;
    });
    return sum;
}

}  // namespace

void plan_batch(std::vector<circuit_plan_t>& plans, pinned_arena_t& arena, const srs_t& srs,
                const std::vector<circuit_t>& circuits,
                const std::vector<circuit_scalars_t>& scalars, thread_pool_t& pool)
{
    const size_t n = circuits.size();
    plans.assign(n, circuit_plan_t{});
    std::vector<msm_terms_t> terms(3 * n);  // l, a, b_g1 of each circuit
    const auto aux_at = [&](size_t i) {
        return [&, i](size_t k) -> const blst_scalar& { return scalars[i].aux[k]; };
    };
    const auto a_at = [&](size_t i) {
        return [&, i](size_t k) -> const blst_scalar& { return *scalars[i].a_terms[k]; };
    };
    const auto b_at = [&](size_t i) {
        return [&, i](size_t k) -> const blst_scalar& { return *scalars[i].b_terms[k]; };
    };

    // Pass 1, and the staging layout: per circuit a, b, c, then each MSM's
    // tail indices and scalars.
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        circuit_plan_t& p = plans[i];
        msm_terms_t* t = &terms[3 * i];
        CUZK_CHECK(scalars[i].a_terms.size() == srs.a.size() &&
                       scalars[i].b_terms.size() == srs.b_g1.size(),
                   "cuda backend: term lists do not fit the SRS");
        classify(p.l, t[0], scalars[i].aux.size(), aux_at(i), pool);
        classify(p.a, t[1], scalars[i].a_terms.size(), a_at(i), pool);
        classify(p.b_g1, t[2], scalars[i].b_terms.size(), b_at(i), pool);
        p.constraints = circuits[i].a.size;
        bytes += 3 * align256(p.constraints * sizeof(blst_fr));
        for (const msm_plan_t* m : {&p.l, &p.a, &p.b_g1})
            bytes += align256(m->tail * sizeof(uint32_t)) + align256(m->tail * sizeof(blst_scalar));
    }

    // Pass 2 into pinned staging.
    char* at = arena.ensure(bytes);
    const auto carve = [&](size_t size) {
        char* piece = at;
        at += align256(size);
        return piece;
    };
    for (size_t i = 0; i < n; i++) {
        circuit_plan_t& p = plans[i];
        const span_t<blst_fr> abc[3] = {circuits[i].a, circuits[i].b, circuits[i].c};
        for (int v = 0; v < 3; v++) {
            auto* dst = reinterpret_cast<blst_fr*>(carve(p.constraints * sizeof(blst_fr)));
            copy_parallel(dst, abc[v].data, p.constraints * sizeof(blst_fr), pool);
            p.abc[v] = dst;
        }
        msm_plan_t* msms[3] = {&p.l, &p.a, &p.b_g1};
        for (int m = 0; m < 3; m++) {
            msms[m]->tail_index =
                reinterpret_cast<uint32_t*>(carve(msms[m]->tail * sizeof(uint32_t)));
            msms[m]->tail_scalar =
                reinterpret_cast<blst_scalar*>(carve(msms[m]->tail * sizeof(blst_scalar)));
        }
        write_tail(p.l, terms[3 * i], aux_at(i), pool);
        write_tail(p.a, terms[3 * i + 1], a_at(i), pool);
        write_tail(p.b_g1, terms[3 * i + 2], b_at(i), pool);
    }
}

void run_circuit(kernel_sums_t& out, const cuda_srs_state_t& state, const circuit_plan_t& plan)
{
    out.h = infinity();
    if (cuda_h_poly_t* h = state.h_poly()) {
        h->compute(plan.abc[0], plan.abc[1], plan.abc[2], plan.constraints);
        state.h().for_each_window([&](const cuda_points_t& points, size_t offset, size_t count) {
            blst_p1 part;
            cuda_msm(part, points, h->coefficients(), offset, count);
            add(out.h, part);
        });
    }
    out.l = evaluate(state.l(), plan.l);
    out.a = evaluate(state.a(), plan.a);
    out.b_g1 = evaluate(state.b_g1(), plan.b_g1);
}

}  // namespace cuzk
