//! Circuits other than the synthetic workloads (Filecoin's proof kinds):
//! what the engine needs of a request's partitions, behind a trait so that
//! this layer does not depend on the crates that build them.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use bellperson_lite::{CompiledShape, ProvingAssignment, ShapedWitness};
use blstrs::Scalar;

use crate::{Partition, PipelineError, ShapeCache, SynthesisMode};

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
    /// Partition `index`'s witness on the compiled path of `shape` (on the
    /// current rayon pool where the source records it in parallel).
    fn record_witness(
        &self,
        shape: &CompiledShape,
        index: usize,
    ) -> Result<ShapedWitness, SourceError>;
    /// Where the compiled path's witness comes from, as reports name it
    /// (e.g. `gadgets, in pieces`).
    fn witness_source(&self) -> &'static str {
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
/// and the matrix products run on `pool` when given. The recorded public inputs are
/// checked against the source's. The partition's seed is its index.
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
        let started = Instant::now();
        // On `pool` too: a source may record its witness in parallel.
        let record = || source.record_witness(&shape, index);
        let witness = match pool {
            Some(pool) => pool.install(record),
            None => record(),
        }
        .map_err(failed)?;
        let witness_ns = started.elapsed().as_nanos() as u64;
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
