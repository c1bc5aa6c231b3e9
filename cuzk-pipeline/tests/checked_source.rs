//! `checked:N` on a circuit source: the source's native witness is compared
//! with its gadgets', and a difference fails the partition, naming where.

use bellperson_lite::{CompiledShape, ProvingAssignment, ShapedWitness};
use blstrs::Scalar;
use cuzk_pipeline::{
    synthesize_source, CircuitSource, ShapeCache, SourceError, SynthesisMode, Witness, Workload,
};

/// `sha-chain` as a source, its native witness flipped at `flip` when set.
#[derive(Debug)]
struct Sha {
    workload: Workload,
    flip: Option<usize>,
}

impl CircuitSource for Sha {
    fn circuit_key(&self) -> String {
        format!("test-{}", self.workload)
    }
    fn partitions(&self) -> usize {
        2
    }
    fn compile(&self) -> Result<CompiledShape, SourceError> {
        Ok(CompiledShape::compile(self.workload.shape())?)
    }
    fn record_witness(
        &self,
        shape: &CompiledShape,
        index: usize,
        witness: Witness,
    ) -> Result<ShapedWitness, SourceError> {
        if witness == Witness::Gadgets {
            return Ok(shape.record_witness(self.workload.circuit(index as u64))?);
        }
        let mut native = self.workload.native_witness(index as u64).expect("native");
        if let Some(i) = self.flip {
            native.aux.words[i / 64] ^= 1 << (i % 64);
        }
        Ok(shape.bit_witness(native.input, native.aux)?)
    }
    fn witness_source(&self, witness: Witness) -> &'static str {
        match witness {
            Witness::Native => "native program",
            Witness::Gadgets => "gadgets",
        }
    }
    fn synthesize_full(&self, index: usize) -> Result<ProvingAssignment, SourceError> {
        Ok(ProvingAssignment::synthesize(
            self.workload.circuit(index as u64),
        )?)
    }
    fn public_inputs(&self, index: usize) -> Result<Vec<Scalar>, SourceError> {
        Ok(self.workload.public_inputs(index as u64))
    }
}

fn run(source: &Sha, index: usize) -> Result<(), cuzk_pipeline::PipelineError> {
    let cache = ShapeCache::new();
    let mode = SynthesisMode::Checked { every: 1 };
    synthesize_source(mode, &cache, source, index, None).map(drop)
}

#[test]
fn a_native_witness_equal_to_the_gadgets_passes() {
    let workload = Workload::ShaChain { blocks: 1 };
    let source = Sha {
        workload,
        flip: None,
    };
    run(&source, 0).expect("checked");
    run(&source, 1).expect("checked");
}

#[test]
fn a_native_witness_that_differs_fails_naming_the_variable() {
    let workload = Workload::ShaChain { blocks: 1 };
    let source = Sha {
        workload,
        flip: Some(1000),
    };
    let err = run(&source, 1).expect_err("a flipped bit is caught");
    let mut chain = err.to_string();
    let mut cause = std::error::Error::source(&err);
    while let Some(e) = cause {
        chain = format!("{chain}: {e}");
        cause = e.source();
    }
    assert!(chain.contains("aux[1000]"), "{chain}");
}
