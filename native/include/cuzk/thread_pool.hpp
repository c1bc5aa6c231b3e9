// A small fixed thread pool with a blocking parallel-for.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cuzk {

// Threads to use: env CUZK_NATIVE_THREADS if set to a positive number, else
// std::thread::hardware_concurrency() (at least 1).
size_t default_thread_count();
// Workers that may run background jobs at once: env CUZK_BACKGROUND_THREADS
// if set to a positive number, else 0 (half the pool).
size_t default_background_threads();

// `size()` threads run each parallel_for: size() - 1 workers plus the
// caller. Several threads may call parallel_for at once, and a task may
// itself call parallel_for: a caller always works on its own job, so every
// job finishes even when all workers are busy elsewhere.
//
// Jobs are shared first come, first served, except that a worker takes an
// index of a background job only when no normal job has one left, and at
// most `background` workers (see the constructor) run background indices at
// once: a GPU worker's preamble and kernel-region thread (on the critical
// path to and under its lock) must not queue behind another worker's B_G2
// MSM (needed only at its epilogue), nor find every core taken by it.
class thread_pool_t {
public:
    enum class priority_t { normal, background };

    // background: the most workers that run background indices at once
    // (0: half the workers, at least one).
    explicit thread_pool_t(size_t threads, size_t background = 0);
    ~thread_pool_t();
    thread_pool_t(const thread_pool_t&) = delete;
    thread_pool_t& operator=(const thread_pool_t&) = delete;

    size_t size() const noexcept { return workers_.size() + 1; }

    // Runs fn(i) for every i in [0, n), returning when all have run. The
    // first exception thrown by fn is rethrown here (once all have stopped).
    void parallel_for(size_t n, const std::function<void(size_t)>& fn);

    // Splits [0, n) into at most 4 * size() ranges of at least `grain` items
    // (the last may be shorter) and runs fn(begin, end) on each in parallel.
    void parallel_range(size_t n, size_t grain,
                        const std::function<void(size_t, size_t)>& fn);

    // Runs fn with every parallel_for that this thread makes (on any pool)
    // at `priority`, then restores the previous priority. Nested calls made
    // by other threads inside those jobs run at normal priority.
    template <class F>
    static void with_priority(priority_t priority, F&& fn)
    {
        struct restore_t {
            priority_t saved;
            ~restore_t() { thread_priority_ = saved; }
        } restore{thread_priority_};
        thread_priority_ = priority;
        fn();
    }

    // The process-wide pool, created on first use with default_thread_count()
    // and never destroyed.
    static thread_pool_t& global();

private:
    struct job_t;

    void stop() noexcept;
    void worker_loop();
    // Claims and runs up to `limit` indices of job.
    static void run_indices(job_t& job, size_t limit = SIZE_MAX);
    void retire(const std::shared_ptr<job_t>& job, priority_t priority);
    // Guarded by mutex_: the first job with an index left, normal jobs
    // first, background ones only below the background limit; drops
    // exhausted jobs from the fronts. Null when none.
    std::shared_ptr<job_t> next_job(bool& background);

    static thread_local priority_t thread_priority_;

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<job_t>> jobs_[2];  // by priority_t; guarded by mutex_
    bool stopping_ = false;                    // guarded by mutex_
    size_t background_running_ = 0;            // guarded by mutex_
    const size_t background_limit_;
    std::vector<std::thread> workers_;
};

}  // namespace cuzk
