// The CUDA backend of the kernel region (supraseal-c2's `cuda` feature):
// plain C++ over the CUDA API of native/include/cuzk/cuda/. See docs/cuda.md,
// "Phase 2".
//
// Ownership:
//   gpu_lock_t  owns a cuda_backend_t: the device ordinal, its context
//               (cuda_device_t, made on first use under the lock), the
//               settings, and the pinned staging pool the preambles fill;
//   srs_t       owns, per device, a cuda_srs_state_t (srs_t::device_state):
//               the key's G1 points on the device (or the windows they are
//               streamed through) and the H workspace. It shares the
//               context, so it may outlive the lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <blst.h>

#include "cuzk/cuda/cuda.hpp"
#include "cuzk/kernel_backend.hpp"

namespace cuzk {

// Pinned host memory that grows (contents lost) when asked for more.
class pinned_arena_t {
public:
    explicit pinned_arena_t(int device) : device_(device) {}
    // At least `bytes` (the old contents are lost when it grows).
    char* ensure(size_t bytes);
    size_t capacity() const noexcept { return buffer_.bytes(); }

private:
    int device_;
    cuda_pinned_buffer_t buffer_;
};

// The pinned arenas of one device's preambles: a preamble takes one for its
// batch and gives it back when the batch is done, so two workers' preambles
// and the kernel region never share one.
class staging_pool_t {
public:
    explicit staging_pool_t(int device) : device_(device) {}

    class lease_t {
    public:
        lease_t(staging_pool_t& pool, std::unique_ptr<pinned_arena_t> arena)
            : pool_(pool), arena_(std::move(arena))
        {}
        ~lease_t() { pool_.give_back(std::move(arena_)); }
        lease_t(const lease_t&) = delete;
        lease_t& operator=(const lease_t&) = delete;
        pinned_arena_t& arena() noexcept { return *arena_; }

    private:
        staging_pool_t& pool_;
        std::unique_ptr<pinned_arena_t> arena_;
    };

    std::unique_ptr<lease_t> take();

private:
    void give_back(std::unique_ptr<pinned_arena_t> arena) noexcept;

    int device_;
    std::mutex mutex_;  // guards free_
    std::vector<std::unique_ptr<pinned_arena_t>> free_;
};

// What the kernel region needs for one circuit, made by the preamble: a, b,
// c in pinned memory (the caller's own when it is pinned, else staging), and
// the L, A and B_G1 terms (the prover's circuit_terms_t), whose tails and
// bitmaps lie in one block of staging that goes to the device before a, b, c.
struct circuit_plan_t {
    const blst_fr* abc[3] = {nullptr, nullptr, nullptr};
    size_t constraints = 0;
    const term_plan_t* l = nullptr;
    const term_plan_t* a = nullptr;
    const term_plan_t* b_g1 = nullptr;
    // The terms block: the tails (circuit_terms_t::fill's layout), then the
    // bitmaps of L, A and B_G1 (`ones`), each zero-padded to whole runs of
    // 1024 bits, as sppark's batch addition reads them.
    const char* terms = nullptr;
    size_t terms_bytes = 0;
    const uint64_t* ones[3] = {nullptr, nullptr, nullptr};  // l, a, b_g1
    // A tail of at most host_tail_max terms (not a dense set) is summed by
    // the preamble on the CPU, into host_tail (sppark's MSM costs
    // milliseconds whatever its length, a visible share of a small kernel
    // region for a handful of public inputs).
    static constexpr size_t host_tail_max = 64;
    static bool tail_on_host(const term_plan_t& t)
    {
        return t.tail > 0 && t.tail <= host_tail_max && t.tail < t.points;
    }
    blst_p1 host_tail[3] = {};  // l, a, b_g1, where tail_on_host
    bool staged_abc = false;  // a, b, c copied into staging
    // The terms, then a, b, c, already on their way to the device (copied in
    // the preamble, outside the lock); null: the kernel region copies them.
    const cuda_circuit_upload_t* upload = nullptr;
    // a, b, c alone, on their way since the preamble's start
    // (cuda_backend_t::start_inputs); then `upload` holds only the terms.
    const cuda_circuit_upload_t* abc_upload = nullptr;
};

// A lock's CUDA backend.
class cuda_backend_t final : public kernel_backend_t {
public:
    // Throws cuda_error_t when `device` is not a usable CUDA device.
    explicit cuda_backend_t(uint32_t device);

