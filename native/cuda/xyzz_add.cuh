// cuzk's mixed addition of an affine point into an XYZZ bucket over Fp (the
// G1 accumulations: the table MSM's buckets, the share sum's ones). Include
// after sppark's ec/xyzz_t.hpp.
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

}  // namespace cuzk
