//! Bad inputs get clear errors; names, ids and partition counts match
//! filecoin-proofs'. None of these needs Groth parameters.

mod common;

use common::{files, fixture, meta, post_inputs, seal_ids, update_comms, SIZE};
use cuzk_filecoin::{
    params, prover_id, CircuitId, FilecoinError, FilecoinRequest, ProofKind, SectorSize,
};

fn message(result: Result<FilecoinRequest, FilecoinError>) -> String {
    match result {
        Ok(r) => panic!("accepted: {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn parameter_files_have_filecoin_proofs_names() {
    let names = [
        (ProofKind::PoRep, "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"),
        (ProofKind::WinningPoSt, "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e"),
        (ProofKind::WindowPoSt, "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0"),
        (ProofKind::SnapDeals, "empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194"),
    ];
    for (kind, name) in names {
        let id = CircuitId::new(kind, SIZE);
        assert_eq!(id.cache_id().unwrap(), name, "{id}");
        let path = id.vk_path(std::path::Path::new("/p")).unwrap();
        assert_eq!(path.to_str().unwrap(), format!("/p/v28-{name}.vk"));
    }
}

#[test]
fn partition_counts_and_ids() {
    let parts = |kind, size| CircuitId::new(kind, size).partitions();
    assert_eq!(parts(ProofKind::PoRep, SectorSize::S2KiB), 1);
    assert_eq!(parts(ProofKind::PoRep, SectorSize::S32GiB), 10);
    assert_eq!(parts(ProofKind::SnapDeals, SectorSize::S2KiB), 1);
    assert_eq!(parts(ProofKind::SnapDeals, SectorSize::S8MiB), 4);
    assert_eq!(parts(ProofKind::SnapDeals, SectorSize::S32GiB), 16);
    assert_eq!(parts(ProofKind::WindowPoSt, SectorSize::S32GiB), 1);
    assert_eq!(SectorSize::S2KiB.porep_id()[0], 5);
    assert_eq!(SectorSize::S64GiB.porep_id()[0], 9);
    assert_eq!(
        prover_id(1000),
        seal_ids().prover_id,
        "LEB128 of miner 1000"
    );
    assert_eq!(prover_id(5)[..2], [5, 0]);
    assert_eq!(prover_id(300)[..3], [0xac, 0x02, 0]);
    assert_eq!("32GiB".parse::<SectorSize>().unwrap(), SectorSize::S32GiB);
    assert_eq!("2048".parse::<SectorSize>().unwrap(), SectorSize::S2KiB);
    assert!("3KiB".parse::<SectorSize>().is_err());
    assert!("post".parse::<ProofKind>().is_err());
}

#[test]
fn malformed_and_truncated_c1_are_refused() {
    let ids = seal_ids();
    let e = message(FilecoinRequest::porep(b"{not json", Some(SIZE), ids));
    assert!(e.starts_with("bad C1 output"), "{e}");
    let c1 = fixture("c1.json");
    let e = message(FilecoinRequest::porep(&c1[..c1.len() / 2], Some(SIZE), ids));
    assert!(e.starts_with("bad C1 output"), "{e}");
    let e = message(FilecoinRequest::porep(
        br#"{"Phase1Out": "%%%"}"#,
        None,
        ids,
    ));
    assert!(e.contains("base64"), "{e}");
    let e = message(FilecoinRequest::porep(br#"[1, 2]"#, Some(SIZE), ids));
    assert!(e.contains("not a JSON object"), "{e}");
}

#[test]
fn c1_for_another_sector_size_is_refused() {
    let ids = seal_ids();
    // The Curio form names its size.
    let e = message(FilecoinRequest::porep(
        &fixture("c1-curio.json"),
        Some(SectorSize::S8MiB),
        ids,
    ));
    assert!(e.contains("it is for 2KiB sectors, not 8MiB"), "{e}");
    // filecoin-proofs' form does not: its vanilla proofs do not verify.
    let e = message(FilecoinRequest::porep(
        &fixture("c1.json"),
        Some(SectorSize::S8MiB),
        ids,
    ));
    assert_eq!(e, "C1 output does not verify for porep at 8MiB");
}

#[test]
fn tampered_c1_is_refused() {
    let text = String::from_utf8(fixture("c1.json")).unwrap();
    // Change one byte of the first comm_d proof's leaf.
    let at = text.find("\"leaf\":[").unwrap() + "\"leaf\":[".len();
    let end = at + text[at..].find(',').unwrap();
    let old: u8 = text[at..end].parse().unwrap();
    let tampered = format!("{}{}{}", &text[..at], old ^ 1, &text[end..]);
    let e = message(FilecoinRequest::porep(
        tampered.as_bytes(),
        Some(SIZE),
        seal_ids(),
    ));
    assert_eq!(e, "C1 output does not verify for porep at 2KiB");
}

#[test]
fn tampered_or_garbage_vanilla_proofs_are_refused() {
    let mut vanilla = files(&meta()["winning"]["vanilla_proofs"]);
    let e = message(FilecoinRequest::winning_post(
        SIZE,
        post_inputs("winning"),
        &[vec![1, 2, 3]],
    ));
    assert!(e.starts_with("bad vanilla proof 0"), "{e}");
    let last = vanilla[0].len() - 40;
    vanilla[0][last] ^= 0x10;
    let e = message(FilecoinRequest::winning_post(
        SIZE,
        post_inputs("winning"),
        &vanilla,
    ));
    assert!(
        e.contains("does not verify") || e.starts_with("bad vanilla proof"),
        "{e}"
    );

    let window = files(&meta()["window"]["vanilla_proofs"]);
    let mut other = post_inputs("window");
    other.randomness[0] ^= 1;
    let e = message(FilecoinRequest::window_post(SIZE, other, &window));
    assert_eq!(e, "vanilla proofs does not verify for window-post at 2KiB");
    let e = message(FilecoinRequest::window_post(
        SIZE,
        post_inputs("window"),
        &[],
    ));
    assert!(e.contains("none given"), "{e}");

    let snap = files(&meta()["snap"]["partition_proofs"]);
    let mut comms = update_comms();
    comms.comm_d_new[0] ^= 1;
    let e = message(FilecoinRequest::snap_deals(SIZE, comms, &snap));
    assert!(
        e.contains("does not verify") || e.starts_with("bad comm_d_new"),
        "{e}"
    );
    let e = message(FilecoinRequest::snap_deals(SIZE, update_comms(), &[]));
    assert!(e.contains("0 given, a 2KiB update has 1"), "{e}");
}

#[test]
fn a_missing_parameter_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let id = CircuitId::new(ProofKind::WindowPoSt, SIZE);
    let e = params::load(id, dir.path()).unwrap_err().to_string();
    let expected = id.params_path(dir.path()).unwrap();
    assert_eq!(e, format!("missing parameter file {}", expected.display()));
}

#[test]
fn setup_refuses_an_unwritable_directory_before_generating() {
    let started = std::time::Instant::now();
    let id = CircuitId::new(ProofKind::PoRep, SIZE);
    let e = params::setup(
        id,
        std::path::Path::new("/proc/no-such-dir"),
        &mut rand::thread_rng(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("/proc/no-such-dir"), "{e}");
    assert!(started.elapsed().as_secs() < 5, "it generated first");
}
