// The three-phase Groth16 prover over a batch of circuits sharing one SRS.
#pragma once

#include <cstdint>
#include <vector>

#include <blst.h>

#include "cuzk/circuit.hpp"
#include "cuzk/gpu_lock.hpp"
#include "cuzk/kernel_backend.hpp"
#include "cuzk/span.hpp"
#include "cuzk/srs.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

struct proof_t {
    blst_p1_affine a;
    blst_p2_affine b;
    blst_p1_affine c;
};

// Where one prove() call spent its time; instants on monotonic_ns().
struct prove_timings_t {
    uint64_t preamble_ns = 0;
    uint64_t lock_wait_ns = 0;
    uint64_t kernel_ns = 0;
    uint64_t epilogue_ns = 0;
    uint64_t lock_taken_ns = 0;
    uint64_t lock_released_ns = 0;
    backend_t backend = backend_t::cpu;        // the lock's backend
    residency_t residency = residency_t::host;  // where the SRS points were read from
    uint64_t srs_upload_ns = 0;  // SRS set-up on the device in this call (first use), in kernel_ns
    // The preamble's steps, which supraseal-c2 reports as `cuzk::native`
    // tracing events; always measured (a clock read each), never printed here.
    uint64_t classify_ns = 0;         // sorting each circuit's terms by scalar
    uint64_t backend_prepare_ns = 0;  // the backend's preparation of the kernel region
    uint64_t b_g2_ns = 0;  // the CPU's B_G2 MSMs, on a background thread beside the kernel region
};

struct prove_output_t {
    std::vector<proof_t> proofs;  // one per circuit, in order
    prove_timings_t timings;
};

// Proves every circuit of `batch` with blinding r[i], s[i] (Montgomery form).
//  1. preamble, lock not held: validate, convert scalars, start the B_G2
//     MSMs on a background thread (always on the CPU), and let the lock's
//     backend prepare the kernel region (sort each MSM's terms into
//     0 / 1 / other; the CUDA backend also fills pinned staging);
//  2. kernel region, `lock` held once for the whole batch: H, L, A, B_G1 on
//     the lock's backend;
//  3. epilogue, lock not held: join B_G2, assemble the proofs.
// Throws std::invalid_argument for inputs that do not fit the SRS, and
// cuda_error_t for a failed kernel region (`fault` injects one at its start;
// a sticky one, injected or real, leaves the lock lost(): gpu_lock.hpp). The
// lock is released and the background thread joined on every path.
prove_output_t prove(gpu_lock_t& lock, const srs_t& srs, const std::vector<circuit_t>& batch,
                     span_t<blst_fr> r, span_t<blst_fr> s,
                     injected_fault_t fault = injected_fault_t::none,
                     thread_pool_t& pool = thread_pool_t::global());

}  // namespace cuzk
