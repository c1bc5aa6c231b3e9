//! The job journal on a full disk: a small tmpfs of its own (the test runs
//! again inside a user and mount namespace, `unshare -rm`, where it may
//! mount one), filled to the last byte by a file beside the journal.
//! Accepting is refused cleanly while the disk is full and works again once
//! it has room, without a restart; an outcome that finds the disk full is
//! journaled once room comes back, and a restarted daemon hands it out
//! without running the job again.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use cuzk_daemon::pb;
use cuzk_daemon::DaemonConfig;
use tonic::Code;

/// Set, to the tmpfs's path, in the test's second run inside the namespace.
const INSIDE: &str = "CUZK_TEST_TMPFS";

/// mul-chain/8000: about a second per partition on the CPU backend.
const SLOW: usize = 8000;
/// The second job's partitions: the most a synthetic job may have.
const PARTITIONS: u32 = 256;

/// In the first run: runs `test` again in a namespace with a tmpfs of
/// `size` mounted on a new directory, asserts that it passed, and returns
/// `None`. In that second run: the tmpfs's directory.
fn tmpfs_for(test: &str, size: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(INSIDE) {
        return Some(PathBuf::from(dir));
    }
    let can = Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !can {
        eprintln!("SKIPPED {test}: `unshare -rm` cannot make a mount namespace here");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let script =
        r#"mount -t tmpfs -o size="$1" cuzk-test "$2" && exec "$3" --exact "$4" --nocapture"#;
    let status = Command::new("unshare")
        .args(["-rm", "sh", "-c", script, "sh", size])
        .arg(dir.path())
        .arg(exe)
        .arg(test)
        .env(INSIDE, dir.path())
        .status()
        .expect("unshare runs");
    assert!(status.success(), "{test} failed inside its namespace");
    None
}

/// Fills the file system of `dir` with `dir/filler` until a write fails
/// for want of space.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let mut chunk = vec![0xeeu8; 1 << 16];
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::StorageFull => {
                if chunk.len() == 1 {
                    break;
                }
                chunk.truncate(chunk.len() / 2);
            }
            Err(err) => panic!("filling {}: {err}", path.display()),
        }
    }
    file.sync_all().ok();
    path
}

/// Waits up to two minutes for `value` to be positive.
async fn wait_for<F: std::future::Future<Output = f64>>(value: impl Fn() -> F, what: &str) {
    for _ in 0..1200 {
        if value().await > 0.0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {what} in two minutes");
}

fn daemon_config(tmpfs: &Path, params: &Path) -> DaemonConfig {
    DaemonConfig {
        params_dir: Some(params.to_owned()),
        ..config(&tmpfs.join("state"), "127.0.0.1:0")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_loses_no_accepted_job() {
    let Some(tmpfs) = tmpfs_for("a_full_disk_loses_no_accepted_job", "4m") else {
        return;
    };
    // The keys live off the tmpfs: only the journal is on it.
    let params = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(daemon_config(&tmpfs, params.path())).await;
    let mut client = daemon.client().await;
    let request = pb::PreloadSrsRequest {
        circuit_id: format!("mul-chain/{SLOW}"),
    };
    client.preload_srs(request).await.expect("slow key loads");
    let key = params.path().join(format!("mul-chain-{SLOW}.params"));

    // Full at accept: refused, naming the journal; accepted again once
    // there is room, by the same daemon.
    let filler = fill(&tmpfs);
    let job = synthetic(mul(SLOW), 1, 1);
    let err = client
        .submit_proof(job.clone())
        .await
        .expect_err("a full disk refuses the job");
    assert_eq!(err.code(), Code::Internal, "{err}");
    assert!(err.message().contains("journal"), "{}", err.message());
    std::fs::remove_file(&filler).unwrap();
    let first = submit(&mut client, job).await;
    let outcome = await_job(&mut client, &first).await;
    assert_verifies(&key, mul(SLOW), 1, 1, &outcome);

    // Full at finish: the job is accepted, the disk fills while it runs,
    // and room comes back once its outcome's write has failed. Its 256
    // partitions' proofs (49 KB) need pages the journal's file does not
    // have free: small writes can reuse pages freed by earlier ones.
    let second = submit(&mut client, synthetic(mul(64), PARTITIONS, 2)).await;
    let filler = fill(&tmpfs);
    let metric = |name: &'static str| {
        let mut client = client.clone();
        async move { metrics(&mut client).await.get(name).copied().unwrap_or(0.0) }
    };
    wait_for(
        || metric("cuzk_journal_write_retries_total"),
        "a retried write",
    )
    .await;
    std::fs::remove_file(&filler).unwrap();
    wait_for(
        || async {
            metric(r#"cuzk_jobs_finished_total{kind="mul-chain",outcome="completed"}"#).await - 1.0
        },
        "the second job's outcome",
    )
    .await;
    daemon.stop().await;

    let daemon = Daemon::start(daemon_config(&tmpfs, params.path())).await;
    let mut client = daemon.client().await;
    let outcome = await_job(&mut client, &second).await;
    let key = params.path().join("mul-chain-64.params");
    assert_verifies(&key, mul(64), 2, PARTITIONS as usize, &outcome);
    let status = status(&mut client).await;
    assert_eq!(
        status.total_proofs_completed, 0,
        "the restarted daemon proved the job again"
    );
    daemon.stop().await;
}
