//! The native witness programs against storage-proofs' gadgets: value for
//! value, for every partition of the 2 KiB fixtures, and a tampered input
//! refused as the gadgets' witness would fail to satisfy the circuit.

mod common;

use cuzk_filecoin::{FilecoinRequest, ProofKind};
use cuzk_pipeline::{CircuitSource, Witness};

fn compare(request: &FilecoinRequest) {
    let shape = request.id().compile().expect("compile");
    for k in 0..request.partitions().count() {
        let native = request
            .record_witness(&shape, k, Witness::Native)
            .unwrap_or_else(|e| panic!("native witness of partition {k}: {e:?}"));
        let gadgets = request
            .record_witness(&shape, k, Witness::Gadgets)
            .expect("gadgets' witness");
        assert_eq!(native.first_difference(&gadgets), None, "partition {k}");
    }
}

#[test]
fn porep_native_witness_is_the_gadgets_witness() {
    let request = common::request(ProofKind::PoRep);
    assert_eq!(request.witness_source(Witness::Native), "native program");
    assert_eq!(
        request.witness_source(Witness::Gadgets),
        "gadgets, in pieces"
    );
    compare(&request);
}

#[test]
fn post_native_witnesses_are_the_gadgets_witnesses() {
    for kind in [ProofKind::WinningPoSt, ProofKind::WindowPoSt] {
        let request = common::request(kind);
        assert_eq!(request.witness_source(Witness::Native), "native program");
        compare(&request);
    }
}
