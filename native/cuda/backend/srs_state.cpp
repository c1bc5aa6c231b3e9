// The key on one device: residency, upload or pinning, the point windows.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend.hpp"
#include "cuzk/check.hpp"

namespace cuzk {

namespace {

constexpr uint64_t point_bytes = sizeof(blst_p1_affine);
constexpr uint64_t fr_bytes = sizeof(blst_fr);
constexpr uint64_t mib = uint64_t(1) << 20;
// The smallest streaming window (points; a power of two, so a multiple of
// the 1024 points sppark's bitmap batch addition reads at a time), and the
// windows a set is cut into at least, so that uploads overlap the kernels.
constexpr size_t min_window = size_t(1) << 16;
constexpr size_t windows_per_set = 8;
// Not planned per call: sppark's NTT twiddles, the context's streams and
// batch-addition buckets, the CUDA runtime's own, slack.
constexpr uint64_t reserve_bytes = 256 * mib;
// Streamed point sets this large are page-locked in place (below).
constexpr size_t register_from = size_t(32) << 20;

// Device memory an MSM over n points takes besides the points: a tail MSM's
// gathered points and indices (100 B a point), sppark's scalars, digits and
// sort temporaries (32 + 16 + 4 B a window for up to 26 windows), and its
// buckets (about 400 MiB at the widest windows cuzk picks from 2^18 up).
uint64_t msm_work_bytes(size_t n)
{
    const uint64_t per_point = 100 + 32 + 16 + 4 * 26;
    return uint64_t(n) * per_point + (n >= (size_t(1) << 18) ? 400 * mib : 32 * mib);
}

size_t ceil_pow2(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

struct plan_t {
    residency_t residency = residency_t::device;
    size_t window = 0;         // streamed: points per window
    uint64_t resident = 0;     // device bytes the resident plan takes
};

// CUZK_MSM=sppark keeps the H MSM on sppark's msm_t (no table).
bool want_h_table()
{
    const char* v = std::getenv("CUZK_MSM");
    return v == nullptr || std::strcmp(v, "sppark") != 0;
}

// Resident when everything fits under `available` (and streaming is not
// forced); else streamed through the largest window (at most an eighth of
// the largest set, rounded up to a power of two, at least min_window) that
// fits; else device_memory_error_t.
plan_t plan_residency(const srs_t& srs, uint32_t device, uint64_t available, bool force_stream)
{
    const size_t sizes[4] = {srs.h.size(), srs.l.size(), srs.a.size(), srs.b_g1.size()};
    size_t largest = 0;
    uint64_t points = 0;
    for (size_t n : sizes) {
        largest = std::max(largest, n);
        points += n * point_bytes;
    }
    points += srs.b_g2.size() * sizeof(blst_p2_affine);
    const size_t domain = srs.domain();
    const uint64_t h_workspace = domain >= 2 ? 3 * fr_bytes * domain : 0;
    const uint64_t resident =
        points + h_workspace + msm_work_bytes(std::max(largest, domain)) + reserve_bytes;
    if (!force_stream && resident <= available)
        return {residency_t::device, 0, resident};

    const auto streamed = [&](size_t window) {
        return h_workspace + 2 * window * point_bytes + msm_work_bytes(window) + reserve_bytes;
    };
    size_t window = std::max(min_window, ceil_pow2((largest + windows_per_set - 1) / windows_per_set));
    while (window > min_window && streamed(window) > available)
        window /= 2;
    if (streamed(window) > available)
        throw device_memory_error_t(device, streamed(window), available);
    return {residency_t::streamed, window, resident};
}

}  // namespace

// ------------------------------------------------------------- point sets

srs_points_t::srs_points_t(cuda_device_t& device, const points_t<blst_p1_affine>& host)
    : host_(host), resident_(std::make_unique<cuda_points_t>(device, host.data(), host.size()))
{}

srs_points_t::srs_points_t(const points_t<blst_p1_affine>& host, cuda_points_t* windows[2])
    : host_(host), windows_{windows[0], windows[1]}
{
    CUZK_CHECK(windows_[0] && windows_[1] && windows_[0]->size() == windows_[1]->size() &&
                   windows_[0]->size() % 1024 == 0,
               "srs_points_t: two windows of equal size, a multiple of 1024 points");
}

// ------------------------------------------------------------------ state

cuda_srs_state_t::cuda_srs_state_t(std::shared_ptr<cuda_device_t> context, const srs_t& srs,
                                   uint64_t memory_limit, bool force_stream)
    : context_(std::move(context))
{
    const int ordinal = context_->ordinal();
    // What other keys' MSMs left in the memory pool and scratch is free
    // for this plan.
    context_->trim();
    uint64_t available = cuda_mem_info(ordinal).free_bytes;
    if (memory_limit != 0)
        available = std::min(available, memory_limit);
    const plan_t plan = plan_residency(srs, static_cast<uint32_t>(ordinal), available, force_stream);
    residency_ = plan.residency;
    if (residency_ == residency_t::device)
        make_resident(srs);
    else
        make_streamed(srs, plan.window);
    if (srs.domain() >= 2)
        h_poly_ = std::make_unique<cuda_h_poly_t>(*context_, srs.domain());
    // The H points' shifted copies: as many levels as fit beside the
    // resident plan and one circuit's inputs copied ahead (a, b, c and its
    // terms, while another worker's kernel region runs), most of what is
    // left (all 12 at L: 11 times the H points, 8.9 GB at 2^23; at 2^27 on
    // one H200, a few).
    const uint64_t ahead = 3 * fr_bytes * srs.domain() + srs.domain() + 64 * mib;
    if (residency_ == residency_t::device && want_h_table() && !srs.h.empty() &&
        plan.resident + ahead < available) {
        const uint64_t budget = (available - plan.resident - ahead) / 10 * 9;
        const cuda_msm_table_t::plan_t table = cuda_msm_table_t::plan_within(srs.h.size(), budget);
        if (table.windows > 0) {
            h_table_ = std::make_unique<cuda_msm_table_t>(*sets_[0]->resident(), table);
            if (std::getenv("CUZK_MSM_TRACE") != nullptr) {  // tuning: the plan and its room
                std::fprintf(stderr,
                             "H table: %u levels, %u windows of widths %s, %llu MiB of a budget "
                             "of %llu MiB\n",
                             table.levels(), table.windows, table.widths_text().c_str(),
                             static_cast<unsigned long long>(h_table_->bytes() >> 20),
                             static_cast<unsigned long long>(budget >> 20));
            }
        }
    }
}

cuda_srs_state_t::~cuda_srs_state_t() = default;

void cuda_srs_state_t::make_resident(const srs_t& srs)
{
    const points_t<blst_p1_affine>* hosts[4] = {&srs.h, &srs.l, &srs.a, &srs.b_g1};
    for (int i = 0; i < 4; i++)
        sets_[i] = std::make_unique<srs_points_t>(*context_, *hosts[i]);
    if (!srs.b_g2.empty())
        b_g2_ = std::make_unique<cuda_g2_points_t>(*context_, srs.b_g2.data(), srs.b_g2.size());
}

void cuda_srs_state_t::make_streamed(const srs_t& srs, size_t window)
{
    const points_t<blst_p1_affine>* hosts[4] = {&srs.h, &srs.l, &srs.a, &srs.b_g1};
    for (const auto* host : hosts) {
        // Only ranges malloc maps on their own (glibc maps every block of
        // 32 MiB or more): a smaller one may share a page with another
        // registered range. Smaller sets go over from pageable memory.
        const size_t bytes = host->size() * sizeof(blst_p1_affine);
        if (bytes >= register_from)
            pinned_.push_back(std::make_unique<cuda_host_registration_t>(host->data(), bytes));
    }
    windows_[0] = std::make_unique<cuda_points_t>(*context_, window);
    windows_[1] = std::make_unique<cuda_points_t>(*context_, window);
    cuda_points_t* windows[2] = {windows_[0].get(), windows_[1].get()};
    for (int i = 0; i < 4; i++)
        sets_[i] = std::make_unique<srs_points_t>(*hosts[i], windows);
}

}  // namespace cuzk
