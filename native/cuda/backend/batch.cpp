// The CUDA backend's two halves of one batch: the plans the preamble makes
// (lock not held) and the kernel region that runs them (lock held).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend.hpp"
#include "cuzk/align.hpp"
#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"
#include "cuzk/msm.hpp"

namespace cuzk {

namespace {

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

// Device addresses in a copy of one circuit's terms block: host address p
// of the block lies at device + (p - host).
class device_terms_t {
public:
    device_terms_t(const circuit_plan_t& plan, const void* device)
        : host_(plan.terms), device_(static_cast<const char*>(device))
    {}
    template <class T>
    const T* at(const T* host) const
    {
        return reinterpret_cast<const T*>(device_ + (reinterpret_cast<const char*>(host) - host_));
    }

private:
    const char* host_;
    const char* device_;
};

// sum(scalar_k * points[k]) over one point set, by its plan: batch addition
// of the ones (bitmap `ones`) and a gathered MSM of the tail, window by
// window, all read from the device's copy of the terms (host_tail: the
// tail's sum, made by the preamble instead). A plan with neither zeros nor
// ones (a dense circuit) is one contiguous MSM instead.
blst_p1 evaluate(const srs_points_t& set, const term_plan_t& plan, const uint64_t* ones,
                 const blst_p1* host_tail, const device_terms_t& terms)
{
    CUZK_CHECK(set.size() == plan.points, "cuda backend: a plan does not fit its point set");
    blst_p1 sum = host_tail != nullptr ? *host_tail : infinity();
    const bool dense = host_tail == nullptr && plan.tail == plan.points;
    // With the tail summed by the preamble, the windows add only the ones.
    const size_t tail_len = host_tail != nullptr ? 0 : plan.tail;
    size_t lo = 0;  // the first tail entry not yet summed
    set.for_each_window([&](const cuda_points_t& points, size_t offset, size_t count) {
        blst_p1 part;
        if (dense) {
            cuda_msm_on_device(part, points, terms.at(plan.tail_scalar) + offset, count);
            add(sum, part);
            return;
        }
        // A window starts at a multiple of 1024 points: whole runs of the map.
        cuda_batch_add_bitmap_on_device(part, points, terms.at(ones) + offset / 64, count);
        add(sum, part);
        const uint32_t* tail = plan.tail_index;
        const size_t hi = static_cast<size_t>(
            std::lower_bound(tail + lo, tail + tail_len, offset + count) - tail);
        if (hi > lo) {
            cuda_msm_gather_on_device(part, points, terms.at(plan.tail_index) + lo,
                                      static_cast<uint32_t>(offset),
                                      terms.at(plan.tail_scalar) + lo, hi - lo);
            add(sum, part);
        }
        lo = hi;
    });
    return sum;
}

size_t map_bytes(const term_plan_t& plan)
{
    return align256(cuda_bitmap_device_bytes(plan.points));
}

}  // namespace

bool abc_page_locked(const circuit_t& c)
{
    for (const span_t<blst_fr>* v : {&c.a, &c.b, &c.c})
        if (v->size != 0 && !cuda_host_range_pinned(v->data, v->size * sizeof(blst_fr)))
            return false;
    return true;
}

void plan_batch(std::vector<circuit_plan_t>& plans, pinned_arena_t& arena, const srs_t& srs,
                const std::vector<circuit_t>& circuits, std::vector<circuit_terms_t>& terms,
                thread_pool_t& pool)
{
    const size_t n = circuits.size();
    plans.assign(n, circuit_plan_t{});

    // The staging layout: per circuit its tails, then a, b, c unless the
    // caller's are pinned already (synthesis into pinned memory): then the
    // kernel region copies straight from them and no CPU copy is made.
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        circuit_plan_t& p = plans[i];
        const circuit_t& c = circuits[i];
        p.constraints = c.a.size;
        p.staged_abc = !abc_page_locked(c);
        bytes += terms[i].tail_bytes();
        for (const term_plan_t* t : {&terms[i].l, &terms[i].a, &terms[i].b})
            bytes += map_bytes(*t);
        if (p.staged_abc)
            bytes += 3 * align256(p.constraints * sizeof(blst_fr));
    }

    char* at = arena.ensure(bytes);
    for (size_t i = 0; i < n; i++) {
        circuit_plan_t& p = plans[i];
        p.terms = at;
        terms[i].fill(at, pool);
        at += terms[i].tail_bytes();
        p.l = &terms[i].l;
        p.a = &terms[i].a;
        p.b_g1 = &terms[i].b;
        const term_plan_t* sets[3] = {p.l, p.a, p.b_g1};
        for (int k = 0; k < 3; k++) {
            const size_t used = sets[k]->ones.size() * sizeof(uint64_t);
            std::memcpy(at, sets[k]->ones.data(), used);
            std::memset(at + used, 0, map_bytes(*sets[k]) - used);
            p.ones[k] = reinterpret_cast<const uint64_t*>(at);
            at += map_bytes(*sets[k]);
        }
        p.terms_bytes = static_cast<size_t>(at - p.terms);
        const points_t<blst_p1_affine>* hosts[3] = {&srs.l, &srs.a, &srs.b_g1};
        for (int k = 0; k < 3; k++)
            if (circuit_plan_t::tail_on_host(*sets[k]))
                msm_tail(p.host_tail[k], hosts[k]->data(), *sets[k], pool);
        const span_t<blst_fr> abc[3] = {circuits[i].a, circuits[i].b, circuits[i].c};
        for (int v = 0; v < 3; v++) {
            if (!p.staged_abc) {
                p.abc[v] = abc[v].data;
                continue;
            }
            auto* dst = reinterpret_cast<blst_fr*>(at);
            at += align256(p.constraints * sizeof(blst_fr));
            copy_parallel(dst, abc[v].data, p.constraints * sizeof(blst_fr), pool);
            p.abc[v] = dst;
        }
    }
}

