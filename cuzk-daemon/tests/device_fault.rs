//! A device lost to a sticky CUDA error (injected with `CUZK_FAULT` on the
//! CPU backend): the job fails with the typed error, `GetStatus` and
//! `/metrics` say the device is out, and the daemon keeps answering. Its own
//! test binary: the variable is read by every engine the process starts.

mod common;

use common::*;
use cuzk_daemon::pb::await_proof_response::Status as JobStatus;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_device_is_reported_and_the_daemon_keeps_answering() {
    // Before any engine exists, and the only test in this process.
    std::env::set_var(supraseal_c2::FAULT_ENV, "sticky@1");
    let dir = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(config(dir.path(), "127.0.0.1:0")).await;
    let mut client = daemon.client().await;

    let failed = prove(&mut client, synthetic(mul(32), 2, 1)).await;
    assert_eq!(failed.status(), JobStatus::Failed, "{failed:?}");
    assert!(
        failed.error_message.contains("cudaErrorIllegalAddress"),
        "{}",
        failed.error_message
    );

    let gpu = status(&mut client).await.gpus.remove(0);
    assert!(gpu.retired, "{gpu:?}");
    assert!(
        gpu.retired_error.contains("sticky"),
        "{}",
        gpu.retired_error
    );
    let text = http_get(daemon.metrics.expect("metrics served"), "/metrics").2;
    assert_eq!(parse_metrics(&text)[r#"cuzk_device_up{device="0"}"#], 0.0);

    // Still answering: later jobs fail at once, naming the lost device.
    let refused = prove(&mut client, synthetic(mul(32), 1, 2)).await;
    assert_eq!(refused.status(), JobStatus::Failed);
    assert!(
        refused.error_message.contains("no device left"),
        "{}",
        refused.error_message
    );
    daemon.stop().await;
}
