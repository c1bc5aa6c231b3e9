#include "cuzk/terms.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuzk/align.hpp"
#include "cuzk/check.hpp"
#include "cuzk/fr.hpp"

#if defined(__BMI2__)
#include <immintrin.h>
#endif

namespace cuzk {

namespace {

size_t words_of(size_t bits) { return (bits + 63) / 64; }

// The bits of word w below `bits`.
uint64_t valid_mask(size_t bits, size_t w)
{
    const size_t left = bits - w * 64;
    return left >= 64 ? ~uint64_t(0) : (uint64_t(1) << left) - 1;
}

bool same(const blst_fr& x, const blst_fr& y) { return std::memcmp(&x, &y, sizeof(x)) == 0; }

bool is_zero(const blst_fr& x) { return (x.l[0] | x.l[1] | x.l[2] | x.l[3]) == 0; }

// Bits of x at the set positions of mask, packed to the low end in order.
uint64_t extract(uint64_t x, uint64_t mask)
{
    if (mask == ~uint64_t(0))
        return x;
#if defined(__BMI2__)
    return _pext_u64(x, mask);
#else
    uint64_t out = 0;
    unsigned k = 0;
    for (uint64_t m = mask; m != 0; m &= m - 1, k++)
        out |= ((x >> __builtin_ctzll(m)) & 1) << k;
    return out;
#endif
}

// Appends bits to a bitmap from bit `at` on. Words shared with a neighbouring
// chunk are OR-ed in atomically; the bitmap starts zeroed.
class bit_writer_t {
public:
    bit_writer_t(uint64_t* words, size_t at) : words_(words), word_(at / 64), fill_(at % 64) {}
    ~bit_writer_t()
    {
        if (fill_ != 0)
            flush();
    }

    // The low k bits of v (the others clear), 0 <= k <= 64.
    void put(uint64_t v, unsigned k)
    {
        if (k == 0)
            return;
        acc_ |= v << fill_;
        if (fill_ + k >= 64) {
            flush();
            acc_ = fill_ == 0 ? 0 : v >> (64 - fill_);
            fill_ = fill_ + k - 64;
        } else {
            fill_ += k;
        }
    }

private:
    void flush()
    {
        if (acc_ != 0)
            __atomic_fetch_or(&words_[word_], acc_, __ATOMIC_RELAXED);
        word_++;
    }

