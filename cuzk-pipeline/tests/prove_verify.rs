//! Proofs of both workloads verify at tiny and S sizes; wrong inputs, a
//! tampered proof and another circuit's key are rejected.

use bellperson_lite::{prepare_verifying_key, verify_proof, Parameters, Proof};
use cuzk_pipeline::{
    check_params, decode_request_proof, encode_request_proof, gpu_prove, setup,
    synthesize_partition, verify_request, PipelineError, Workload,
};
use supraseal_c2::GpuLock;

struct Proven {
    workload: Workload,
    params: Parameters,
    proofs: Vec<Proof>,
}

/// Sets up `workload` and proves request `request` of `partitions` partitions.
fn prove_request(workload: Workload, request: u64, partitions: usize) -> Proven {
    let params = setup(workload).expect("setup");
    let srs = params.srs().expect("srs");
    let lock = GpuLock::cpu(0);
    let proofs = (0..partitions)
        .map(|j| {
            let seed = cuzk_pipeline::partition_seed(request, partitions, j);
            let partition = synthesize_partition(workload, seed).expect("synthesis");
            check_params(&params, &partition).expect("params fit");
            gpu_prove(&partition, &srs, &lock).expect("prove").proof
        })
        .collect();
    Proven {
        workload,
        params,
        proofs,
    }
}

fn check_all_rejections(p: &Proven, other_vk: &bellperson_lite::PreparedVerifyingKey) {
    let pvk = prepare_verifying_key(&p.params.vk);
    verify_request(&pvk, p.workload, 3, &p.proofs).expect("request verifies");

    // Wrong public inputs: another request's seeds.
    match verify_request(&pvk, p.workload, 4, &p.proofs) {
        Err(PipelineError::Rejected { partition: 0, .. }) => {}
        other => panic!("wrong inputs accepted or misreported: {other:?}"),
    }
    // A tampered proof (second partition's A replaced by its C).
    let mut tampered = p.proofs.clone();
    tampered[1].a = tampered[1].c;
    match verify_request(&pvk, p.workload, 3, &tampered) {
        Err(PipelineError::Rejected { partition: 1, .. }) => {}
        other => panic!("tampered proof accepted or misreported: {other:?}"),
    }
    // The same proof against another circuit's verifying key.
    let inputs = p
        .workload
        .public_inputs(cuzk_pipeline::partition_seed(3, 2, 0));
    assert!(!verify_proof(other_vk, &p.proofs[0], &inputs).unwrap());

    // The encoded request proof round-trips.
    let bytes = encode_request_proof(&p.proofs);
    assert_eq!(bytes.len(), 192 * p.proofs.len());
    assert_eq!(
        decode_request_proof(&bytes, p.proofs.len()).unwrap(),
        p.proofs
    );
    assert!(matches!(
        decode_request_proof(&bytes[..191], 1),
        Err(PipelineError::ProofLength {
            got: 191,
            expected: 192,
            ..
        })
    ));
}

#[test]
fn tiny_sha_chain_and_mul_chain_prove_and_reject_forgeries() {
    let sha = prove_request(Workload::new("sha-chain", 1).unwrap(), 3, 2);
    let mul = prove_request(Workload::new("mul-chain", 1000).unwrap(), 3, 2);
    check_all_rejections(&sha, &prepare_verifying_key(&mul.params.vk));
    check_all_rejections(&mul, &prepare_verifying_key(&sha.params.vk));
}

#[test]
fn s_size_sha_chain_and_dense_mul_chain_prove() {
    // S: sha-chain with 4 blocks (2^17 domain); mul-chain at the same domain.
    let sha = prove_request(Workload::new("sha-chain", 4).unwrap(), 3, 2);
    let mul = prove_request(Workload::new("mul-chain", 100_000).unwrap(), 3, 2);
    check_all_rejections(&sha, &prepare_verifying_key(&mul.params.vk));
    check_all_rejections(&mul, &prepare_verifying_key(&sha.params.vk));
}

#[test]
fn params_for_another_circuit_are_refused_before_proving() {
    let sha = setup(Workload::new("sha-chain", 1).unwrap()).unwrap();
    let mul = Workload::new("mul-chain", 1000).unwrap();
    let partition = synthesize_partition(mul, 0).unwrap();
    let err = check_params(&sha, &partition).unwrap_err();
    assert!(
        matches!(err, PipelineError::ParamsMismatch { .. }),
        "{err:?}"
    );
    // Proving anyway fails with a typed shape error, not a panic.
    let srs = sha.srs().unwrap();
    let err = gpu_prove(&partition, &srs, &GpuLock::cpu(0)).unwrap_err();
    assert!(matches!(err, PipelineError::Prover(_)), "{err:?}");
}
