//! Weeks of uptime in a minute: 20,000 jobs (`CUZK_FLAT_RSS_JOBS` for
//! more) proven through a daemon on the CPU backend by 4 clients at once,
//! with the engine keeping 1,000 records of each kind. Once the first
//! fifth has filled every bounded store (the engine's records, the
//! metrics' histograms, the journal's free pages), the process's resident
//! memory must stay flat: whatever a job leaves behind would show as
//! growth over the other four fifths. Its own test binary, so that the
//! process's RSS is this daemon's and its clients'.

mod common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use common::*;

const CLIENTS: u64 = 4;
const RECORDS_KEPT: usize = 1_000;
/// What the last four fifths may add to the resident memory: allocator
/// noise, not a job's leftovers (a 1 KiB leak a job would be 16 MB at
/// 20,000 jobs).
const FLAT: u64 = 8 << 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resident_memory_stays_flat_over_many_jobs() {
    let jobs: u64 = std::env::var("CUZK_FLAT_RSS_JOBS")
        .ok()
        .map(|v| v.parse().expect("CUZK_FLAT_RSS_JOBS: a number"))
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), "127.0.0.1:0");
    config.engine.records_kept = Some(RECORDS_KEPT);
    let daemon = Daemon::start(config).await;
    let workload = mul(8);
    let key = daemon.params(workload);

    let done = Arc::new(AtomicUsize::new(0));
    let base = Arc::new(AtomicU64::new(0));
    let peak = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let mut client = daemon.client().await;
        let (done, base, peak, key) = (
            Arc::clone(&done),
            Arc::clone(&base),
            Arc::clone(&peak),
            key.clone(),
        );
        tasks.push(tokio::spawn(async move {
            for request in (c..jobs).step_by(CLIENTS as usize) {
                let outcome = prove(&mut client, synthetic(workload, 1, request)).await;
                assert!(outcome.verified, "job {request}: {outcome:?}");
                // The engine verified each; a sample is checked apart.
                if request.is_multiple_of(997) {
                    assert_verifies(&key, workload, request, 1, &outcome);
                }
                let n = done.fetch_add(1, Ordering::Relaxed) as u64 + 1;
                if n == jobs / 5 {
                    base.store(rss(), Ordering::Relaxed);
                } else if n > jobs / 5 && n.is_multiple_of(50) {
                    peak.fetch_max(rss(), Ordering::Relaxed);
                }
                if n.is_multiple_of((jobs / 10).max(1)) {
                    eprintln!(
                        "{n} jobs, {:.1} s: resident {} KiB",
                        started.elapsed().as_secs_f64(),
                        rss() >> 10
                    );
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (base, peak) = (base.load(Ordering::Relaxed), peak.load(Ordering::Relaxed));
    let grew = peak.saturating_sub(base);
    eprintln!(
        "{jobs} jobs in {:.1} s: resident {} KiB after the first fifth, at most {} KiB after \
         (+{} KiB)",
        started.elapsed().as_secs_f64(),
        base >> 10,
        peak >> 10,
        grew >> 10
    );
    assert!(
        grew < FLAT,
        "resident memory grew by {} KiB over the last {} jobs",
        grew >> 10,
        jobs - jobs / 5
    );
    let mut client = daemon.client().await;
    let status = status(&mut client).await;
    assert_eq!(status.total_proofs_completed, jobs);
    daemon.stop().await;
}
