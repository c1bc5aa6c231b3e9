//! The compiled path computes a, b, c straight into HostVecs (pinned when a
//! CUDA device is there), equal to what full synthesis grows in Vecs.

mod common;

use bellpepper_core::ConstraintSystem;
use bellperson_lite::{CompiledShape, Evaluations, ProvingAssignment};
use blstrs::Scalar;
use common::{witness, Mixed, MulChain};
use supraseal_c2::cuda_device_count;

fn assert_host_vecs_equal_to_full(compiled: &ProvingAssignment, full: &ProvingAssignment) {
    assert_eq!(compiled.first_difference(full), None);
    let pinned = cuda_device_count() > 0;
    for (name, (ours, theirs)) in ["a", "b", "c"]
        .into_iter()
        .zip(compiled.evaluations().into_iter().zip(full.evaluations()))
    {
        let Evaluations::Fixed(host) = ours else {
            panic!("compiled {name} is not in a HostVec: {ours:?}");
        };
        assert!(matches!(theirs, Evaluations::Growable(_)), "full {name}");
        assert_eq!(host.len(), full.num_constraints(), "{name}");
        assert_eq!(host[..], theirs[..], "{name}");
        assert_eq!(host.is_pinned(), pinned, "{name}");
        assert_eq!(ours.heap_bytes(), host.len() * 32, "{name}");
    }
}

#[test]
fn compiled_evaluations_are_host_vecs_equal_to_full_synthesis() {
    let shape = CompiledShape::compile(MulChain { n: 20_000, x: None }).unwrap();
    for x in [3, 11] {
        let (compiled, _) = shape.synthesize(witness(20_000, x)).unwrap();
        let full = ProvingAssignment::synthesize(witness(20_000, x)).unwrap();
        assert_host_vecs_equal_to_full(&compiled, &full);
        assert_eq!(compiled.as_assignment().a, full.as_assignment().a);
        assert_eq!(compiled.as_assignment().c, full.as_assignment().c);
        assert!(compiled.heap_bytes() >= 3 * 32 * compiled.num_constraints());
        assert_host_vecs_equal_to_full(&compiled.clone(), &full);
    }
    let mixed = Mixed {
        vars: 3000,
        seed: 5,
    };
    let shape = CompiledShape::compile(mixed.clone()).unwrap();
    let (compiled, _) = shape.synthesize(mixed.clone()).unwrap();
    assert_host_vecs_equal_to_full(&compiled, &ProvingAssignment::synthesize(mixed).unwrap());
}

#[test]
fn recording_into_a_compiled_assignment_makes_it_growable() {
    let shape = CompiledShape::compile(MulChain { n: 10, x: None }).unwrap();
    let (mut compiled, _) = shape.synthesize(witness(10, 4)).unwrap();
    let mut full = ProvingAssignment::synthesize(witness(10, 4)).unwrap();
    for cs in [&mut compiled, &mut full] {
        let v = cs.alloc(|| "v", || Ok(Scalar::from(9))).unwrap();
        cs.enforce(
            || "v * 1 = v",
            |lc| lc + v,
            |lc| lc + ProvingAssignment::one(),
            |lc| lc + v,
        );
        cs.seal();
    }
    assert_eq!(compiled.first_difference(&full), None);
    assert!(compiled
        .evaluations()
        .iter()
        .all(|e| matches!(e, Evaluations::Growable(_))));
}
