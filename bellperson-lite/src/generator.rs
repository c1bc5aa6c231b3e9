//! Parameter generation (a trusted setup with fresh randomness, for tests and
//! benchmarks): QAP evaluation at a random point and fixed-base
//! multiplication of the resulting scalars.

use bellpepper_core::SynthesisError;

use crate::AnyCircuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{BatchInvert, Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;
use std::sync::Arc;

use crate::cs::domain_size;
use crate::cs::keypair::{Column, Columns, KeypairAssembly};
use crate::fixed_base::{window_for, FixedBase};
use crate::params::{Parameters, VerifyingKey};

/// Scalars per parallel chunk of the power and Lagrange computations.
const CHUNK: usize = 1 << 12;

/// The secret randomness of one setup.
struct Toxic {
    alpha: Scalar,
    beta: Scalar,
    gamma: Scalar,
    gamma_inv: Scalar,
    delta: Scalar,
    delta_inv: Scalar,
    tau: Scalar,
}

/// A random non-zero scalar and its inverse.
fn invertible(rng: &mut impl RngCore) -> (Scalar, Scalar) {
    loop {
        let x = Scalar::random(&mut *rng);
        if let Some(inv) = Option::<Scalar>::from(x.invert()) {
            return (x, inv);
        }
    }
}

impl Toxic {
    /// Fresh randomness; `tau` is outside the domain of size `n`.
    fn random(rng: &mut impl RngCore, n: usize) -> Self {
        let (alpha, _) = invertible(rng);
        let (beta, _) = invertible(rng);
        let (gamma, gamma_inv) = invertible(rng);
        let (delta, delta_inv) = invertible(rng);
        let tau = loop {
            let t = Scalar::random(&mut *rng);
            if t.pow_vartime([n as u64]) != Scalar::ONE {
                break t;
            }
        };
        Toxic {
            alpha,
            beta,
            gamma_inv,
            gamma,
            delta,
            delta_inv,
            tau,
        }
    }
}

/// A primitive `n`-th root of unity (`n` a power of two up to 2^32).
pub(crate) fn root_of_unity(n: usize) -> Scalar {
    let log_n = n.trailing_zeros();
    Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log_n)])
}

/// `L_j(tau)` for `j < m` over the domain of size `n`:
/// `w^j (tau^n - 1) / (n (tau - w^j))`, with batch inversion.
fn lagrange_at(tau: Scalar, n: usize, m: usize) -> Vec<Scalar> {
    let omega = root_of_unity(n);
    let n_inv = Scalar::TWO_INV.pow_vartime([u64::from(n.trailing_zeros())]);
    let z_over_n = (tau.pow_vartime([n as u64]) - Scalar::ONE) * n_inv;
    let mut out = vec![Scalar::ZERO; m];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut w = omega.pow_vartime([(k * CHUNK) as u64]);
            let mut powers = Vec::with_capacity(chunk.len());
            for slot in chunk.iter_mut() {
                *slot = tau - w;
                powers.push(w);
                w *= omega;
            }
            chunk.iter_mut().batch_invert();
            for (slot, w) in chunk.iter_mut().zip(powers) {
                *slot *= w * z_over_n;
            }
        });
    out
}

/// `tau^i * (tau^n - 1) / delta` for `i < n - 1`.
fn h_scalars(t: &Toxic, n: usize) -> Vec<Scalar> {
    let scale = (t.tau.pow_vartime([n as u64]) - Scalar::ONE) * t.delta_inv;
    let mut out = vec![Scalar::ZERO; n - 1];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut x = t.tau.pow_vartime([(k * CHUNK) as u64]) * scale;
            for slot in chunk.iter_mut() {
                *slot = x;
                x *= t.tau;
            }
        });
    out
}

/// The QAP polynomials of a set of variables, evaluated at tau.
struct Qap {
    u: Vec<Scalar>,
    v: Vec<Scalar>,
    w: Vec<Scalar>,
}

fn evaluate(cols: &Columns, lagrange: &[Scalar]) -> Qap {
    let dot = |col: &Column| {
        col.iter().fold(Scalar::ZERO, |acc, (coeff, row)| {
            acc + lagrange[*row] * coeff
        })
    };
    Qap {
        u: cols.a.par_iter().map(dot).collect(),
        v: cols.b.par_iter().map(dot).collect(),
        w: cols.c.par_iter().map(dot).collect(),
    }
}

/// `(beta u_i + alpha v_i + w_i) * scale` per variable.
fn combine(q: &Qap, t: &Toxic, scale: Scalar) -> Vec<Scalar> {
    (&q.u, &q.v, &q.w)
        .into_par_iter()
        .map(|(u, v, w)| (t.beta * u + t.alpha * v + w) * scale)
        .collect()
}

