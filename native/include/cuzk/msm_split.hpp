// One MSM's terms sorted by scalar: zero terms dropped, terms with scalar 1
// summed by batch addition, the rest left to Pippenger.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <blst.h>

#include "cuzk/fr.hpp"
#include "cuzk/gather.hpp"
#include "cuzk/group.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/thread_pool.hpp"
#include "cuzk/uninit.hpp"

namespace cuzk {

// Borrows the points and scalars it is given; they must outlive it.
template <class Affine>
class msm_split_t {
public:
    using point_t = typename group_t<Affine>::point_t;

    // Sorts the n terms (point_at(k), scalar_at(k)), k in [0, n), in
    // parallel: count each chunk's ones and tail, prefix-sum, then let each
    // chunk write its own slices. Each kind keeps the terms' order.
    template <class PointAt, class ScalarAt>
    void assign(size_t n, PointAt point_at, ScalarAt scalar_at, thread_pool_t& pool)
    {
        const size_t chunks = (n + chunk_terms - 1) / chunk_terms;
        std::vector<size_t> ones(chunks + 1, 0), tail(chunks + 1, 0);
        pool.parallel_for(chunks, [&](size_t c) {
            for (size_t k = c * chunk_terms; k < std::min(n, (c + 1) * chunk_terms); k++) {
                const blst_scalar& s = *scalar_at(k);
                if (scalar_is_one(s))
                    ones[c + 1]++;
                else if (!scalar_is_zero(s))
                    tail[c + 1]++;
            }
        });
        for (size_t c = 0; c < chunks; c++) {
            ones[c + 1] += ones[c];
            tail[c + 1] += tail[c];
        }
        ones_.resize(ones[chunks]);
        tail_points_.resize(tail[chunks]);
        tail_scalars_.resize(tail[chunks]);
        pool.parallel_for(chunks, [&](size_t c) {
            size_t o = ones[c], t = tail[c];
            for (size_t k = c * chunk_terms; k < std::min(n, (c + 1) * chunk_terms); k++) {
                const blst_scalar* s = scalar_at(k);
                if (scalar_is_one(*s)) {
                    ones_[o++] = point_at(k);
                } else if (!scalar_is_zero(*s)) {
                    tail_points_[t] = point_at(k);
                    tail_scalars_[t++] = s;
                }
            }
        });
    }

    size_t ones() const { return ones_.size(); }
    size_t tail() const { return tail_points_.size(); }

    // out = the sum of every term added.
    void evaluate(point_t& out, thread_pool_t& pool) const
    {
        point_t sum_ones, sum_tail;
        batch_add(sum_ones, gather_t<Affine>::indirect(ones_.data(), ones_.size()), pool);
        msm(sum_tail, gather_t<Affine>::indirect(tail_points_.data(), tail_points_.size()),
            gather_t<blst_scalar>::indirect(tail_scalars_.data(), tail_scalars_.size()), pool);
        group_t<Affine>::add(out, sum_ones, sum_tail);
    }

private:
    // Terms per chunk of assign.
    static constexpr size_t chunk_terms = size_t(1) << 16;

    uninit_vector_t<const Affine*> ones_;
    uninit_vector_t<const Affine*> tail_points_;
    uninit_vector_t<const blst_scalar*> tail_scalars_;
};

}  // namespace cuzk
