//! A bounded load test on loopback: 1,000 tiny jobs (mul-chain/32, one
//! partition) from 16 concurrent clients against a `cuzk serve` process.
//! Every job completes and verifies, none is lost, and the daemon's
//! resident memory stays bounded. Prints the time taken and the RSS.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_pipeline::Workload;

const JOBS: u64 = 1000;
const CLIENTS: u64 = 16;
const SIZE: usize = 32;

/// The process's resident set, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_thousand_tiny_jobs_from_sixteen_clients() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["serve", "--listen", "127.0.0.1:0", "--metrics-listen", ""])
        .args(["--generate-params", "true"])
        .args([
            "--state-dir",
            dir.path().to_str().unwrap(),
            "--backend",
            "cpu",
        ])
        .args([
            "--max-jobs",
            "64",
            "--preload",
            &format!("mul-chain/{SIZE}"),
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("cuzk serve: gRPC on ")
        .and_then(|rest| rest.split(',').next())
        .unwrap()
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let pid = daemon.id();
    let rss_start = rss_kib(pid).unwrap();

    // Sample the daemon's RSS while the load runs.
    let running = Arc::new(AtomicBool::new(true));
    let sampler = {
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while running.load(Ordering::SeqCst) {
                samples.extend(rss_kib(pid));
                std::thread::sleep(Duration::from_millis(100));
            }
            samples
        })
    };

    let started = Instant::now();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let proofs: Vec<(u64, Vec<u8>)> = runtime.block_on(async {
        let mut clients = Vec::new();
        for c in 0..CLIENTS {
            let addr = addr.clone();
            clients.push(tokio::spawn(async move {
                let mut client = cuzk_daemon::client::connect(&addr).await.unwrap();
                let mut proofs = Vec::new();
                for request in (c..JOBS).step_by(CLIENTS as usize) {
                    let submit = pb::SubmitProofRequest {
                        proof_kind: ProofKind::MulChain as i32,
                        sector_size: SIZE as u64,
                        sector_number: request,
                        synthetic_partitions: 1,
                        ..Default::default()
                    };
                    let prove = pb::ProveRequest {
                        submit: Some(submit),
                    };
                    let result = client
                        .prove(prove)
                        .await
                        .unwrap()
                        .into_inner()
                        .result
                        .unwrap();
                    assert_eq!(result.status(), JobStatus::Completed, "request {request}");
                    proofs.push((request, result.proof));
                }
                proofs
            }));
        }
        let mut all = Vec::new();
        for client in clients {
            all.extend(client.await.unwrap());
        }
        all
    });
    let elapsed = started.elapsed();
    running.store(false, Ordering::SeqCst);
    let samples = sampler.join().unwrap();

    let status = runtime.block_on(async {
        let mut client = cuzk_daemon::client::connect(&addr).await.unwrap();
        client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner()
    });
    assert_eq!(status.total_proofs_completed, JOBS);
    assert_eq!(status.total_proofs_failed, 0);
    Command::new("kill")
        .args(["-s", "TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(daemon.wait().unwrap().success());

    // Every job, once, and every proof verifies against the daemon's key.
    let mut requests: Vec<u64> = proofs.iter().map(|p| p.0).collect();
    requests.sort_unstable();
    assert_eq!(requests, (0..JOBS).collect::<Vec<_>>());
    let params = dir.path().join(format!("params/mul-chain-{SIZE}.params"));
    let file = std::fs::File::open(params).unwrap();
    let vk = bellperson_lite::VerifyingKey::read(std::io::BufReader::new(file)).unwrap();
    let pvk = bellperson_lite::prepare_verifying_key(&vk);
    let workload = Workload::new("mul-chain", SIZE).unwrap();
    for (request, bytes) in &proofs {
        let proof = cuzk_pipeline::decode_request_proof(bytes, 1).unwrap();
        cuzk_pipeline::verify_request(&pvk, workload, *request, &proof).expect("verifies");
    }

    let peak = samples.iter().copied().max().unwrap_or(rss_start);
    let quarter = samples.len() / 4;
    let early = samples[..quarter.max(1)]
        .iter()
        .copied()
        .max()
        .unwrap_or(rss_start);
    let late = samples[quarter..].iter().copied().max().unwrap_or(peak);
    eprintln!(
        "load: {JOBS} jobs from {CLIENTS} clients in {:.1} s ({:.0} jobs/s); daemon RSS \
         {} MiB at start, {} MiB peak in the first quarter, {} MiB peak after",
        elapsed.as_secs_f64(),
        JOBS as f64 / elapsed.as_secs_f64(),
        rss_start / 1024,
        early / 1024,
        late / 1024
    );
    assert!(peak < 1024 * 1024, "RSS reached {peak} KiB");
    assert!(
        late <= early + 64 * 1024,
        "RSS grew from {early} KiB to {late} KiB over the run"
    );
}
