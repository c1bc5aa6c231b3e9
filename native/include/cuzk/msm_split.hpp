// One MSM's terms sorted by scalar: zero terms dropped, terms with scalar 1
// summed by batch addition, the rest left to Pippenger.
#pragma once

#include <cstddef>
#include <vector>

#include <blst.h>

#include "cuzk/fr.hpp"
#include "cuzk/gather.hpp"
#include "cuzk/group.hpp"
#include "cuzk/msm.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

// Borrows the points and scalars it is given; they must outlive it.
template <class Affine>
class msm_split_t {
public:
    using point_t = typename group_t<Affine>::point_t;

    void add(const Affine* point, const blst_scalar* scalar)
    {
        if (scalar_is_zero(*scalar))
            return;
        if (scalar_is_one(*scalar)) {
            ones_.push_back(point);
            return;
        }
        tail_points_.push_back(point);
        tail_scalars_.push_back(scalar);
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
    std::vector<const Affine*> ones_;
    std::vector<const Affine*> tail_points_;
    std::vector<const blst_scalar*> tail_scalars_;
};

}  // namespace cuzk