namespace {

// CUZK_H_OVERLAP=0 computes the H polynomial before the L, A and B sums
// instead of beside them (to compare the two in one run).
bool overlap_h()
{
    static const bool on = [] {
        const char* v = std::getenv("CUZK_H_OVERLAP");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    return on;
}

// Waits for a started H polynomial on every path out, so that no kernel
// still reads a, b, c once the caller frees them.
class h_started_t {
public:
    explicit h_started_t(cuda_h_poly_t* h) : h_(h) {}
    ~h_started_t()
    {
        if (h_ != nullptr) {
            try {
                h_->finish();
            } catch (...) {
                // The error that unwinds is the one to report.
            }
        }
    }
    h_started_t(const h_started_t&) = delete;
    h_started_t& operator=(const h_started_t&) = delete;
    // Waits now (once; later calls and the destructor do nothing).
    void finish()
    {
        cuda_h_poly_t* h = h_;
        h_ = nullptr;
        if (h != nullptr)
            h->finish();
    }

private:
    cuda_h_poly_t* h_;
};

// CUZK_MSM_TRACE=1 also prints where each kernel region's time went
// (host clock: every step below returns when its device work is done).
class region_clock_t {
public:
    region_clock_t()
    {
        static const bool on = std::getenv("CUZK_MSM_TRACE") != nullptr;
        on_ = on;
        last_ = std::chrono::steady_clock::now();
    }
    // The time since the previous mark, as step `i`.
    void mark(int i)
    {
        if (!on_)
            return;
        const auto now = std::chrono::steady_clock::now();
        ms_[i] = std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
    }
    void report() const
    {
        if (on_)
            std::fprintf(stderr,
                         "kernel region: start %.2f L %.2f A %.2f B_G1 %.2f B_G2 ones %.2f "
                         "B_G2 tail %.2f H wait %.2f H MSM %.2f ms\n",
                         ms_[0], ms_[1], ms_[2], ms_[3], ms_[4], ms_[5], ms_[6], ms_[7]);
    }

private:
    bool on_ = false;
    std::chrono::steady_clock::time_point last_;
    double ms_[8] = {};
};

}  // namespace

void run_circuit(kernel_sums_t& out, const cuda_srs_state_t& state, const circuit_plan_t& plan)
{
    CUZK_CHECK(plan.upload != nullptr, "cuda backend: a circuit's terms were not uploaded");
    out.h = infinity();
    region_clock_t clock;
    plan.upload->wait_terms(state.context());
    const device_terms_t terms(plan, plan.upload->terms());
    cuda_h_poly_t* h = state.h_poly();
    const cuda_msm_table_t* h_table = state.h_table();
    // The H polynomial's NTTs (streams 1-3) run beside the L, A and B sums
    // (stream 0 and sppark's MSM streams), which do not need it. For the
    // table MSM, H stays canonical and bit-reversed (no last reversal, no
    // conversion in the MSM's digits).
    if (h != nullptr) {
        const size_t points = state.h().size();
        const bool reversed_ok = points == h->domain() || points + 1 == h->domain();
        h->set_output(h_table != nullptr && reversed_ok ? cuda_h_poly_t::output_t::for_table
                                                        : cuda_h_poly_t::output_t::natural);
        if (plan.abc_upload != nullptr)
            h->start(*plan.abc_upload);
        else if (plan.upload->len() != 0)
            h->start(*plan.upload);
        else
            h->start(plan.abc[0], plan.abc[1], plan.abc[2], plan.constraints);
    }
    h_started_t started(h);
    if (!overlap_h())
        started.finish();
    clock.mark(0);
    const auto sum = [&](const srs_points_t& set, const term_plan_t& t, int k) {
        const blst_p1* host_tail = circuit_plan_t::tail_on_host(t) ? &plan.host_tail[k] : nullptr;
        return evaluate(set, t, plan.ones[k], host_tail, terms);
    };
    out.l = sum(state.l(), *plan.l, 0);
    clock.mark(1);
    out.a = sum(state.a(), *plan.a, 1);
    clock.mark(2);
    out.b_g1 = sum(state.b_g1(), *plan.b_g1, 2);
    clock.mark(3);
    if (const cuda_g2_points_t* b_g2 = state.b_g2()) {
        cuda_batch_add_bitmap_on_device(out.b_g2, *b_g2, terms.at(plan.ones[2]),
                                        plan.b_g1->points);
        out.b_g2_done = b_g2_share_t::ones;
        clock.mark(4);
        const term_plan_t& b = *plan.b_g1;  // B_G1's terms are B_G2's
        if (cuda_backend_t::b_g2_tail_on_device(b)) {
            blst_p2 tail;
            cuda_msm_gather_on_device(tail, *b_g2, terms.at(b.tail_index), 0,
                                      terms.at(b.tail_scalar), b.tail);
            blst_p2_add_or_double(&out.b_g2, &out.b_g2, &tail);
            out.b_g2_done = b_g2_share_t::all;
        }
        clock.mark(5);
    }
    started.finish();
    clock.mark(6);
    if (h != nullptr && h_table != nullptr) {
        h_table->msm(out.h, h->coefficients(), state.h().size(), h->layout());
    } else if (h != nullptr) {
        state.h().for_each_window([&](const cuda_points_t& points, size_t offset, size_t count) {
            blst_p1 part;
            cuda_msm(part, points, h->coefficients(), offset, count);
            add(out.h, part);
        });
    }
    clock.mark(7);
    clock.report();
}

}  // namespace cuzk
