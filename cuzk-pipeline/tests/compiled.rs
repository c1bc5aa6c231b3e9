//! The compiled path of synthesis gives exactly what full synthesis gives
//! (evaluations, densities, proofs), for both workloads at several sizes
//! and seeds, and refuses a witness that does not fit its shape.

use bellperson_lite::{CompiledError, CompiledShape, ProvingAssignment};
use blstrs::Scalar;
use cuzk_pipeline::{
    gpu_prove_with, setup, synthesize_compiled, synthesize_partition, synthesize_with, ShapeCache,
    SynthesisMode, Witness, Workload,
};
use supraseal_c2::GpuLock;

fn assert_same(workload: Workload, shape: &CompiledShape, seed: u64) {
    let full = ProvingAssignment::synthesize(workload.circuit(seed)).unwrap();
    let (compiled, split) = shape.synthesize(workload.circuit(seed)).unwrap();
    assert_eq!(
        compiled.first_difference(&full),
        None,
        "{workload} seed {seed}"
    );
    assert_eq!(compiled.as_assignment().a, full.as_assignment().a);
    assert_eq!(
        compiled.as_assignment().b_aux_density,
        full.as_assignment().b_aux_density
    );
    assert!(split.witness_ns > 0 && split.matrix_ns > 0);
}

#[test]
fn compiled_evaluations_and_densities_equal_full_synthesis() {
    for workload in [
        Workload::new("sha-chain", 1).unwrap(),
        Workload::new("sha-chain", 3).unwrap(),
        Workload::new("mul-chain", 1).unwrap(),
        Workload::new("mul-chain", 5000).unwrap(),
    ] {
        let shape = CompiledShape::compile(workload.shape()).unwrap();
        assert_eq!(shape.num_inputs(), 3, "ONE and two public inputs");
        for seed in [0, 1, 12345] {
            assert_same(workload, &shape, seed);
        }
    }
}

#[test]
fn compiled_proofs_equal_full_proofs() {
    let workload = Workload::new("sha-chain", 1).unwrap();
    let params = setup(workload).unwrap();
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let shape = CompiledShape::compile(workload.shape()).unwrap();
    let (r, s) = (Scalar::from(1234567u64), Scalar::from(7654321u64));
    for seed in [2, 9] {
        let full = synthesize_partition(workload, seed).unwrap();
        let compiled = synthesize_compiled(&shape, workload, seed, Witness::Gadgets, None).unwrap();
        assert!(compiled.compiled.is_some() && full.compiled.is_none());
        let native = synthesize_compiled(&shape, workload, seed, Witness::Native, None).unwrap();
        let a = gpu_prove_with(&full, &srs, &lock, r, s).unwrap().proof;
        let b = gpu_prove_with(&compiled, &srs, &lock, r, s).unwrap().proof;
        let c = gpu_prove_with(&native, &srs, &lock, r, s).unwrap().proof;
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(a, c, "seed {seed}, native witness");
    }
}

#[test]
fn the_native_witness_gives_what_full_synthesis_gives() {
    for blocks in [1, 2, 5] {
        let workload = Workload::new("sha-chain", blocks).unwrap();
        let shape = CompiledShape::compile(workload.shape()).unwrap();
        for seed in [0, 7, u64::MAX] {
            let native =
                synthesize_compiled(&shape, workload, seed, Witness::Native, None).unwrap();
            let full = ProvingAssignment::synthesize(workload.circuit(seed)).unwrap();
            assert_eq!(
                native.assignment.first_difference(&full),
                None,
                "{workload} seed {seed}"
            );
            let split = native.compiled.unwrap();
            assert!(split.witness_ns > 0 && split.matrix_ns > 0);
        }
    }
    let mul = Workload::new("mul-chain", 10).unwrap();
    assert!(
        mul.native_witness(0).is_none() && !mul.has_native_witness(),
        "mul-chain has no witness program"
    );
}

