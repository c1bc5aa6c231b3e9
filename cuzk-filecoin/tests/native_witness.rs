//! The native witness programs against storage-proofs' gadgets: value for
//! value, for every kind and every partition of the sealed 2 KiB and 8 MiB
//! fixtures.

mod common;

use std::path::Path;

use cuzk_filecoin::{
    FilecoinRequest, PostInputs, ProofKind, SealIds, SectorSize, UpdateCommitments,
};
use cuzk_pipeline::{CircuitSource, Witness};
use serde_json::Value;

/// Every kind has a native witness program.
const NATIVE: [ProofKind; 4] = ProofKind::ALL;

fn compare(request: &FilecoinRequest) {
    assert_eq!(request.witness_source(Witness::Native), "native program");
    let shape = request.id().compile().expect("compile");
    for k in 0..request.partitions().count() {
        let native = request
            .record_witness(&shape, k, Witness::Native)
            .unwrap_or_else(|e| panic!("{}: native witness of partition {k}: {e:?}", request.id()));
        let gadgets = request
            .record_witness(&shape, k, Witness::Gadgets)
            .expect("gadgets' witness");
        assert_eq!(
            native.first_difference(&gadgets),
            None,
            "{} partition {k}",
            request.id()
        );
    }
}

/// The request of `kind` from the fixture in `fixtures/<dir>`.
fn request_in(dir: &str, size: SectorSize, kind: ProofKind) -> FilecoinRequest {
    let read = |name: &str| common::fixture_in(dir, name);
    let meta: Value = serde_json::from_slice(&read("meta.json")).expect("meta.json");
    let prover_id = common::hex32(&meta["prover_id"]);
    let files = |list: &Value| -> Vec<Vec<u8>> {
        let list = list.as_array().expect("a list of files");
        list.iter()
            .map(|f| read(f.as_str().expect("name")))
            .collect()
    };
    let post = |section: &str| PostInputs {
        randomness: common::hex32(&meta[section]["randomness"]),
        prover_id,
        partition_index: meta[section]["partition_index"].as_u64().unwrap_or(0) as usize,
    };
    let made = match kind {
        ProofKind::PoRep => {
            let ids = SealIds {
                prover_id,
                sector_id: meta["sector_id"].as_u64().expect("sector_id"),
            };
            FilecoinRequest::porep(&read("c1-curio.json"), Some(size), ids)
        }
        ProofKind::WinningPoSt => FilecoinRequest::winning_post(
            size,
            post("winning"),
            &files(&meta["winning"]["vanilla_proofs"]),
        ),
        ProofKind::WindowPoSt => FilecoinRequest::window_post(
            size,
            post("window"),
            &files(&meta["window"]["vanilla_proofs"]),
        ),
        ProofKind::SnapDeals => {
            let snap = &meta["snap"];
            let comms = UpdateCommitments {
                comm_r_old: common::hex32(&snap["comm_r_old"]),
                comm_r_new: common::hex32(&snap["comm_r_new"]),
                comm_d_new: common::hex32(&snap["comm_d_new"]),
            };
            FilecoinRequest::snap_deals(size, comms, &files(&snap["partition_proofs"]))
        }
    };
    made.unwrap_or_else(|e| panic!("{kind} from fixtures/{dir}: {e}"))
}

#[test]
fn native_witnesses_are_the_gadgets_witnesses_at_2kib() {
    for kind in NATIVE {
        compare(&common::request(kind));
    }
}

#[test]
fn native_witnesses_are_the_gadgets_witnesses_at_8mib() {
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/8MiB")
        .is_dir());
    for kind in NATIVE {
        compare(&request_in("8MiB", SectorSize::S8MiB, kind));
    }
}

#[test]
fn the_gadgets_stay_available() {
    let porep = common::request(ProofKind::PoRep);
    assert_eq!(porep.witness_source(Witness::Gadgets), "gadgets, in pieces");
    let snap = common::request(ProofKind::SnapDeals);
    assert_eq!(snap.witness_source(Witness::Gadgets), "gadgets");
}
