//! Parameter generation (a trusted setup with fresh randomness, for tests and
//! benchmarks): QAP evaluation at a random point and fixed-base
//! multiplication of the resulting scalars.

use bellpepper_core::SynthesisError;

use crate::AnyCircuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{BatchInvert, Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::Group;
use rand_core::RngCore;
use rayon::prelude::*;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;
use supraseal_c2::{kernels, GpuLock};

use crate::cs::domain_size;
use crate::cs::keypair::{Column, Columns, KeypairAssembly};
use crate::error::SetupError;
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
    generate(circuit, rng, |t, n, inputs, aux| {
        Ok(on_cpu(t, n, inputs, aux))
    })
}

/// [`generate_random_parameters`] with the fixed-base multiplications on
/// `lock`'s backend (its CUDA device, or the CPU), holding the lock for
/// them; `None` uses the multi-threaded CPU tables.
///
/// The randomness, the scalars and their order are the same either way, so
/// with the same `rng` the parameters are byte-identical.
pub fn generate_random_parameters_on<C, R>(
    circuit: C,
    rng: &mut R,
    lock: Option<&GpuLock>,
) -> Result<Parameters, SetupError>
where
    C: AnyCircuit,
    R: RngCore,
{
    match lock {
        None => generate(circuit, rng, |t, n, inputs, aux| {
            Ok(on_cpu(t, n, inputs, aux))
        }),
        Some(lock) => generate(circuit, rng, |t, n, inputs, aux| {
            on_lock(lock, t, n, inputs, aux)
        }),
    }
}

/// The points of a setup, both groups.
type Queries = (G1Queries, G2Queries);

/// A setup with its fixed-base multiplications done by `multiply` (given
/// the secrets, the domain size and the QAP evaluations of the inputs and
/// the aux variables).
fn generate<C, R, E>(
    circuit: C,
    rng: &mut R,
    multiply: impl FnOnce(&Toxic, usize, &Qap, &Qap) -> Result<Queries, E>,
) -> Result<Parameters, E>
where
    C: AnyCircuit,
    R: RngCore,
    E: From<SynthesisError>,
{
    let started = Instant::now();
    let cs = KeypairAssembly::synthesize(circuit)?;
    let synthesized = Instant::now();
    let n = domain_size(cs.num_constraints)?;
    let t = Toxic::random(rng, n);
    let lagrange = lagrange_at(t.tau, n, cs.num_constraints);
    let (inputs, aux) = rayon::join(
        || evaluate(&cs.inputs, &lagrange),
        || evaluate(&cs.aux, &lagrange),
    );
    let evaluated = Instant::now();
    let (g1, g2) = multiply(&t, n, &inputs, &aux)?;
    let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
    tracing::debug!(
        constraints = cs.num_constraints,
        domain = n,
        synthesis_ms = ms(started, synthesized),
        qap_ms = ms(synthesized, evaluated),
        multiply_ms = ms(evaluated, Instant::now()),
        "parameters generated"
    );
    if g1.l.iter().any(|p| bool::from(p.is_identity())) {
        return Err(SynthesisError::UnconstrainedVariable.into());
    }
    let [alpha_g1, beta_g1, delta_g1] = g1.vk;
    let [beta_g2, gamma_g2, delta_g2] = g2.vk;
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
        b_g2: Arc::new(g2.b),
    })
}

/// Both groups' queries on `lock`'s backend, one after the other, the lock
/// held throughout.
fn on_lock(
    lock: &GpuLock,
    t: &Toxic,
    n: usize,
    inputs: &Qap,
    aux: &Qap,
) -> Result<Queries, SetupError> {
    let held = lock.lock();
    let g1 = g1_queries(&g1_scalars(t, n, inputs, aux), |k| {
        kernels::fixed_base_g1_on(&held, &G1Affine::generator(), k)
    })?;
    let g2 = g2_queries(&g2_scalars(t, inputs, aux), |k| {
        kernels::fixed_base_g2_on(&held, &G2Affine::generator(), k)
    })?;
    Ok((g1, g2))
}

/// Both groups' queries at once with the CPU's fixed-base tables.
fn on_cpu(t: &Toxic, n: usize, inputs: &Qap, aux: &Qap) -> Queries {
    rayon::join(
        || {
            let scalars = g1_scalars(t, n, inputs, aux);
            let table = FixedBase::new(G1Projective::generator(), window_for(scalars.count()));
            infallible(g1_queries(&scalars, |k| Ok(table.mul_many(k))))
        },
        || {
            let scalars = g2_scalars(t, inputs, aux);
            let table = FixedBase::new(G2Projective::generator(), window_for(scalars.b.len()));
            infallible(g2_queries(&scalars, |k| Ok(table.mul_many(k))))
        },
    )
}

fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// The scalars of the G1 points, by section.
struct G1Scalars {
    vk: [Scalar; 3],
    ic: Vec<Scalar>,
    h: Vec<Scalar>,
    l: Vec<Scalar>,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
}

impl G1Scalars {
    fn count(&self) -> usize {
        self.vk.len() + self.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b.len()
    }
}

/// `[alpha, beta, delta]`, ic, h, l, a and b (in G1).
fn g1_scalars(t: &Toxic, n: usize, inputs: &Qap, aux: &Qap) -> G1Scalars {
    G1Scalars {
        vk: [t.alpha, t.beta, t.delta],
        ic: combine(inputs, t, t.gamma_inv),
        h: h_scalars(t, n),
        l: combine(aux, t, t.delta_inv),
        a: inputs.u.iter().chain(&aux.u).copied().collect(),
        b: inputs.v.iter().chain(&aux.v).copied().collect(),
    }
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

/// Every G1 section through `mul` (`k * G1` for each `k`, affine);
/// identities dropped from a and b_g1.
fn g1_queries<E>(
    s: &G1Scalars,
    mul: impl Fn(&[Scalar]) -> Result<Vec<G1Affine>, E>,
) -> Result<G1Queries, E> {
    let vk = mul(&s.vk)?;
    Ok(G1Queries {
        vk: [vk[0], vk[1], vk[2]],
        ic: mul(&s.ic)?,
        h: mul(&s.h)?,
        l: mul(&s.l)?,
        a: without_identity(mul(&s.a)?),
        b_g1: without_identity(mul(&s.b)?),
    })
}

/// The scalars of the G2 points: `[beta, gamma, delta]` and b.
struct G2Scalars {
    vk: [Scalar; 3],
    b: Vec<Scalar>,
}

fn g2_scalars(t: &Toxic, inputs: &Qap, aux: &Qap) -> G2Scalars {
    G2Scalars {
        vk: [t.beta, t.gamma, t.delta],
        b: inputs.v.iter().chain(&aux.v).copied().collect(),
    }
}

/// The G2 points of a setup.
struct G2Queries {
    vk: [G2Affine; 3],
    b: Vec<G2Affine>,
}

/// Both G2 sections through `mul`; identities dropped from b.
fn g2_queries<E>(
    s: &G2Scalars,
    mul: impl Fn(&[Scalar]) -> Result<Vec<G2Affine>, E>,
) -> Result<G2Queries, E> {
    let vk = mul(&s.vk)?;
    Ok(G2Queries {
        vk: [vk[0], vk[1], vk[2]],
        b: without_identity(mul(&s.b)?),
    })
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
