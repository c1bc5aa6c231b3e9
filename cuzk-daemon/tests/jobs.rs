//! Jobs that take a while: cancelling queued and running ones, admission
//! control, keys in use, and accepted jobs surviving a restart.

mod common;

use std::time::{Duration, Instant};

use common::*;
use cuzk_daemon::pb;
use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use tonic::Code;

/// mul-chain/8000: about a second per partition on the CPU backend.
const SLOW: usize = 8000;

async fn slow_key(client: &mut cuzk_daemon::client::Client) {
    let request = pb::PreloadSrsRequest {
        circuit_id: format!("mul-chain/{SLOW}"),
    };
    client.preload_srs(request).await.expect("slow key loads");
}

async fn running(client: &mut cuzk_daemon::client::Client) -> u32 {
    status(client)
        .await
        .queues
        .iter()
        .map(|q| q.in_progress)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_admission_and_keys_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "127.0.0.1:0");
    config.engine_jobs = Some(1);
    config.max_jobs = 3;
    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;
    slow_key(&mut client).await;

    let a_request = pb::SubmitProofRequest {
        request_id: "a".into(),
        ..synthetic(mul(SLOW), 12, 1)
    };
    let a = submit(&mut client, a_request.clone()).await;
    let mut started = false;
    for _ in 0..500 {
        if running(&mut client).await == 1 {
            started = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(started, "the first job never ran");
    // The window is 1: these wait in the daemon's queue.
    let b_answer = client
        .submit_proof(synthetic(mul(SLOW), 1, 2))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(b_answer.queue_position, 0);
    let c_answer = client
        .submit_proof(synthetic(mul(16), 1, 3))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(c_answer.queue_position, 1);
    // The same request id names the same job.
    assert_eq!(submit(&mut client, a_request).await, a);
    // Three held: the fourth is refused.
    let err = client
        .submit_proof(synthetic(mul(16), 1, 4))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
    assert!(err.message().contains("max_jobs = 3"), "{}", err.message());

    // A key in use cannot be evicted.
    let evict = pb::EvictSrsRequest {
        circuit_id: format!("mul-chain/{SLOW}"),
    };
    let err = client.evict_srs(evict.clone()).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.message().contains("in use"), "{}", err.message());

    // Cancel the queued job, then the running one.
    let cancel = |job_id: &str| pb::CancelProofRequest {
        job_id: job_id.to_owned(),
    };
    let b_cancel = client.cancel_proof(cancel(&b_answer.job_id)).await.unwrap();
    assert!(!b_cancel.into_inner().was_running);
    assert_eq!(
        await_job(&mut client, &b_answer.job_id).await.status(),
        JobStatus::Cancelled
    );
    let cancelled_at = Instant::now();
    assert!(
        client
            .cancel_proof(cancel(&a))
            .await
            .unwrap()
            .into_inner()
            .was_running
    );
    let a_outcome = await_job(&mut client, &a).await;
    assert_eq!(a_outcome.status(), JobStatus::Cancelled, "{a_outcome:?}");
    assert!(a_outcome.proof.is_empty());
    let took = cancelled_at.elapsed();
    assert!(took < Duration::from_secs(8), "cancelling took {took:?}");

    // The job behind them runs, and what the cancelled ones held is free.
    let c_outcome = await_job(&mut client, &c_answer.job_id).await;
    assert_verifies(&daemon.params(mul(16)), mul(16), 3, 1, &c_outcome);
    let mut freed = false;
    for _ in 0..500 {
        let s = status(&mut client).await;
        let held: u32 = s.loaded_srs.iter().map(|k| k.ref_count).sum();
        if s.partitions_to_synthesize == 0 && s.partitions_to_prove == 0 && held == 0 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "{:?}", status(&mut client).await);
    let evicted = client.evict_srs(evict).await.unwrap().into_inner();
    assert!(evicted.was_loaded && evicted.freed_bytes > 0);

    let status = status(&mut client).await;
    assert_eq!(
        (status.total_proofs_cancelled, status.total_proofs_completed),
        (2, 1)
    );
    let samples = metrics(&mut client).await;
    assert_eq!(
        samples[r#"cuzk_jobs_finished_total{kind="mul-chain",outcome="cancelled"}"#],
        2.0
    );
    assert_eq!(
        samples[r#"cuzk_jobs_rejected_total{reason="resource_exhausted"}"#],
        1.0
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_jobs_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("unix://{}", dir.path().join("cuzk.sock").display());
    let mut config = config(dir.path(), &socket);
    config.engine_jobs = Some(1);
    let daemon = Daemon::start(config.clone()).await;
    let mut client = daemon.client().await;
    slow_key(&mut client).await;

    // One outcome left unfetched, one job running, three queued.
    let done = submit(&mut client, synthetic(mul(16), 1, 10)).await;
    let mut finished = false;
    for _ in 0..500 {
        if status(&mut client).await.total_proofs_completed == 1 {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(finished);
    let slow = submit(&mut client, synthetic(mul(SLOW), 4, 11)).await;
    let mut queued = Vec::new();
    for request in 12..15 {
        queued.push((
            request,
            submit(&mut client, synthetic(mul(16), 2, request)).await,
        ));
    }
    daemon.stop().await;

    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;
    let outcome = await_job(&mut client, &done).await;
    assert_verifies(&daemon.params(mul(16)), mul(16), 10, 1, &outcome);
    let outcome = await_job(&mut client, &slow).await;
    assert_verifies(&daemon.params(mul(SLOW)), mul(SLOW), 11, 4, &outcome);
    for (request, job) in queued {
        let outcome = await_job(&mut client, &job).await;
        assert_verifies(&daemon.params(mul(16)), mul(16), request, 2, &outcome);
    }
    // Fetched outcomes are gone; new jobs get new ids.
    let request = pb::AwaitProofRequest {
        job_id: done.clone(),
        timeout_ms: 1,
    };
    assert_eq!(
        client.await_proof(request).await.unwrap_err().code(),
        Code::NotFound
    );
    let next = submit(&mut client, synthetic(mul(16), 1, 20)).await;
    let seq = |id: &str| cuzk_daemon::parse_job_id(id).unwrap();
    assert!(seq(&next) > seq(&slow));
    let samples = metrics(&mut client).await;
    assert_eq!(samples["cuzk_jobs_recovered_total"], 4.0);
    daemon.stop().await;
}
