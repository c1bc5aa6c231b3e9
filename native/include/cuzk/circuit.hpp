// One circuit's input to the prover, borrowed from the caller.
#pragma once

#include <cstddef>
#include <cstdint>

#include <blst.h>

#include "cuzk/span.hpp"

namespace cuzk {

// A bitmap over variables: bit i (of words[i / 64], little-endian) is set
// when variable i has a non-zero coefficient in the matrix it tracks.
struct density_t {
    span_t<uint64_t> words;
    size_t bits = 0;

    bool get(size_t i) const { return (words[i / 64] >> (i % 64)) & 1; }

    // Set bits among the first `bits`.
    size_t count() const
    {
        size_t n = 0;
        for (size_t w = 0; w < bits / 64; w++)
            n += __builtin_popcountll(words[w]);
        if (bits % 64)
            n += __builtin_popcountll(words[bits / 64] & ((uint64_t(1) << (bits % 64)) - 1));
        return n;
    }

    // Enough words for `bits`.
    bool well_formed() const { return words.size >= (bits + 63) / 64; }
};

// a, b, c: the A, B, C matrices times the full assignment, one value per
// constraint. input (ONE first) and aux: the assignment. Montgomery form.
struct circuit_t {
    span_t<blst_fr> a, b, c;
    span_t<blst_fr> input, aux;
    density_t a_aux;    // aux variables in A (inputs always are)
    density_t b_input;  // inputs in B
    density_t b_aux;    // aux variables in B
};

}  // namespace cuzk
