//! Bad inputs get clear errors; names, ids and partition counts match
//! filecoin-proofs'; registered proof numbers match go-state-types';
//! commitments and C1 outputs in every form Curio sends are read. None of
//! these needs Groth parameters.

mod common;

use base64::Engine as _;
use common::{files, fixture, meta, post_inputs, seal_ids, update_comms, SIZE};
use cuzk_filecoin::{
    commitment, commitment_cid, params, prover_id, size_of_seal_proof_name, CircuitId,
    CommitmentKind, FilecoinError, FilecoinRequest, ProofKind, RegisteredProof, SealIds,
    SectorSize, UpdateCommitments,
};
use cuzk_pipeline::Witness;
use serde_json::Value;

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

/// The compiled path records PoRep and PoSt witnesses from the gadgets in
/// pieces, in parallel (a challenge or a run of sectors each); every kind's
/// result must be exactly what full synthesis by the gadgets gives (the
/// native programs are compared with this path in tests/native_witness.rs).
#[test]
fn compiled_witness_equals_full_synthesis_for_every_kind() {
    for kind in ProofKind::ALL {
        let request = common::request(kind);
        let source = match kind {
            ProofKind::SnapDeals => "gadgets",
            _ => "gadgets, in pieces",
        };
        assert_eq!(
            cuzk_pipeline::CircuitSource::witness_source(&request, Witness::Gadgets),
            source
        );
        let shape = request.id().compile().expect("compile");
        for k in 0..request.partitions().count() {
            let gadgets =
                cuzk_pipeline::CircuitSource::record_witness(&request, &shape, k, Witness::Gadgets)
                    .expect("gadgets' witness");
            let compiled = shape.evaluate(gadgets);
            let full = request.synthesize(k, None).expect("full");
            assert_eq!(
                compiled.first_difference(&full),
                None,
                "{kind} partition {k}"
            );
        }
    }
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
    assert!(
        e.starts_with(&format!("missing parameter file {}", expected.display())),
        "{e}"
    );
    let command = format!(
        "cuzk setup --kind window-post --sector-size 2KiB --param-dir {}",
        dir.path().display()
    );
    assert!(e.contains(&command), "{e}");
}

#[test]
fn setup_refuses_an_unwritable_directory_before_generating() {
    let started = std::time::Instant::now();
    let id = CircuitId::new(ProofKind::PoRep, SIZE);
    let e = params::setup(
        id,
        std::path::Path::new("/proc/no-such-dir"),
        &mut rand::thread_rng(),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("/proc/no-such-dir"), "{e}");
    assert!(started.elapsed().as_secs() < 5, "it generated first");
}

