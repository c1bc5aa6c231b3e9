//! The workloads are exactly those of `shared/workloads.md`: the circuits'
//! public inputs equal the natively computed ones, and sizes match.

use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::Circuit;
use bellperson_lite::ProvingAssignment;
use blstrs::Scalar;
use cuzk_pipeline::workload::{mul_chain, sha_chain};
use cuzk_pipeline::{partition_seed, Workload};

#[test]
fn sha_chain_message_pads_to_exactly_c_blocks() {
    for blocks in [1, 2, 5] {
        let len = sha_chain::message(blocks, 3).len();
        assert_eq!(len, 55 + 64 * (blocks - 1));
        // 0x80, zero padding, 8 length bytes: one block per 64 bytes.
        assert_eq!((len + 1 + 8).div_ceil(64), blocks);
        assert_eq!((len + 9) % 64, 0);
    }
}

#[test]
fn sha_chain_message_bytes_follow_the_definition() {
    let m = sha_chain::message(1, 5);
    let byte = |i: u64| {
        ((i.wrapping_mul(2654435761)
            .wrapping_add(5u64.wrapping_mul(40503)))
            >> 8) as u8
    };
    assert_eq!(m[0], byte(0));
    assert_eq!(m[54], byte(54));
    assert_ne!(sha_chain::message(1, 5), sha_chain::message(1, 6));
}

#[test]
fn sha_chain_circuit_is_satisfied_and_exposes_the_native_digest() {
    let workload = Workload::new("sha-chain", 2).unwrap();
    let mut cs = TestConstraintSystem::<Scalar>::new();
    workload.circuit(11).synthesize(&mut cs).unwrap();
    assert!(
        cs.is_satisfied(),
        "unsatisfied: {:?}",
        cs.which_is_unsatisfied()
    );
    let native = workload.public_inputs(11);
    assert_eq!(native.len(), 2);
    assert!(
        cs.verify(&native),
        "circuit inputs differ from the native digest packing"
    );
    // About 27,000 constraints per block.
    let per_block = cs.num_constraints() / 2;
    assert!(
        (20_000..35_000).contains(&per_block),
        "{per_block} constraints per block"
    );
}

#[test]
fn mul_chain_circuit_matches_the_recurrence() {
    let n = 1000;
    let workload = Workload::new("mul-chain", n).unwrap();
    let mut cs = TestConstraintSystem::<Scalar>::new();
    workload.circuit(4).synthesize(&mut cs).unwrap();
    assert!(cs.is_satisfied());
    assert_eq!(cs.num_constraints(), n + 1);
    let x0 = Scalar::from(6u64);
    let mut x = x0;
    for i in 0..n as u64 {
        x = x * x + Scalar::from(i + 1);
    }
    assert_eq!(mul_chain::public_inputs(n, 4), vec![x0, x]);
    assert!(cs.verify(&[x0, x]));
}

#[test]
fn proving_assignment_sees_the_same_public_inputs() {
    for workload in [
        Workload::new("sha-chain", 1).unwrap(),
        Workload::new("mul-chain", 50).unwrap(),
    ] {
        let p = ProvingAssignment::synthesize(workload.circuit(9)).unwrap();
        assert_eq!(
            p.public_inputs(),
            workload.public_inputs(9).as_slice(),
            "{workload}"
        );
    }
}

#[test]
fn partition_seeds_follow_request_times_partitions_plus_index() {
    assert_eq!(partition_seed(0, 10, 3), 3);
    assert_eq!(partition_seed(2, 10, 3), 23);
    assert_eq!(partition_seed(5, 1, 0), 5);
}

#[test]
fn workload_names_and_sizes_are_checked() {
    assert!(Workload::new("sha-chain", 0).is_err());
    assert!(Workload::new("md5-chain", 1).is_err());
    assert_eq!(
        "mul-chain/7".parse::<Workload>().unwrap(),
        Workload::MulChain { n: 7 }
    );
    assert!("sha-chain".parse::<Workload>().is_err());
}
