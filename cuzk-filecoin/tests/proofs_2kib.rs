//! Every Filecoin proof kind at 2 KiB, proven by cuzk (CPU backend) from the
//! committed fixtures, is accepted by filecoin-proofs' own verifier, and
//! the same proof with other public inputs is rejected.
//!
//! Test parameters are generated once per run (minutes on two cores for
//! PoRep and SnapDeals) into `$CARGO_TARGET_TMPDIR/fil-params`, which is
//! also `FIL_PROOFS_PARAMETER_CACHE`, where filecoin-proofs finds the
//! `.vk` files under its own names.

mod common;

use std::sync::Arc;

use common::{hex32, key, param_dir, request, seal_ids, SIZE};
use cuzk_engine::{Engine, EngineConfig, ProofRequest, ProvingKey};
use cuzk_filecoin::SealIds;
use cuzk_filecoin::{CircuitId, FilecoinRequest, ProofKind, RegisteredProof};
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs::PublicReplicaInfo;
use storage_proofs_core::api_version::ApiFeature;
use supraseal_c2::GpuLock;

/// Proves `request` with the test key and checks it with both verifiers.
fn prove(request: &FilecoinRequest) -> Vec<u8> {
    param_dir();
    let key = key(request.id().kind);
    let compiled = request.id().compile().expect("compile");
    let proof = request
        .prove(&key.1, &GpuLock::cpu(0), Some(&compiled))
        .expect("prove");
    // NI-PoRep's proof is its partitions' SnarkPack aggregate; the others'
    // are the partitions' proofs one after another.
    assert_eq!(
        proof.len() == 192 * request.partitions().count(),
        !request.aggregated(),
        "{} bytes",
        proof.len()
    );
    assert!(
        request
            .verify_with_filecoin_proofs(&proof)
            .expect("verifier runs"),
        "filecoin-proofs rejects cuzk's {} proof",
        request.id()
    );
    proof
}

fn flipped(mut bytes: [u8; 32]) -> [u8; 32] {
    bytes[0] ^= 1;
    bytes
}

/// Proves the C1 output of the fixture directory `dir` through its Curio
/// form and checks the proof with `verify_seal` under the seal proof its
/// meta.json names, which must also reject it for another sector id and
/// another seed (NI-PoRep, whose challenges ignore the seed: another
/// comm_r); returns the proof.
fn assert_porep_accepted(dir: &str) -> Vec<u8> {
    let m = common::meta_in(dir);
    let ids = common::seal_ids_of(&m);
    let c1 = common::fixture_in(dir, "c1-curio.json");
    // Before the request: filecoin-proofs' directory is settled at its first
    // use, and an NI-PoRep request needs the SRS the setup writes there.
    key(ProofKind::PoRep);
    let request = FilecoinRequest::porep(&c1, None, ids).expect("PoRep request");
    assert_eq!(request.id(), CircuitId::new(ProofKind::PoRep, SIZE));
    let proof = prove(&request);

    let number = m["registered_seal_proof_number"].as_u64().expect("number");
    let config = RegisteredProof::from_number(ProofKind::PoRep, number)
        .and_then(|proof| proof.porep_config())
        .expect("a proven seal proof");
    let verify_for = |sector_id: u64, seed: [u8; 32], comm_r: [u8; 32]| {
        filecoin_proofs::verify_seal::<SectorShape2KiB>(
            &config,
            comm_r,
            hex32(&m["comm_d"]),
            ids.prover_id,
            sector_id.into(),
            hex32(&m["ticket"]),
            seed,
            &proof,
        )
        .expect("verify_seal runs")
    };
    let (seed, comm_r) = (hex32(&m["seed"]), hex32(&m["comm_r"]));
    let verify = |sector_id, seed| verify_for(sector_id, seed, comm_r);
    assert!(verify(ids.sector_id, seed), "{dir}: verify_seal rejects");
    assert!(!verify(ids.sector_id + 1, seed), "another sector id");
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        assert!(
            !verify_for(ids.sector_id, seed, flipped(comm_r)),
            "another comm_r"
        );
    } else {
        assert!(!verify(ids.sector_id, flipped(seed)), "another seed");
    }
    proof
}

/// Whether `verify_seal` accepts `proof` of the fixture `m` as a V1_1
/// seal proof (an error, as for a proof of another length, is a no).
fn verifies_as_v1_1(m: &serde_json::Value, ids: SealIds, proof: &[u8]) -> bool {
    matches!(
        filecoin_proofs::verify_seal::<SectorShape2KiB>(
            &SIZE.porep_config(),
            hex32(&m["comm_r"]),
            hex32(&m["comm_d"]),
            ids.prover_id,
            ids.sector_id.into(),
            hex32(&m["ticket"]),
            hex32(&m["seed"]),
            proof,
        ),
        Ok(true)
    )
}