#[test]
fn registered_proof_numbers_are_go_state_types() {
    let named = |kind, n| RegisteredProof::from_number(kind, n).unwrap().name();
    let refused = |kind, n| {
        RegisteredProof::from_number(kind, n)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(named(ProofKind::PoRep, 0), "StackedDrg2KiBV1");
    assert_eq!(named(ProofKind::PoRep, 8), "StackedDrg32GiBV1_1");
    assert_eq!(
        named(ProofKind::PoRep, 13),
        "StackedDrg32GiBV1_1_Feat_SyntheticPoRep"
    );
    assert_eq!(
        named(ProofKind::PoRep, 19),
        "StackedDrg64GiBV1_2_Feat_NonInteractivePoRep"
    );
    assert_eq!(named(ProofKind::WinningPoSt, 3), "StackedDrgWinning32GiBV1");
    assert_eq!(named(ProofKind::WindowPoSt, 8), "StackedDrgWindow32GiBV1");
    assert_eq!(
        named(ProofKind::WindowPoSt, 13),
        "StackedDrgWindow32GiBV1_2"
    );
    assert_eq!(named(ProofKind::SnapDeals, 4), "StackedDrg64GiBV1");
    let e = refused(ProofKind::PoRep, 20);
    assert!(
        e.contains("no registered seal proof has that number"),
        "{e}"
    );
    let e = refused(ProofKind::WinningPoSt, 10);
    assert!(
        e.contains("StackedDrgWindow2KiBV1_2 is a WindowPoSt proof"),
        "{e}"
    );
    let e = refused(ProofKind::WindowPoSt, 3);
    assert!(
        e.contains("StackedDrgWinning32GiBV1 is a WinningPoSt proof"),
        "{e}"
    );
    assert!(refused(ProofKind::SnapDeals, 5).contains("update"));

    // Numbers and names round-trip; cuzk proves one proof per kind and
    // size, and PoRep's Synthetic and NI-PoRep twins as well.
    for kind in ProofKind::ALL {
        let mut proven = 0;
        for n in 0..25 {
            let Ok(p) = RegisteredProof::from_number(kind, n) else {
                continue;
            };
            assert_eq!(p.number(), n, "{p}");
            assert_eq!(RegisteredProof::from_name(kind, &p.name()).unwrap(), p);
            proven += usize::from(p.is_proven());
        }
        let expected = if kind == ProofKind::PoRep { 15 } else { 5 };
        assert_eq!(proven, expected, "{kind}");
        for size in SectorSize::ALL {
            let p = RegisteredProof::proven(kind, size);
            assert_eq!((p.kind, p.size), (kind, size));
            assert!(p.check_proven().is_ok(), "{p}");
        }
    }
    let porep = |size| RegisteredProof::proven(ProofKind::PoRep, size);
    assert_eq!(porep(SectorSize::S2KiB).number(), 5);
    assert_eq!(
        porep(SectorSize::S64GiB).number(),
        SectorSize::S64GiB.seal_proof_v1_1()
    );
    assert_eq!(
        RegisteredProof::proven(ProofKind::WindowPoSt, SectorSize::S32GiB).number(),
        13
    );
    assert_eq!(
        RegisteredProof::proven(ProofKind::WinningPoSt, SectorSize::S2KiB).number(),
        0
    );
    for (kind, n) in [(ProofKind::PoRep, 3), (ProofKind::WindowPoSt, 8)] {
        let e = RegisteredProof::from_number(kind, n)
            .unwrap()
            .check_proven()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not supported: cuzk proves"), "{e}");
    }
    let e = RegisteredProof::from_number(ProofKind::PoRep, 3)
        .unwrap()
        .check_proven()
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "StackedDrg32GiBV1 (3) is not supported: cuzk proves StackedDrg32GiBV1_1 (8)"
    );
    // Synthetic PoRep: its own porep_id (its number) and the feature, the
    // interactive proof's partitions.
    let winning = RegisteredProof::proven(ProofKind::WinningPoSt, SectorSize::S2KiB);
    let e = winning.porep_config().unwrap_err().to_string();
    assert!(e.contains("is not a seal proof"), "{e}");
    let synthetic = RegisteredProof::from_number(ProofKind::PoRep, 13).unwrap();
    assert!(synthetic.check_proven().is_ok());
    let config = synthetic.porep_config().unwrap();
    assert_eq!(config.porep_id[0], 13);
    assert!(config.feature_enabled(storage_proofs_core::api_version::ApiFeature::SyntheticPoRep));
    assert_eq!(
        config.partitions.0,
        SectorSize::S32GiB.porep_config().partitions.0
    );
    // NI-PoRep: the feature, its own porep_id, 126 partitions at 32 GiB
    // (13 at the test sizes) of the interactive proof's circuit.
    let ni = RegisteredProof::from_number(ProofKind::PoRep, 18).unwrap();
    assert!(ni.check_proven().is_ok());
    let config = ni.porep_config().unwrap();
    assert_eq!(config.porep_id[0], 18);
    assert!(
        config.feature_enabled(storage_proofs_core::api_version::ApiFeature::NonInteractivePoRep)
    );
    assert_eq!(config.partitions.0, 126);
    let ni_2kib = RegisteredProof::from_number(ProofKind::PoRep, 15).unwrap();
    assert_eq!(ni_2kib.porep_config().unwrap().partitions.0, 13);
    assert_eq!(
        size_of_seal_proof_name("StackedDrg8MiBV1_1_Feat_SyntheticPoRep").unwrap(),
        SectorSize::S8MiB
    );
    assert!(size_of_seal_proof_name("StackedDrg3KiBV1_1").is_err());
}