#[test]
fn a_native_witness_that_does_not_fit_is_rejected() {
    let workload = Workload::new("sha-chain", 1).unwrap();
    let shape = CompiledShape::compile(workload.shape()).unwrap();
    let good = workload.native_witness(3).unwrap();
    let mut short = good.aux.clone();
    short.len -= 1;
    match shape.bit_witness(good.input.clone(), short) {
        Err(CompiledError::ShapeMismatch {
            what: "aux variables",
            ..
        }) => {}
        other => panic!("accepted a witness one bit short: {other:?}"),
    }
    let mut words = good.aux.clone();
    words.words.pop();
    assert!(matches!(
        shape.bit_witness(good.input.clone(), words),
        Err(CompiledError::ShapeMismatch {
            what: "aux bit words",
            ..
        })
    ));
    assert!(matches!(
        shape.bit_witness(good.input[..2].to_vec(), good.aux.clone()),
        Err(CompiledError::ShapeMismatch {
            what: "public inputs",
            ..
        })
    ));
    // A bit flipped fits the shape but not the circuit: checking catches it.
    let mut flipped = good.aux;
    flipped.words[5] ^= 1 << 9;
    let assignment = shape.evaluate(shape.bit_witness(good.input, flipped).unwrap());
    match CompiledShape::check_against(&assignment, workload.circuit(3)) {
        Err(CompiledError::Diverged { what }) => assert!(!what.is_empty()),
        other => panic!("a wrong witness bit was not caught: {other:?}"),
    }
}

#[test]
fn a_witness_of_another_shape_is_rejected() {
    let small = CompiledShape::compile(Workload::new("mul-chain", 10).unwrap().shape()).unwrap();
    let other = Workload::new("mul-chain", 11).unwrap();
    match small.synthesize(other.circuit(0)) {
        Err(CompiledError::ShapeMismatch {
            what: "aux variables",
            expected: 10,
            got: 11,
        }) => {}
        other => panic!("accepted a witness of the wrong length: {other:?}"),
    }
    let sha = Workload::new("sha-chain", 1).unwrap();
    assert!(matches!(
        small.synthesize(sha.circuit(0)),
        Err(CompiledError::ShapeMismatch { .. })
    ));
}

#[test]
fn checked_mode_compares_and_the_cache_compiles_once() {
    let cache = ShapeCache::new();
    let workload = Workload::new("mul-chain", 300).unwrap();
    for seed in 0..4 {
        let p = synthesize_with(
            SynthesisMode::Checked { every: 2 },
            &cache,
            workload,
            seed,
            None,
        )
        .unwrap();
        assert_eq!(p.seed, seed);
    }
    let first = cache.get(workload).unwrap();
    assert!(std::sync::Arc::ptr_eq(
        &first,
        &cache.get(workload).unwrap()
    ));
    assert_eq!(cache.len(), 1);
    let full = synthesize_with(SynthesisMode::Full, &cache, workload, 1, None).unwrap();
    assert!(full.compiled.is_none());
    let sha = Workload::new("sha-chain", 2).unwrap();
    for mode in [
        SynthesisMode::Checked { every: 1 },
        SynthesisMode::CompiledGadgets,
    ] {
        let p = synthesize_with(mode, &cache, sha, 5, None).unwrap();
        assert!(p.compiled.is_some(), "{mode:?}");
    }
    assert_eq!(cache.len(), 2);
}

/// A circuit whose constraints depend on its witness: compiling it from one
/// witness and proving another is caught by checking mode.
#[derive(Clone)]
struct Shifty(Option<u64>);

impl bellpepper_core::Circuit<Scalar> for Shifty {
    fn synthesize<CS: bellpepper_core::ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellpepper_core::SynthesisError> {
        let v = self.0.unwrap_or(0);
        let x = cs.alloc(|| "x", || Ok(Scalar::from(v)))?;
        let k = Scalar::from(v % 3 + 1); // the coefficient depends on the witness
        cs.enforce(
            || "c",
            |lc| lc + (k, x),
            |lc| lc + CS::one(),
            |lc| lc + (k, x),
        );
        Ok(())
    }
}

#[test]
fn checking_mode_catches_a_witness_dependent_shape() {
    let shape = CompiledShape::compile(Shifty(None)).unwrap();
    shape.check_against_full(Shifty(Some(3))).unwrap();
    match shape.check_against_full(Shifty(Some(4))) {
        Err(CompiledError::Diverged { what }) => assert!(what.starts_with('a'), "{what}"),
        other => panic!("divergence not caught: {other:?}"),
    }
}
