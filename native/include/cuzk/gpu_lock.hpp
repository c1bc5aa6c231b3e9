// The per-device mutex around the kernel region, with its counters.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "cuzk/check.hpp"
#include "cuzk/cuda/error.hpp"

namespace cuzk {

class kernel_backend_t;

// What a gpu_lock_t has counted so far.
struct gpu_lock_stats_t {
    uint64_t acquisitions;
    uint64_t wait_ns;
    uint64_t hold_ns;
};

// One device's lock, and the backend that runs the kernel region under it
// (kernel_backend.hpp). Not re-entrant: taking it on the thread that holds
// it throws instead of deadlocking. Released only by the thread that took it.
//
// First come, first served (a ticket lock): with a plain mutex one GPU
// worker can take the lock again and again while another, waiting with an
// older job's partition, starves, and the engine's "oldest job finishes
// first" order breaks.
class gpu_lock_t {
public:
    // With the CPU backend.
    explicit gpu_lock_t(uint32_t device);
    gpu_lock_t(uint32_t device, std::unique_ptr<kernel_backend_t> backend);
    ~gpu_lock_t();
    gpu_lock_t(const gpu_lock_t&) = delete;
    gpu_lock_t& operator=(const gpu_lock_t&) = delete;

    uint32_t device() const noexcept { return device_; }
    // Thread-safe itself; the device work it does needs the lock held.
    kernel_backend_t& backend() const noexcept { return *backend_; }

    // Blocks until taken; returns the instant it was taken (monotonic_ns).
    uint64_t lock();
    // Takes the lock if it is free (and not held by this thread).
    bool try_lock();
    // Releases the lock; returns the instant it was released.
    uint64_t unlock() noexcept;

    gpu_lock_stats_t stats() const noexcept;

    // Whether someone holds the lock or waits for it, at this instant (a
    // hint: it may change as soon as it returns).
    bool in_use() const;

    bool held_by_this_thread() const noexcept
    {
        return owner_.load() == std::this_thread::get_id();
    }

    // Whether a kernel region on this device failed with a sticky CUDA error
    // (cuda_error_kind_t::sticky): its context is unusable for the rest of
    // the process, and every later kernel region fails at once with that
    // error again.
    bool lost() const noexcept { return lost_.load(std::memory_order_acquire); }

    // Runs `body`, a kernel region, with the lock held by this thread: first
    // fails with the sticky error if the device was lost, or raises the
    // injected `fault` on the backend; a sticky cuda_error_t from either
    // marks the device lost.
    template <class F>
    void run_kernel_region(injected_fault_t fault, F&& body)
    {
        CUZK_CHECK(held_by_this_thread(), "gpu_lock_t: kernel region of device " +
                                              std::to_string(device_) + " without its lock");
        if (lost())
            throw *lost_error_;
        try {
            if (fault != injected_fault_t::none)
                raise(fault);
            body();
        } catch (const cuda_error_t& e) {
            if (e.kind() == cuda_error_kind_t::sticky)
                lose(e);
            throw;
        }
    }

private:
    void on_taken(uint64_t waited_ns, uint64_t now_ns) noexcept;
    void raise(injected_fault_t fault);
    // Lock held: records the first sticky error.
    void lose(const cuda_error_t& e);

    mutable std::mutex state_;       // guards the tickets, not the device
    std::condition_variable turn_;   // signalled when serving_ moves on
    uint64_t next_ticket_ = 0;       // drawn by the next lock(); guarded by state_
    uint64_t serving_ = 0;           // the ticket that holds the lock; free when == next_ticket_
    const uint32_t device_;
    const std::unique_ptr<kernel_backend_t> backend_;
    std::atomic<std::thread::id> owner_{};
    uint64_t taken_ns_ = 0;  // written and read only by the holder
    std::atomic<uint64_t> acquisitions_{0};
    std::atomic<uint64_t> wait_ns_{0};
    std::atomic<uint64_t> hold_ns_{0};
    std::unique_ptr<cuda_error_t> lost_error_;  // written once, by the holder, before lost_
    std::atomic<bool> lost_{false};
};

// Holds a gpu_lock_t for a scope; records when it was taken and released.
class gpu_lock_guard_t {
public:
    explicit gpu_lock_guard_t(gpu_lock_t& lock);
    ~gpu_lock_guard_t() { release(); }
    gpu_lock_guard_t(const gpu_lock_guard_t&) = delete;
    gpu_lock_guard_t& operator=(const gpu_lock_guard_t&) = delete;

    // Releases early; later calls (and the destructor) do nothing.
    void release() noexcept;

    uint64_t requested_ns() const noexcept { return requested_ns_; }
    uint64_t taken_ns() const noexcept { return taken_ns_; }
    // 0 until released.
    uint64_t released_ns() const noexcept { return released_ns_; }

private:
    gpu_lock_t& lock_;
    uint64_t requested_ns_;
    uint64_t taken_ns_;
    uint64_t released_ns_ = 0;
    bool held_ = true;
};

}  // namespace cuzk
