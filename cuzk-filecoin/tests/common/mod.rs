//! The committed 2 KiB fixtures (made by tools/fil-fixtures) and test
//! parameters, generated once per test run.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use bellperson_lite::Parameters;
use cuzk_filecoin::{
    params, CircuitId, FilecoinRequest, PostInputs, ProofKind, SealIds, SectorSize,
    UpdateCommitments,
};
use rand::SeedableRng;
use serde_json::Value;
use supraseal_c2::Srs;

pub const SIZE: SectorSize = SectorSize::S2KiB;

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/2KiB")
}

pub fn meta() -> &'static Value {
    static META: OnceLock<Value> = OnceLock::new();
    META.get_or_init(|| {
        let bytes = std::fs::read(fixture_dir().join("meta.json")).expect("meta.json");
        serde_json::from_slice(&bytes).expect("meta.json parses")
    })
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_dir().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// `fixtures/<dir>/<name>`, for the fixtures beside the 2 KiB sealed one
/// (`cc-2KiB`: a CC sector's C1 output made without sealing).
pub fn fixture_in(dir: &str, name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

pub fn hex32(value: &Value) -> [u8; 32] {
    let bytes = hex::decode(value.as_str().expect("hex string")).expect("hex");
    bytes.try_into().expect("32 bytes")
}

pub fn seal_ids() -> SealIds {
    seal_ids_of(meta())
}

/// The prover and sector of a fixture's `meta.json`.
pub fn seal_ids_of(meta: &Value) -> SealIds {
    SealIds {
        prover_id: hex32(&meta["prover_id"]),
        sector_id: meta["sector_id"].as_u64().expect("sector_id"),
    }
}

/// `fixtures/<dir>/meta.json`.
pub fn meta_in(dir: &str) -> Value {
    serde_json::from_slice(&fixture_in(dir, "meta.json")).expect("meta.json")
}

pub fn files(list: &Value) -> Vec<Vec<u8>> {
    list.as_array()
        .expect("a list of files")
        .iter()
        .map(|f| fixture(f.as_str().expect("file name")))
        .collect()
}

pub fn post_inputs(section: &str) -> PostInputs {
    let m = &meta()[section];
    PostInputs {
        randomness: hex32(&m["randomness"]),
        prover_id: hex32(&meta()["prover_id"]),
        partition_index: m["partition_index"].as_u64().unwrap_or(0) as usize,
    }
}

pub fn update_comms() -> UpdateCommitments {
    let m = &meta()["snap"];
    UpdateCommitments {
        comm_r_old: hex32(&m["comm_r_old"]),
        comm_r_new: hex32(&m["comm_r_new"]),
        comm_d_new: hex32(&m["comm_d_new"]),
    }
}

/// The request of `kind` from the fixtures.
pub fn request(kind: ProofKind) -> FilecoinRequest {
    let made = match kind {
        ProofKind::PoRep => FilecoinRequest::porep(&fixture("c1-curio.json"), None, seal_ids()),
        ProofKind::WinningPoSt => FilecoinRequest::winning_post(
            SIZE,
            post_inputs("winning"),
            &files(&meta()["winning"]["vanilla_proofs"]),
        ),
        ProofKind::WindowPoSt => FilecoinRequest::window_post(
            SIZE,
            post_inputs("window"),
            &files(&meta()["window"]["vanilla_proofs"]),
        ),
        ProofKind::SnapDeals => FilecoinRequest::snap_deals(
            SIZE,
            update_comms(),
            &files(&meta()["snap"]["partition_proofs"]),
        ),
    };
    made.unwrap_or_else(|e| panic!("{kind} request from the fixtures: {e}"))
}

/// The parameter directory of this test run, also set as
/// `FIL_PROOFS_PARAMETER_CACHE` (filecoin-proofs reads it once, at its
/// first use, so every test asks for it first).
pub fn param_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fil-params");
        std::fs::create_dir_all(&dir).expect("parameter directory");
        params::point_filecoin_proofs_at(&dir).expect("filecoin-proofs reads this directory");
        dir
    })
}

/// Test parameters for `kind` at 2 KiB, generated once per run (the `.vk`
/// and `.params` written under filecoin-proofs' names), with their SRS.
pub fn key(kind: ProofKind) -> Arc<(Parameters, Srs)> {
    type Slots = Mutex<HashMap<ProofKind, Arc<OnceLock<Arc<(Parameters, Srs)>>>>>;
    static KEYS: OnceLock<Slots> = OnceLock::new();
    let dir = param_dir();
    let slot = KEYS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(kind)
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let id = CircuitId::new(kind, SIZE);
        let started = Instant::now();
        let seed = 0x5eed + kind as u64;
        let (parameters, report) = params::setup(
            id,
            dir,
            &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            None,
        )
        .expect("setup");
        assert_eq!(report.sidecar, bellperson_lite::SidecarOutcome::Written);
        let (_, load) = params::load_with(id, dir, Default::default()).expect("load");
        assert_eq!(load.mode, bellperson_lite::LoadMode::Digest, "{id}");
        eprintln!(
            "{id}: parameters generated in {:.1} s, written in {:.1} s",
            report.seconds,
            started.elapsed().as_secs_f64() - report.seconds
        );
        let srs = parameters.srs().expect("srs");
        Arc::new((parameters, srs))
    })
    .clone()
}
