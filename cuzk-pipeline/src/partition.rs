//! One partition: synthesize it, prove it under a `&GpuLock`.

use std::time::Instant;

use bellperson_lite::{Parameters, Proof, ProvingAssignment};
use blstrs::Scalar;
use ff::Field;
use rand::{RngCore, SeedableRng};
use supraseal_c2::{monotonic_ns, GpuLock, PhaseTimings, Srs};

use crate::{PipelineError, ShapeCache, Workload};

/// A synthesized partition, ready for the prover.
pub struct Partition {
    /// Its workload; `None` for a partition of a
    /// [`CircuitSource`](crate::CircuitSource).
    pub workload: Option<Workload>,
    /// Its seed (a source's partition: its index).
    pub seed: u64,
    /// The recorded evaluations, assignments and densities.
    pub assignment: ProvingAssignment,
    /// When synthesis started, on [`supraseal_c2::monotonic_ns`].
    pub synth_started_ns: u64,
    /// When synthesis ended, on the same clock.
    pub synth_ended_ns: u64,
    /// Witness and matrix-product time, when the compiled path made it.
    pub compiled: Option<bellperson_lite::SynthesisTimings>,
}

impl Partition {
    /// Nanoseconds spent synthesizing.
    pub fn synth_ns(&self) -> u64 {
        self.synth_ended_ns - self.synth_started_ns
    }
}

/// A partition's proof, with where the prover spent its time.
#[derive(Clone, Debug)]
pub struct PartitionProof {
    /// The proof.
    pub proof: Proof,
    /// The prover's phase timings and lock instants.
    pub timings: PhaseTimings,
}

/// Synthesizes the `workload` circuit for `seed` on the calling thread.
pub fn synthesize_partition(workload: Workload, seed: u64) -> Result<Partition, PipelineError> {
    Partition::timed(Some(workload), seed, || {
        Ok((ProvingAssignment::synthesize(workload.circuit(seed))?, None))
    })
}

impl Partition {
    /// Runs `synthesize` between two instants of the shared clock.
    pub(crate) fn timed(
        workload: Option<Workload>,
        seed: u64,
        synthesize: impl FnOnce() -> Result<
            (ProvingAssignment, Option<bellperson_lite::SynthesisTimings>),
            PipelineError,
        >,
    ) -> Result<Self, PipelineError> {
        let synth_started_ns = monotonic_ns();
        let (assignment, compiled) = synthesize()?;
        Ok(Partition {
            workload,
            seed,
            assignment,
            synth_started_ns,
            synth_ended_ns: monotonic_ns(),
            compiled,
        })
    }
}

/// Proves `partition` with fresh random blinding. The lock is held only in
/// the native kernel region.
pub fn gpu_prove(
    partition: &Partition,
    srs: &Srs,
    lock: &GpuLock,
) -> Result<PartitionProof, PipelineError> {
    let mut rng = rand::thread_rng();
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    gpu_prove_with(partition, srs, lock, r, s)
}

/// Proves `partition` with the given blinding `r`, `s` (deterministic, for
/// tests and backend comparisons).
pub fn gpu_prove_with(
    partition: &Partition,
    srs: &Srs,
    lock: &GpuLock,
    r: Scalar,
    s: Scalar,
) -> Result<PartitionProof, PipelineError> {
    let provers = std::slice::from_ref(&partition.assignment);
    let (mut proofs, timings) =
        bellperson_lite::prove_from_assignments(provers, srs, lock, &[r], &[s])?;
    Ok(PartitionProof {
        proof: proofs.remove(0),
        timings,
    })
}

/// Generates fresh random parameters for `workload` (slow: a trusted setup
/// for tests and benchmarks only), with the CPU's fixed-base tables.
pub fn setup(workload: Workload) -> Result<Parameters, PipelineError> {
    setup_on(workload, None, None, &ShapeCache::new())
}

/// [`setup`] with the fixed-base multiplications on `lock`'s backend (its
/// CUDA device, or the CPU), or on the CPU's tables for `None`. With a
/// `seed`, the toxic waste comes from ChaCha20 seeded with it, so that the
/// same seed gives byte-identical parameters on every backend (anyone who
/// knows the seed can forge proofs: for tests only); without one, from the
/// operating system's generator.
///
/// The setup reads the workload's compiled shape from `shapes` (compiling
/// it there when absent), so that an engine proving afterwards with the
/// same cache does not record the circuit a second time.
pub fn setup_on(
    workload: Workload,
    lock: Option<&GpuLock>,
    seed: Option<u64>,
    shapes: &ShapeCache,
) -> Result<Parameters, PipelineError> {
    let started = Instant::now();
    let mut rng: Box<dyn RngCore> = match seed {
        Some(seed) => Box::new(rand_chacha::ChaCha20Rng::seed_from_u64(seed)),
        None => Box::new(rand::rngs::OsRng),
    };
    let shape = shapes.get(workload)?;
    let params = bellperson_lite::generate_parameters_for_shape(&shape, &mut rng, lock)?;
    log::info!("setup {workload}: {:.3} s", started.elapsed().as_secs_f64());
    Ok(params)
}

/// Checks that `params` were made for `workload`'s shape, by comparing their
/// sizes with a synthesized `partition` of it.
pub fn check_params(params: &Parameters, partition: &Partition) -> Result<(), PipelineError> {
    params
        .check_shape(&partition.assignment)
        .map_err(|source| PipelineError::ParamsMismatch {
            workload: match partition.workload {
                Some(w) => w.to_string(),
                None => "a circuit source".to_owned(),
            },
            source,
        })
}