/// Creates parameters for `circuit` from fresh randomness drawn from `rng`.
///
/// The circuit's shape is synthesized (allocation closures are not called),
/// the input constraints are appended as the prover does, and every query
/// is computed with multi-threaded fixed-base multiplication. Points at
/// infinity are dropped from `a`, `b_g1` and `b_g2`, as in bellperson (a
/// variable's point is there exactly when it has density).
///
/// Fails with `SynthesisError::UnconstrainedVariable` when an aux variable
/// appears in no constraint (its L point would be the identity), with
/// `PolynomialDegreeTooLarge` for a domain of 2^32 or more, or with the
/// circuit's own error.
pub fn generate_random_parameters<C, R>(
    circuit: C,
    rng: &mut R,
) -> Result<Parameters, SynthesisError>
where
    C: AnyCircuit,
    R: RngCore,
{
    let cs = KeypairAssembly::synthesize(circuit)?;
    let n = domain_size(cs.num_constraints)?;
    let t = Toxic::random(rng, n);
    let lagrange = lagrange_at(t.tau, n, cs.num_constraints);
    let (inputs, aux) = rayon::join(
        || evaluate(&cs.inputs, &lagrange),
        || evaluate(&cs.aux, &lagrange),
    );
    let (g1, (g2_vk, b_g2)) = rayon::join(
        || g1_queries(&t, n, &inputs, &aux),
        || g2_queries(&t, &inputs, &aux),
    );
    if g1.l.iter().any(|p| bool::from(p.is_identity())) {
        return Err(SynthesisError::UnconstrainedVariable);
    }
    let [alpha_g1, beta_g1, delta_g1] = g1.vk;
    let [beta_g2, gamma_g2, delta_g2] = g2_vk;
    Ok(Parameters {
        vk: VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic: g1.ic,
        },
        h: Arc::new(g1.h),
        l: Arc::new(g1.l),
        a: Arc::new(g1.a),
        b_g1: Arc::new(g1.b_g1),
        b_g2: Arc::new(b_g2),
    })
}

/// The G1 points of a setup.
struct G1Queries {
    vk: [G1Affine; 3],
    ic: Vec<G1Affine>,
    h: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
}

/// `[alpha, beta, delta]`, ic, h, l, a and b_g1 (identities dropped from
/// the last two), all from one table.
fn g1_queries(t: &Toxic, n: usize, inputs: &Qap, aux: &Qap) -> G1Queries {
    let ic = combine(inputs, t, t.gamma_inv);
    let h = h_scalars(t, n);
    let l = combine(aux, t, t.delta_inv);
    let a: Vec<Scalar> = inputs.u.iter().chain(&aux.u).copied().collect();
    let b: Vec<Scalar> = inputs.v.iter().chain(&aux.v).copied().collect();
    let count = ic.len() + h.len() + l.len() + a.len() + b.len();
    let table = FixedBase::new(G1Projective::generator(), window_for(count));
    G1Queries {
        vk: [t.alpha, t.beta, t.delta].map(|k| table.mul(&k).to_affine()),
        ic: table.mul_many(&ic),
        h: table.mul_many(&h),
        l: table.mul_many(&l),
        a: without_identity(table.mul_many(&a)),
        b_g1: without_identity(table.mul_many(&b)),
    }
}

/// `[beta, gamma, delta]` and b_g2 (identities dropped), from one table.
fn g2_queries(t: &Toxic, inputs: &Qap, aux: &Qap) -> ([G2Affine; 3], Vec<G2Affine>) {
    let b: Vec<Scalar> = inputs.v.iter().chain(&aux.v).copied().collect();
    let table = FixedBase::new(G2Projective::generator(), window_for(b.len()));
    let vk = [t.beta, t.gamma, t.delta].map(|k| table.mul(&k).to_affine());
    (vk, without_identity(table.mul_many(&b)))
}

fn without_identity<P: PrimeCurveAffine>(mut points: Vec<P>) -> Vec<P> {
    points.retain(|p| !bool::from(p.is_identity()));
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lagrange_basis_interpolates() {
        let tau = Scalar::from(123_456_789u64);
        let n = 16;
        let l = lagrange_at(tau, n, n);
        // sum_j L_j(tau) = 1 and sum_j w^j L_j(tau) = tau.
        assert_eq!(l.iter().fold(Scalar::ZERO, |a, x| a + x), Scalar::ONE);
        let w = root_of_unity(n);
        let mut p = Scalar::ONE;
        let mut acc = Scalar::ZERO;
        for x in &l {
            acc += p * x;
            p *= w;
        }
        assert_eq!(acc, tau);
        assert_eq!(w.pow_vartime([n as u64]), Scalar::ONE);
        assert_ne!(w.pow_vartime([n as u64 / 2]), Scalar::ONE);
    }
}
