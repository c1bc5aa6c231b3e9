//! The proving constraint system against hand-computed values.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson_lite::{synthesize_circuits_batch, ProvingAssignment};
use blstrs::Scalar;
use ff::Field;

fn s(x: u64) -> Scalar {
    Scalar::from(x)
}

/// Inputs ONE, x = 3; aux y = 4, z = 12, w = 5.
/// 1. x * y = z
/// 2. (y + 2 ONE) * ONE = w + ONE
/// 3. w * (0 z) = 0            (a zero coefficient marks nothing)
struct Three;

impl Circuit<Scalar> for Three {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(s(3)))?;
        let y = cs.alloc(|| "y", || Ok(s(4)))?;
        let z = cs.alloc(|| "z", || Ok(s(12)))?;
        let w = cs.alloc(|| "w", || Ok(s(5)))?;
        cs.enforce(|| "1", |lc| lc + x, |lc| lc + y, |lc| lc + z);
        cs.enforce(
            || "2",
            |lc| lc + y + (s(2), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + w + CS::one(),
        );
        cs.enforce(|| "3", |lc| lc + w, |lc| lc + (Scalar::ZERO, z), |lc| lc);
        Ok(())
    }
}

fn bits(d: &supraseal_c2::Density) -> Vec<bool> {
    (0..d.len()).map(|i| d.get(i)).collect()
}

#[test]
fn three_constraints_match_hand_computed_values() {
    let p = ProvingAssignment::synthesize(Three).unwrap();
    assert!(p.is_sealed());
    assert_eq!(
        (p.num_inputs(), p.num_aux(), p.num_constraints()),
        (2, 3, 5)
    );
    let asg = p.as_assignment();
    assert_eq!(asg.a, &[s(3), s(6), s(5), s(1), s(3)]);
    assert_eq!(asg.b, &[s(4), s(1), s(0), s(0), s(0)]);
    assert_eq!(asg.c, &[s(12), s(6), s(0), s(0), s(0)]);
    assert_eq!(asg.input, &[s(1), s(3)]);
    assert_eq!(asg.aux, &[s(4), s(12), s(5)]);
    assert_eq!(p.public_inputs(), &[s(3)]);
    assert_eq!(bits(asg.a_aux_density), [true, false, true]);
    assert_eq!(bits(asg.b_input_density), [true, false]);
    assert_eq!(bits(asg.b_aux_density), [true, false, false]);
}

#[test]
fn recording_after_sealing_unseals_and_reseals_cleanly() {
    let mut p = ProvingAssignment::synthesize(Three).unwrap();
    let v = p.alloc(|| "v", || Ok(s(7))).unwrap();
    assert!(!p.is_sealed());
    assert_eq!(p.num_constraints(), 3);
    assert_eq!(p.num_sealed_constraints(), 5);
    p.enforce(|| "4", |lc| lc + v, |lc| lc + CS1::one(), |lc| lc + v);
    p.seal();
    p.seal();
    let asg = p.as_assignment();
    assert_eq!(asg.a, &[s(3), s(6), s(5), s(7), s(1), s(3)]);
    assert_eq!(asg.b, &[s(4), s(1), s(0), s(1), s(0), s(0)]);
    assert_eq!(bits(asg.a_aux_density), [true, false, true, true]);
}

type CS1 = ProvingAssignment;

/// Names a variable index that was never allocated.
struct Foreign;

impl Circuit<Scalar> for Foreign {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let ghost = bellpepper_core::Variable::new_unchecked(bellpepper_core::Index::Aux(9));
        cs.enforce(|| "ghost", |lc| lc + ghost, |lc| lc, |lc| lc);
        Ok(())
    }
}

#[test]
fn a_foreign_variable_is_an_error_not_a_panic() {
    let err = ProvingAssignment::synthesize(Foreign).unwrap_err();
    assert!(matches!(err, SynthesisError::AssignmentMissing));
}

#[test]
fn batch_synthesis_matches_one_by_one() {
    let circuits: Vec<_> = (1..5).map(|x| common::witness(20, x)).collect();
    let batch = synthesize_circuits_batch(circuits.clone()).unwrap();
    for (c, b) in circuits.into_iter().zip(&batch) {
        let one = ProvingAssignment::synthesize(c).unwrap();
        let (x, y) = (one.as_assignment(), b.as_assignment());
        assert_eq!(
            (x.a, x.b, x.c, x.input, x.aux),
            (y.a, y.b, y.c, y.input, y.aux)
        );
        assert_eq!(x.a_aux_density, y.a_aux_density);
        assert_eq!(x.b_aux_density, y.b_aux_density);
    }
    let mut bad: Vec<_> = (1..4).map(|x| common::witness(5, x)).collect();
    bad[1].x = None;
    assert!(synthesize_circuits_batch(bad).is_err());
}