    backend_t kind() const noexcept override { return backend_t::cuda; }
    b_g2_share_t b_g2_share(const term_plan_t& b) const noexcept override
    {
        return b_g2_tail_on_device(b) ? b_g2_share_t::all : b_g2_share_t::ones;
    }
    // Whether the kernel region sums B_G2's tail (when the key's G2 points
    // are resident): unless CUZK_B_G2=cpu (to compare the two in one
    // build), for any tail too long for the host's few-term path.
    static bool b_g2_tail_on_device(const term_plan_t& b) noexcept;
    void raise(uint32_t device, injected_fault_t fault) override
    {
        cuda_raise_fault(static_cast<int>(device), fault);
    }
    std::unique_ptr<kernel_batch_t> prepare(const srs_t& srs,
                                            const std::vector<circuit_t>& circuits,
                                            std::vector<circuit_terms_t>& terms,
                                            thread_pool_t& pool, bool lock_in_use,
                                            std::unique_ptr<early_inputs_t> early) override;
    std::unique_ptr<early_inputs_t> start_inputs(const srs_t& srs,
                                                 const std::vector<circuit_t>& circuits) override;

    uint32_t device() const noexcept { return device_; }

    // Lock held: the device's context, made on first use.
    const std::shared_ptr<cuda_device_t>& context();

    // Settings, read when a key is first set up on this device.
    void set_memory_limit(uint64_t bytes) noexcept { memory_limit_ = bytes; }
    uint64_t memory_limit() const noexcept { return memory_limit_; }
    void set_stream_srs(bool on) noexcept { stream_srs_ = on; }
    bool stream_srs() const noexcept { return stream_srs_; }

    staging_pool_t& staging() noexcept { return staging_; }

    // Whether `bytes` more of a batch's inputs may be copied to the device
    // ahead of its kernel region: always without a memory limit; under
    // one, only when they fit the limit beside what the device holds now
    // (the keys' plans, the other workers' copies, any process's memory),
    // so that the copies ahead, which no key's plan counts, cannot take
    // the device past it. Checked with copy_room() held until the copy's
    // memory is allocated, so that two workers cannot both pass on the
    // same room. When they do not fit, the kernel region copies instead.
    bool room_ahead(uint64_t bytes) const;
    std::mutex& copy_room() noexcept { return copy_room_; }

private:
    const uint32_t device_;
    std::shared_ptr<cuda_device_t> context_;  // made and used under the lock
    std::atomic<uint64_t> memory_limit_{0};    // 0: none
    std::atomic<bool> stream_srs_{false};
    staging_pool_t staging_;
    std::mutex copy_room_;
};

// One of the key's G1 point sets as the kernels see it: resident in device
// memory, or streamed from (pinned) host memory through two device windows.
class srs_points_t {
public:
    // Resident: uploads the points.
    srs_points_t(cuda_device_t& device, const points_t<blst_p1_affine>& host);
    // Streamed through `windows` (two point buffers of equal size, a
    // multiple of 1024 points).
    srs_points_t(const points_t<blst_p1_affine>& host, cuda_points_t* windows[2]);

    size_t size() const noexcept { return host_.size(); }
    // The resident points; null when streamed.
    const cuda_points_t* resident() const noexcept { return resident_.get(); }

