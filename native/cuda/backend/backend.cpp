// cuda_backend_t: the lock's CUDA backend, its staging pool, and the batch
// it prepares (preamble) and runs (kernel region).
#include "backend.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "cuzk/check.hpp"
#include "cuzk/clock.hpp"

namespace cuzk {

// ---------------------------------------------------------------- staging

char* pinned_arena_t::ensure(size_t bytes)
{
    if (bytes > buffer_.bytes()) {
        // On this thread, CUDA calls go to the arena's device (pinning on
        // another would start a context there).
        cuda_select_device(device_);
        buffer_ = cuda_pinned_buffer_t();  // free first: pinned memory is precious
        // Room to grow by an eighth, so that slowly rising sizes do not
        // re-pin on every batch.
        buffer_ = cuda_pinned_buffer_t(bytes + bytes / 8);
    }
    return buffer_.as<char>();
}

std::unique_ptr<staging_pool_t::lease_t> staging_pool_t::take()
{
    std::unique_ptr<pinned_arena_t> arena;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        if (!free_.empty()) {
            arena = std::move(free_.back());
            free_.pop_back();
        }
    }
    if (!arena)
        arena = std::make_unique<pinned_arena_t>(device_);
    return std::make_unique<lease_t>(*this, std::move(arena));
}

void staging_pool_t::give_back(std::unique_ptr<pinned_arena_t> arena) noexcept
{
    try {
        std::lock_guard<std::mutex> guard(mutex_);
        free_.push_back(std::move(arena));
    } catch (...) {
        // Out of memory for the list: the arena is freed instead.
    }
}

// ------------------------------------------------------------------ batch

namespace {

// Whether a batch copies a, b, c to the device in its preamble (below):
// CUZK_ABC_UPLOAD=0 never, =1 always (the GPU tests use it to cover that
// path with a free lock), unset when the lock is in use.
bool upload_ahead(bool lock_in_use)
{
    static const int mode = [] {
        const char* v = std::getenv("CUZK_ABC_UPLOAD");
        if (v != nullptr && std::strcmp(v, "0") == 0)
            return 0;
        if (v != nullptr && std::strcmp(v, "1") == 0)
            return 1;
        return 2;
    }();
    return mode == 1 || (mode == 2 && lock_in_use);
}

// CUZK_ABC_EARLY=0: no copy of a, b, c at the preamble's start (tuning).
bool copy_early()
{
    static const bool on = [] {
        const char* v = std::getenv("CUZK_ABC_EARLY");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    return on;
}

}  // namespace

bool cuda_backend_t::b_g2_tail_on_device(const term_plan_t& b) noexcept
{
    static const bool on = [] {
        const char* v = std::getenv("CUZK_B_G2");
        return v == nullptr || std::strcmp(v, "cpu") != 0;
    }();
    return on && !circuit_plan_t::tail_on_host(b);
}

namespace {

// Below 2^16 values the stream and event cost more than an early copy saves.
constexpr size_t min_upload_values = size_t(1) << 16;
// Above 2^25 values (3 GB of a, b, c) the early copy outlasts the preamble,
// and the terms, which the kernel region needs first, queue behind it (at
// 2^27 the L sum was seen waiting longer than the whole preamble took).
constexpr size_t max_early_values = size_t(1) << 25;

// start_inputs' copies: circuit i's a, b, c (null: not started).
class cuda_early_inputs_t final : public early_inputs_t {
public:
    std::vector<std::unique_ptr<cuda_circuit_upload_t>> uploads;
};

class cuda_batch_t final : public kernel_batch_t {
public:
    cuda_batch_t(cuda_backend_t& backend, const srs_t& srs,
                 const std::vector<circuit_t>& circuits,
                 std::vector<circuit_terms_t>& terms, thread_pool_t& pool, bool upload_ahead,
                 std::unique_ptr<early_inputs_t> early)
        : backend_(backend), srs_(srs), staging_(backend.staging().take())
    {
        plan_batch(plans_, staging_->arena(), srs, circuits, terms, pool);
        // a, b, c copied since the preamble's start: the batch keeps them;
        // its terms follow them below or in the kernel region.
        if (auto* started = dynamic_cast<cuda_early_inputs_t*>(early.get())) {
            for (size_t i = 0; i < plans_.size() && i < started->uploads.size(); i++) {
                if (started->uploads[i] == nullptr)
                    continue;
                plans_[i].abc_upload = started->uploads[i].get();
                uploads_.push_back(std::move(started->uploads[i]));
            }
        }
        // When the lock is in use (another worker's kernels run), start
        // copying the terms and a, b, c (pinned: the caller's or staging) to
        // the device now, on a copy engine: the kernel region then starts
        // from device memory and holds the lock for less time.
        // With the lock free it would not be hidden, and the kernel region's
        // own copies, overlapped with its NTTs, are faster (both measured
        // with one and two workers, BENCHMARKS.md session 11). Below 2^16
        // values the stream and event cost more than they save; when the
        // device has no room, the kernel region copies instead.
        if (srs.domain() < 2 || !upload_ahead)
            return;
        std::lock_guard<std::mutex> room(backend.copy_room());
        for (circuit_plan_t& p : plans_) {
            if (p.constraints < min_upload_values)
                continue;
            // a, b, c too unless start_inputs already sent them.
            const size_t abc_len = p.abc_upload == nullptr ? p.constraints : 0;
            if (!backend.room_ahead(p.terms_bytes + 3 * uint64_t(abc_len) * sizeof(blst_fr)))
                break;
            try {
                uploads_.push_back(std::make_unique<cuda_circuit_upload_t>(
                    static_cast<int>(backend.device()), p.terms, p.terms_bytes, p.abc[0],
                    p.abc[1], p.abc[2], abc_len));
                p.upload = uploads_.back().get();
            } catch (const cuda_error_t&) {
                break;
            }
        }
    }

