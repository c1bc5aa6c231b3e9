//! The native prover through this layer: bit-identical to the reference
//! prover for the same blinding, and its proofs verify.

mod common;

use bellperson_lite::{
    create_random_proof_batch, prepare_verifying_key, prove_from_assignments, verify_proof,
    verify_proofs_batch, Proof, ProverError, ProvingAssignment,
};
use blstrs::Scalar;
use common::{blinding, mul_chain_inputs, params, reference, rng, witness, Mixed};
use supraseal_c2::GpuLock;

const N: usize = 200;

#[test]
fn native_proofs_equal_reference_proofs_and_verify() {
    let params = params(N, 21);
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let provers: Vec<_> = (1..4)
        .map(|x| ProvingAssignment::synthesize(witness(N, x)).unwrap())
        .collect();
    let (r, s): (Vec<Scalar>, Vec<Scalar>) = (0..3).map(|i| blinding(40 + i)).unzip();
    let (proofs, _timings) = prove_from_assignments(&provers, &srs, &lock, &r, &s).unwrap();
    assert_eq!(proofs.len(), 3);
    let pvk = prepare_verifying_key(&params.vk);
    for (i, proof) in proofs.iter().enumerate() {
        let expected = reference::prove(&params, &provers[i], r[i], s[i]);
        assert_eq!(proof.to_bytes(), expected.to_bytes(), "proof {i}");
        let inputs = mul_chain_inputs(N, Scalar::from(i as u64 + 1));
        assert!(verify_proof(&pvk, proof, &inputs).unwrap());
    }
    assert!(lock.stats().acquisitions >= 1);
}

/// Irregular 0 / 1 / other values and densities over more aux variables than
/// one chunk of the prover's term sorting (65,536), so that chunks start in
/// the middle of bitmap words.
#[test]
fn mixed_values_and_densities_equal_reference_proofs() {
    let shape = Mixed {
        vars: 70_000,
        seed: 3,
    };
    let params = bellperson_lite::generate_random_parameters(shape.clone(), &mut rng(31)).unwrap();
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let pvk = prepare_verifying_key(&params.vk);
    let p = ProvingAssignment::synthesize(shape.clone()).unwrap();
    let (r, s) = blinding(32);
    let (proofs, _) =
        prove_from_assignments(std::slice::from_ref(&p), &srs, &lock, &[r], &[s]).unwrap();
    let expected = reference::prove(&params, &p, r, s);
    assert_eq!(proofs[0].to_bytes(), expected.to_bytes());
    assert!(verify_proof(&pvk, &proofs[0], &shape.inputs()).unwrap());
}

#[test]
fn random_batches_verify() {
    let params = params(N, 22);
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let circuits: Vec<_> = (5..9).map(|x| witness(N, x)).collect();
    let (proofs, _) = create_random_proof_batch(circuits, &srs, &lock, &mut rng(8)).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let refs: Vec<&Proof> = proofs.iter().collect();
    let inputs: Vec<_> = (5..9)
        .map(|x| mul_chain_inputs(N, Scalar::from(x)))
        .collect();
    assert!(verify_proofs_batch(&pvk, &mut rng(9), &refs, &inputs).unwrap());
}

#[test]
fn prover_refuses_bad_batches_before_the_native_call() {
    let params = params(20, 23);
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let mut p = ProvingAssignment::synthesize(witness(20, 2)).unwrap();
    let (r, s) = blinding(1);
    let err =
        prove_from_assignments(std::slice::from_ref(&p), &srs, &lock, &[r, r], &[s]).unwrap_err();
    assert!(matches!(
        err,
        ProverError::Blinding {
            provers: 1,
            r: 2,
            s: 1
        }
    ));
    p = unseal(p);
    let err = prove_from_assignments(&[p], &srs, &lock, &[r], &[s]).unwrap_err();
    assert!(matches!(err, ProverError::Unsealed { index: 0 }));
    assert_eq!(lock.stats().acquisitions, 0);
}

/// Records one more (trivial) constraint, which unseals the assignment.
fn unseal(mut p: ProvingAssignment) -> ProvingAssignment {
    use bellpepper_core::ConstraintSystem;
    p.enforce(|| "extra", |lc| lc, |lc| lc, |lc| lc);
    assert!(!p.is_sealed());
    p
}

#[test]
fn params_from_another_circuit_give_a_native_shape_error() {
    let params = params(N / 2, 24);
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let p = ProvingAssignment::synthesize(witness(N, 2)).unwrap();
    let (r, s) = blinding(2);
    let err = prove_from_assignments(&[p], &srs, &lock, &[r], &[s]).unwrap_err();
    assert!(
        matches!(err, ProverError::Native(supraseal_c2::Error::Shape { .. })),
        "{err:?}"
    );
}
