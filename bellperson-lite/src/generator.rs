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
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use supraseal_c2::{kernels, GpuLock, GpuLockGuard};

use crate::compiled::CompiledShape;
use crate::cs::domain_size;
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

/// `(beta u_i + alpha v_i + w_i) * scale` per variable.
fn combine(q: &Qap, t: &Toxic, scale: Scalar) -> Vec<Scalar> {
    (&q.u, &q.v, &q.w)
        .into_par_iter()
        .map(|(u, v, w)| (t.beta * u + t.alpha * v + w) * scale)
        .collect()
}

/// Creates parameters for `circuit` from fresh randomness drawn from `rng`.
///
/// The circuit's shape is recorded (allocation closures are not called),
/// the input constraints are appended as the prover does, and every query
/// is computed with multi-threaded fixed-base multiplication. Points at
/// infinity are left out of `a`, `b_g1` and `b_g2`, as in bellperson (a
/// variable's point is there exactly when it has density): only the
/// non-zero scalars are multiplied.
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
    let shape = record(circuit)?;
    generate(&shape, rng, &CpuTables::for_shape(&shape)?)
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
    generate_parameters_for_shape(&record(circuit)?, rng, lock)
}

/// [`generate_random_parameters_on`] for a shape already compiled (the
/// compiled path of proving needs it too, so a caller that proves after a
/// setup records the circuit once).
pub fn generate_parameters_for_shape<R: RngCore>(
    shape: &CompiledShape,
    rng: &mut R,
    lock: Option<&GpuLock>,
) -> Result<Parameters, SetupError> {
    match lock {
        None => Ok(generate(shape, rng, &CpuTables::for_shape(shape)?)?),
        Some(lock) => generate(shape, rng, &OnLock::new(lock)),
    }
}

/// The circuit's shape, timed (`debug`).
fn record<C: AnyCircuit>(circuit: C) -> Result<CompiledShape, SynthesisError> {
    let started = Instant::now();
    let shape = CompiledShape::record(circuit)?;
    tracing::debug!(
        constraints = shape.num_constraints(),
        synthesis_ms = started.elapsed().as_secs_f64() * 1e3,
        "shape recorded for the setup"
    );
    Ok(shape)
}

/// The fixed-base multiplications of a setup: `k * G` for every scalar `k`,
/// affine, with `G` the group's generator.
trait Multiply {
    type Error: From<SynthesisError>;
    fn g1(&self, scalars: &[Scalar]) -> Result<Vec<G1Affine>, Self::Error>;
    fn g2(&self, scalars: &[Scalar]) -> Result<Vec<G2Affine>, Self::Error>;
}

/// The multi-threaded CPU tables of both generators.
struct CpuTables {
    g1: FixedBase<G1Projective>,
    g2: FixedBase<G2Projective>,
}

impl CpuTables {
    /// Tables with windows for the number of points of `shape`'s setup.
    fn for_shape(shape: &CompiledShape) -> Result<Self, SynthesisError> {
        let n = domain_size(shape.num_constraints() + shape.num_inputs())?;
        let vars = shape.num_inputs() + shape.num_aux();
        // vk, ic, h, l, a, b in G1; b in G2.
        let g1_points = 3 + shape.num_inputs() + (n - 1) + shape.num_aux() + 2 * vars;
        let (g1, g2) = rayon::join(
            || FixedBase::new(G1Projective::generator(), window_for(g1_points)),
            || FixedBase::new(G2Projective::generator(), window_for(vars)),
        );
        Ok(CpuTables { g1, g2 })
    }
}

impl Multiply for CpuTables {
    type Error = SynthesisError;
    fn g1(&self, scalars: &[Scalar]) -> Result<Vec<G1Affine>, SynthesisError> {
        Ok(self.g1.mul_many(scalars))
    }
    fn g2(&self, scalars: &[Scalar]) -> Result<Vec<G2Affine>, SynthesisError> {
        Ok(self.g2.mul_many(scalars))
    }
}

/// The lock's backend: the lock is taken at the first multiplication (not
/// over the QAP's evaluation) and held until the setup ends.
struct OnLock<'a> {
    lock: &'a GpuLock,
    held: OnceLock<GpuLockGuard<'a>>,
}

impl<'a> OnLock<'a> {
    fn new(lock: &'a GpuLock) -> Self {
        OnLock {
            lock,
            held: OnceLock::new(),
        }
    }

    fn held(&self) -> &GpuLockGuard<'a> {
        self.held.get_or_init(|| self.lock.lock())
    }
}