    void run(std::vector<kernel_sums_t>& sums, thread_pool_t&) override
    {
        const std::shared_ptr<cuda_device_t>& context = backend_.context();
        try {
            const auto& state = static_cast<const cuda_srs_state_t&>(
                srs_.device_state(backend_.device(), [&] { return make_state(context); }));
            report_.residency = state.residency();
            // Terms not copied ahead go now, before the H polynomial's
            // copies of a, b, c, so that the sums can start at once.
            for (circuit_plan_t& p : plans_) {
                if (p.upload != nullptr)
                    continue;
                uploads_.push_back(std::make_unique<cuda_circuit_upload_t>(
                    static_cast<int>(backend_.device()), p.terms, p.terms_bytes, nullptr,
                    nullptr, nullptr, 0));
                p.upload = uploads_.back().get();
            }
            for (size_t i = 0; i < plans_.size(); i++)
                run_circuit(sums[i], state, plans_[i]);
        } catch (...) {
            // Leave the device idle for the next caller, then report.
            try {
                context->synchronize();
            } catch (...) {
            }
            throw;
        }
    }

    kernel_report_t report() const override { return report_; }

private:
    std::unique_ptr<srs_device_state_t> make_state(const std::shared_ptr<cuda_device_t>& context)
    {
        const uint64_t started = monotonic_ns();
        auto state = std::make_unique<cuda_srs_state_t>(context, srs_, backend_.memory_limit(),
                                                        backend_.stream_srs());
        report_.srs_upload_ns = monotonic_ns() - started;
        return state;
    }

    cuda_backend_t& backend_;
    const srs_t& srs_;
    std::unique_ptr<staging_pool_t::lease_t> staging_;  // before plans_: they point into it
    std::vector<circuit_plan_t> plans_;
    // After staging_: destroyed first, waiting for copies out of it.
    std::vector<std::unique_ptr<cuda_circuit_upload_t>> uploads_;
    kernel_report_t report_{residency_t::device, 0};
};

}  // namespace

// ---------------------------------------------------------------- backend

cuda_backend_t::cuda_backend_t(uint32_t device)
    : device_(device), staging_(static_cast<int>(device))
{
    const int count = cuda_device_count();
    CUZK_REQUIRE(static_cast<int64_t>(device) < count,
                 "cuda backend: device " + std::to_string(device) + " out of range (" +
                     std::to_string(count) + " devices)");
    // Throws cuda_error_t for a device sppark cannot use.
    const cuda_device_info_t info = cuda_device_info(static_cast<int>(device));
    if (info.major < 7 || !info.cooperative_launch)
        throw cuda_error_t(101 /* cudaErrorInvalidDevice */, "cuda_backend_t(device)", __FILE__,
                           __LINE__,
                           "device " + std::to_string(device) + " (" + info.name +
                               ") needs compute capability 7.0 or newer and cooperative launch");
}

const std::shared_ptr<cuda_device_t>& cuda_backend_t::context()
{
    if (!context_)
        context_ = std::make_shared<cuda_device_t>(static_cast<int>(device_));
    return context_;
}

std::unique_ptr<kernel_batch_t> cuda_backend_t::prepare(
    const srs_t& srs, const std::vector<circuit_t>& circuits,
    std::vector<circuit_terms_t>& terms, thread_pool_t& pool, bool lock_in_use,
    std::unique_ptr<early_inputs_t> early)
{
    return std::make_unique<cuda_batch_t>(*this, srs, circuits, terms, pool,
                                          upload_ahead(lock_in_use), std::move(early));
}

bool cuda_backend_t::room_ahead(uint64_t bytes) const
{
    const uint64_t limit = memory_limit_;
    if (limit == 0)
        return true;
    const cuda_mem_info_t info = cuda_mem_info(static_cast<int>(device_));
    const uint64_t used = info.total_bytes - info.free_bytes;
    return used + bytes <= limit;
}

// Page-locked a, b, c start for the device at once, on a copy engine, so
// that the copy runs beside the preamble's classification and planning
// instead of at the kernel region's start, where it would lengthen the hold
// (BENCHMARKS.md session 11 has the comparison). Not on a key's
// first use on the device (its H table is sized from the memory free
// then), for pageable inputs (the preamble stages those), for small
// circuits, nor when the device is out of memory or the copy would take it
// past a memory limit (the region copies then).
std::unique_ptr<early_inputs_t> cuda_backend_t::start_inputs(
    const srs_t& srs, const std::vector<circuit_t>& circuits)
{
    if (!copy_early() || srs.domain() < 2 || !srs.has_device_state(device_))
        return nullptr;
    auto early = std::make_unique<cuda_early_inputs_t>();
    early->uploads.resize(circuits.size());
    std::lock_guard<std::mutex> room(copy_room_);
    for (size_t i = 0; i < circuits.size(); i++) {
        const circuit_t& c = circuits[i];
        const size_t len = c.a.size;
        if (len < min_upload_values || len > max_early_values || len > srs.domain() ||
            c.b.size != len || c.c.size != len)
            continue;
        if (!abc_page_locked(c))
            continue;
        if (!room_ahead(3 * uint64_t(len) * sizeof(blst_fr)))
            break;
        try {
            early->uploads[i] = std::make_unique<cuda_circuit_upload_t>(
                static_cast<int>(device_), nullptr, 0, c.a.data, c.b.data, c.c.data, len);
        } catch (const cuda_error_t&) {
            break;
        }
    }
    return early;
}

}  // namespace cuzk
