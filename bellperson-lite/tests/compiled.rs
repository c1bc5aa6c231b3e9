//! The compiled path computes a, b, c straight into HostVecs (pinned when a
//! CUDA device is there), equal to what full synthesis grows in Vecs.

mod common;

use bellpepper_core::ConstraintSystem;
use bellperson_lite::{CompiledError, CompiledShape, Evaluations, ProvingAssignment};
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

/// A prefix (an input `x` and its square) followed by one block per
/// entry of `blocks` (an input `c` and the aux `x² · c`), with `x` blank
/// when `None`.
#[derive(Clone)]
struct PrefixBlocks {
    x: Option<u64>,
    blocks: Vec<u64>,
}

impl bellpepper_core::Circuit<Scalar> for PrefixBlocks {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellpepper_core::SynthesisError> {
        let missing = || bellpepper_core::SynthesisError::AssignmentMissing;
        let x = self.x.map(Scalar::from);
        let xv = cs.alloc_input(|| "x", || x.ok_or_else(missing))?;
        let sq = x.map(|x| x * x);
        let sqv = cs.alloc(|| "x^2", || sq.ok_or_else(missing))?;
        cs.enforce(|| "square", |lc| lc + xv, |lc| lc + xv, |lc| lc + sqv);
        for (i, c) in self.blocks.into_iter().enumerate() {
            let c = Scalar::from(c);
            let cv = cs.alloc_input(|| format!("c{i}"), || Ok(c))?;
            let p = sq.map(|sq| sq * c);
            let pv = cs.alloc(|| format!("p{i}"), || p.ok_or_else(missing))?;
            cs.enforce(
                || format!("product {i}"),
                |lc| lc + sqv,
                |lc| lc + cv,
                |lc| lc + pv,
            );
        }
        Ok(())
    }
}

#[test]
fn pieces_record_the_same_witness_as_the_whole_circuit() {
    let blocks: Vec<u64> = (1..=7).map(|c| 10 * c + 1).collect();
    let whole = |x| PrefixBlocks {
        x,
        blocks: blocks.clone(),
    };
    let shape = CompiledShape::compile(whole(None)).unwrap();
    let full = ProvingAssignment::synthesize(whole(Some(5))).unwrap();
    for size in [1, 2, 3, 7] {
        let pieces: Vec<_> = blocks
            .chunks(size)
            .map(|run| PrefixBlocks {
                x: Some(5),
                blocks: run.to_vec(),
            })
            .collect();
        let witness = shape.record_witness_pieces(pieces).unwrap();
        let assignment = shape.evaluate(witness);
        assert_eq!(assignment.first_difference(&full), None, "runs of {size}");
    }
}

#[test]
fn pieces_that_do_not_split_the_circuit_are_refused() {
    let shape = CompiledShape::compile(PrefixBlocks {
        x: None,
        blocks: vec![1, 2, 3, 4],
    })
    .unwrap();
    let piece = |x, blocks: &[u64]| PrefixBlocks {
        x: Some(x),
        blocks: blocks.to_vec(),
    };
    // Too few blocks in all: the counts cannot add up.
    let short = shape.record_witness_pieces(vec![piece(5, &[1]), piece(5, &[3])]);
    assert!(
        matches!(short, Err(CompiledError::ShapeMismatch { .. })),
        "{short:?}"
    );
    // Pieces that disagree on the prefix.
    let other = shape.record_witness_pieces(vec![piece(5, &[1, 2]), piece(6, &[3, 4])]);
    match other {
        Err(CompiledError::Diverged { what }) => assert!(what.contains("prefix"), "{what}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        shape.record_witness_pieces(Vec::<PrefixBlocks>::new()),
        Err(CompiledError::ShapeMismatch { what: "pieces", .. })
    ));
}
