// A task on its own thread that is always joined.
#pragma once

#include <exception>
#include <thread>
#include <utility>

namespace cuzk {

// Runs `fn` on a new thread. join() waits and rethrows what fn threw; the
// destructor joins too, so no path (exceptions included) leaves it running.
class background_t {
public:
    template <class F>
    explicit background_t(F&& fn)
        : thread_([this, task = std::forward<F>(fn)]() mutable {
              try {
                  task();
              } catch (...) {
                  error_ = std::current_exception();
              }
          })
    {}
    ~background_t()
    {
        if (thread_.joinable())
            thread_.join();
    }
    background_t(const background_t&) = delete;
    background_t& operator=(const background_t&) = delete;

    void join()
    {
        if (thread_.joinable())
            thread_.join();
        if (error_)
            std::rethrow_exception(std::exchange(error_, nullptr));
    }

private:
    std::exception_ptr error_;  // before thread_: set up before the task runs
    std::thread thread_;
};

}  // namespace cuzk
