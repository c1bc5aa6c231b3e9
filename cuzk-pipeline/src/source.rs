//! Circuits other than the synthetic workloads (Filecoin's proof kinds):
//! what the engine needs of a request's partitions, behind a trait so that
//! this layer does not depend on the crates that build them.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use bellperson_lite::{CompiledShape, ProvingAssignment, ShapedWitness};
use blstrs::Scalar;

use crate::{Partition, PipelineError, ShapeCache, SynthesisMode, Witness};

/// The errors a [`CircuitSource`] reports, kept with their chain.
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// The partitions of one proof request of a circuit that is not a
/// synthetic workload.
pub trait CircuitSource: Send + Sync + fmt::Debug {
    /// The circuit's name: sources with the same key share one compiled
    /// shape and one proving key (e.g. `porep-32GiB`).
    fn circuit_key(&self) -> String;
    /// How many partitions.
    fn partitions(&self) -> usize;
    /// Compiles the circuit's shape (from its blank circuit).
    fn compile(&self) -> Result<CompiledShape, SourceError>;
    /// Partition `index`'s witness on the compiled path of `shape`, from
    /// the source's native witness program where it has one and `witness`
    /// asks for it, else from its gadgets (on the current rayon pool where
    /// the source computes it in parallel).
    fn record_witness(
        &self,
        shape: &CompiledShape,
        index: usize,
        witness: Witness,
    ) -> Result<ShapedWitness, SourceError>;
    /// Where the compiled path's witness comes from when `witness` is asked
    /// for, as reports name it (e.g. `native program`, `gadgets, in
    /// pieces`).
    fn witness_source(&self, witness: Witness) -> &'static str {
        let _ = witness;
        "gadgets"
    }
    /// Partition `index` synthesized in full.
    fn synthesize_full(&self, index: usize) -> Result<ProvingAssignment, SourceError>;
    /// Partition `index`'s public inputs (without `ONE`), as its verifier
    /// computes them.
    fn public_inputs(&self, index: usize) -> Result<Vec<Scalar>, SourceError>;
}

/// Synthesizes partition `index` of `source` in `mode` (full, or compiled
/// with the shape taken from `cache` under the source's key); the witness
/// and the matrix products run on `pool` when given. The recorded public
/// inputs are checked against the source's. In `checked:N` mode every
/// N-th partition's witness (the native program's, where the source has
/// one) is compared with its gadgets' and fails on any difference. The
/// partition's seed is its index.
pub fn synthesize_source(
    mode: SynthesisMode,
    cache: &ShapeCache,
    source: &dyn CircuitSource,
    index: usize,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Partition, PipelineError> {
    let failed = |e: SourceError| PipelineError::Source {
        circuit: source.circuit_key(),
        source: e,
    };
    let partition = Partition::timed(None, index as u64, || {
        if mode == SynthesisMode::Full {
            return Ok((source.synthesize_full(index).map_err(failed)?, None));
        }
        let shape = cache.get_or_compile(&source.circuit_key(), || source.compile())?;
        let from = match mode {
            SynthesisMode::CompiledGadgets => Witness::Gadgets,
            _ => Witness::Native,
        };
        let started = Instant::now();
        // On `pool` too: a source may record its witness in parallel.
        let record = |from| match pool {
            Some(pool) => pool.install(|| source.record_witness(&shape, index, from)),
            None => source.record_witness(&shape, index, from),
        };
        let witness = record(from).map_err(failed)?;
        let witness_ns = started.elapsed().as_nanos() as u64;
        if let SynthesisMode::Checked { every } = mode {
            if (index as u64).is_multiple_of(every.max(1)) {
                let gadgets = record(Witness::Gadgets).map_err(failed)?;
                if let Some(what) = witness.first_difference(&gadgets) {
                    return Err(PipelineError::Source {
                        circuit: source.circuit_key(),
                        source: format!(
                            "partition {index}: the {} witness differs from the gadgets' at {what}",
                            source.witness_source(from)
                        )
                        .into(),
                    });
                }
            }
        }
        Ok(crate::synthesis::evaluate_timed(
            &shape, witness, witness_ns, pool,
        ))
    })?;
    let expected = source.public_inputs(index).map_err(failed)?;
    if partition.assignment.public_inputs() != expected {
        return Err(PipelineError::Source {
            circuit: source.circuit_key(),
            source: format!("partition {index}: recorded public inputs differ from the verifier's")
                .into(),
        });
    }
    Ok(partition)
}

/// A shared handle to a source, as requests hold it.
pub type SharedSource = Arc<dyn CircuitSource>;
