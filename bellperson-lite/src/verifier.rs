//! Verification: single proofs, and batches by random linear combination
//! with one multi-Miller loop.

use std::fmt;

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::error::VerificationError;
use crate::fixed_base::BatchAffine;
use crate::{Proof, VerifyingKey};

/// Miller loops per parallel task in batch verification.
const LOOP_CHUNK: usize = 16;
/// Inputs from which the input commitment uses a multi-exponentiation.
const MSM_FROM: usize = 8;

/// A verifying key prepared for pairings.
#[derive(Clone)]
pub struct PreparedVerifyingKey {
    alpha_g1_beta_g2: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl fmt::Debug for PreparedVerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedVerifyingKey")
            .field("public_inputs", &self.num_public_inputs())
            .finish_non_exhaustive()
    }
}

impl PreparedVerifyingKey {
    /// Public inputs a proof takes (`ONE` not counted).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }
}

/// Prepares `vk`: `e(alpha, beta)`, and `-gamma`, `-delta` ready for the
/// Miller loop.
pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    PreparedVerifyingKey {
        alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
        neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
        neg_delta_g2: G2Prepared::from(-vk.delta_g2),
        ic: vk.ic.clone(),
    }
}

/// `sum(scalars[i] * points[i])`: a loop for few points, blst's Pippenger
/// for more.
fn msm(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    if scalars.len() < MSM_FROM {
        return points
            .iter()
            .zip(scalars)
            .fold(G1Projective::identity(), |acc, (p, x)| acc + p * x);
    }
    let points: Vec<G1Projective> = points.iter().map(|p| p.to_curve()).collect();
    G1Projective::multi_exp(&points, scalars)
}

/// Checks that `got` inputs fit the key, which must hold `ONE`'s point.
fn check_count(pvk: &PreparedVerifyingKey, got: usize) -> Result<(), VerificationError> {
    if pvk.ic.is_empty() {
        return Err(VerificationError::EmptyIc);
    }
    let expected = pvk.num_public_inputs();
    if got != expected {
        return Err(VerificationError::InputCount { expected, got });
    }
    Ok(())
}

/// Verifies `proof` for `public_inputs` (without `ONE`).
///
/// `Ok(false)` when the proof does not verify; an error only when the
/// number of inputs does not fit the key.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool, VerificationError> {
    check_count(pvk, public_inputs.len())?;
    let acc = (pvk.ic[0] + msm(&pvk.ic[1..], public_inputs)).to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}

/// Verifies many proofs at once: with random `z_i`, checks
/// `prod e(z_i A_i, B_i) = e(alpha, beta)^(sum z_i) e(sum z_i IC_i, gamma)
/// e(sum z_i C_i, delta)` with one multi-Miller loop (split over threads).
///
/// `Ok(true)` for an empty batch. `Ok(false)` when some proof does not
/// verify (with overwhelming probability); find it with [`verify_proof`].
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    rng: &mut R,
    proofs: &[&Proof],
    public_inputs: &[Vec<Scalar>],
) -> Result<bool, VerificationError> {
    check_batch(pvk, proofs.len(), public_inputs)?;
    if proofs.is_empty() {
        return Ok(true);
    }
    let z: Vec<Scalar> = proofs.iter().map(|_| Scalar::random(&mut *rng)).collect();
    let z_sum = z.iter().fold(Scalar::ZERO, |acc, x| acc + x);
    // sum_i z_i IC(x_i) = (sum z_i) ic[0] + sum_j (sum_i z_i x_ij) ic[j + 1]
    let mut combined = vec![Scalar::ZERO; pvk.num_public_inputs()];
    for (zi, inputs) in z.iter().zip(public_inputs) {
        combined
            .iter_mut()
            .zip(inputs)
            .for_each(|(c, x)| *c += *zi * x);
    }
    let acc = (pvk.ic[0] * z_sum + msm(&pvk.ic[1..], &combined)).to_affine();
    let c_sum: G1Projective = proofs.iter().zip(&z).map(|(p, zi)| p.c * zi).sum();
    let c_sum = c_sum.to_affine();
    let za: Vec<G1Projective> = proofs.par_iter().zip(&z).map(|(p, zi)| p.a * zi).collect();
    let za = G1Projective::batch_to_affine(&za);
    let prepared: Vec<G2Prepared> = proofs.par_iter().map(|p| G2Prepared::from(p.b)).collect();
    let ml = za
        .par_chunks(LOOP_CHUNK)
        .zip(prepared.par_chunks(LOOP_CHUNK))
        .map(|(a, b)| {
            let terms: Vec<_> = a.iter().zip(b).collect();
            Bls12::multi_miller_loop(&terms)
        })
        .reduce(blstrs::MillerLoopResult::default, |x, y| x + y);
    let ml =
        ml + Bls12::multi_miller_loop(&[(&acc, &pvk.neg_gamma_g2), (&c_sum, &pvk.neg_delta_g2)]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2 * z_sum)
}

fn check_batch(
    pvk: &PreparedVerifyingKey,
    proofs: usize,
    public_inputs: &[Vec<Scalar>],
) -> Result<(), VerificationError> {
    if proofs != public_inputs.len() {
        let inputs = public_inputs.len();
        return Err(VerificationError::BatchLength { proofs, inputs });
    }
    for (index, inputs) in public_inputs.iter().enumerate() {
        check_count(pvk, inputs.len()).map_err(|e| match e {
            VerificationError::InputCount { expected, got } => VerificationError::BatchInputCount {
                index,
                expected,
                got,
            },
            other => other,
        })?;
    }
    Ok(())
}
