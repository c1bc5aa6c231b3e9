//! The fuzz targets: each takes bytes as they arrive from outside and runs
//! them through cuzk's own entry points, which must answer with an error,
//! never a panic, a hang or an allocation the input does not pay for.
//! Where two readers of the same format exist, they must agree, and what
//! decodes must encode back to the same bytes.
//!
//! Shared by the afl.rs binary (`fuzz/src/main.rs`) and the corpus replay
//! test of the main workspace (`cuzk-filecoin/tests/fuzz_corpus.rs`), so it
//! uses only crates both have.

use bellperson_lite::{Parameters, Proof, VerifyingKey, PROOF_BYTES};
use cuzk_filecoin::{
    commitment, commitment_cid, prover_id, CommitmentKind, FilecoinError, FilecoinRequest,
    PostInputs, SealIds, SectorSize, UpdateCommitments,
};

/// A fuzz target: its name (and corpus folder) and its harness.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("params", params),
    ("proof", proof),
    ("c1", c1),
    ("post", post),
    ("snap", snap),
];

/// A `.params` file: the slice decoder, the stream reader and the
/// verifying-key reader.
pub fn params(data: &[u8]) {
    let whole = Parameters::from_bytes(data);
    let streamed = Parameters::read(data);
    assert_eq!(
        whole.is_ok(),
        streamed.is_ok(),
        "from_bytes and read disagree: {whole:?} / {streamed:?}"
    );
    if let Ok(params) = whole {
        assert_eq!(params.to_bytes().expect("encodes"), data, "round trip");
    }
    if let Ok(vk) = VerifyingKey::read(data) {
        let mut out = Vec::new();
        vk.write(&mut out).expect("encodes");
        assert!(data.starts_with(&out), "verifying key round trip");
    }
}

/// A 192-byte proof, exact and from a stream.
pub fn proof(data: &[u8]) {
    let exact = Proof::from_bytes(data);
    let streamed = Proof::read(data);
    if data.len() == PROOF_BYTES {
        assert_eq!(
            exact.is_ok(),
            streamed.is_ok(),
            "from_bytes and read disagree"
        );
    }
    if let Ok(proof) = exact {
        assert_eq!(proof.to_bytes()[..], data[..], "round trip");
    }
    if let Ok(proof) = streamed {
        assert_eq!(proof.to_bytes()[..], data[..PROOF_BYTES], "round trip");
    }
}

/// A PoRep C1 output, in any of its forms, for the 2 KiB fixture's sector.
pub fn c1(data: &[u8]) {
    let _ = FilecoinRequest::c1_sector_number(data);
    let _ = c1_request(data);
}

/// The PoRep request `c1` builds.
pub fn c1_request(data: &[u8]) -> Result<FilecoinRequest, FilecoinError> {
    let ids = SealIds {
        prover_id: prover_id(1000),
        sector_id: 872761,
    };
    FilecoinRequest::porep(data, Some(SectorSize::S2KiB), ids)
}

/// A PoSt vanilla proof (bincode) at 2 KiB: the first byte picks
/// WinningPoSt (odd) or WindowPoSt (even), the rest is the proof.
pub fn post(data: &[u8]) {
    let _ = post_request(data);
}

/// The PoSt request `post` builds (none for empty input).
pub fn post_request(data: &[u8]) -> Option<Result<FilecoinRequest, FilecoinError>> {
    let (&which, proof) = data.split_first()?;
    let vanilla = [proof.to_vec()];
    let size = SectorSize::S2KiB;
    Some(if which & 1 == 1 {
        let randomness = hex32("8133c3f43bb5e097b61b7d98486f23449263abb692b64f19f0da3fb73495f131");
        FilecoinRequest::winning_post(size, post_inputs(randomness), &vanilla)
    } else {
        let randomness = hex32("3d16d8ce3a73097444b13d836bfe2afa7b5e071670e205daf998c47494a0641a");
        FilecoinRequest::window_post(size, post_inputs(randomness), &vanilla)
    })
}

fn post_inputs(randomness: [u8; 32]) -> PostInputs {
    PostInputs {
        randomness,
        prover_id: prover_id(1000),
        partition_index: 0,
    }
}

/// A SnapDeals partition proof (bincode) at 2 KiB for the fixture's
/// commitments; the same bytes as a commitment (raw or CID) too.
pub fn snap(data: &[u8]) {
    for kind in [CommitmentKind::Sealed, CommitmentKind::Unsealed] {
        if let Ok(comm) = commitment("comm", data, kind) {
            if data.len() != 32 {
                assert_eq!(commitment_cid(&comm, kind), data, "CID round trip");
            }
        }
    }
    let _ = snap_request(data);
}

/// The SnapDeals request `snap` builds.
pub fn snap_request(data: &[u8]) -> Result<FilecoinRequest, FilecoinError> {
    let comms = UpdateCommitments {
        comm_r_old: hex32("c62d4f5045d3c72f9adeca32fc49097cb5ff0a26b11fd5ef6c772e2bdce7d924"),
        comm_r_new: hex32("ca32161af9397c8ef642aa89be769891763495ec5dc5d8f0f1fb93b546b30f03"),
        comm_d_new: hex32("61784375ccb641891006978218a52d9684be95ecd08561130185eb80e0b2fe30"),
    };
    FilecoinRequest::snap_deals(SectorSize::S2KiB, comms, &[data.to_vec()])
}

/// 32 bytes from 64 hex digits (the fixture's `meta.json` values).
fn hex32(hex: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}