#[test]
fn commitments_are_raw_bytes_or_commitment_cids() {
    let comms = update_comms();
    let sealed = commitment_cid(&comms.comm_r_old, CommitmentKind::Sealed);
    let unsealed = commitment_cid(&comms.comm_d_new, CommitmentKind::Unsealed);
    // go-fil-commcid's bytes: CIDv1, codec, multihash, digest length.
    assert_eq!(hex::encode(&sealed[..8]), "0182e20381e80220");
    assert_eq!(hex::encode(&unsealed[..7]), "0181e203922020");
    assert_eq!((sealed.len(), unsealed.len()), (40, 39));
    // go-fil-commcid's own vector: the empty 32 GiB sector's comm_d,
    // baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq.
    let empty = hex::decode(
        "0181e203922020077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e",
    )
    .unwrap();
    let digest = commitment("comm_d", &empty, CommitmentKind::Unsealed).unwrap();
    assert_eq!(hex::encode(digest)[..8], *"077e5fde");

    let read = |bytes: &[u8], kind| commitment("comm_x", bytes, kind);
    assert_eq!(
        read(&sealed, CommitmentKind::Sealed).unwrap(),
        comms.comm_r_old
    );
    assert_eq!(
        read(&comms.comm_r_old, CommitmentKind::Sealed).unwrap(),
        comms.comm_r_old
    );
    let from_cids = UpdateCommitments::from_bytes(
        &sealed,
        &commitment_cid(&comms.comm_r_new, CommitmentKind::Sealed),
        &unsealed,
    )
    .unwrap();
    assert_eq!(from_cids, comms);
    let mixed =
        UpdateCommitments::from_bytes(&sealed, &comms.comm_r_new, &comms.comm_d_new).unwrap();
    assert_eq!(mixed, comms);

    let refused = |bytes: &[u8], kind| read(bytes, kind).unwrap_err().to_string();
    let e = refused(&unsealed, CommitmentKind::Sealed);
    assert_eq!(
        e,
        "bad comm_x: a CID of fil-commitment-unsealed (0xf101); \
         it must be fil-commitment-sealed (0xf102)"
    );
    let e = UpdateCommitments::from_bytes(&sealed, &sealed, &sealed)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("bad comm_d_new: a CID of fil-commitment-sealed"),
        "{e}"
    );
    // A sealed codec with the unsealed multihash.
    let mut wrong_hash = sealed[..4].to_vec();
    wrong_hash.extend_from_slice(&unsealed[4..]);
    let e = refused(&wrong_hash, CommitmentKind::Sealed);
    assert!(e.contains("multihash 0x1012"), "{e}");
    let e = refused(&sealed[..39], CommitmentKind::Sealed);
    assert!(e.contains("digest is 32 bytes (31 follow)"), "{e}");
    let mut trailing = sealed.clone();
    trailing.push(0);
    assert!(refused(&trailing, CommitmentKind::Sealed).contains("33 follow"));
    let e = refused(&[0; 31], CommitmentKind::Sealed);
    assert!(
        e.contains("31 bytes: neither a 32-byte commitment nor a CIDv1"),
        "{e}"
    );
    // A CIDv0-like sha2-256 multihash.
    let mut v0 = vec![0x12, 0x20];
    v0.extend_from_slice(&[7; 32]);
    assert!(refused(&v0, CommitmentKind::Unsealed).contains("nor a CIDv1"));
    let e = refused(&[0x01, 0x55, 0x12, 0x20], CommitmentKind::Unsealed);
    assert!(e.contains("a CID of codec 0x55"), "{e}");
    assert!(refused(&[0xff; 40], CommitmentKind::Sealed).contains("neither"));
    // Varints must be minimal (one CID, one form): 1 as 81 00, 0xf102 as
    // 82 e2 83 00.
    let mut long_version = vec![0x81, 0x00];
    long_version.extend_from_slice(&sealed[1..]);
    assert!(refused(&long_version, CommitmentKind::Sealed).contains("neither"));
    let mut long_codec = vec![0x01, 0x82, 0xe2, 0x83, 0x00];
    long_codec.extend_from_slice(&sealed[4..]);
    let e = refused(&long_codec, CommitmentKind::Sealed);
    assert!(e.contains("malformed CID"), "{e}");

    // SnapDeals from CID commitments is the same request.
    let snap = files(&meta()["snap"]["partition_proofs"]);
    let request = FilecoinRequest::snap_deals(SIZE, from_cids, &snap).unwrap();
    assert_eq!(request.id().to_string(), "snap-deals-2KiB");
}

