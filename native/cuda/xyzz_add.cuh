// cuzk's additions into an XYZZ bucket over Fp: of an affine point (the G1
// accumulations: the table MSM's buckets, the share sum's ones) and of
// another bucket (the table MSM's weighing). Include after sppark's
// ec/xyzz_t.hpp.
#pragma once

namespace cuzk {

template <class bucket_t>
struct xyzz_field;
template <class F, class H, const H* A>
struct xyzz_field<xyzz_t<F, H, A>> {
    using type = F;
};

// acc += p, or acc -= p when `subtract`: sppark's mixed XYZZ addition (8M +
// 2S, madd-2008-s) with its last two products summed before one Montgomery
// reduction, Y3 = R (Q - X3) + (-Y1) PPP (mont_t::dot_product; Fp leaves
// the headroom it needs), one reduction of ten saved. The rare cases
// (either point at infinity, equal or opposite x) go to sppark's addition.
// For an Fp bucket (degree 1) only.
template <class bucket_t, class affine_t>
__device__ __forceinline__ void add_mixed(bucket_t& acc, const affine_t& p, bool subtract = false)
{
#ifdef __CUDA_ARCH__
    using field_t = typename xyzz_field<bucket_t>::type;
    static_assert(bucket_t::degree == 1, "a bucket over Fp");
    struct bucket_fields_t {
        field_t X, Y, ZZZ, ZZ;
    };
    struct affine_fields_t {
        field_t X, Y;
    };
    static_assert(sizeof(bucket_fields_t) == sizeof(bucket_t), "XYZZ layout");
    static_assert(sizeof(affine_fields_t) == sizeof(affine_t), "affine layout");
    if (acc.is_inf() || p.is_inf()) {
        acc.add(p, subtract);
        return;
    }
    auto& a = reinterpret_cast<bucket_fields_t&>(acc);
    const auto& q = reinterpret_cast<const affine_fields_t&>(p);
    field_t R = q.Y * a.ZZZ;
    R.cneg(subtract);
    R -= a.Y;
    field_t P = q.X * a.ZZ;
    P -= a.X;
    if (P.is_zero()) {  // x1 = x2: a doubling or infinity
        acc.add(p, subtract);
        return;
    }
    const field_t PP = P ^ 2;
    const field_t PPP = P * PP;
    a.ZZ *= PP;
    a.ZZZ *= PPP;
    field_t Q = PP * a.X;
    field_t X3 = R ^ 2;
    X3 -= PPP;
    X3 -= Q;
    X3 -= Q;
    Q -= X3;
    const field_t minus_y = field_t::cneg(a.Y, true);
    a.Y = field_t::dot_product(R, Q, minus_y, PPP);
    a.X = X3;
#else
    acc.add(p, subtract);
#endif
}

// acc += p for two XYZZ buckets: sppark's addition (12M + 2S, add-2008-s)
// inlined, so that a caller's buckets stay in registers (sppark's is a
// call, and a kernel that keeps its buckets across such calls holds them
// in local memory: the weighing's 1,152-byte stack frame), with the last
// two products of Y3 summed before one reduction as in add_mixed. Equal x
// (a doubling, or infinity) goes to sppark's addition.
template <class bucket_t>
__device__ __forceinline__ void add_full(bucket_t& acc, const bucket_t& p)
{
#ifdef __CUDA_ARCH__
    using field_t = typename xyzz_field<bucket_t>::type;
    static_assert(bucket_t::degree == 1, "a bucket over Fp");
    struct bucket_fields_t {
        field_t X, Y, ZZZ, ZZ;
    };
    static_assert(sizeof(bucket_fields_t) == sizeof(bucket_t), "XYZZ layout");
    if (p.is_inf())
        return;
    auto& a = reinterpret_cast<bucket_fields_t&>(acc);
    const auto& b = reinterpret_cast<const bucket_fields_t&>(p);
    if (acc.is_inf()) {
        a = b;
        return;
    }
    const field_t U1 = a.X * b.ZZ;
    const field_t S1 = a.Y * b.ZZZ;
    field_t P = b.X * a.ZZ;
    P -= U1;
    field_t R = b.Y * a.ZZZ;
    R -= S1;
    if (P.is_zero()) {  // x1 = x2: a doubling or infinity
        acc.add(p);
        return;
    }
    const field_t PP = P ^ 2;
    const field_t PPP = P * PP;
    a.ZZ *= PP;
    a.ZZ *= b.ZZ;
    a.ZZZ *= PPP;
    a.ZZZ *= b.ZZZ;
    field_t Q = U1 * PP;
    field_t X3 = R ^ 2;
    X3 -= PPP;
    X3 -= Q;
    X3 -= Q;
    Q -= X3;
    const field_t minus_s1 = field_t::cneg(S1, true);
    a.Y = field_t::dot_product(R, Q, minus_s1, PPP);
    a.X = X3;
#else
    acc.add(p);
#endif
}

}  // namespace cuzk
