//! The daemon over real sockets (a unix socket and loopback TCP): proofs of
//! the synthetic kinds verify, malformed requests get the error that names
//! the problem and the daemon carries on, keys load and evict, `/metrics`
//! parses and counts what ran, `/status` reports it, and the journal
//! forgets outcomes nobody fetched.

mod common;

use std::time::Duration;

use common::*;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_pipeline::Workload;
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proves_both_kinds_over_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("unix://{}", dir.path().join("run/cuzk.sock").display());
    let daemon = Daemon::start(config(dir.path(), &socket)).await;
    assert!(daemon.addr.starts_with("unix://"));
    let mut client = daemon.client().await;

    let mul = mul(64);
    let outcome = prove(&mut client, synthetic(mul, 3, 5)).await;
    assert_verifies(&daemon.params(mul), mul, 5, 3, &outcome);
    assert_eq!(outcome.partitions, 3);

    let sha = Workload::new("sha-chain", 1).unwrap();
    let job = submit(&mut client, synthetic(sha, 2, 9)).await;
    let outcome = await_job(&mut client, &job).await;
    assert_verifies(&daemon.params(sha), sha, 9, 2, &outcome);
    assert!(outcome.synthesis_ms + outcome.kernel_ms > 0, "{outcome:?}");
    assert!(outcome.total_ms >= outcome.queue_wait_ms);

    // Fetched outcomes are gone.
    let again = pb::AwaitProofRequest {
        job_id: job.clone(),
        timeout_ms: 1,
    };
    let err = client.await_proof(again).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    daemon.stop().await;
    assert!(
        !dir.path().join("run/cuzk.sock").exists(),
        "socket left behind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proves_over_loopback_tcp_and_counts_it_in_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(config(dir.path(), "127.0.0.1:0")).await;
    assert!(daemon.addr.starts_with("127.0.0.1:"), "{}", daemon.addr);
    let mut client = daemon.client().await;
    let workload = mul(48);
    for (request, partitions) in [(1, 1), (2, 2), (3, 1)] {
        let outcome = prove(&mut client, synthetic(workload, partitions, request)).await;
        assert_verifies(
            &daemon.params(workload),
            workload,
            request,
            partitions as usize,
            &outcome,
        );
    }
    let bad = pb::SubmitProofRequest {
        sector_size: 0,
        ..synthetic(workload, 1, 0)
    };
    assert!(client.submit_proof(bad).await.is_err());
    let porep = pb::SubmitProofRequest {
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: 2 << 10,
        vanilla_proof: b"{}".to_vec(),
        ..Default::default()
    };
    assert_eq!(
        client.submit_proof(porep).await.unwrap_err().code(),
        Code::InvalidArgument
    );

    let metrics = daemon.metrics.expect("metrics served");
    let (code, content_type, text) = http_get(metrics, "/metrics");
    assert_eq!(code, 200);
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let samples = parse_metrics(&text);
    let value = |series: &str| *samples.get(series).unwrap_or_else(|| panic!("no {series}"));
    assert_eq!(value(r#"cuzk_jobs_accepted_total{kind="mul-chain"}"#), 3.0);
    assert_eq!(
        value(r#"cuzk_jobs_finished_total{kind="mul-chain",outcome="completed"}"#),
        3.0
    );
    assert_eq!(
        value(r#"cuzk_partitions_proven_total{kind="mul-chain"}"#),
        4.0
    );
    assert_eq!(
        value(r#"cuzk_jobs_rejected_total{reason="invalid_argument"}"#),
        2.0
    );
    assert_eq!(
        value(r#"cuzk_job_duration_seconds_count{kind="mul-chain"}"#),
        3.0
    );
    for stage in ["synthesis", "preamble", "lock_wait", "kernel", "epilogue"] {
        let series = format!(r#"cuzk_partition_stage_seconds_count{{stage="{stage}"}}"#);
        assert_eq!(value(&series), 4.0, "{series}");
    }
    assert_eq!(
        value(r#"cuzk_gpu_lock_acquisitions_total{device="0"}"#),
        4.0
    );
    assert!(value(r#"cuzk_gpu_lock_held_seconds_total{device="0"}"#) > 0.0);
    assert!(value(r#"cuzk_srs_bytes{circuit="mul-chain/48"}"#) > 0.0);
    assert_eq!(value(r#"cuzk_jobs_queued{kind="mul-chain"}"#), 0.0);
    assert_eq!(value(r#"cuzk_jobs_running{kind="mul-chain"}"#), 0.0);
    assert_eq!(
        value(r#"cuzk_engine_partitions_waiting{queue="synthesis"}"#),
        0.0
    );
    if cfg!(target_os = "linux") {
        // The daemon holds a key and has proven: megabytes at least, the
        // peak no lower than now, and the machine not out of memory.
        let (now, peak) = (
            value("cuzk_process_resident_bytes"),
            value("cuzk_process_peak_resident_bytes"),
        );
        assert!(now > 1e6 && peak >= now, "resident {now}, peak {peak}");
        assert!(value("cuzk_host_memory_available_bytes") > 0.0);
    }

    let rpc = common::metrics(&mut client).await;
    assert_eq!(rpc[r#"cuzk_jobs_accepted_total{kind="mul-chain"}"#], 3.0);
    assert_eq!(http_get(metrics, "/healthz").0, 200);
    let status = status(&mut client).await;
    assert_eq!(status.total_proofs_completed, 3);
    assert_eq!(status.gpus.len(), 1);
    assert_eq!(status.gpus[0].lock_acquisitions, 4);
    assert!(!status.gpus[0].retired);
    assert_eq!(value(r#"cuzk_device_up{device="0"}"#), 1.0);
    // The CPU backend: NVML is not asked, its figures are absent, not 0.
    let nvml_series = samples
        .keys()
        .filter(|s| s.starts_with("cuzk_gpu_utilization") || s.starts_with("cuzk_gpu_memory"));
    assert_eq!(nvml_series.count(), 0, "{text}");
    assert_eq!(status.gpus[0].utilization_percent, None);
    assert_eq!(status.gpus[0].vram_total_bytes, 0);
    assert_eq!(status.gpus[0].vram_free_bytes, 0);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_clear_errors_and_the_daemon_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(config(dir.path(), "127.0.0.1:0")).await;
    let mut client = daemon.client().await;
    let good = synthetic(mul(32), 1, 0);
    let cases: Vec<(&str, pb::SubmitProofRequest, Code, &str)> = vec![
        (
            "unknown kind",
            pb::SubmitProofRequest {
                proof_kind: 55,
                ..good.clone()
            },
            Code::InvalidArgument,
            "unknown proof_kind 55",
        ),
        (
            "no kind",
            pb::SubmitProofRequest {
                proof_kind: 0,
                ..good.clone()
            },
            Code::InvalidArgument,
            "proof_kind is missing",
        ),
        (
            "no size",
            pb::SubmitProofRequest {
                sector_size: 0,
                ..good.clone()
            },
            Code::InvalidArgument,
            "sector_size",
        ),
        (
            "huge size",
            pb::SubmitProofRequest {
                sector_size: 1 << 40,
                ..good.clone()
            },
            Code::InvalidArgument,
            "sector_size",
        ),
        (
            "vanilla bytes on a synthetic kind",
            pb::SubmitProofRequest {
                vanilla_proof: vec![0xde, 0xad],
                ..good.clone()
            },
            Code::InvalidArgument,
            "vanilla_proof",
        ),
        (
            "too many partitions",
            pb::SubmitProofRequest {
                synthetic_partitions: 100_000,
                ..good.clone()
            },
            Code::InvalidArgument,
            "synthetic_partitions",
        ),
        (
            "bad priority",
            pb::SubmitProofRequest {
                priority: 9,
                ..good.clone()
            },
            Code::InvalidArgument,
            "priority",
        ),
        (
            "garbage C1 output",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::PorepSealCommit as i32,
                sector_size: 32 << 30,
                vanilla_proof: vec![0xff; 64],
                ..Default::default()
            },
            Code::InvalidArgument,
            "not JSON",
        ),
        (
            "missing C1 output",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::PorepSealCommit as i32,
                sector_size: 32 << 30,
                ..Default::default()
            },
            Code::InvalidArgument,
            "vanilla_proof",
        ),
        (
            "wrong sector size",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::WinningPost as i32,
                sector_size: 1000,
                vanilla_proofs: vec![vec![1]],
                randomness: vec![0; 32],
                ..Default::default()
            },
            Code::InvalidArgument,
            "not a Filecoin sector size",
        ),
        (
            "short randomness",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::WindowPostPartition as i32,
                sector_size: 32 << 30,
                vanilla_proofs: vec![vec![1]],
                randomness: vec![0; 5],
                ..Default::default()
            },
            Code::InvalidArgument,
            "randomness",
        ),
        (
            "short commitments",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::SnapDealsUpdate as i32,
                sector_size: 32 << 30,
                vanilla_proofs: vec![vec![1]],
                ..Default::default()
            },
            Code::InvalidArgument,
            "comm_r_old: 0 bytes",
        ),
        (
            "garbage partition proof",
            pb::SubmitProofRequest {
                proof_kind: ProofKind::SnapDealsUpdate as i32,
                sector_size: 32 << 30,
                vanilla_proofs: vec![vec![1]],
                comm_r_old: vec![0; 32],
                comm_r_new: vec![0; 32],
                comm_d_new: vec![0; 32],
                ..Default::default()
            },
            Code::InvalidArgument,
            "bad ",
        ),
    ];
    for (case, request, code, needle) in cases {
        let err = client.submit_proof(request).await.expect_err(case);
        assert_eq!(err.code(), code, "{case}: {err}");
        assert!(
            err.message().contains(needle),
            "{case}: '{}' lacks '{needle}'",
            err.message()
        );
    }
    let err = client
        .prove(pb::ProveRequest { submit: None })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    for job_id in ["job-999", "nonsense", ""] {
        let request = pb::AwaitProofRequest {
            job_id: job_id.into(),
            timeout_ms: 1,
        };
        assert_eq!(
            client.await_proof(request).await.unwrap_err().code(),
            Code::NotFound
        );
        let request = pb::CancelProofRequest {
            job_id: job_id.into(),
        };
        assert_eq!(
            client.cancel_proof(request).await.unwrap_err().code(),
            Code::NotFound
        );
    }
    for circuit_id in ["porep-32g", "mul-chain/0", "mul-chain/x", ""] {
        let request = pb::PreloadSrsRequest {
            circuit_id: circuit_id.into(),
        };
        let err = client.preload_srs(request).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{circuit_id}");
    }
    // A key file of another circuit is refused, naming the file.
    let params = dir.path().join("params");
    std::fs::create_dir_all(&params).unwrap();
    std::fs::copy(
        daemon_key(&mut client, &daemon, 33).await,
        params.join("mul-chain-34.params"),
    )
    .unwrap();
    let err = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "mul-chain/34".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(
        err.message().contains("mul-chain-34.params"),
        "{}",
        err.message()
    );

    // Still serving.
    let outcome = prove(&mut client, good).await;
    assert_verifies(&daemon.params(mul(32)), mul(32), 0, 1, &outcome);
    daemon.stop().await;
}

/// Has the daemon make the key of mul-chain/`n` and returns its file.
async fn daemon_key(
    client: &mut cuzk_daemon::client::Client,
    daemon: &Daemon,
    n: usize,
) -> std::path::PathBuf {
    let request = pb::PreloadSrsRequest {
        circuit_id: format!("mul-chain/{n}"),
    };
    client.preload_srs(request).await.unwrap();
    daemon.params(mul(n))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preload_and_evict_load_and_free_keys() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(config(dir.path(), "127.0.0.1:0")).await;
    let mut client = daemon.client().await;
    let preload = |id: &str| pb::PreloadSrsRequest {
        circuit_id: id.into(),
    };
    let evict = |id: &str| pb::EvictSrsRequest {
        circuit_id: id.into(),
    };

    let first = client
        .preload_srs(preload("mul-chain/100"))
        .await
        .unwrap()
        .into_inner();
    assert!(!first.already_loaded);
    assert!(first.size_bytes > 0);
    let second = client
        .preload_srs(preload("mul-chain/100"))
        .await
        .unwrap()
        .into_inner();
    assert!(second.already_loaded);
    let listed = status(&mut client).await.loaded_srs;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].circuit_id, "mul-chain/100");
    assert_eq!(listed[0].size_bytes, first.size_bytes);
    assert_eq!(listed[0].ref_count, 0);

    let evicted = client
        .evict_srs(evict("mul-chain/100"))
        .await
        .unwrap()
        .into_inner();
    assert!(evicted.was_loaded);
    assert_eq!(evicted.freed_bytes, first.size_bytes);
    assert!(status(&mut client).await.loaded_srs.is_empty());
    let again = client
        .evict_srs(evict("mul-chain/100"))
        .await
        .unwrap()
        .into_inner();
    assert!(!again.was_loaded);

    // A job reloads an evicted key (from the file the first load saved).
    let outcome = prove(&mut client, synthetic(mul(100), 1, 4)).await;
    assert_verifies(&daemon.params(mul(100)), mul(100), 4, 1, &outcome);
    assert_eq!(status(&mut client).await.loaded_srs.len(), 1);
    daemon.stop().await;
}

/// `/status`, parsed.
fn status_json(daemon: &Daemon) -> serde_json::Value {
    let (code, content_type, body) = http_get(daemon.metrics.expect("served"), "/status");
    assert_eq!(code, 200, "{body}");
    assert_eq!(content_type, "application/json");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_jobs_memory_devices_and_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "127.0.0.1:0");
    config.engine_jobs = Some(3);
    config.max_jobs = 7;
    config.engine.host_memory_limit = Some("64GiB".to_owned());
    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;

    let before = status_json(&daemon);
    assert_eq!(before["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(before["accepting_jobs"], true);
    assert_eq!(before["jobs"]["finished"]["completed"], 0);
    assert_eq!(before["keys"].as_array().unwrap().len(), 0);

    let outcome = prove(&mut client, synthetic(mul(24), 2, 1)).await;
    assert_verifies(&daemon.params(mul(24)), mul(24), 1, 2, &outcome);
    let after = status_json(&daemon);
    let jobs = &after["jobs"];
    assert_eq!(jobs["finished"]["completed"], 1, "{after}");
    assert_eq!(jobs["finished"]["failed"], 0);
    for (field, value) in [
        ("queued", 0),
        ("running", 0),
        ("max_jobs", 7),
        ("engine_jobs", 3),
    ] {
        assert_eq!(jobs[field], value, "{field}");
    }
    let partitions = &after["engine_partitions"];
    assert_eq!(partitions["to_synthesize"], 0);
    assert_eq!(partitions["to_prove"], 0);
    assert!(after["uptime_seconds"].as_f64().unwrap() > 0.0);

    let host = &after["host_memory"];
    assert_eq!(host["budget_bytes"], 64u64 << 30, "{host}");
    assert_eq!(host["budget_waits"], 0);
    if cfg!(target_os = "linux") {
        let resident = host["process_resident_bytes"].as_u64().unwrap();
        let peak = host["process_peak_resident_bytes"].as_u64().unwrap();
        assert!(resident > 1 << 20 && peak >= resident, "{host}");
        assert!(host["available_bytes"].as_u64().unwrap() > 0);
    }

    // The CPU backend: the lock was taken once per partition; NVML's
    // figures are null, not 0.
    let devices = after["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1, "{after}");
    let device = &devices[0];
    assert_eq!(device["backend"], "cpu");
    assert_eq!(device["up"], true);
    assert!(device["retired_error"].is_null());
    assert_eq!(device["lock_acquisitions"], 2);
    assert!(device["lock_held_seconds"].as_f64().unwrap() > 0.0);
    assert!(device["memory_free_bytes"].is_null() && device["utilization_percent"].is_null());

    // The same figures as GetStatus.
    let grpc = status(&mut client).await;
    assert_eq!(grpc.total_proofs_completed, 1);
    let keys = after["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["circuit"], "mul-chain/24");
    assert_eq!(keys[0]["jobs"], 0);
    assert_eq!(keys[0]["size_bytes"], grpc.loaded_srs[0].size_bytes);
    assert!(grpc.loaded_srs[0].size_bytes > 0);
    daemon.stop().await;
}

/// Waits until the daemon has recorded `completed` outcomes.
async fn completed(client: &mut cuzk_daemon::client::Client, completed: u64) {
    for _ in 0..1000 {
        if status(client).await.total_proofs_completed >= completed {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{completed} jobs never completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_keeps_the_newest_unfetched_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "127.0.0.1:0");
    config.journal_keep_finished = 1;
    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;
    let first = submit(&mut client, synthetic(mul(16), 1, 0)).await;
    completed(&mut client, 1).await;
    let second = submit(&mut client, synthetic(mul(16), 1, 1)).await;
    completed(&mut client, 2).await;

    // The second outcome pushed the first out: its job reads as expired.
    let request = |job_id: &str| pb::AwaitProofRequest {
        job_id: job_id.to_owned(),
        timeout_ms: 1,
    };
    let err = client.await_proof(request(&first)).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    let message = err.message();
    assert!(message.contains("no longer held"), "{message}");
    assert!(message.contains("journal_keep_finished = 1"), "{message}");
    let outcome = await_job(&mut client, &second).await;
    assert_verifies(&daemon.params(mul(16)), mul(16), 1, 1, &outcome);
    let err = client.await_proof(request("job-99")).await.unwrap_err();
    assert!(
        err.message().contains("never accepted"),
        "{}",
        err.message()
    );

    let (_, _, text) = http_get(daemon.metrics.unwrap(), "/metrics");
    let samples = parse_metrics(&text);
    let compacted =
        |reason: &str| samples[&format!(r#"cuzk_journal_compacted_total{{reason="{reason}"}}"#)];
    assert_eq!(compacted("over_limit"), 1.0);
    assert_eq!(compacted("expired"), 0.0);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfetched_outcomes_expire() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "127.0.0.1:0");
    config.result_ttl_secs = 1;
    let daemon = Daemon::start(config).await;
    let mut client = daemon.client().await;
    let job = submit(&mut client, synthetic(mul(16), 1, 0)).await;
    let mut finished = false;
    for _ in 0..500 {
        if status(&mut client).await.total_proofs_completed == 1 {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(finished);
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let request = pb::AwaitProofRequest {
        job_id: job,
        timeout_ms: 1,
    };
    assert_eq!(
        client.await_proof(request).await.unwrap_err().code(),
        Code::NotFound
    );
    let (_, _, text) = http_get(daemon.metrics.unwrap(), "/metrics");
    let samples = parse_metrics(&text);
    assert_eq!(
        samples[r#"cuzk_journal_compacted_total{reason="expired"}"#],
        1.0
    );
    daemon.stop().await;
}
