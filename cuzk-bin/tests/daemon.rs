//! `cuzk serve` and `cuzk client` as processes: the client commands against
//! a daemon on loopback TCP, a clean SIGTERM, and a SIGKILL in the middle of
//! work after which every accepted job completes on restart. All traffic
//! stays on 127.0.0.1 and unix sockets.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use cuzk_daemon::pb::{self, ProofKind};
use cuzk_pipeline::Workload;

mod common;

const CUZK: &str = env!("CARGO_BIN_EXE_cuzk");

/// A `cuzk serve` process and the address its first stdout line names.
struct Served {
    child: Child,
    grpc: String,
    metrics: String,
}

fn serve(state: &Path, listen: &str, extra: &[&str]) -> Served {
    let mut command = Command::new(CUZK);
    command
        .args([
            "serve",
            "--listen",
            listen,
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .args(["--state-dir", state.to_str().unwrap(), "--backend", "cpu"])
        .args(["--partition-workers", "1", "--generate-params", "true"])
        .args(extra)
        .env("RUST_LOG", "warn");
    let (child, grpc, metrics) = common::spawn_serve(&mut command);
    Served {
        child,
        grpc,
        metrics,
    }
}

fn signal(child: &Child, name: &str) {
    let pid = child.id().to_string();
    let status = Command::new("kill")
        .args(["-s", name, &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

fn client(addr: &str, args: &[&str]) -> Output {
    Command::new(CUZK)
        .args(["client", "--addr", addr])
        .args(args)
        .output()
        .expect("cuzk client runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn client_commands_and_a_clean_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = serve(dir.path(), "127.0.0.1:0", &[]);
    let addr = daemon.grpc.clone();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");

    let proof = dir.path().join("req.proof");
    let out = client(
        &addr,
        &[
            "prove",
            "--kind",
            "mul-chain",
            "--size",
            "40",
            "--partitions",
            "2",
        ],
    );
    assert!(stdout(&out).contains("completed"));
    let job = stdout(&client(
        &addr,
        &[
            "submit",
            "--kind",
            "mul-chain",
            "--size",
            "40",
            "--partitions",
            "2",
            "--request",
            "6",
        ],
    ));
    let job = job.trim();
    assert!(job.starts_with("job-"), "{job}");
    let out = client(&addr, &["--json", "await", job, "--out", s(&proof)]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["proof_bytes"], 384);
    // The proof file verifies with the key the daemon made, through `cuzk verify`.
    let params = dir.path().join("params/mul-chain-40.params");
    let verify = Command::new(CUZK)
        .args([
            "verify",
            "--params",
            s(&params),
            "--workload",
            "mul-chain",
            "--size",
            "40",
        ])
        .args(["--partitions", "2", "--request", "6", "--proof", s(&proof)])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );

    let status: serde_json::Value =
        serde_json::from_str(&stdout(&client(&addr, &["--json", "status"]))).unwrap();
    assert_eq!(status["completed"], 2);
    assert_eq!(status["loaded_srs"][0]["circuit_id"], "mul-chain/40");
    let metrics = stdout(&client(&addr, &["metrics"]));
    assert!(
        metrics.contains(r#"cuzk_jobs_finished_total{kind="mul-chain",outcome="completed"} 2"#),
        "{metrics}"
    );
    assert!(stdout(&client(&addr, &["evict", "mul-chain/40"])).contains("freed"));
    // Errors are one line naming the gRPC code.
    let bad = client(&addr, &["await", "job-12345"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("NotFound"));
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, b"{}").unwrap();
    let porep = [
        "submit",
        "--kind",
        "porep",
        "--size",
        "2048",
        "--miner-id",
        "1000",
    ];
    let bad = client(&addr, &porep);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--c1 is missing"));
    let bad = client(
        &addr,
        &[&porep[..], &["--sector-id", "1", "--c1", s(&junk)]].concat(),
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("InvalidArgument"));

    signal(&daemon.child, "TERM");
    let exit = daemon.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let refused = client(&addr, &["status"]);
    assert!(!refused.status.success());
    let _ = daemon.metrics;
}

/// `cuzk client prove` of every Filecoin kind at 2 KiB (the committed
/// fixtures, the same flags as `cuzk prove --kind ...`) through a running
/// daemon, each proof then accepted by filecoin-proofs' verifier (`cuzk
/// verify --kind ...`); an NI-PoRep too (its C1 names its seal proof), on
/// the PoRep parameters and the test SnarkPack SRS `cuzk setup` wrote; a
/// missing input is refused before the daemon is called, a wrong one by the
/// daemon.
#[test]
fn client_proves_every_filecoin_kind() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuzk-filecoin/fixtures");
    let fx = fixtures.join("2KiB");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.join("meta.json")).unwrap()).unwrap();
    let ni = fixtures.join("2KiB-ni");
    let ni_meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ni.join("meta.json")).unwrap()).unwrap();
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_owned();
    let file = |v: &serde_json::Value| fx.join(v.as_str().unwrap()).to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("fil-params");
    let mut daemon = serve(dir.path(), "127.0.0.1:0", &["--fil-param-dir", s(&params)]);
    let addr = daemon.grpc.clone();
    let sector = ["--sector-size", "2KiB", "--miner-id", "1000"];
    let post = |section: &str| -> Vec<String> {
        let randomness = text(&m[section]["randomness"]);
        let vanilla = file(&m[section]["vanilla_proofs"][0]);
        vec![
            "--randomness".into(),
            randomness,
            "--vanilla".into(),
            vanilla,
        ]
    };
    let kinds: Vec<(&str, Vec<String>)> = vec![
        (
            "porep",
            vec![
                "--c1".into(),
                file(&m["c1_curio"]),
                "--sector-id".into(),
                m["sector_id"].to_string(),
            ],
        ),
        ("winning-post", post("winning")),
        ("window-post", post("window")),
        (
            "snap-deals",
            vec![
                "--comm-r-old".into(),
                text(&m["snap"]["comm_r_old"]),
                "--comm-r-new".into(),
                text(&m["snap"]["comm_r_new"]),
                "--comm-d-new".into(),
                text(&m["snap"]["comm_d_new"]),
                "--vanilla".into(),
                file(&m["snap"]["partition_proofs"][0]),
            ],
        ),
        (
            "porep",
            vec![
                "--c1".into(),
                ni.join(ni_meta["c1_curio"].as_str().unwrap())
                    .to_str()
                    .unwrap()
                    .to_owned(),
                "--sector-id".into(),
                ni_meta["sector_id"].to_string(),
            ],
        ),
    ];
    let mut set_up = std::collections::HashSet::new();
    for (i, (kind, inputs)) in kinds.iter().enumerate() {
        if !set_up.insert(kind) {
            // NI-PoRep: the PoRep parameters and SRS already made.
            assert!(params.join("v28-fil-inner-product-v1.srs").exists());
        } else {
            let setup = Command::new(CUZK)
                .args([
                    "setup",
                    "--kind",
                    kind,
                    "--sector-size",
                    "2KiB",
                    "--backend",
                    "cpu",
                ])
                .args(["--param-dir", s(&params)])
                .output()
                .unwrap();
            assert!(
                setup.status.success(),
                "{}",
                String::from_utf8_lossy(&setup.stderr)
            );
        }
        let proof = dir.path().join(format!("{i}-{kind}.proof"));
        let mut args = vec!["prove", "--kind", kind];
        args.extend(sector);
        args.extend(inputs.iter().map(String::as_str));
        args.extend(["--out", s(&proof)]);
        assert!(
            stdout(&client(&addr, &args)).contains("completed"),
            "{kind}"
        );
        let mut verify = vec!["verify", "--kind", kind, "--param-dir", s(&params)];
        verify.extend(sector);
        verify.extend(inputs.iter().map(String::as_str));
        verify.extend(["--proof", s(&proof)]);
        let out = Command::new(CUZK).args(&verify).output().unwrap();
        assert!(
            stdout(&out).contains("verifies (filecoin-proofs)"),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Two sectors' proofs (the sealed fixture's above, a CC sector's now)
    // aggregated by the daemon; the aggregate checked here by filecoin-proofs.
    let cc = fixtures.join("cc-2KiB");
    let cc_c1 = cc.join("c1-curio.json");
    let cc_proof = dir.path().join("cc-porep.proof");
    let mut args = vec!["prove", "--kind", "porep"];
    args.extend(sector);
    args.extend(["--c1", s(&cc_c1), "--out", s(&cc_proof)]);
    assert!(stdout(&client(&addr, &args)).contains("completed"));
    let (c1, proof) = (file(&m["c1_curio"]), dir.path().join("0-porep.proof"));
    let aggregate = dir.path().join("sectors.aggregate");
    let pairs = [
        "--miner-id",
        "1000",
        "--c1",
        &c1,
        "--proof",
        s(&proof),
        "--c1",
        s(&cc_c1),
        "--proof",
        s(&cc_proof),
    ];
    let mut args = vec!["aggregate", "--out", s(&aggregate)];
    args.extend(pairs);
    let made = stdout(&client(&addr, &args));
    assert!(
        made.contains("aggregate of 2 sectors") && made.contains("verified true"),
        "{made}"
    );
    let check = |c1s: &[&str]| {
        let mut args = vec!["aggregate", "--param-dir", s(&params), "--miner-id", "1000"];
        for c1 in c1s {
            args.extend(["--c1", c1]);
        }
        args.extend(["--verify", s(&aggregate)]);
        Command::new(CUZK).args(&args).output().unwrap()
    };
    let out = check(&[&c1, s(&cc_c1)]);
    assert!(
        stdout(&out).contains("aggregate of 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // In the other order it is not that aggregate.
    let out = check(&[s(&cc_c1), &c1]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not the SnarkPackV2 aggregate"));
    // Proofs swapped between the sectors: the daemon names the first.
    let mut swapped = pairs;
    swapped.swap(5, 9);
    let mut args = vec!["aggregate", "--out", s(&aggregate)];
    args.extend(swapped);
    let out = client(&addr, &args);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("InvalidArgument") && stderr.contains("(proof 1 of 2)"),
        "{stderr}"
    );
    let metrics = stdout(&client(&addr, &["metrics"]));
    for outcome in ["made", "refused"] {
        let line = format!("cuzk_seal_aggregates_total{{outcome=\"{outcome}\"}} 1");
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }

    // A missing input: refused by the client; a wrong one: by the daemon.
    let winning = &kinds[1].1;
    let mut args = vec!["submit", "--kind", "winning-post"];
    args.extend(sector);
    args.extend(winning[2..].iter().map(String::as_str));
    let out = client(&addr, &args);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--randomness is missing"));
    let other = format!("{:064x}", 7);
    args.extend(["--randomness", &other]);
    let out = client(&addr, &args);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("InvalidArgument"));

    signal(&daemon.child, "TERM");
    assert!(daemon.child.wait().unwrap().success());
}

/// Submits jobs from a thread until told to stop; every id it returns was
/// accepted (its `SubmitProof` answered) before the daemon was killed.
fn submit_until_killed(addr: String, stop: Arc<Mutex<bool>>) -> Vec<(String, Workload, u32, u64)> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let mut accepted = Vec::new();
        let Ok(mut client) = cuzk_daemon::client::connect(&addr).await else {
            return accepted;
        };
        for request in 1u64.. {
            if *stop.lock().unwrap() {
                break;
            }
            let (n, partitions) = (16 + (request as usize % 5) * 20, 1 + (request % 3) as u32);
            let workload = Workload::new("mul-chain", n).unwrap();
            let submit = pb::SubmitProofRequest {
                proof_kind: ProofKind::MulChain as i32,
                sector_size: n as u64,
                sector_number: request,
                synthetic_partitions: partitions,
                ..Default::default()
            };
            match client.submit_proof(submit).await {
                Ok(answer) => {
                    accepted.push((answer.into_inner().job_id, workload, partitions, request))
                }
                Err(_) => break,
            }
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        accepted
    })
}

#[test]
fn every_accepted_job_completes_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let socket = format!("unix://{}", dir.path().join("cuzk.sock").display());
    let flags = ["--engine-jobs", "2", "--preload", "mul-chain/8000"];
    let mut daemon = serve(dir.path(), &socket, &flags);

    // A slow job keeps the engine busy while small ones pile up behind it.
    let slow = [
        "submit",
        "--kind",
        "mul-chain",
        "--size",
        "8000",
        "--partitions",
        "8",
    ];
    let slow = stdout(&client(&socket, &slow));
    let stop = Arc::new(Mutex::new(false));
    let submitter = {
        let (addr, stop) = (socket.clone(), Arc::clone(&stop));
        std::thread::spawn(move || submit_until_killed(addr, stop))
    };
    std::thread::sleep(Duration::from_millis(1500));
    daemon.child.kill().unwrap(); // SIGKILL, mid-work
    daemon.child.wait().unwrap();
    *stop.lock().unwrap() = true;
    let mut accepted = submitter.join().unwrap();
    accepted.push((
        slow.trim().to_owned(),
        Workload::new("mul-chain", 8000).unwrap(),
        8,
        0,
    ));
    assert!(
        accepted.len() > 10,
        "only {} jobs were accepted",
        accepted.len()
    );

    let mut daemon = serve(dir.path(), &socket, &flags);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let started = Instant::now();
    runtime.block_on(async {
        let mut client = cuzk_daemon::client::connect(&socket).await.unwrap();
        for (job, workload, partitions, request) in &accepted {
            let ask = pb::AwaitProofRequest {
                job_id: job.clone(),
                timeout_ms: 120_000,
            };
            let outcome = client.await_proof(ask).await.unwrap().into_inner();
            assert_eq!(outcome.status(), JobStatus::Completed, "{job}: {outcome:?}");
            let params = dir
                .path()
                .join(format!("params/mul-chain-{}.params", workload.size()));
            verify(
                &params,
                *workload,
                *request,
                *partitions as usize,
                &outcome.proof,
            );
        }
        // Some of them were unfinished when the daemon died.
        let text = client.get_metrics(pb::GetMetricsRequest {}).await.unwrap();
        let recovered = text
            .into_inner()
            .prometheus_text
            .lines()
            .find_map(|l| {
                l.strip_prefix("cuzk_jobs_recovered_total ")?
                    .parse::<f64>()
                    .ok()
            })
            .unwrap();
        assert!(recovered >= 1.0, "nothing was left to recover");
    });
    eprintln!(
        "{} accepted jobs completed after the restart in {:.1} s",
        accepted.len(),
        started.elapsed().as_secs_f64()
    );
    signal(&daemon.child, "TERM");
    assert!(daemon.child.wait().unwrap().success());
}

fn verify(params: &PathBuf, workload: Workload, request: u64, partitions: usize, proof: &[u8]) {
    let file = std::fs::File::open(params).unwrap();
    let vk = bellperson_lite::VerifyingKey::read(std::io::BufReader::new(file)).unwrap();
    let pvk = bellperson_lite::prepare_verifying_key(&vk);
    let proofs = cuzk_pipeline::decode_request_proof(proof, partitions).unwrap();
    cuzk_pipeline::verify_request(&pvk, workload, request, &proofs).expect("verifies");
}
