//! The Filecoin kinds through the daemon, with the committed 2 KiB fixtures
//! of `cuzk-filecoin/fixtures/2KiB`: a WindowPoSt partition proven and
//! accepted by filecoin-proofs' own verifier, one recovered from the
//! journal after a restart, the refusals (garbage inputs, parameters
//! that are not there), and a flood of submissions checked a bounded
//! number at a time.
//!
//! Only WindowPoSt 2 KiB parameters are generated (a few seconds), once,
//! into one directory that every test of this binary shares:
//! filecoin-proofs reads `FIL_PROOFS_PARAMETER_CACHE` once per process.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use common::{await_job, config, submit, Daemon};
use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_daemon::DaemonConfig;
use cuzk_filecoin::{params, CircuitId, FilecoinRequest, PostInputs, SectorSize};
use rand_chacha::rand_core::SeedableRng;
use serde_json::Value;
use tonic::Code;

const MINER_ID: u64 = 1000;
const SECTOR_SIZE: u64 = 2048;

/// The shared parameter directory, with WindowPoSt 2 KiB parameters in it;
/// filecoin-proofs is pointed at it before anything else uses it.
fn param_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("cuzk-daemon-fil-params")
            .tempdir()
            .unwrap()
            .keep();
        params::point_filecoin_proofs_at(&dir).expect("filecoin-proofs not yet set up");
        let id = CircuitId::new(cuzk_filecoin::ProofKind::WindowPoSt, SectorSize::S2KiB);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let started = Instant::now();
        params::setup(id, &dir, &mut rng, None).expect("WindowPoSt 2 KiB parameters");
        eprintln!("window-post-2KiB parameters: {:?}", started.elapsed());
        dir
    })
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuzk-filecoin/fixtures/2KiB")
}

fn meta() -> Value {
    let bytes = std::fs::read(fixtures().join("meta.json")).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn hex(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().unwrap()).unwrap()
}