/// The C1 output in filecoin-proofs-api's JSON (Curio's wrapper holds it,
/// base64, as `Phase1Out`).
fn api_c1() -> Value {
    let curio: Value = serde_json::from_slice(&fixture("c1-curio.json")).unwrap();
    let inner = base64::engine::general_purpose::STANDARD
        .decode(curio["Phase1Out"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&inner).unwrap()
}

/// Curio's wrapper of `phase1` as Go's json.Marshal writes
/// `c1OutputWrapper{SectorNum, Phase1Out []byte, SectorSize}`.
fn curio_wrapper(phase1: &[u8], sector: u64) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(phase1);
    format!(r#"{{"SectorNum":{sector},"Phase1Out":"{b64}","SectorSize":2048}}"#).into_bytes()
}

/// What Go's json.Marshal of Curio's `proof.Commit1OutRaw` (lib/proof)
/// writes for `api`: only the fields of its Go types, compact, in their
/// order (comm_d, comm_r, registered_proof, replica_id, seed, ticket,
/// vanilla_proofs; `[32]byte` as arrays of numbers; `Column._h` as null).
fn commit1_out_raw(api: &Value) -> Vec<u8> {
    const GO_FIELDS: &[&str] = &[
        "comm_d",
        "comm_r",
        "registered_proof",
        "replica_id",
        "seed",
        "ticket",
        "vanilla_proofs",
        "comm_d_proofs",
        "comm_r_last_proof",
        "replica_column_proofs",
        "labeling_proofs",
        "encoding_proof",
        "c_x",
        "drg_parents",
        "exp_parents",
        "column",
        "inclusion_proof",
        "index",
        "rows",
        "_h",
        "parents",
        "layer_index",
        "node",
        "data",
        "Single",
        "Sub",
        "Top",
        "root",
        "leaf",
        "path",
        "base_proof",
        "sub_proof",
        "top_proof",
        "hashes",
    ];
    fn keep(value: &Value, filter: bool) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| !filter || GO_FIELDS.contains(&k.as_str()))
                    // vanilla_proofs is a map keyed by the proof's name.
                    .map(|(k, v)| (k.clone(), keep(v, k != "vanilla_proofs")))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| keep(v, true)).collect()),
            other => other.clone(),
        }
    }
    let go = keep(api, true);
    let fields: Vec<String> = GO_FIELDS[..7]
        .iter()
        .map(|k| format!("\"{k}\":{}", serde_json::to_string(&go[k]).unwrap()))
        .collect();
    format!("{{{}}}", fields.join(",")).into_bytes()
}

