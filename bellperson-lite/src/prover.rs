//! Proving through the native prover (`supraseal_c2::prove`).

use crate::AnyCircuit;
use blstrs::Scalar;
use ff::Field;
use rand_core::RngCore;
use supraseal_c2::{Assignment, GpuLock, PhaseTimings, Srs};

use crate::cs::proving::synthesize_circuits_batch;
use crate::error::ProverError;
use crate::{Proof, ProvingAssignment};

/// Proves a batch of synthesized circuits that share `srs`, circuit `i`
/// blinded with `r[i]`, `s[i]`. The lock is held only in the native kernel
/// region.
///
/// Fails before calling the native prover when an assignment is not sealed
/// or the blinding values do not match the assignments one for one. An
/// empty batch proves nothing and takes no lock.
pub fn prove_from_assignments(
    provers: &[ProvingAssignment],
    srs: &Srs,
    lock: &GpuLock,
    r: &[Scalar],
    s: &[Scalar],
) -> Result<(Vec<Proof>, PhaseTimings), ProverError> {
    if r.len() != provers.len() || s.len() != provers.len() {
        let (provers, r, s) = (provers.len(), r.len(), s.len());
        return Err(ProverError::Blinding { provers, r, s });
    }
    if let Some(index) = provers.iter().position(|p| !p.is_sealed()) {
        return Err(ProverError::Unsealed { index });
    }
    if provers.is_empty() {
        return Ok((Vec::new(), PhaseTimings::default()));
    }
    let assignments: Vec<Assignment<'_>> = provers.iter().map(|p| p.as_assignment()).collect();
    let out = supraseal_c2::prove(lock, srs, &assignments, r, s)?;
    let proofs = out.proofs.into_iter().map(Proof::from).collect();
    Ok((proofs, out.timings))
}

/// Synthesizes `circuits` in parallel and proves them with fresh random
/// blinding drawn from `rng`.
pub fn create_random_proof_batch<C, R>(
    circuits: Vec<C>,
    srs: &Srs,
    lock: &GpuLock,
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings), ProverError>
where
    C: AnyCircuit + Send,
    R: RngCore,
{
    let provers = synthesize_circuits_batch(circuits)?;
    let r: Vec<Scalar> = provers.iter().map(|_| Scalar::random(&mut *rng)).collect();
    let s: Vec<Scalar> = provers.iter().map(|_| Scalar::random(&mut *rng)).collect();
    prove_from_assignments(&provers, srs, lock, &r, &s)
}
