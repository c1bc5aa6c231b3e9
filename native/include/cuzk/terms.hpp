// The preamble's view of one circuit's assignment: for each MSM of the
// proof, which of its points have scalar 1 and which need a real scalar
// multiplication. Made once per circuit for every backend and for the B_G2
// MSM, in one pass over the assignment in Montgomery form: only the scalars
// that are neither 0 nor 1 are converted to canonical form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <blst.h>

#include "cuzk/circuit.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

// One MSM's terms over its point set: the points whose scalar is 1 as a
// bitmap (batch addition), the points whose scalar is neither 0 nor 1 (the
// tail) as ascending indices with their canonical scalars. Points whose
// scalar is 0 appear in neither.
struct term_plan_t {
    size_t points = 0;           // the point set's length, the bitmap's bits
    std::vector<uint64_t> ones;  // (points + 63) / 64 words
    size_t tail = 0;
    uint32_t* tail_index = nullptr;      // in the storage given to fill()
    blst_scalar* tail_scalar = nullptr;  // likewise
};

// The terms of one circuit's L, A and B MSMs, in the key's point order:
//   L over the aux variables;
//   A over every input, then the aux variables with A density;
//   B over the inputs with B density, then the aux variables with B density
//     (the same terms for B_G1 and B_G2).
// classify() sorts the assignment and sizes the tails; fill() writes the
// plans, the tails into storage the caller chose (pinned memory for a GPU).
class circuit_terms_t {
public:
    // Scalars per chunk of the parallel passes: a multiple of 64, so that a
    // chunk owns whole bitmap words of its variables.
    static constexpr size_t chunk_vars = size_t(1) << 16;

    circuit_terms_t() = default;
    // The plans' sources point into this object's bitmaps.
    circuit_terms_t(const circuit_terms_t&) = delete;
    circuit_terms_t& operator=(const circuit_terms_t&) = delete;

    // c must be validated (prover.cpp).
    void classify(const circuit_t& c, thread_pool_t& pool);

    // Bytes of storage fill() needs: each tail's indices, then its scalars,
    // each array 256-byte aligned.
    size_t tail_bytes() const;

    // storage: tail_bytes() bytes, 256-byte aligned, alive as long as the
    // plans are used.
    void fill(char* storage, thread_pool_t& pool);

    term_plan_t l, a, b;

private:
    // One segment of a plan's point set: the variables of `values` that a
    // selection keeps (all of them when `select` is null), in order.
    struct segment_t {
        const blst_fr* values = nullptr;
        const uint64_t* kind_ones = nullptr;   // the variables' kinds
        const uint64_t* kind_other = nullptr;
        const density_t* select = nullptr;
        size_t vars = 0;
        // Per chunk of variables: prefix sums of the points it keeps and of
        // the tail terms among them (chunks + 1 each).
        std::vector<size_t> points_before, tail_before;
    };
    struct plan_source_t {
        segment_t seg[2];  // inputs, aux
    };

    void count(plan_source_t& src, term_plan_t& plan, thread_pool_t& pool) const;
    static void write(const plan_source_t& src, term_plan_t& plan, thread_pool_t& pool);

    // Kinds of every variable: bit i of *_ones set when the value is 1, of
    // *_other when it is neither 0 nor 1.
    std::vector<uint64_t> input_ones_, input_other_, aux_ones_, aux_other_;
    plan_source_t sources_[3];  // l, a, b
};

}  // namespace cuzk
