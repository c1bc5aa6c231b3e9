//! A reference Groth16 prover in plain Rust, for tests only: the H
//! polynomial through a textbook radix-2 FFT and blst's multi-exponentiation,
//! assembled with the same formula as the native prover.

use bellperson_lite::{Parameters, Proof, ProvingAssignment};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};

/// A primitive `n`-th root of unity.
fn omega(n: usize) -> Scalar {
    Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - n.trailing_zeros())])
}

/// In-place evaluation of the coefficients in `a` at the powers of `w`
/// (iterative Cooley-Tukey, bit-reversed input order).
fn fft(a: &mut [Scalar], w: Scalar) {
    let n = a.len();
    let log_n = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - log_n);
        if log_n > 0 && i < j {
            a.swap(i, j);
        }
    }
    let mut m = 1;
    while m < n {
        let wm = w.pow_vartime([(n / (2 * m)) as u64]);
        for k in (0..n).step_by(2 * m) {
            let mut t = Scalar::ONE;
            for j in 0..m {
                let u = a[k + j];
                let v = a[k + j + m] * t;
                a[k + j] = u + v;
                a[k + j + m] = u - v;
                t *= wm;
            }
        }
        m *= 2;
    }
}

fn ifft(a: &mut [Scalar], w: Scalar) {
    fft(a, w.invert().unwrap());
    let n_inv = Scalar::from(a.len() as u64).invert().unwrap();
    a.iter_mut().for_each(|x| *x *= n_inv);
}

fn scale_by_powers(a: &mut [Scalar], g: Scalar) {
    let mut p = Scalar::ONE;
    for x in a.iter_mut() {
        *x *= p;
        p *= g;
    }
}

/// The coefficients of `(A(X) B(X) - C(X)) / (X^n - 1)`, `n - 1` of them
/// (the last one of the `n` computed must be zero for a satisfied circuit).
pub fn h_coefficients(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let n = a.len().next_power_of_two();
    let w = omega(n);
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let mut polys = [a, b, c].map(|v| {
        let mut p = v.to_vec();
        p.resize(n, Scalar::ZERO);
        ifft(&mut p, w);
        scale_by_powers(&mut p, g);
        fft(&mut p, w);
        p
    });
    let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
    let [pa, pb, pc] = &mut polys;
    let mut h: Vec<Scalar> = (0..n).map(|i| (pa[i] * pb[i] - pc[i]) * z_inv).collect();
    ifft(&mut h, w);
    scale_by_powers(&mut h, g.invert().unwrap());
    assert!(bool::from(h[n - 1].is_zero()), "circuit not satisfied");
    h.truncate(n - 1);
    h
}

fn msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    assert_eq!(points.len(), scalars.len());
    if points.is_empty() {
        return G1Projective::identity();
    }
    let points: Vec<G1Projective> = points.iter().map(|p| p.to_curve()).collect();
    G1Projective::multi_exp(&points, scalars)
}

fn msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    assert_eq!(points.len(), scalars.len());
    if points.is_empty() {
        return G2Projective::identity();
    }
    let points: Vec<G2Projective> = points.iter().map(|p| p.to_curve()).collect();
    G2Projective::multi_exp(&points, scalars)
}

/// The values of the variables whose bit is set.
fn dense(values: &[Scalar], density: &supraseal_c2::Density) -> Vec<Scalar> {
    values
        .iter()
        .enumerate()
        .filter(|(i, _)| density.get(*i))
        .map(|(_, v)| *v)
        .collect()
}

/// Proves `prover` with blinding `r`, `s`:
/// A = α + ΣA + rδ; B = β + ΣB + sδ;
/// C = sα + rβ + rsδ + sΣA + rΣB₁ + H + L.
pub fn prove(params: &Parameters, prover: &ProvingAssignment, r: Scalar, s: Scalar) -> Proof {
    assert!(prover.is_sealed());
    let asg = prover.as_assignment();
    let vk = &params.vk;
    let h = msm_g1(&params.h, &h_coefficients(asg.a, asg.b, asg.c));
    let l = msm_g1(&params.l, asg.aux);
    let a_scalars: Vec<Scalar> = asg
        .input
        .iter()
        .copied()
        .chain(dense(asg.aux, asg.a_aux_density))
        .collect();
    let mut b_scalars = dense(asg.input, asg.b_input_density);
    b_scalars.extend(dense(asg.aux, asg.b_aux_density));
    let sum_a = msm_g1(&params.a, &a_scalars);
    let sum_b1 = msm_g1(&params.b_g1, &b_scalars);
    let sum_b2 = msm_g2(&params.b_g2, &b_scalars);

    let a = vk.alpha_g1.to_curve() + sum_a + vk.delta_g1 * r;
    let b = vk.beta_g2.to_curve() + sum_b2 + vk.delta_g2 * s;
    let c =
        vk.alpha_g1 * s + vk.beta_g1 * r + vk.delta_g1 * (r * s) + sum_a * s + sum_b1 * r + h + l;
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}