#[test]
fn porep_proof_is_accepted_by_verify_seal() {
    assert_porep_accepted("2KiB");
}

/// A Synthetic PoRep (registered proof 10: Curio's `UseSyntheticPoRep`),
/// sealed by `fil-fixtures make --synthetic`, is proven with its own
/// porep_id and challenges and accepted by `verify_seal` under its own
/// configuration, not under V1_1's; its C1 in filecoin-proofs' form,
/// which does not name its proof, needs the proof said.
#[test]
fn synthetic_porep_proof_is_accepted_by_verify_seal() {
    let dir = "2KiB-synthetic";
    let proof = assert_porep_accepted(dir);
    let m = common::meta_in(dir);
    let ids = common::seal_ids_of(&m);
    assert!(
        !verifies_as_v1_1(&m, ids, &proof),
        "a Synthetic PoRep proof verified as V1_1"
    );

    let raw = common::fixture_in(dir, "c1.json");
    let error = FilecoinRequest::porep(&raw, Some(SIZE), ids).unwrap_err();
    assert!(
        matches!(error, cuzk_filecoin::FilecoinError::InvalidVanilla { .. }),
        "read as V1_1: {error}"
    );
    let synthetic = RegisteredProof::from_number(ProofKind::PoRep, 10).unwrap();
    let plain = FilecoinRequest::porep_as(&raw, synthetic, ids).expect("said synthetic");
    let curio = FilecoinRequest::porep(&common::fixture_in(dir, "c1-curio.json"), None, ids)
        .expect("the Curio form names it");
    assert_eq!(
        plain.partitions().public_inputs(0).unwrap(),
        curio.partitions().public_inputs(0).unwrap()
    );
    // The Curio form names its proof: saying another is refused.
    let v1_1 = RegisteredProof::from_number(ProofKind::PoRep, 5).unwrap();
    let error = FilecoinRequest::porep_as(&common::fixture_in(dir, "c1-curio.json"), v1_1, ids)
        .unwrap_err()
        .to_string();
    assert!(error.contains("Synthetic"), "{error}");
}

/// An NI-PoRep (registered proof 15), sealed by `fil-fixtures make
/// --non-interactive`: 13 partitions of 2 challenges proven on V1_1's
/// parameters, then aggregated with SnarkPack (the test SRS `params::setup`
/// wrote beside the PoRep parameters) into the proof `verify_seal` accepts
/// under NI-PoRep's configuration only; a tampered aggregate is rejected.
#[test]
fn ni_porep_proof_is_aggregated_and_accepted_by_verify_seal() {
    let dir = "2KiB-ni";
    let proof = assert_porep_accepted(dir);
    let m = common::meta_in(dir);
    assert_eq!(m["porep_partitions"], 13);
    let ids = common::seal_ids_of(&m);
    let request = FilecoinRequest::porep(&common::fixture_in(dir, "c1-curio.json"), None, ids)
        .expect("PoRep request");
    assert_eq!(request.partitions().count(), 13);
    assert!(request.aggregated());
    assert!(
        !verifies_as_v1_1(&m, ids, &proof),
        "an NI-PoRep proof verified as V1_1"
    );
    // A tampered aggregate is refused by the verifier finish runs.
    let mut tampered = proof.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 1;
    assert!(!matches!(
        request.verify_with_filecoin_proofs(&tampered),
        Ok(true)
    ));
}

/// A committed-capacity sector's C1 output made without sealing
/// (`fil-fixtures cc`: zero data, drawn parent labels, sparse trees) is
/// proven and accepted like a sealed sector's.
#[test]
fn cc_porep_made_without_sealing_is_accepted_by_verify_seal() {
    assert_porep_accepted("cc-2KiB");
}

