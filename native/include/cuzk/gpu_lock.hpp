// The per-device mutex around the kernel region, with its counters.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

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

private:
    void on_taken(uint64_t waited_ns, uint64_t now_ns) noexcept;

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
