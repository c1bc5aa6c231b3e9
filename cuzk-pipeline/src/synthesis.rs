//! Choosing how partitions are synthesized: in full, or on the compiled path
//! with each workload's shape compiled once and cached.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use bellperson_lite::{
    CompiledError, CompiledShape, ProvingAssignment, ShapedWitness, SynthesisTimings,
};
use parking_lot::Mutex;

use crate::{Partition, PipelineError, Workload};

/// How partitions are synthesized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SynthesisMode {
    /// Every partition records and evaluates every constraint.
    Full,
    /// The workload's shape is compiled on first use; partitions compute
    /// only their witness (natively where the workload has a witness
    /// program, see [`Witness`]), then three sparse matrix products.
    #[default]
    Compiled,
    /// As `Compiled`, with the witness always recorded from the circuit's
    /// gadgets (for comparison).
    CompiledGadgets,
    /// As `Compiled`, and every `every`-th partition (by seed) is also
    /// synthesized in full and compared, failing on any difference.
    Checked {
        /// Sampling period, at least 1 (1 checks every partition).
        every: u64,
    },
}

impl std::str::FromStr for SynthesisMode {
    type Err = PipelineError;

    /// `full`, `compiled`, `compiled-gadgets`, or `checked` / `checked:N`
    /// (every N-th partition checked against full synthesis; `checked`
    /// alone checks every one).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || PipelineError::BadSynthesisMode(s.to_owned());
        match s.split_once(':') {
            None if s == "full" => Ok(SynthesisMode::Full),
            None if s == "compiled" => Ok(SynthesisMode::Compiled),
            None if s == "compiled-gadgets" => Ok(SynthesisMode::CompiledGadgets),
            None if s == "checked" => Ok(SynthesisMode::Checked { every: 1 }),
            Some(("checked", n)) => match n.parse() {
                Ok(every) if every > 0 => Ok(SynthesisMode::Checked { every }),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for SynthesisMode {
    /// The form [`str::parse`] reads: `full`, `compiled`,
    /// `compiled-gadgets`, `checked:N`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SynthesisMode::Full => f.write_str("full"),
            SynthesisMode::Compiled => f.write_str("compiled"),
            SynthesisMode::CompiledGadgets => f.write_str("compiled-gadgets"),
            SynthesisMode::Checked { every } => write!(f, "checked:{every}"),
        }
    }
}

/// Where the compiled path takes a partition's witness from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Witness {
    /// The workload's native witness program where it has one
    /// ([`Workload::native_witness`]), else the circuit's gadgets.
    #[default]
    Native,
    /// The circuit's gadgets, recorded by a witness-only constraint system.
    Gadgets,
}

impl SynthesisMode {
    /// Where `workload`'s witness comes from in this mode, as reports name
    /// it: `native program`, `gadgets`, or `full synthesis` (every
    /// constraint recorded, the witness from the gadgets).
    pub fn witness_source(&self, workload: Workload) -> &'static str {
        match self {
            SynthesisMode::Full => "full synthesis",
            SynthesisMode::CompiledGadgets => "gadgets",
            SynthesisMode::Compiled | SynthesisMode::Checked { .. } => {
                if workload.has_native_witness() {
                    "native program"
                } else {
                    "gadgets"
                }
            }
        }
    }
}

type ShapeSlot = Arc<OnceLock<Result<Arc<CompiledShape>, Arc<CompiledError>>>>;

/// Compiled shapes by workload, each compiled once even when many workers
/// ask for it at the same time.
#[derive(Default)]
pub struct ShapeCache {
    slots: Mutex<HashMap<Workload, ShapeSlot>>,
    /// Shapes of circuit sources, by circuit key.
    named: Mutex<HashMap<String, NamedSlot>>,
}

type NamedSlot = Arc<OnceLock<Result<Arc<CompiledShape>, String>>>;

impl std::fmt::Debug for ShapeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let workloads: Vec<Workload> = self.slots.lock().keys().copied().collect();
        f.debug_struct("ShapeCache")
            .field("workloads", &workloads)
            .finish()
    }
}