/// Two sectors' proofs (the sealed and the committed-capacity fixture), the
/// first twice so that filecoin-proofs pads 3 to 4, folded into one
/// SnarkPack aggregate that filecoin-proofs' aggregate verifier accepts for
/// those sectors in that order, under that version only; a bad proof among
/// them is named before any aggregation.
#[test]
fn several_sectors_proofs_aggregate_into_one_filecoin_proofs_accepts() {
    use cuzk_filecoin::aggregate::{self, SealedSectors, SnarkPack};
    key(ProofKind::PoRep);
    let (sealed, cc) = (common::meta_in("2KiB"), common::meta_in("cc-2KiB"));
    let proof_of = |dir: &str, m: &serde_json::Value| {
        let c1 = common::fixture_in(dir, "c1-curio.json");
        let request = FilecoinRequest::porep(&c1, None, common::seal_ids_of(m)).unwrap();
        (c1, prove(&request))
    };
    let (a, b) = (proof_of("2KiB", &sealed), proof_of("cc-2KiB", &cc));
    assert_eq!(sealed["miner_id"], cc["miner_id"]);
    let prover = common::seal_ids_of(&sealed).prover_id;
    let list = [a.clone(), b.clone(), a.clone()];
    let seals = SealedSectors::from_c1s(
        prover,
        None,
        list.iter()
            .map(|(c1, proof)| (c1.clone(), None, proof.clone())),
    )
    .expect("the Curio C1s name size, proof and sector");
    assert_eq!(seals.proof.number(), 5);
    assert_eq!(seals.sectors[1].comm_r, hex32(&cc["comm_r"]));
    assert_eq!(seals.sectors[0].seed, hex32(&sealed["seed"]));
    assert_eq!(aggregate::aggregated_proofs(seals.proof, 3).unwrap(), 4);

    let aggregate = aggregate::aggregate_seal_proofs(&seals, SnarkPack::V2).expect("aggregate");
    assert!(aggregate::verify_seal_aggregate(&seals, &aggregate, SnarkPack::V2).unwrap());
    // Another version, another order, a flipped byte: rejected.
    assert!(!aggregate::verify_seal_aggregate(&seals, &aggregate, SnarkPack::V1).unwrap());
    let mut swapped = seals.clone();
    swapped.sectors.swap(0, 1);
    assert!(!aggregate::verify_seal_aggregate(&swapped, &aggregate, SnarkPack::V2).unwrap());
    let mut tampered = aggregate.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 1;
    assert!(!aggregate::verify_seal_aggregate(&seals, &tampered, SnarkPack::V2).unwrap());
    // Version 1 aggregates too.
    let v1 = aggregate::aggregate_seal_proofs(&seals, SnarkPack::V1).expect("aggregate v1");
    assert!(aggregate::verify_seal_aggregate(&seals, &v1, SnarkPack::V1).unwrap());

    // The second sector's proof under the first's seed: named, not
    // aggregated.
    let mut bad = seals.clone();
    bad.sectors[1].seed = bad.sectors[0].seed;
    bad.sectors[1].seed[0] ^= 1;
    let error = aggregate::aggregate_seal_proofs(&bad, SnarkPack::V2)
        .unwrap_err()
        .to_string();
    assert!(error.contains("(proof 2 of 3)"), "{error}");
    assert!(error.contains("verify_seal rejects"), "{error}");
}

#[test]
fn porep_from_filecoin_proofs_json_gives_the_same_circuit() {
    param_dir();
    let raw = common::fixture("c1.json");
    // filecoin-proofs' own form does not name its size.
    let error = FilecoinRequest::porep(&raw, None, seal_ids()).unwrap_err();
    assert!(error.to_string().contains("sector size"), "{error}");
    let plain = FilecoinRequest::porep(&raw, Some(SIZE), seal_ids()).expect("c1.json");
    let curio = request(ProofKind::PoRep);
    let parts = (plain.partitions(), curio.partitions());
    assert_eq!(
        parts.0.public_inputs(0).unwrap(),
        parts.1.public_inputs(0).unwrap()
    );
    assert_eq!(
        parts.0.public_inputs(0).unwrap().len(),
        39,
        "2 KiB PoRep: 40 inputs with ONE"
    );
}

/// Proves the PoSt of `kind` in the fixture directory `dir` (its meta.json
/// section `winning` or `window`) and checks it with filecoin-proofs'
/// verifier, given each sector's comm_r as a verifier is; other randomness
/// must be rejected. (The prover id is not a public input of the
/// WinningPoSt circuit, so it is not varied.)
fn assert_post_accepted(dir: &str, kind: ProofKind) {
    let m = common::meta_in(dir);
    let (section, post_type) = match kind {
        ProofKind::WinningPoSt => ("winning", filecoin_proofs::PoStType::Winning),
        _ => ("window", filecoin_proofs::PoStType::Window),
    };
    let post = &m[section];
    let list = |key: &str| post[key].as_array().expect("a list").clone();
    let vanilla: Vec<Vec<u8>> = list("vanilla_proofs")
        .iter()
        .map(|f| common::fixture_in(dir, f.as_str().unwrap()))
        .collect();
    let inputs = cuzk_filecoin::PostInputs {
        randomness: hex32(&post["randomness"]),
        prover_id: hex32(&m["prover_id"]),
        partition_index: 0,
    };
    let request = match kind {
        ProofKind::WinningPoSt => FilecoinRequest::winning_post(SIZE, inputs, &vanilla),
        _ => FilecoinRequest::window_post(SIZE, inputs, &vanilla),
    }
    .expect("PoSt request");
    let proof = prove(&request);

    let replicas: Vec<_> = list("sector_ids")
        .iter()
        .zip(list("comm_rs"))
        .map(|(id, comm_r)| {
            let info = PublicReplicaInfo::new(hex32(&comm_r)).unwrap();
            (id.as_u64().unwrap().into(), info)
        })
        .collect();
    let config = SIZE.post_config(post_type);
    let verify = |randomness: [u8; 32]| {
        match kind {
            ProofKind::WinningPoSt => filecoin_proofs::verify_winning_post::<SectorShape2KiB>(
                &config,
                &randomness,
                &replicas,
                inputs.prover_id,
                &proof,
            ),
            _ => filecoin_proofs::verify_window_post::<SectorShape2KiB>(
                &config,
                &randomness,
                &replicas.iter().cloned().collect(),
                inputs.prover_id,
                &proof,
            ),
        }
        .expect("the verifier runs")
    };
    assert!(verify(inputs.randomness), "{dir} {kind}: rejected");
    assert!(
        !verify(flipped(inputs.randomness)),
        "{dir} {kind}: other randomness"
    );
}

