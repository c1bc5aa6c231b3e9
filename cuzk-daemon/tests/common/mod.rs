//! What the daemon's tests share: an in-process daemon on a real socket,
//! requests, proof verification, a strict Prometheus text reader and a
//! bare HTTP/1 GET.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuzk_daemon::client::{connect, Client};
use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_daemon::{DaemonConfig, DaemonError, Server};
use cuzk_pipeline::Workload;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A daemon serving in this process.
pub struct Daemon {
    pub addr: String,
    pub metrics: Option<SocketAddr>,
    pub state_dir: PathBuf,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), DaemonError>>,
}

/// A test configuration: CPU backend, one partition worker, keys made on
/// demand, everything under `state_dir`, gRPC on `listen`.
pub fn config(state_dir: &Path, listen: &str) -> DaemonConfig {
    let mut config = DaemonConfig {
        listen: listen.to_owned(),
        metrics_listen: "127.0.0.1:0".to_owned(),
        state_dir: state_dir.to_owned(),
        shutdown_grace_secs: 0,
        generate_params: true,
        ..DaemonConfig::default()
    };
    config.engine.backend = Some("cpu".to_owned());
    config.engine.partition_workers = Some(1);
    config
}

impl Daemon {
    pub async fn start(config: DaemonConfig) -> Self {
        let state_dir = config.state_dir.clone();
        let server = Server::bind(config).await.expect("daemon starts");
        let addr = server.grpc_addr().to_string();
        let metrics = server.metrics_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            stopped.await.ok();
        }));
        Self {
            addr,
            metrics,
            state_dir,
            stop,
            task,
        }
    }

    pub async fn client(&self) -> Client {
        connect(&self.addr).await.expect("client connects")
    }

    /// Shuts it down as SIGTERM would, and waits until it has.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().expect("clean shutdown");
    }

    pub fn params(&self, workload: Workload) -> PathBuf {
        self.state_dir.join("params").join(format!(
            "{}-{}.params",
            workload.name(),
            workload.size()
        ))
    }
}

/// A synthetic submission.
pub fn synthetic(workload: Workload, partitions: u32, request: u64) -> pb::SubmitProofRequest {
    let kind = match workload {
        Workload::MulChain { .. } => ProofKind::MulChain,
        Workload::ShaChain { .. } => ProofKind::ShaChain,
    };
    pb::SubmitProofRequest {
        proof_kind: kind as i32,
        sector_size: workload.size() as u64,
        sector_number: request,
        synthetic_partitions: partitions,
        ..Default::default()
    }
}

pub fn mul(n: usize) -> Workload {
    Workload::new("mul-chain", n).unwrap()
}

pub async fn submit(client: &mut Client, request: pb::SubmitProofRequest) -> String {
    client
        .submit_proof(request)
        .await
        .expect("accepted")
        .into_inner()
        .job_id
}

pub async fn await_job(client: &mut Client, job_id: &str) -> pb::AwaitProofResponse {
    let request = pb::AwaitProofRequest {
        job_id: job_id.to_owned(),
        timeout_ms: 0,
    };
    client
        .await_proof(request)
        .await
        .expect("outcome")
        .into_inner()
}

pub async fn prove(client: &mut Client, request: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    let request = pb::ProveRequest {
        submit: Some(request),
    };
    let answer = client.prove(request).await.expect("proven").into_inner();
    answer.result.expect("a result")
}

/// Checks a completed outcome against the verifying key in `params`,
/// independently of the daemon, and that a tampered copy fails.
pub fn assert_verifies(
    params: &Path,
    workload: Workload,
    request: u64,
    partitions: usize,
    outcome: &pb::AwaitProofResponse,
) {
    assert_eq!(outcome.status(), JobStatus::Completed, "{outcome:?}");
    assert!(outcome.verified);
    let file = std::fs::File::open(params).expect("params file");
    let vk = bellperson_lite::VerifyingKey::read(BufReader::new(file)).unwrap();
    let pvk = bellperson_lite::prepare_verifying_key(&vk);
    let proofs = cuzk_pipeline::decode_request_proof(&outcome.proof, partitions).unwrap();
    cuzk_pipeline::verify_request(&pvk, workload, request, &proofs).expect("verifies");
    let other = cuzk_pipeline::verify_request(&pvk, workload, request + 1, &proofs);
    assert!(
        other.is_err(),
        "a proof of request {request} verified as {}",
        request + 1
    );
}

/// Polls `check` every 20 ms for up to `limit`.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

/// The daemon's metrics, by `name{labels}`, read over gRPC.
pub async fn metrics(client: &mut Client) -> HashMap<String, f64> {
    let text = client
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .expect("metrics");
    parse_metrics(&text.into_inner().prometheus_text)
}

/// This process's resident memory (the in-process daemon's and its
/// clients').
pub fn rss() -> u64 {
    cuzk_engine::host::rss_bytes().expect("VmRSS on Linux")
}

pub async fn status(client: &mut Client) -> pb::GetStatusResponse {
    client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

/// `GET path` over HTTP/1.0: (status code, content type, body).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    (code, content_type, body.to_owned())
}

/// Samples of an OpenMetrics/Prometheus text, by `name{labels}` (labels as
/// written). Panics on any line that is not a comment or a well-formed
/// sample, on a sample whose family has no `# TYPE`, or without `# EOF`.
pub fn parse_metrics(text: &str) -> HashMap<String, f64> {
    assert!(text.ends_with("# EOF\n"), "no # EOF at the end");
    let mut families: Vec<String> = Vec::new();
    let mut samples = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut words = rest.split(' ');
            let name = words.next().unwrap();
            let kind = words.next().unwrap();
            assert!(
                [
                    "counter",
                    "gauge",
                    "histogram",
                    "summary",
                    "info",
                    "unknown"
                ]
                .contains(&kind),
                "bad type line: {line}"
            );
            families.push(name.to_owned());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect(line);
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        let name_end = series.find('{').unwrap_or(series.len());
        let name = &series[..name_end];
        assert!(valid_name(name), "bad metric name in {line}");
        check_labels(&series[name_end..], line);
        assert!(
            families.iter().any(|f| name.starts_with(f.as_str())),
            "{name} has no # TYPE"
        );
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "duplicate {series}"
        );
    }
    samples
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn check_labels(labels: &str, line: &str) {
    if labels.is_empty() {
        return;
    }
    let inner = labels
        .strip_prefix('{')
        .and_then(|l| l.strip_suffix('}'))
        .unwrap_or_else(|| panic!("bad label set in {line}"));
    for pair in inner.split("\",") {
        let (key, value) = pair
            .split_once("=\"")
            .unwrap_or_else(|| panic!("bad label in {line}"));
        assert!(valid_name(key), "bad label name in {line}");
        assert!(
            !value.trim_end_matches('"').contains('"'),
            "unescaped quote in {line}"
        );
    }
}