#[test]
fn every_c1_form_curio_sends_is_read() {
    let ids = seal_ids();
    let api = api_c1();
    assert_eq!(api["registered_proof"], "StackedDrg2KiBV1_1");
    let api_bytes = serde_json::to_vec(&api).unwrap();
    let forms = [
        // filecoin-proofs' own JSON and filecoin-proofs-api's.
        ("filecoin-proofs", fixture("c1.json")),
        ("filecoin-proofs-api", api_bytes.clone()),
        // lib/ffi PoRepSnarkCuzk: the wrapper of filecoin-ffi's C1 output.
        ("lib/ffi", fixture("c1-curio.json")),
        (
            "lib/ffi (rebuilt)",
            curio_wrapper(&api_bytes, ids.sector_id),
        ),
        // tasks/proofshare (and supraseal's C1 in lib/paths): the wrapper
        // of json.Marshal(proof.Commit1OutRaw).
        (
            "proofshare",
            curio_wrapper(&commit1_out_raw(&api), ids.sector_id),
        ),
        ("Commit1OutRaw", commit1_out_raw(&api)),
    ];
    for (form, c1) in forms {
        let request =
            FilecoinRequest::porep(&c1, Some(SIZE), ids).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(request.id().to_string(), "porep-2KiB", "{form}");
        assert_eq!(request.partitions().count(), 1, "{form}");
    }
}

#[test]
fn c1_of_another_proof_sector_or_miner_is_refused() {
    let ids = seal_ids();
    let with = |name: &str, tag: &str| {
        let mut api = api_c1();
        api["registered_proof"] = Value::from(name);
        let proofs = api["vanilla_proofs"]["StackedDrg2KiBV1"].take();
        api["vanilla_proofs"] = serde_json::json!({ tag: proofs });
        serde_json::to_vec(&api).unwrap()
    };
    // A V1_1 C1 relabelled as a Synthetic PoRep: proven as one, its vanilla
    // proofs answer the wrong challenges.
    let e = message(FilecoinRequest::porep(
        &with("StackedDrg2KiBV1_1_Feat_SyntheticPoRep", "StackedDrg2KiBV1"),
        None,
        ids,
    ));
    assert_eq!(e, "C1 output does not verify for porep at 2KiB");
    // A V1 seal proof is refused by its name.
    let e = message(FilecoinRequest::porep(
        &with("StackedDrg2KiBV1", "StackedDrg2KiBV1"),
        None,
        ids,
    ));
    assert!(
        e.contains("StackedDrg2KiBV1 (") && e.contains("is not supported"),
        "{e}"
    );
    let e = message(FilecoinRequest::porep(
        &with("StackedDrg2KiBV1_1", "StackedDrg8MiBV1"),
        None,
        ids,
    ));
    assert!(e.contains("tagged StackedDrg8MiBV1"), "{e}");
    let e = message(FilecoinRequest::porep(
        &with("StackedDrg2KiBV1_1_Feat", "StackedDrg2KiBV1"),
        None,
        ids,
    ));
    assert!(e.contains("not a registered seal proof"), "{e}");

    // The wrapper names the sector; the replica id binds sector and miner.
    let other_sector = SealIds {
        sector_id: ids.sector_id + 1,
        ..ids
    };
    let e = message(FilecoinRequest::porep(
        &fixture("c1-curio.json"),
        None,
        other_sector,
    ));
    assert!(
        e.contains(&format!("it is for sector {} (SectorNum)", ids.sector_id)),
        "{e}"
    );
    let e = message(FilecoinRequest::porep(
        &fixture("c1.json"),
        Some(SIZE),
        other_sector,
    ));
    assert_eq!(
        e,
        format!(
            "bad C1 output: its replica_id is not that of sector {} of miner 1000 \
             sealed as StackedDrg2KiBV1_1 (5)",
            ids.sector_id + 1
        )
    );
    let other_miner = SealIds {
        prover_id: prover_id(1001),
        ..ids
    };
    let e = message(FilecoinRequest::porep(
        &fixture("c1-curio.json"),
        None,
        other_miner,
    ));
    assert!(e.contains("not that of sector 872761 of miner 1001"), "{e}");
}