#[test]
fn winning_post_proof_is_accepted_by_verify_winning_post() {
    assert_post_accepted("2KiB", ProofKind::WinningPoSt);
}

#[test]
fn window_post_proof_is_accepted_by_verify_window_post() {
    assert_post_accepted("2KiB", ProofKind::WindowPoSt);
}

/// The WinningPoSt of a CC sector and a WindowPoSt partition of CC sectors
/// made without sealing (`fil-fixtures cc`: a drawn comm_c and sparse tree
/// R per sector) are proven and accepted like sealed sectors'.
#[test]
fn cc_post_proofs_made_without_sealing_are_accepted() {
    assert_post_accepted("cc-2KiB", ProofKind::WinningPoSt);
    assert_post_accepted("cc-2KiB", ProofKind::WindowPoSt);
}

/// Proves the SnapDeals update in the fixture directory `dir` and checks it
/// with `verify_empty_sector_update_proof`, which must reject another
/// comm_d_new.
fn assert_snap_accepted(dir: &str) {
    let m = common::meta_in(dir);
    let snap = &m["snap"];
    let comms = cuzk_filecoin::UpdateCommitments {
        comm_r_old: hex32(&snap["comm_r_old"]),
        comm_r_new: hex32(&snap["comm_r_new"]),
        comm_d_new: hex32(&snap["comm_d_new"]),
    };
    let partitions: Vec<Vec<u8>> = snap["partition_proofs"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| common::fixture_in(dir, f.as_str().unwrap()))
        .collect();
    let request = FilecoinRequest::snap_deals(SIZE, comms, &partitions).expect("update request");
    let proof = prove(&request);
    let verify = |comm_d_new: [u8; 32]| {
        filecoin_proofs::verify_empty_sector_update_proof::<SectorShape2KiB>(
            &SIZE.porep_config(),
            &proof,
            comms.comm_r_old,
            comms.comm_r_new,
            comm_d_new,
        )
        .expect("verify_empty_sector_update_proof runs")
    };
    assert!(verify(comms.comm_d_new), "{dir}: rejected");
    assert!(
        !verify(flipped(comms.comm_d_new)),
        "{dir}: another comm_d_new"
    );
}

#[test]
fn snap_deals_proof_is_accepted_by_verify_empty_sector_update_proof() {
    assert_snap_accepted("2KiB");
}

/// A zero-data update of a CC sector made without sealing (`fil-fixtures
/// cc`) is proven and accepted like a sealed sector's update.
#[test]
fn cc_snap_deals_made_without_sealing_is_accepted() {
    assert_snap_accepted("cc-2KiB");
}

/// Two kinds at once through the engine (compiled synthesis, shapes cached
/// per circuit, self-verification on), accepted by filecoin-proofs.
#[test]
fn post_kinds_share_the_engine() {
    param_dir();
    let config = EngineConfig {
        partition_workers: 2,
        verify: true,
        ..EngineConfig::default()
    };
    let engine = Engine::new(config).expect("engine");
    let mut jobs = Vec::new();
    for kind in [
        ProofKind::WindowPoSt,
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
    ] {
        let request = Arc::new(request(kind));
        let params = &key(kind).0;
        let proving_key = Arc::new(ProvingKey::new(params).expect("key"));
        let handle = engine.submit(ProofRequest::from_source(request.clone(), proving_key));
        jobs.push((request, handle));
    }
    for (request, handle) in jobs {
        let proof = handle.wait().expect("the engine proves it");
        assert!(proof.verified);
        assert_eq!(proof.workload, None);
        assert!(request
            .verify_with_filecoin_proofs(&proof.to_bytes())
            .unwrap());
    }
    assert_eq!(engine.metrics().lock_holds().len(), 3);
}