impl ShapeCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The compiled shape of `workload`, compiling it on first use. Callers
    /// asking while it compiles wait for that one compilation.
    pub fn get(&self, workload: Workload) -> Result<Arc<CompiledShape>, PipelineError> {
        let slot = self.slots.lock().entry(workload).or_default().clone();
        let compiled = slot.get_or_init(|| {
            let started = Instant::now();
            let shape = CompiledShape::compile(workload.shape()).map_err(Arc::new)?;
            log::info!(
                "compiled {workload}: {} constraints, {} non-zero terms, {} coefficients, {:.1} MiB, {:.2} s",
                shape.num_constraints(),
                shape.nnz(),
                shape.num_coeffs(),
                shape.heap_bytes() as f64 / (1 << 20) as f64,
                started.elapsed().as_secs_f64()
            );
            Ok(Arc::new(shape))
        });
        compiled.clone().map_err(|source| PipelineError::Compile {
            workload: workload.to_string(),
            source,
        })
    }

    /// The compiled shape of the circuit called `key`, compiled by
    /// `compile` on first use (once, however many callers ask meanwhile).
    pub fn get_or_compile(
        &self,
        key: &str,
        compile: impl FnOnce() -> Result<CompiledShape, crate::SourceError>,
    ) -> Result<Arc<CompiledShape>, PipelineError> {
        let slot = self.named.lock().entry(key.to_owned()).or_default().clone();
        let compiled = slot.get_or_init(|| {
            let started = Instant::now();
            let shape = compile().map_err(|e| format!("cannot compile its shape: {e}"))?;
            log::info!(
                "compiled {key}: {} constraints, {} non-zero terms, {:.1} MiB, {:.2} s",
                shape.num_constraints(),
                shape.nnz(),
                shape.heap_bytes() as f64 / (1 << 20) as f64,
                started.elapsed().as_secs_f64()
            );
            Ok(Arc::new(shape))
        });
        compiled.clone().map_err(|e| PipelineError::Source {
            circuit: key.to_owned(),
            source: e.into(),
        })
    }

    /// Workloads and circuits compiled so far.
    pub fn len(&self) -> usize {
        self.slots.lock().len() + self.named.lock().len()
    }

    /// True when nothing was compiled yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Synthesizes the `workload` circuit for `seed` in `mode`, taking compiled
/// shapes from `cache`. The witness is computed on the calling thread; the
/// parallel part (the matrix products) runs on `pool`, or on the current
/// rayon pool when `None`.
pub fn synthesize_with(
    mode: SynthesisMode,
    cache: &ShapeCache,
    workload: Workload,
    seed: u64,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Partition, PipelineError> {
    let witness = match mode {
        SynthesisMode::Full => return crate::synthesize_partition(workload, seed),
        SynthesisMode::CompiledGadgets => Witness::Gadgets,
        SynthesisMode::Compiled | SynthesisMode::Checked { .. } => Witness::Native,
    };
    let shape = cache.get(workload)?;
    let partition = synthesize_compiled(&shape, workload, seed, witness, pool)?;
    if let SynthesisMode::Checked { every } = mode {
        if seed.is_multiple_of(every.max(1)) {
            CompiledShape::check_against(&partition.assignment, workload.circuit(seed))?;
        }
    }
    Ok(partition)
}

/// Synthesizes one partition on the compiled path of `shape`, with its
/// witness from `witness` (computed on the calling thread) and the matrix
/// products on `pool` (the current rayon pool when `None`).
pub fn synthesize_compiled(
    shape: &CompiledShape,
    workload: Workload,
    seed: u64,
    witness: Witness,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Partition, PipelineError> {
    Partition::timed(Some(workload), seed, || {
        let started = Instant::now();
        let native = match witness {
            Witness::Native => workload.native_witness(seed),
            Witness::Gadgets => None,
        };
        let shaped = match native {
            None => shape.record_witness(workload.circuit(seed))?,
            Some(native) => shape.bit_witness(native.input, native.aux)?,
        };
        let witness_ns = started.elapsed().as_nanos() as u64;
        Ok(evaluate_timed(shape, shaped, witness_ns, pool))
    })
}

/// The second half of compiled synthesis: the matrix products of a
/// recorded witness, on `pool` (the current rayon pool when `None`), with
/// the witness and product times.
pub(crate) fn evaluate_timed(
    shape: &CompiledShape,
    witness: ShapedWitness,
    witness_ns: u64,
    pool: Option<&rayon::ThreadPool>,
) -> (ProvingAssignment, Option<SynthesisTimings>) {
    let started = Instant::now();
    let assignment = match pool {
        Some(pool) => pool.install(|| shape.evaluate(witness)),
        None => shape.evaluate(witness),
    };
    let split = SynthesisTimings {
        witness_ns,
        matrix_ns: started.elapsed().as_nanos() as u64,
    };
    (assignment, Some(split))
}

#[cfg(test)]
mod tests {
    use super::SynthesisMode;

    #[test]
    fn modes_print_as_they_parse() {
        for text in [
            "full",
            "compiled",
            "compiled-gadgets",
            "checked:1",
            "checked:4",
        ] {
            let mode: SynthesisMode = text.parse().unwrap();
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!(
            "checked".parse::<SynthesisMode>().unwrap().to_string(),
            "checked:1"
        );
    }
}
