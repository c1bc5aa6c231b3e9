// The kernel region as an interface. prove() (prover.cpp) asks the lock's
// backend to prepare a batch in the preamble (lock not held), runs it under
// the lock, and assembles the proofs from its sums. The CPU backend
// (cpu_backend.cpp) is always built; the CUDA backend (native/cuda/backend/)
// only with supraseal-c2's `cuda` feature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <blst.h>

#include "cuzk/circuit.hpp"
#include "cuzk/cuda/error.hpp"
#include "cuzk/srs.hpp"
#include "cuzk/terms.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

// Where the kernel region runs.
enum class backend_t : uint8_t { cpu = 0, cuda = 1 };

// Where the kernel region read the SRS points from: host memory (the CPU
// backend), device memory (uploaded once, kept), or pinned host memory
// streamed through device windows (a key too large for the device).
enum class residency_t : uint8_t { host = 0, device = 1, streamed = 2 };

// Which terms of B_G2 a kernel region sums: none (all are the CPU's), the
// ones (the terms whose scalar is 1), or all of them (the ones and the
// tail).
enum class b_g2_share_t : uint8_t { none = 0, ones = 1, all = 2 };

// What the kernel region computes for one circuit. A GPU also sums B_G2's
// ones, or all of B_G2, when it holds the key's G2 points: b_g2_done says
// which, b_g2 is their sum; the rest of B_G2 is the CPU's.
struct kernel_sums_t {
    blst_p1 h, l, a, b_g1;
    b_g2_share_t b_g2_done = b_g2_share_t::none;
    blst_p2 b_g2;
};

// What a batch reports after running.
struct kernel_report_t {
    residency_t residency = residency_t::host;
    uint64_t srs_upload_ns = 0;  // SRS set-up on the device during this call
};

// One batch, prepared outside the lock.
class kernel_batch_t {
public:
    virtual ~kernel_batch_t() = default;
    // Lock held: sums[i] for circuit i of the batch.
    virtual void run(std::vector<kernel_sums_t>& sums, thread_pool_t& pool) = 0;
    virtual kernel_report_t report() const = 0;
};

// What a backend started for a batch before its terms were classified
// (kernel_backend_t::start_inputs), handed to prepare().
class early_inputs_t {
public:
    virtual ~early_inputs_t() = default;
};

// A backend of the kernel region; a gpu_lock_t owns one.
class kernel_backend_t {
public:
    virtual ~kernel_backend_t() = default;
    virtual backend_t kind() const noexcept = 0;
    // The most of B_G2 its kernel region may sum for a circuit whose B terms
    // are `b` (classified): what it does not may not be left to it, and
    // kernel_sums_t says what it did (no more than this). The prover's CPU
    // sums the rest beside the kernel region, and in the epilogue whatever
    // the kernel region left after all.
    virtual b_g2_share_t b_g2_share(const term_plan_t& b) const noexcept
    {
        (void)b;
        return b_g2_share_t::none;
    }
    // Lock held: fails as `fault` says (injected_fault_t), by throwing the
    // cuda_error_t of that failure. The CUDA backend makes device `device`
    // really fail; the CPU backend throws what the CUDA runtime would.
    virtual void raise(uint32_t device, injected_fault_t fault) = 0;
    // Lock not held. terms[i] comes classified (circuit_terms_t::classify);
    // prepare fills it, the tails in storage of the backend's choosing that
    // lives as long as the batch. The batch borrows srs, circuits and terms,
    // which outlive it. lock_in_use: whether another caller held or awaited
    // the lock just before this call (gpu_lock_t::in_use), so that this
    // batch will likely wait for it.
    // early: what start_inputs returned for these circuits (may be null).
    virtual std::unique_ptr<kernel_batch_t> prepare(const srs_t& srs,
                                                    const std::vector<circuit_t>& circuits,
                                                    std::vector<circuit_terms_t>& terms,
                                                    thread_pool_t& pool, bool lock_in_use,
                                                    std::unique_ptr<early_inputs_t> early) = 0;
    // Lock not held, at the start of the preamble, before the terms are
    // classified: the backend may start moving the circuits' a, b, c to the
    // device (the CUDA backend does, when they are page-locked), so that the
    // copy runs beside the preamble. Default: nothing.
    virtual std::unique_ptr<early_inputs_t> start_inputs(const srs_t& srs,
                                                         const std::vector<circuit_t>& circuits)
    {
        (void)srs;
        (void)circuits;
        return nullptr;
    }
};

std::unique_ptr<kernel_backend_t> make_cpu_kernel_backend();

}  // namespace cuzk
