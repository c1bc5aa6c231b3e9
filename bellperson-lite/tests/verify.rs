//! Generator and verifier, with proofs from the reference prover.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson_lite::{
    generate_random_parameters, prepare_verifying_key, verify_proof, verify_proofs_batch,
    ParamsError, Proof, ProvingAssignment, Section, VerificationError,
};
use blstrs::{G1Projective, G2Projective, Scalar};
use common::{blinding, mul_chain_inputs, params, reference, rng, witness};
use group::{Curve, Group};
use std::sync::OnceLock;

const N: usize = 300;

struct Fixture {
    params: bellperson_lite::Parameters,
    provers: Vec<ProvingAssignment>,
    proofs: Vec<Proof>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let params = params(N, 1);
        let provers: Vec<_> = (2..6)
            .map(|x| ProvingAssignment::synthesize(witness(N, x)).unwrap())
            .collect();
        let proofs = provers
            .iter()
            .enumerate()
            .map(|(i, p)| {
                params.check_shape(p).unwrap();
                let (r, s) = blinding(100 + i as u64);
                reference::prove(&params, p, r, s)
            })
            .collect();
        Fixture {
            params,
            provers,
            proofs,
        }
    })
}

fn inputs(i: usize) -> Vec<Scalar> {
    mul_chain_inputs(N, Scalar::from(i as u64 + 2))
}

#[test]
fn a_valid_proof_verifies() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    assert_eq!(pvk.num_public_inputs(), 2);
    for (i, proof) in f.proofs.iter().enumerate() {
        assert_eq!(f.provers[i].public_inputs(), inputs(i).as_slice());
        assert!(verify_proof(&pvk, proof, &inputs(i)).unwrap());
    }
}

#[test]
fn wrong_public_inputs_are_rejected() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    let mut bad = inputs(0);
    bad[1] += Scalar::from(1);
    assert!(!verify_proof(&pvk, &f.proofs[0], &bad).unwrap());
    assert!(!verify_proof(&pvk, &f.proofs[0], &inputs(1)).unwrap());
}

#[test]
fn a_wrong_input_count_is_an_error() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    let err = verify_proof(&pvk, &f.proofs[0], &inputs(0)[..1]).unwrap_err();
    assert_eq!(
        err,
        VerificationError::InputCount {
            expected: 2,
            got: 1
        }
    );
}

#[test]
fn tampered_proofs_are_rejected() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    let p = f.proofs[0];
    let g1 = G1Projective::generator();
    let tampered = [
        Proof {
            a: (p.a + g1).to_affine(),
            ..p
        },
        Proof {
            b: (p.b + G2Projective::generator()).to_affine(),
            ..p
        },
        Proof {
            c: (p.c + g1).to_affine(),
            ..p
        },
    ];
    for t in &tampered {
        assert!(!verify_proof(&pvk, t, &inputs(0)).unwrap());
    }
}

#[test]
fn another_circuits_key_rejects_the_proof() {
    let f = fixture();
    let other = params(N / 2, 9);
    let pvk = prepare_verifying_key(&other.vk);
    assert!(!verify_proof(&pvk, &f.proofs[0], &inputs(0)).unwrap());
    let same_shape = params(N, 10);
    let pvk = prepare_verifying_key(&same_shape.vk);
    assert!(!verify_proof(&pvk, &f.proofs[0], &inputs(0)).unwrap());
}

#[test]
fn batch_verification_accepts_good_and_rejects_one_bad() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    let refs: Vec<&Proof> = f.proofs.iter().collect();
    let all: Vec<Vec<Scalar>> = (0..refs.len()).map(inputs).collect();
    assert!(verify_proofs_batch(&pvk, &mut rng(5), &refs, &all).unwrap());
    assert!(verify_proofs_batch(&pvk, &mut rng(5), &[], &[]).unwrap());

    let mut wrong = all.clone();
    wrong[2][0] += Scalar::from(1);
    assert!(!verify_proofs_batch(&pvk, &mut rng(6), &refs, &wrong).unwrap());
    let swapped = Proof {
        c: f.proofs[3].c,
        ..f.proofs[2]
    };
    let mut bad_refs = refs.clone();
    bad_refs[2] = &swapped;
    assert!(!verify_proofs_batch(&pvk, &mut rng(7), &bad_refs, &all).unwrap());
}

#[test]
fn batch_shape_errors() {
    let f = fixture();
    let pvk = prepare_verifying_key(&f.params.vk);
    let refs: Vec<&Proof> = f.proofs.iter().collect();
    let mut all: Vec<Vec<Scalar>> = (0..refs.len()).map(inputs).collect();
    let err = verify_proofs_batch(&pvk, &mut rng(1), &refs, &all[..2]).unwrap_err();
    assert_eq!(
        err,
        VerificationError::BatchLength {
            proofs: 4,
            inputs: 2
        }
    );
    all[3].push(Scalar::from(1));
    let err = verify_proofs_batch(&pvk, &mut rng(1), &refs, &all).unwrap_err();
    assert_eq!(
        err,
        VerificationError::BatchInputCount {
            index: 3,
            expected: 2,
            got: 3
        }
    );
}

#[test]
fn params_of_another_circuit_fail_the_shape_check() {
    let f = fixture();
    let other = params(N / 2, 9);
    match other.check_shape(&f.provers[0]) {
        Err(ParamsError::Shape {
            section,
            expected,
            got,
        }) => {
            assert_eq!((section, expected, got), (Section::H, 511, 255));
        }
        r => panic!("expected a shape error, got {r:?}"),
    }
}

#[test]
fn params_hold_what_the_circuit_needs() {
    let f = fixture();
    let p = &f.params;
    // inputs ONE, x, out; aux a_0..a_N, sq; constraints N + 3, plus 3 input ones.
    assert_eq!(p.vk.ic.len(), 3);
    assert_eq!(p.l.len(), N + 2);
    assert_eq!(p.h.len(), (N + 6).next_power_of_two() - 1);
    // A: every input, then a_0..a_N (sq is only in C).
    assert_eq!(p.a.len(), 3 + N + 1);
    // B: ONE, then a_0..a_{N-1} (a_N is only in A and C, sq only in C).
    assert_eq!(p.b_g1.len(), 1 + N);
    assert_eq!(p.b_g2.len(), p.b_g1.len());
}

/// An aux variable that appears in no constraint.
struct Unconstrained;

impl Circuit<Scalar> for Unconstrained {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc_input(|| "x", || Ok(Scalar::from(1)))?;
        cs.alloc(|| "lonely", || Ok(Scalar::from(2)))?;
        cs.enforce(|| "x", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + x);
        Ok(())
    }
}

#[test]
fn an_unconstrained_variable_fails_the_setup() {
    let err = generate_random_parameters(Unconstrained, &mut rng(1)).unwrap_err();
    assert!(matches!(err, SynthesisError::UnconstrainedVariable));
}
