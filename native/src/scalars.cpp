// The preamble's per-circuit scalars and term lists. Every step over the aux
// variables (8M at sha-chain L) runs in chunks on the pool: one thread
// pushing 8M terms took longer than the whole kernel region on a GPU.
#include <algorithm>
#include <vector>

#include "cuzk/fr.hpp"
#include "cuzk/kernel_backend.hpp"

namespace cuzk {

namespace {

// Bitmap words per chunk of a parallel walk (65536 variables): large enough
// that the prefix sums are cheap, small enough to balance the pool.
constexpr size_t chunk_words = 1024;

// d.words[w] with the bits at or past d.bits cleared.
uint64_t density_word(const density_t& d, size_t w)
{
    const size_t left = d.bits - w * 64;
    return left >= 64 ? d.words[w] : d.words[w] & ((uint64_t(1) << left) - 1);
}

// out[base + r] = &aux[j] for the r-th set bit j of d, in two passes over
// chunks of words: count the bits of each, prefix-sum, then let each chunk
// write its own slice.
void list_set_bits(const blst_scalar** out, size_t base, const density_t& d,
                   const blst_scalar* aux, thread_pool_t& pool)
{
    const size_t words = (d.bits + 63) / 64;
    const size_t chunks = (words + chunk_words - 1) / chunk_words;
    std::vector<size_t> start(chunks + 1, 0);
    pool.parallel_for(chunks, [&](size_t c) {
        size_t n = 0;
        for (size_t w = c * chunk_words; w < std::min(words, (c + 1) * chunk_words); w++)
            n += static_cast<size_t>(__builtin_popcountll(density_word(d, w)));
        start[c + 1] = n;
    });
    start[0] = base;
    for (size_t c = 0; c < chunks; c++)
        start[c + 1] += start[c];
    pool.parallel_for(chunks, [&](size_t c) {
        size_t k = start[c];
        for (size_t w = c * chunk_words; w < std::min(words, (c + 1) * chunk_words); w++)
            for (uint64_t bits = density_word(d, w); bits != 0; bits &= bits - 1)
                out[k++] = &aux[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))];
    });
}

}  // namespace

void prepare_scalars(circuit_scalars_t& s, const circuit_t& c, thread_pool_t& pool)
{
    s.input.resize(c.input.size);
    s.aux.resize(c.aux.size);
    fr_to_scalars(s.input.data(), c.input.data, c.input.size, pool);
    fr_to_scalars(s.aux.data(), c.aux.data, c.aux.size, pool);

    // A: every input (few), then the aux variables with A density.
    s.a_terms.resize(c.input.size + c.a_aux.count());
    for (size_t i = 0; i < c.input.size; i++)
        s.a_terms[i] = &s.input[i];
    list_set_bits(s.a_terms.data(), c.input.size, c.a_aux, s.aux.data(), pool);

    // B: the inputs with B density, then the aux variables with B density.
    const size_t b_inputs = c.b_input.count();
    s.b_terms.resize(b_inputs + c.b_aux.count());
    for (size_t i = 0, k = 0; i < c.input.size; i++)
        if (c.b_input.get(i))
            s.b_terms[k++] = &s.input[i];
    list_set_bits(s.b_terms.data(), b_inputs, c.b_aux, s.aux.data(), pool);
}

}  // namespace cuzk
