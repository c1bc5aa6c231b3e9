#include "cuzk/gpu_lock.hpp"

#include <string>

#include "cuzk/check.hpp"
#include "cuzk/clock.hpp"
#include "cuzk/kernel_backend.hpp"

namespace cuzk {

gpu_lock_t::gpu_lock_t(uint32_t device) : gpu_lock_t(device, make_cpu_kernel_backend()) {}

gpu_lock_t::gpu_lock_t(uint32_t device, std::unique_ptr<kernel_backend_t> backend)
    : device_(device), backend_(std::move(backend))
{
    CUZK_REQUIRE(backend_ != nullptr, "gpu_lock_t: no backend");
}

gpu_lock_t::~gpu_lock_t() = default;

uint64_t gpu_lock_t::lock()
{
    CUZK_CHECK(owner_.load() != std::this_thread::get_id(),
               "gpu_lock_t: device " + std::to_string(device_) +
                   " is already held by this thread (the lock is not re-entrant)");
    const uint64_t asked = monotonic_ns();
    {
        std::unique_lock<std::mutex> guard(state_);
        const uint64_t ticket = next_ticket_++;
        turn_.wait(guard, [&] { return serving_ == ticket; });
    }
    const uint64_t now = monotonic_ns();
    on_taken(now - asked, now);
    return now;
}

bool gpu_lock_t::in_use() const
{
    std::lock_guard<std::mutex> guard(state_);
    return serving_ != next_ticket_;
}

bool gpu_lock_t::try_lock()
{
    if (owner_.load() == std::this_thread::get_id())
        return false;
    {
        std::lock_guard<std::mutex> guard(state_);
        if (serving_ != next_ticket_)  // held, or others are waiting their turn
            return false;
        next_ticket_++;
    }
    on_taken(0, monotonic_ns());
    return true;
}

void gpu_lock_t::on_taken(uint64_t waited_ns, uint64_t now_ns) noexcept
{
    owner_.store(std::this_thread::get_id());
    taken_ns_ = now_ns;
    acquisitions_.fetch_add(1);
    wait_ns_.fetch_add(waited_ns);
}

uint64_t gpu_lock_t::unlock() noexcept
{
    const uint64_t now = monotonic_ns();
    hold_ns_.fetch_add(now - taken_ns_);
    owner_.store(std::thread::id());
    {
        std::lock_guard<std::mutex> guard(state_);
        serving_++;
    }
    turn_.notify_all();
    return now;
}

void gpu_lock_t::raise(injected_fault_t fault) { backend_->raise(device_, fault); }

void gpu_lock_t::lose(const cuda_error_t& e)
{
    if (lost_error_)
        return;
    lost_error_ = std::make_unique<cuda_error_t>(e);
    lost_.store(true, std::memory_order_release);
}

gpu_lock_stats_t gpu_lock_t::stats() const noexcept
{
    return {acquisitions_.load(), wait_ns_.load(), hold_ns_.load()};
}

gpu_lock_guard_t::gpu_lock_guard_t(gpu_lock_t& lock)
    : lock_(lock), requested_ns_(monotonic_ns()), taken_ns_(lock.lock())
{}

void gpu_lock_guard_t::release() noexcept
{
    if (!held_)
        return;
    released_ns_ = lock_.unlock();
    held_ = false;
}

}  // namespace cuzk
