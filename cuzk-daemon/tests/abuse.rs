//! A daemon under abuse: 1,000 malformed or oversized submissions from 8
//! clients at once, while a real job runs beside them. Every bad one gets
//! its refusal, the real job's proof verifies, and the process's resident
//! memory stays within a bound far below what keeping the oversized
//! messages would take (1 GB). Its own test binary, so that the process's
//! RSS is this daemon's and its clients'.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_daemon::DaemonConfig;
use tonic::Code;

const CLIENTS: usize = 8;
const EACH: usize = 125;
/// The daemon's message limit here, and the oversized messages' size.
const LIMIT: usize = 1 << 20;
const OVERSIZED: usize = 4 << 20;
/// What the flood may add to the process's resident memory (its clients'
/// 8 messages in flight included): its 250 oversized messages are 1 GB.
const RSS_BOUND: u64 = 256 << 20;

/// The `i`-th bad submission, the code it must get, and whether the
/// daemon's submit path (not the transport's size limit) refuses it.
fn bad(i: usize) -> (pb::SubmitProofRequest, Code, bool) {
    let request_id = format!("bad-{i}");
    let good = pb::SubmitProofRequest {
        request_id: request_id.clone(),
        ..synthetic(mul(32), 1, i as u64)
    };
    match i % 8 {
        0 | 4 => (
            pb::SubmitProofRequest {
                proof_kind: ProofKind::PorepSealCommit as i32,
                sector_size: 32 << 30,
                vanilla_proof: vec![b'{'; OVERSIZED],
                ..good
            },
            Code::OutOfRange,
            false,
        ),
        1 => (
            pb::SubmitProofRequest {
                proof_kind: 1000 + i as i32,
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
        2 => (
            pb::SubmitProofRequest {
                proof_kind: ProofKind::PorepSealCommit as i32,
                sector_size: 32 << 30,
                // Just under the limit: read whole, then refused.
                vanilla_proof: vec![b'['; LIMIT - 1024],
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
        3 => (
            pb::SubmitProofRequest {
                synthetic_partitions: u32::MAX,
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
        5 => (
            pb::SubmitProofRequest {
                proof_kind: ProofKind::WindowPostPartition as i32,
                sector_size: 32 << 30,
                vanilla_proofs: vec![vec![0xa5; 4096]; 16],
                randomness: vec![7; 32],
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
        6 => (
            pb::SubmitProofRequest {
                proof_kind: ProofKind::SnapDealsUpdate as i32,
                sector_size: 32 << 30,
                vanilla_proofs: vec![vec![0x5a; 4096]],
                comm_r_old: vec![0; 32],
                comm_r_new: vec![0; 32],
                comm_d_new: vec![0; 31],
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
        _ => (
            pb::SubmitProofRequest {
                sector_size: 1 << 40,
                ..good
            },
            Code::InvalidArgument,
            true,
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_bad_submissions_leave_a_real_job_and_memory_alone() {
    let dir = tempfile::tempdir().unwrap();
    let config = DaemonConfig {
        max_message_bytes: LIMIT,
        ..config(dir.path(), "127.0.0.1:0")
    };
    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;
    // The key made and one job proven first: what that allocates is not
    // the flood's.
    let warm = prove(&mut client, synthetic(mul(64), 1, 0)).await;
    assert_verifies(&daemon.params(mul(64)), mul(64), 0, 1, &warm);

    let before = rss();
    let peak = Arc::new(AtomicU64::new(before));
    let flooding = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, flooding) = (Arc::clone(&peak), Arc::clone(&flooding));
        tokio::spawn(async move {
            while flooding.load(Ordering::Relaxed) {
                peak.fetch_max(rss(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let real = submit(&mut client, synthetic(mul(64), 2, 1)).await;
    let mut floods = Vec::new();
    for c in 0..CLIENTS {
        let mut client = daemon.client().await;
        floods.push(tokio::spawn(async move {
            let mut by_submit = 0;
            for i in (c * EACH)..((c + 1) * EACH) {
                let (request, code, submit_path) = bad(i);
                let Err(err) = client.submit_proof(request).await else {
                    panic!("bad submission {i} was accepted");
                };
                assert_eq!(err.code(), code, "submission {i}: {err}");
                by_submit += usize::from(submit_path);
            }
            by_submit
        }));
    }
    let mut refused_by_submit = 0;
    for flood in floods {
        refused_by_submit += flood.await.unwrap();
    }
    flooding.store(false, Ordering::Relaxed);
    sampler.await.unwrap();
    let grew = peak.load(Ordering::Relaxed).saturating_sub(before);
    eprintln!(
        "{} bad submissions: resident memory grew by at most {} MiB",
        CLIENTS * EACH,
        grew >> 20
    );
    assert!(
        grew < RSS_BOUND,
        "the flood grew the daemon by {} MiB",
        grew >> 20
    );

    // The real job, unharmed.
    let outcome = await_job(&mut client, &real).await;
    assert_verifies(&daemon.params(mul(64)), mul(64), 1, 2, &outcome);
    // Every refusal the submit path made is counted, and none was
    // accepted: the table holds only the two real jobs.
    let samples = metrics(&mut client).await;
    assert_eq!(
        samples[r#"cuzk_jobs_rejected_total{reason="invalid_argument"}"#],
        refused_by_submit as f64
    );
    let status = status(&mut client).await;
    assert_eq!(
        (status.total_proofs_completed, status.total_proofs_failed),
        (2, 0)
    );
    daemon.stop().await;
}