impl Multiply for OnLock<'_> {
    type Error = SetupError;
    fn g1(&self, scalars: &[Scalar]) -> Result<Vec<G1Affine>, SetupError> {
        Ok(kernels::fixed_base_g1_on(
            self.held(),
            &G1Affine::generator(),
            scalars,
        )?)
    }
    fn g2(&self, scalars: &[Scalar]) -> Result<Vec<G2Affine>, SetupError> {
        Ok(kernels::fixed_base_g2_on(
            self.held(),
            &G2Affine::generator(),
            scalars,
        )?)
    }
}

/// A setup of `shape` with its fixed-base multiplications done by `mul`.
fn generate<R, M>(shape: &CompiledShape, rng: &mut R, mul: &M) -> Result<Parameters, M::Error>
where
    R: RngCore,
    M: Multiply,
{
    let started = Instant::now();
    let m = shape.num_constraints() + shape.num_inputs();
    let n = domain_size(m)?;
    let t = Toxic::random(rng, n);
    let lagrange = lagrange_at(t.tau, n, m);
    let [(iu, au), (iv, av), (iw, aw)] = shape.column_sums(&lagrange);
    drop(lagrange);
    let inputs = Qap {
        u: iu,
        v: iv,
        w: iw,
    };
    let aux = Qap {
        u: au,
        v: av,
        w: aw,
    };
    let evaluated = Instant::now();
    let q = queries(mul, &t, n, inputs, aux)?;
    let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
    tracing::debug!(
        constraints = m,
        domain = n,
        qap_ms = ms(started, evaluated),
        multiply_ms = ms(evaluated, Instant::now()),
        "parameters generated"
    );
    if q.l.iter().any(|p| bool::from(p.is_identity())) {
        return Err(SynthesisError::UnconstrainedVariable.into());
    }
    let [alpha_g1, beta_g1, delta_g1] = q.vk_g1;
    let [beta_g2, gamma_g2, delta_g2] = q.vk_g2;
    Ok(Parameters {
        vk: VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic: q.ic,
        },
        h: Arc::new(q.h),
        l: Arc::new(q.l),
        a: Arc::new(q.a),
        b_g1: Arc::new(q.b_g1),
        b_g2: Arc::new(q.b_g2),
    })
}

/// The points of a setup.
struct Queries {
    vk_g1: [G1Affine; 3],
    ic: Vec<G1Affine>,
    h: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    vk_g2: [G2Affine; 3],
    b_g2: Vec<G2Affine>,
}

/// Every section through `mul`, in a fixed order: in G1 `[alpha, beta,
/// delta]`, ic, h, l, a, b; in G2 `[beta, gamma, delta]`, b. Identities are
/// left out of a and both b. Each section's scalars are made just before
/// its multiplication and dropped after it, and the QAP's vectors as soon
/// as no section needs them, so that the host holds little more than the
/// points at the end (at 2^27 the points alone are about 70 GB).
fn queries<M: Multiply>(
    mul: &M,
    t: &Toxic,
    n: usize,
    inputs: Qap,
    aux: Qap,
) -> Result<Queries, M::Error> {
    let vk_g1 = mul.g1(&[t.alpha, t.beta, t.delta])?;
    let ic = mul.g1(&combine(&inputs, t, t.gamma_inv))?;
    let h = mul.g1(&h_scalars(t, n))?;
    let l = mul.g1(&combine(&aux, t, t.delta_inv))?;
    drop((inputs.w, aux.w));
    let a = mul.g1(&nonzero(concat(inputs.u, aux.u)))?;
    let b = nonzero(concat(inputs.v, aux.v));
    let b_g1 = mul.g1(&b)?;
    let vk_g2 = mul.g2(&[t.beta, t.gamma, t.delta])?;
    let b_g2 = mul.g2(&b)?;
    Ok(Queries {
        vk_g1: [vk_g1[0], vk_g1[1], vk_g1[2]],
        ic,
        h,
        l,
        a,
        b_g1,
        vk_g2: [vk_g2[0], vk_g2[1], vk_g2[2]],
        b_g2,
    })
}

/// The inputs' values followed by the aux variables', both consumed.
fn concat(mut inputs: Vec<Scalar>, aux: Vec<Scalar>) -> Vec<Scalar> {
    inputs.reserve_exact(aux.len());
    inputs.extend_from_slice(&aux);
    inputs
}

/// The non-zero scalars of `scalars`, in order. `k * G` is the identity
/// exactly when `k` is zero (G generates a group of prime order r, and
/// every scalar is below r), so multiplying only these gives the section
/// without its identities, with no work and no memory spent on them (at
/// 2^27 they are more than half of a and b: about 28 GB of points).
fn nonzero(mut scalars: Vec<Scalar>) -> Vec<Scalar> {
    scalars.retain(|k| !bool::from(k.is_zero()));
    scalars.shrink_to_fit();
    scalars
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
