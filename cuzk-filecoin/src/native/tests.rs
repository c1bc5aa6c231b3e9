//! The PoRep program on inputs that do not satisfy the circuit: refused
//! with the reason, where the gadgets would record a witness that no proof
//! can be made from. (Value-for-value agreement with the gadgets on valid
//! inputs is tested in tests/native_witness.rs.)

use filecoin_proofs::{parameters::public_params, DefaultPieceDomain, SealCommitPhase1Output};
use serde_json::Value;
use storage_proofs_porep::stacked;

use crate::registry::with_tree;
use crate::SectorSize;

use super::NativeError;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/2KiB/c1.json");
    serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("JSON")
}

/// Partition 0's native witness of the 2 KiB fixture after `tamper`.
fn witness_after(tamper: impl FnOnce(&mut Value)) -> Result<usize, NativeError> {
    let mut c1 = fixture();
    tamper(&mut c1);
    let size = SectorSize::S2KiB;
    with_tree!(size, Tree => {
        let out: SealCommitPhase1Output<Tree> = serde_json::from_value(c1).expect("C1");
        let pp = public_params::<Tree>(&size.porep_config()).expect("public params");
        let comm_d: DefaultPieceDomain =
            filecoin_proofs::as_safe_commitment(&out.comm_d, "comm_d").expect("comm_d");
        let comm_r = filecoin_proofs::as_safe_commitment(&out.comm_r, "comm_r").expect("comm_r");
        let pub_inputs = stacked::PublicInputs {
            replica_id: out.replica_id,
            tau: Some(stacked::Tau { comm_d, comm_r }),
            k: None,
            seed: Some(out.seed),
        };
        let num_aux = crate::porep::blank(size)
            .expect("blank")
            .compile()
            .expect("shape")
            .num_aux();
        super::porep_partition(&pp, &pub_inputs, &out.vanilla_proofs[0], 0, num_aux)
            .map(|aux| aux.len())
    })
}

fn byte<'a>(c1: &'a mut Value, pointer: &str) -> &'a mut Value {
    c1.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} in the fixture"))
}

#[test]
fn the_untampered_fixture_gives_a_whole_witness() {
    assert!(witness_after(|_| ()).expect("witness") > 0);
}

#[test]
fn a_changed_parent_label_is_refused() {
    let err = witness_after(|c1| {
        let b = byte(
            c1,
            "/vanilla_proofs/0/0/replica_column_proofs/drg_parents/0/column/rows/0/0",
        );
        *b = Value::from(b.as_u64().expect("a byte") ^ 1);
    })
    .expect_err("a column that is not in tree C");
    assert!(
        matches!(&err, NativeError::False(why) if why.contains("column path does not reach comm_c")),
        "{err}"
    );
}

#[test]
fn a_changed_data_leaf_is_refused() {
    let err = witness_after(|c1| {
        let leaf = byte(c1, "/vanilla_proofs/0/0/comm_d_proofs/data/Single/leaf/0");
        *leaf = Value::from(leaf.as_u64().expect("a byte") ^ 1);
    })
    .expect_err("a data leaf that is not in tree D");
    assert!(
        matches!(&err, NativeError::False(why) if why.contains("does not reach comm_d")),
        "{err}"
    );
}
