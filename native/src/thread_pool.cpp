#include "cuzk/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>

#include <pthread.h>

namespace cuzk {

namespace {

// A positive number from the environment, else 0.
size_t env_count(const char* name)
{
    if (const char* env = std::getenv(name)) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(env, &end, 10);
        if (end != env && *end == '\0' && n > 0)
            return n;
    }
    return 0;
}

}  // namespace

size_t default_thread_count()
{
    const size_t n = env_count("CUZK_NATIVE_THREADS");
    return n > 0 ? n : std::max(1u, std::thread::hardware_concurrency());
}

size_t default_background_threads() { return env_count("CUZK_BACKGROUND_THREADS"); }

// One parallel_for call: indices are claimed with `next`, counted done with
// `finished`. Shared with the workers so it outlives whoever touches it last.
struct thread_pool_t::job_t {
    job_t(size_t count, const std::function<void(size_t)>& task) : n(count), fn(task) {}

    const size_t n;
    const std::function<void(size_t)>& fn;  // not called once all are claimed
    std::atomic<size_t> next{0};
    std::atomic<size_t> finished{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;  // guards error, and the done signal
    std::condition_variable done;
    std::exception_ptr error;
};

thread_pool_t::thread_pool_t(size_t threads, size_t background)
    // Half the workers (threads - 1) unless told.
    : background_limit_(std::max<size_t>(1, background > 0 ? background : (threads - 1) / 2))
{
    try {
        for (size_t i = 1; i < threads; i++)
            workers_.emplace_back([this, i] {
                // Named, so that a sample of a stalled process's threads
                // (scripts/gpu-threads.sh) tells the pool's workers apart.
                pthread_setname_np(pthread_self(), ("cuzk-pool-" + std::to_string(i)).c_str());
                worker_loop();
            });
    } catch (...) {
        stop();
        throw;
    }
}

thread_pool_t::~thread_pool_t() { stop(); }

void thread_pool_t::stop() noexcept
{
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_)
        if (worker.joinable())
            worker.join();
}

thread_pool_t& thread_pool_t::global()
{
    // Never destroyed: Rust threads may still be inside parallel_for while
    // the process exits, and must not find the pool torn down under them.
    static thread_pool_t* const pool =
        new thread_pool_t(default_thread_count(), default_background_threads());
    return *pool;
}

void thread_pool_t::run_indices(job_t& job, size_t limit)
{
    for (size_t i, k = 0; k < limit && (i = job.next.fetch_add(1)) < job.n; k++) {
        if (!job.failed.load()) {
            try {
                job.fn(i);
            } catch (...) {
                std::lock_guard<std::mutex> guard(job.mutex);
                if (!job.error)
                    job.error = std::current_exception();
                job.failed.store(true);
            }
        }
        if (job.finished.fetch_add(1) + 1 == job.n) {
            std::lock_guard<std::mutex> guard(job.mutex);
            job.done.notify_all();
        }
    }
}

thread_local thread_pool_t::priority_t thread_pool_t::thread_priority_ =
    thread_pool_t::priority_t::normal;

std::shared_ptr<thread_pool_t::job_t> thread_pool_t::next_job(bool& background)
{
    for (size_t p = 0; p < 2; p++) {
        auto& queue = jobs_[p];
        // Every index of the front job claimed: nothing left to share.
        while (!queue.empty() && queue.front()->next.load() >= queue.front()->n)
            queue.pop_front();
        background = p == static_cast<size_t>(priority_t::background);
        if (!queue.empty() && (!background || background_running_ < background_limit_))
            return queue.front();
    }
    return nullptr;
}

void thread_pool_t::worker_loop()
{
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        std::shared_ptr<job_t> job;
        bool background = false;
        wake_.wait(lock, [&] { return stopping_ || (job = next_job(background)) != nullptr; });
        if (stopping_)
            return;
        background_running_ += background ? 1 : 0;
        lock.unlock();
        // One index of a background job at a time, so that a normal job
        // that comes meanwhile is taken up after it.
        run_indices(*job, background ? 1 : SIZE_MAX);
        job.reset();
        lock.lock();
        if (background) {
            background_running_--;
            wake_.notify_one();  // a background slot is free
        }
    }
}

void thread_pool_t::retire(const std::shared_ptr<job_t>& job, priority_t priority)
{
    std::lock_guard<std::mutex> guard(mutex_);
    auto& queue = jobs_[static_cast<size_t>(priority)];
    const auto it = std::find(queue.begin(), queue.end(), job);
    if (it != queue.end())
        queue.erase(it);
}

void thread_pool_t::parallel_for(size_t n, const std::function<void(size_t)>& fn)
{
    if (n == 0)
        return;
    if (n == 1 || workers_.empty()) {
        for (size_t i = 0; i < n; i++)
            fn(i);
        return;
    }
    auto job = std::make_shared<job_t>(n, fn);
    const priority_t priority = thread_priority_;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        jobs_[static_cast<size_t>(priority)].push_back(job);
    }
    wake_.notify_all();
    run_indices(*job);
    {
        std::unique_lock<std::mutex> lock(job->mutex);
        job->done.wait(lock, [&] { return job->finished.load() == n; });
    }
    retire(job, priority);
    if (job->error)
        std::rethrow_exception(job->error);
}

void thread_pool_t::parallel_range(size_t n, size_t grain,
                                   const std::function<void(size_t, size_t)>& fn)
{
    if (n == 0)
        return;
    grain = std::max<size_t>(grain, 1);
    const size_t ranges = std::min((n + grain - 1) / grain, 4 * size());
    const size_t step = (n + ranges - 1) / ranges;
    parallel_for((n + step - 1) / step, [&](size_t i) {
        fn(i * step, std::min(n, (i + 1) * step));
    });
}

}  // namespace cuzk
