// Multi-scalar multiplication and batch addition on the CPU, for G1 and G2.
#pragma once

#include <blst.h>

#include "cuzk/gather.hpp"
#include "cuzk/terms.hpp"
#include "cuzk/thread_pool.hpp"

namespace cuzk {

// out = sum(scalars[i] * points[i]). Scalars are canonical (blst_scalar_from_fr).
// Multi-threaded Pippenger: the points are cut into ranges and the scalar bits
// into windows sized to the range; each (range, window) tile runs on the pool.
// Throws std::invalid_argument when the list sizes differ.
void msm(blst_p1& out, const gather_t<blst_p1_affine>& points,
         const gather_t<blst_scalar>& scalars, thread_pool_t& pool);
void msm(blst_p2& out, const gather_t<blst_p2_affine>& points,
         const gather_t<blst_scalar>& scalars, thread_pool_t& pool);

// out = sum(points[i]): the MSM of scalars that are all 1, multi-threaded.
void batch_add(blst_p1& out, const gather_t<blst_p1_affine>& points, thread_pool_t& pool);
void batch_add(blst_p2& out, const gather_t<blst_p2_affine>& points, thread_pool_t& pool);

// out = the sum of a plan's terms over points[0..plan.points): batch
// addition of the points whose scalar is 1, an MSM of the tail.
void msm(blst_p1& out, const blst_p1_affine* points, const term_plan_t& plan, thread_pool_t& pool);
void msm(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan, thread_pool_t& pool);
// Its two halves, for B_G2 when a GPU sums the ones (and for a G1 tail too
// short to be worth a GPU MSM): the batch addition of the ones, and the MSM
// of the tail.
void sum_ones(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan,
              thread_pool_t& pool);
void msm_tail(blst_p1& out, const blst_p1_affine* points, const term_plan_t& plan,
              thread_pool_t& pool);
void msm_tail(blst_p2& out, const blst_p2_affine* points, const term_plan_t& plan,
              thread_pool_t& pool);

}  // namespace cuzk