    uint64_t* words_;
    size_t word_;
    unsigned fill_;
    uint64_t acc_ = 0;
};

// Kinds of values[0..n): one pass, Montgomery form (0 is all zero limbs, 1 is
// R mod r), chunk by chunk; each chunk owns its words.
void classify_values(std::vector<uint64_t>& ones, std::vector<uint64_t>& other,
                     const blst_fr* values, size_t n, thread_pool_t& pool)
{
    const blst_fr one = fr_one();
    ones.assign(words_of(n), 0);
    other.assign(words_of(n), 0);
    const size_t chunks = (n + circuit_terms_t::chunk_vars - 1) / circuit_terms_t::chunk_vars;
    const auto run = [&](size_t c) {
        const size_t end = std::min(n, (c + 1) * circuit_terms_t::chunk_vars);
        for (size_t w = c * circuit_terms_t::chunk_vars / 64; w * 64 < end; w++) {
            uint64_t o = 0, t = 0;
            for (size_t i = w * 64, b = 0; i < std::min(end, w * 64 + 64); i++, b++) {
                if (same(values[i], one))
                    o |= uint64_t(1) << b;
                else if (!is_zero(values[i]))
                    t |= uint64_t(1) << b;
            }
            ones[w] = o;
            other[w] = t;
        }
    };
    pool.parallel_for(chunks, run);
}

}  // namespace

void circuit_terms_t::classify(const circuit_t& c, thread_pool_t& pool)
{
    classify_values(input_ones_, input_other_, c.input.data, c.input.size, pool);
    classify_values(aux_ones_, aux_other_, c.aux.data, c.aux.size, pool);

    const auto segment = [](span_t<blst_fr> values, const std::vector<uint64_t>& ones,
                             const std::vector<uint64_t>& other, const density_t* select) {
        segment_t s;
        s.values = values.data;
        s.kind_ones = ones.data();
        s.kind_other = other.data();
        s.select = select;
        s.vars = values.size;
        return s;
    };
    const auto inputs = [&](const density_t* select) {
        return segment(c.input, input_ones_, input_other_, select);
    };
    const auto aux = [&](const density_t* select) {
        return segment(c.aux, aux_ones_, aux_other_, select);
    };
    sources_[0] = plan_source_t{{segment_t{}, aux(nullptr)}};
    sources_[1] = plan_source_t{{inputs(nullptr), aux(&c.a_aux)}};
    sources_[2] = plan_source_t{{inputs(&c.b_input), aux(&c.b_aux)}};
    term_plan_t* plans[3] = {&l, &a, &b};
    for (int p = 0; p < 3; p++)
        count(sources_[p], *plans[p], pool);
}

namespace {

// Word w of a segment's selection: the selected variables among its 64.
template <class Segment>
uint64_t selected(const Segment& s, size_t w)
{
    const uint64_t valid = valid_mask(s.vars, w);
    return s.select ? s.select->words[w] & valid : valid;
}

}  // namespace

void circuit_terms_t::count(plan_source_t& src, term_plan_t& plan, thread_pool_t& pool) const
{
    plan.points = 0;
    plan.tail = 0;
    for (segment_t& s : src.seg) {
        const size_t chunks = (s.vars + chunk_vars - 1) / chunk_vars;
        s.points_before.assign(chunks + 1, 0);
        s.tail_before.assign(chunks + 1, 0);
        const auto run = [&](size_t ch) {
            size_t points = 0, tail = 0;
            const size_t end = std::min(words_of(s.vars), (ch + 1) * chunk_vars / 64);
            for (size_t w = ch * chunk_vars / 64; w < end; w++) {
                const uint64_t sel = selected(s, w);
                points += static_cast<size_t>(__builtin_popcountll(sel));
                tail += static_cast<size_t>(__builtin_popcountll(sel & s.kind_other[w]));
            }
            s.points_before[ch + 1] = points;
            s.tail_before[ch + 1] = tail;
        };
        pool.parallel_for(chunks, run);
        for (size_t ch = 0; ch < chunks; ch++) {
            s.points_before[ch + 1] += s.points_before[ch];
            s.tail_before[ch + 1] += s.tail_before[ch];
        }
        plan.points += s.points_before[chunks];
        plan.tail += s.tail_before[chunks];
    }
    CUZK_REQUIRE(plan.points <= UINT32_MAX,
                 "prove: an MSM of " + std::to_string(plan.points) + " points (at most 2^32 - 1)");
}

size_t circuit_terms_t::tail_bytes() const
{
    size_t bytes = 0;
    for (const term_plan_t* p : {&l, &a, &b})
        bytes += align256(p->tail * sizeof(uint32_t)) + align256(p->tail * sizeof(blst_scalar));
    return bytes;
}

void circuit_terms_t::fill(char* storage, thread_pool_t& pool)
{
    term_plan_t* plans[3] = {&l, &a, &b};
    for (int p = 0; p < 3; p++) {
        term_plan_t& plan = *plans[p];
        plan.tail_index = reinterpret_cast<uint32_t*>(storage);
        storage += align256(plan.tail * sizeof(uint32_t));
        plan.tail_scalar = reinterpret_cast<blst_scalar*>(storage);
        storage += align256(plan.tail * sizeof(blst_scalar));
        write(sources_[p], plan, pool);
    }
}

void circuit_terms_t::write(const plan_source_t& src, term_plan_t& plan, thread_pool_t& pool)
{
    plan.ones.assign(words_of(plan.points), 0);
    size_t points_base = 0, tail_base = 0;
    for (const segment_t& s : src.seg) {
        const size_t chunks = s.points_before.size() - 1;
        const auto run = [&](size_t ch) {
            size_t at = points_base + s.points_before[ch];
            size_t t = tail_base + s.tail_before[ch];
            bit_writer_t ones(plan.ones.data(), at);
            const size_t end = std::min(words_of(s.vars), (ch + 1) * chunk_vars / 64);
            for (size_t w = ch * chunk_vars / 64; w < end; w++) {
                const uint64_t sel = selected(s, w);
                if (sel == 0)
                    continue;
                const unsigned kept = static_cast<unsigned>(__builtin_popcountll(sel));
                ones.put(extract(s.kind_ones[w], sel), kept);
                for (uint64_t other = sel & s.kind_other[w]; other != 0; other &= other - 1) {
                    const unsigned bit = static_cast<unsigned>(__builtin_ctzll(other));
                    const uint64_t below = sel & ((uint64_t(1) << bit) - 1);
                    const size_t index = at + static_cast<size_t>(__builtin_popcountll(below));
                    plan.tail_index[t] = static_cast<uint32_t>(index);
                    blst_scalar_from_fr(&plan.tail_scalar[t], &s.values[w * 64 + bit]);
                    t++;
                }
                at += kept;
            }
        };
        pool.parallel_for(chunks, run);
        points_base += s.points_before[chunks];
        tail_base += s.tail_before[chunks];
    }
}

}  // namespace cuzk