/// The fixture's WindowPoSt partition 0 as Curio submits it.
fn window_post() -> pb::SubmitProofRequest {
    let meta = meta();
    let window = &meta["window"];
    let vanilla_proofs = window["vanilla_proofs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| std::fs::read(fixtures().join(file.as_str().unwrap())).unwrap())
        .collect();
    assert_eq!(meta["miner_id"], MINER_ID);
    pb::SubmitProofRequest {
        proof_kind: ProofKind::WindowPostPartition as i32,
        sector_size: SECTOR_SIZE,
        miner_id: MINER_ID,
        randomness: hex(&window["randomness"]),
        partition_index: 0,
        vanilla_proofs,
        ..Default::default()
    }
}

/// The same request built here, to check the proof with filecoin-proofs.
fn local_request(submit: &pb::SubmitProofRequest) -> FilecoinRequest {
    let inputs = PostInputs {
        randomness: submit.randomness.clone().try_into().unwrap(),
        prover_id: cuzk_filecoin::prover_id(submit.miner_id),
        partition_index: submit.partition_index as usize,
    };
    FilecoinRequest::window_post(SectorSize::S2KiB, inputs, &submit.vanilla_proofs).unwrap()
}

/// Checks a completed outcome with filecoin-proofs' verifier, and that a
/// proof for other randomness does not pass.
fn assert_filecoin_verifies(submit: &pb::SubmitProofRequest, outcome: &pb::AwaitProofResponse) {
    assert_eq!(outcome.status(), JobStatus::Completed, "{outcome:?}");
    assert!(outcome.verified);
    assert_eq!(outcome.partitions, 1);
    assert_eq!(outcome.proof.len(), 192);
    let request = local_request(submit);
    assert!(request.verify_with_filecoin_proofs(&outcome.proof).unwrap());
    // A and C swapped: valid points, not a proof.
    let mut tampered = outcome.proof.clone();
    tampered[..48].copy_from_slice(&outcome.proof[144..]);
    tampered[144..].copy_from_slice(&outcome.proof[..48]);
    assert!(!request
        .verify_with_filecoin_proofs(&tampered)
        .unwrap_or(false));
}

fn daemon_config(state: &Path, listen: &str) -> DaemonConfig {
    DaemonConfig {
        fil_param_dir: Some(param_dir().to_owned()),
        ..config(state, listen)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_post_is_proven_and_filecoin_proofs_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("unix://{}", dir.path().join("cuzk.sock").display());
    let daemon = Daemon::start(daemon_config(dir.path(), &socket)).await;
    let mut client = daemon.client().await;

    let request = window_post();
    let started = Instant::now();
    let job = submit(&mut client, request.clone()).await;
    let outcome = await_job(&mut client, &job).await;
    eprintln!(
        "window-post-2KiB through the daemon: {:?}",
        started.elapsed()
    );
    assert_filecoin_verifies(&request, &outcome);

    // The key is registered by its circuit id, and can be evicted by it.
    let status = common::status(&mut client).await;
    let ids: Vec<&str> = status
        .loaded_srs
        .iter()
        .map(|k| k.circuit_id.as_str())
        .collect();
    assert_eq!(ids, ["window-post-2KiB"]);
    let evicted = client
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "window-post-2KiB".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(evicted.was_loaded && evicted.freed_bytes > 0);
    let preloaded = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "window-post-2KiB".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!preloaded.already_loaded);
    let missing = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "porep-2KiB".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::FailedPrecondition, "{missing}");
    assert!(
        missing.message().contains("missing parameter file"),
        "{missing}"
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_inputs_and_missing_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(daemon_config(dir.path(), "127.0.0.1:0")).await;
    let mut client = daemon.client().await;

    let garbage = pb::SubmitProofRequest {
        vanilla_proofs: vec![b"not a vanilla proof".to_vec()],
        ..window_post()
    };
    let err = client.submit_proof(garbage).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("vanilla proof 0"), "{err}");

    let other_randomness = pb::SubmitProofRequest {
        randomness: vec![1; 32],
        ..window_post()
    };
    let err = client.submit_proof(other_randomness).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    // A valid C1 output (Curio's wrapper), but no PoRep parameters here.
    let meta = meta();
    let porep = pb::SubmitProofRequest {
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_SIZE,
        miner_id: MINER_ID,
        sector_number: meta["sector_id"].as_u64().unwrap(),
        vanilla_proof: std::fs::read(fixtures().join("c1-curio.json")).unwrap(),
        ..Default::default()
    };
    let err = client.submit_proof(porep).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    let id = CircuitId::new(cuzk_filecoin::ProofKind::PoRep, SectorSize::S2KiB);
    let file = id.params_path(param_dir()).unwrap();
    assert!(
        err.message()
            .contains(&format!("missing parameter file {}", file.display())),
        "{err}"
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journaled_filecoin_job_runs_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let request = window_post();
    // A job accepted by a daemon that died before proving it.
    let seq = {
        let path = dir.path().join("journal.redb");
        let journal = cuzk_daemon::journal::Journal::open(&path, 10).unwrap();
        journal.accept(&request, 1).unwrap()
    };
    let daemon = Daemon::start(daemon_config(dir.path(), "127.0.0.1:0")).await;
    let mut client = daemon.client().await;
    let outcome = await_job(&mut client, &cuzk_daemon::job_id(seq)).await;
    assert_filecoin_verifies(&request, &outcome);
    daemon.stop().await;
}

/// The most admission checks seen at once by a daemon taking 48 PoRep
/// submissions from 8 clients at once, `admission_checks` allowing
/// `limit`. Each is a valid C1 output (its vanilla proofs verified on
/// admission), refused afterwards for the missing parameters.
async fn flood_peak(limit: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let config = DaemonConfig {
        admission_checks: limit,
        ..daemon_config(dir.path(), "127.0.0.1:0")
    };
    let daemon = Daemon::start(config).await;
    let meta = meta();
    let c1 = std::fs::read(fixtures().join("c1-curio.json")).unwrap();
    let mut floods = Vec::new();
    for c in 0..8 {
        let client = daemon.client().await;
        let (c1, sector) = (c1.clone(), meta["sector_id"].as_u64().unwrap());
        floods.push(tokio::spawn(async move {
            let mut refusals = Vec::new();
            let mut submissions = Vec::new();
            for r in 0..6 {
                let mut client = client.clone();
                let request = pb::SubmitProofRequest {
                    request_id: format!("flood-{c}-{r}"),
                    proof_kind: ProofKind::PorepSealCommit as i32,
                    sector_size: SECTOR_SIZE,
                    miner_id: MINER_ID,
                    sector_number: sector,
                    vanilla_proof: c1.clone(),
                    ..Default::default()
                };
                submissions.push(tokio::spawn(
                    async move { client.submit_proof(request).await },
                ));
            }
            for s in submissions {
                refusals.push(s.await.unwrap().unwrap_err().code());
            }
            refusals
        }));
    }
    for flood in floods {
        for code in flood.await.unwrap() {
            assert_eq!(code, Code::FailedPrecondition);
        }
    }
    let mut client = daemon.client().await;
    let samples = common::metrics(&mut client).await;
    assert_eq!(samples["cuzk_admission_checks_running"], 0.0);
    daemon.stop().await;
    samples["cuzk_admission_checks_peak"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_submissions_is_checked_a_bounded_number_at_a_time() {
    let bounded = flood_peak(2).await;
    assert!(
        (1.0..=2.0).contains(&bounded),
        "peak {bounded} with admission_checks = 2"
    );
    // The same flood with room for all: more run at once, so the bound
    // above is the limit at work, not the flood's own pace.
    let open = flood_peak(48).await;
    eprintln!("admission checks at once: {bounded} bounded to 2, {open} bounded to 48");
    assert!(open > 2.0, "peak {open} with admission_checks = 48");
}