    // Calls fn(points, offset, count) for consecutive ranges covering
    // [0, size()), `points` holding points [offset, offset + count) from its
    // index 0: once with everything when resident, window by window (the
    // next window's upload overlapping fn on this one) when streamed.
    // fn must have finished with the points when it returns.
    template <class F>
    void for_each_window(F&& fn) const;

private:
    const points_t<blst_p1_affine>& host_;
    std::unique_ptr<cuda_points_t> resident_;
    cuda_points_t* windows_[2] = {nullptr, nullptr};
};

// The key on one device: its points and the H workspace. Made under the
// device's lock on the key's first use there; owned by the srs_t.
class cuda_srs_state_t final : public srs_device_state_t {
public:
    // Decides the residency (docs/cuda.md), then uploads the points or pins
    // them for streaming. Throws device_memory_error_t when not even the
    // streaming plan fits.
    cuda_srs_state_t(std::shared_ptr<cuda_device_t> context, const srs_t& srs,
                     uint64_t memory_limit, bool force_stream);
    ~cuda_srs_state_t() override;

    residency_t residency() const noexcept { return residency_; }
    cuda_device_t& context() const noexcept { return *context_; }
    // Null when the domain is 1 (no H terms).
    cuda_h_poly_t* h_poly() const noexcept { return h_poly_.get(); }
    const srs_points_t& h() const { return *sets_[0]; }
    const srs_points_t& l() const { return *sets_[1]; }
    const srs_points_t& a() const { return *sets_[2]; }
    const srs_points_t& b_g1() const { return *sets_[3]; }
    // The B_G2 points when resident (the kernel region sums B_G2's ones);
    // null when streamed (the CPU sums them).
    const cuda_g2_points_t* b_g2() const noexcept { return b_g2_.get(); }
    // The H points' precomputed table (cuda_msm_table_t) when the key is
    // resident, the memory allows it and CUZK_MSM is not "sppark"; else
    // null (the H MSM runs on sppark's msm_t).
    const cuda_msm_table_t* h_table() const noexcept { return h_table_.get(); }

private:
    void make_resident(const srs_t& srs);
    void make_streamed(const srs_t& srs, size_t window);

    // Declared first: destroyed last, after everything made on it.
    std::shared_ptr<cuda_device_t> context_;
    residency_t residency_ = residency_t::device;
    std::vector<std::unique_ptr<cuda_host_registration_t>> pinned_;
    std::unique_ptr<cuda_points_t> windows_[2];
    std::unique_ptr<srs_points_t> sets_[4];  // h, l, a, b_g1
    std::unique_ptr<cuda_g2_points_t> b_g2_;
    std::unique_ptr<cuda_h_poly_t> h_poly_;
    std::unique_ptr<cuda_msm_table_t> h_table_;
};

// Whether a circuit's a, b, c are all page-locked (or empty): then they go
// to the device straight from where synthesis wrote them.
bool abc_page_locked(const circuit_t& c);

// Preamble work (lock not held): fills terms (tails in pinned staging) and
// the plans of one batch, staging a, b, c that are not already pinned, and
// sums the short tails on the CPU.
void plan_batch(std::vector<circuit_plan_t>& plans, pinned_arena_t& arena, const srs_t& srs,
                const std::vector<circuit_t>& circuits, std::vector<circuit_terms_t>& terms,
                thread_pool_t& pool);

// Kernel region (lock held): one circuit's sums.
void run_circuit(kernel_sums_t& out, const cuda_srs_state_t& state, const circuit_plan_t& plan);

template <class F>
void srs_points_t::for_each_window(F&& fn) const
{
    const size_t n = size();
    if (n == 0)
        return;
    if (resident_) {
        fn(*resident_, size_t(0), n);
        return;
    }
    const size_t window = windows_[0]->size();
    const size_t count = (n + window - 1) / window;
    const auto span = [&](size_t k) { return std::min(window, n - k * window); };
    windows_[0]->upload_async(host_.data(), span(0), 0);
    for (size_t k = 0; k < count; k++) {
        // Window k + 1's buffer was last read by fn for window k - 1, which
        // has returned.
        if (k + 1 < count)
            windows_[(k + 1) % 2]->upload_async(host_.data() + (k + 1) * window, span(k + 1), 0);
        cuda_points_t& points = *windows_[k % 2];
        points.wait_upload();
        fn(static_cast<const cuda_points_t&>(points), k * window, span(k));
    }
}

}  // namespace cuzk
