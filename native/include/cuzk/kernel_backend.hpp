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
#include "cuzk/srs.hpp"
#include "cuzk/thread_pool.hpp"
#include "cuzk/uninit.hpp"

namespace cuzk {

// Where the kernel region runs.
enum class backend_t : uint8_t { cpu = 0, cuda = 1 };

// Where the kernel region read the SRS points from: host memory (the CPU
// backend), device memory (uploaded once, kept), or pinned host memory
// streamed through device windows (a key too large for the device).
enum class residency_t : uint8_t { host = 0, device = 1, streamed = 2 };

// What the kernel region computes for one circuit.
struct kernel_sums_t {
    blst_p1 h, l, a, b_g1;
};

// One circuit's assignment as canonical scalars (blst_scalar_from_fr), and
// the terms of its A and B MSMs in SRS order: a_terms[k] is the scalar of the
// k-th point of srs.a (every input, then the aux variables with A density),
// b_terms[k] that of srs.b_g1 and srs.b_g2 (inputs, then aux variables, with
// B density). Made once by prepare_scalars for every backend and for the
// B_G2 MSM; the term lists point into input and aux.
struct circuit_scalars_t {
    uninit_vector_t<blst_scalar> input, aux;
    uninit_vector_t<const blst_scalar*> a_terms, b_terms;
};

// Fills s for c, every O(aux) step in parallel on pool. c must be validated.
void prepare_scalars(circuit_scalars_t& s, const circuit_t& c, thread_pool_t& pool);

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

// A backend of the kernel region; a gpu_lock_t owns one.
class kernel_backend_t {
public:
    virtual ~kernel_backend_t() = default;
    virtual backend_t kind() const noexcept = 0;
    // Lock not held. The batch borrows srs, circuits and scalars, which
    // outlive it.
    virtual std::unique_ptr<kernel_batch_t> prepare(const srs_t& srs,
                                                    const std::vector<circuit_t>& circuits,
                                                    const std::vector<circuit_scalars_t>& scalars,
                                                    thread_pool_t& pool) = 0;
};

std::unique_ptr<kernel_backend_t> make_cpu_kernel_backend();

}  // namespace cuzk
