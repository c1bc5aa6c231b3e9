//! `cuzk client ...`: talk to a running daemon. `submit` prints the job id
//! alone on stdout (for `JOB=$(cuzk client submit ...)`); `await` and
//! `prove` print a summary (`--json` for one JSON object), write the proof
//! with `--out`, and exit non-zero unless the job completed.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use cuzk_daemon::pb::await_proof_response::Status as JobStatus;
use cuzk_daemon::pb::{self, ProofKind};
use serde_json::json;

use crate::filecoin::{hex32, read};
use crate::CliResult;

/// Arguments of `cuzk client`.
#[derive(Args, Debug)]
pub struct ClientArgs {
    /// The daemon: unix:///path, host:port, or a port on 127.0.0.1.
    #[arg(long, global = true, default_value = "127.0.0.1:9820")]
    addr: String,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// CA certificates (PEM) the daemon's certificate must chain to: the
    /// connection is TLS.
    #[arg(long, global = true)]
    tls_ca: Option<PathBuf>,
    /// The name the daemon's certificate must carry (default: the host of
    /// --addr).
    #[arg(long, global = true, requires = "tls_ca")]
    tls_domain: Option<String>,
    /// This client's certificate (PEM), for a daemon that asks for one
    /// (mutual TLS); with --tls-key.
    #[arg(long, global = true, requires_all = ["tls_key", "tls_ca"])]
    tls_cert: Option<PathBuf>,
    /// The key of --tls-cert (PEM).
    #[arg(long, global = true, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A file whose first line is the bearer token to send (or set
    /// CUZK_TOKEN); never the token itself on the command line, where
    /// other users could read it.
    #[arg(long, global = true)]
    token_file: Option<PathBuf>,
    #[command(subcommand)]
    command: ClientCommand,
}

impl ClientArgs {
    /// The connection's credentials: TLS files and the token, read now.
    fn credentials(&self) -> Result<cuzk_daemon::client::Credentials, Box<dyn std::error::Error>> {
        let token = match &self.token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|err| format!("--token-file {}: {err}", path.display()))?;
                let line = text.lines().map(str::trim).find(|l| !l.is_empty());
                Some(
                    line.ok_or_else(|| format!("--token-file {} is empty", path.display()))?
                        .to_owned(),
                )
            }
            None => std::env::var("CUZK_TOKEN").ok().filter(|t| !t.is_empty()),
        };
        Ok(cuzk_daemon::client::Credentials {
            tls_ca: self.tls_ca.clone(),
            tls_domain: self.tls_domain.clone(),
            tls_identity: self.tls_cert.clone().zip(self.tls_key.clone()),
            token,
        })
    }
}

#[derive(Subcommand, Debug)]
enum ClientCommand {
    /// Submit a job; prints its id.
    Submit(JobArgs),
    /// Wait for a job's outcome and fetch it.
    Await {
        /// The job id `submit` printed.
        job_id: String,
        /// Give up after this many milliseconds (0: wait for the outcome).
        #[arg(long, default_value_t = 0)]
        timeout_ms: u64,
        /// Write the proof here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Submit a job and wait for its outcome.
    Prove {
        #[command(flatten)]
        job: JobArgs,
        /// Write the proof here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Aggregate several sectors' PoRep proofs (SnarkPack) on the daemon.
    Aggregate {
        #[command(flatten)]
        sectors: crate::filecoin::AggregateArgs,
        /// Write the aggregate here.
        #[arg(long)]
        out: PathBuf,
    },
    /// Cancel a queued or running job.
    Cancel {
        /// The job id.
        job_id: String,
    },
    /// Devices, loaded keys, queues, totals.
    Status,
    /// The Prometheus text.
    Metrics,
    /// Load a proving key (e.g. mul-chain/64).
    Preload {
        /// The circuit id.
        circuit_id: String,
    },
    /// Free a proving key no job uses.
    Evict {
        /// The circuit id.
        circuit_id: String,
    },
}

/// What to prove: a synthetic workload (`--size`, `--partitions`,
/// `--request`) or a Filecoin proof, with the same input flags as `cuzk
/// prove --kind ...` (and the same files).
#[derive(Args, Debug)]
struct JobArgs {
    /// mul-chain, sha-chain, porep, snap-deals (or snap), window-post or
    /// winning-post.
    #[arg(long)]
    kind: String,
    /// Synthetic kinds: the workload size (SHA-256 blocks or squarings).
    /// Filecoin kinds: the sector size in bytes (or use --sector-size).
    #[arg(long)]
    size: Option<u64>,
    /// Filecoin kinds: the sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB);
    /// PoRep may leave it to the C1 output.
    #[arg(long)]
    sector_size: Option<String>,
    /// Filecoin kinds: go-state-types' registered proof number (e.g. a
    /// Synthetic PoRep's); must agree with the sector size.
    #[arg(long)]
    registered_proof: Option<u64>,
    /// Partitions (synthetic kinds).
    #[arg(long, default_value_t = 1)]
    partitions: u32,
    /// Request number (synthetic kinds).
    #[arg(long, default_value_t = 0)]
    request: u64,
    /// low, normal, high or critical.
    #[arg(long, default_value = "normal")]
    priority: String,
    /// The caller's idempotency key.
    #[arg(long, default_value = "")]
    request_id: String,
    /// PoRep: a file holding the C1 output (the same as --c1).
    #[arg(long, conflicts_with = "c1")]
    vanilla_proof: Option<PathBuf>,
    #[command(flatten)]
    input: crate::filecoin::InputArgs,
}

impl JobArgs {
    fn kind(&self) -> Result<ProofKind, String> {
        Ok(match self.kind.as_str() {
            "mul-chain" => ProofKind::MulChain,
            "sha-chain" => ProofKind::ShaChain,
            "porep" => ProofKind::PorepSealCommit,
            "snap" | "snap-deals" => ProofKind::SnapDealsUpdate,
            "window-post" => ProofKind::WindowPostPartition,
            "winning-post" => ProofKind::WinningPost,
            other => return Err(format!("unknown --kind '{other}'")),
        })
    }

    fn synthetic(&self) -> bool {
        matches!(self.kind(), Ok(ProofKind::MulChain | ProofKind::ShaChain))
    }

    /// Refuses what cannot make a request (a zero size or partition count,
    /// a missing size) before the daemon is called.
    fn check(&self) -> Result<(), Box<dyn std::error::Error>> {
        self.kind()?;
        if self.synthetic() {
            let size = self.size.ok_or("--size is missing")?;
            crate::checks::positive("--size", usize::try_from(size).unwrap_or(usize::MAX))?;
            crate::checks::positive("--partitions", self.partitions as usize)?;
        } else if self.size == Some(0) {
            crate::checks::positive("--size", 0)?;
        }
        Ok(())
    }

    /// The submission, every field the request's kind has. Files are read
    /// and hex decoded here; what they mean is the daemon's to check.
    fn request(&self) -> Result<pb::SubmitProofRequest, Box<dyn std::error::Error>> {
        let kind = self.kind()?;
        let priority = pb::Priority::from_str_name(&self.priority.to_uppercase())
            .ok_or_else(|| format!("unknown --priority '{}'", self.priority))?;
        let mut req = pb::SubmitProofRequest {
            request_id: self.request_id.clone(),
            proof_kind: kind as i32,
            sector_size: self.size.unwrap_or(0),
            priority: priority as i32,
            ..Default::default()
        };
        if self.synthetic() {
            req.sector_number = self.request;
            req.synthetic_partitions = self.partitions;
            return Ok(req);
        }
        let input = &self.input;
        if let Some(size) = &self.sector_size {
            let size: cuzk_filecoin::SectorSize = size.parse()?;
            if self.size.is_some_and(|bytes| bytes != size.bytes()) {
                return Err("--size and --sector-size disagree".into());
            }
            req.sector_size = size.bytes();
        }
        req.registered_proof = self.registered_proof.unwrap_or(0);
        req.miner_id = input.miner_id.ok_or("--miner-id is missing")?;
        match kind {
            ProofKind::PorepSealCommit => {
                let path = input
                    .c1
                    .as_ref()
                    .or(self.vanilla_proof.as_ref())
                    .ok_or("--c1 is missing")?;
                req.vanilla_proof = local(read(path))?;
                req.sector_number = input
                    .sector_id
                    .or_else(|| {
                        cuzk_filecoin::FilecoinRequest::c1_sector_number(&req.vanilla_proof)
                    })
                    .ok_or("--sector-id is missing (the C1 output does not name its sector)")?;
            }
            _ => {
                if input.vanilla.is_empty() {
                    return Err("--vanilla is missing".into());
                }
                req.vanilla_proofs = input
                    .vanilla
                    .iter()
                    .map(|p| local(read(p)))
                    .collect::<Result<_, _>>()?;
                if kind == ProofKind::SnapDealsUpdate {
                    req.comm_r_old =
                        local(hex32(input.comm_r_old.as_deref(), "--comm-r-old"))?.to_vec();
                    req.comm_r_new =
                        local(hex32(input.comm_r_new.as_deref(), "--comm-r-new"))?.to_vec();
                    req.comm_d_new =
                        local(hex32(input.comm_d_new.as_deref(), "--comm-d-new"))?.to_vec();
                } else {
                    req.randomness =
                        local(hex32(input.randomness.as_deref(), "--randomness"))?.to_vec();
                    req.partition_index = u32::try_from(input.partition_index)
                        .map_err(|_| "--partition-index is too large")?;
                }
            }
        }
        Ok(req)
    }
}

/// `filecoin.rs`'s result (an error that can cross threads) as this
/// module's.
fn local<T>(result: Result<T, crate::filecoin::AnyError>) -> Result<T, Box<dyn std::error::Error>> {
    result.map_err(|e| e as Box<dyn std::error::Error>)
}

/// Runs one client command.
pub fn client(args: &ClientArgs) -> CliResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: &ClientArgs) -> CliResult {
    match &args.command {
        ClientCommand::Submit(job) => job.check()?,
        ClientCommand::Prove { job, out } => {
            job.check()?;
            crate::checks::writable_output(out.as_ref())?;
        }
        ClientCommand::Await { out, .. } => crate::checks::writable_output(out.as_ref())?,
        ClientCommand::Aggregate { out, .. } => crate::checks::writable_output(Some(out))?,
        _ => {}
    }
    let credentials = args.credentials()?;
    let mut client = cuzk_daemon::client::connect_with(&args.addr, &credentials).await?;
    match call(args, &mut client).await {
        Err(err) => match err.downcast::<Rpc>() {
            Ok(rpc) => Err(
                cuzk_daemon::client::call_error(&args.addr, &credentials, &rpc.0)
                    .await
                    .into(),
            ),
            Err(err) => Err(err),
        },
        done => done,
    }
}

/// A failed call, kept whole until `run` can say why it failed.
#[derive(Debug)]
struct Rpc(tonic::Status);

impl std::fmt::Display for Rpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.0.code(), self.0.message())
    }
}

impl std::error::Error for Rpc {}

fn rpc_error(status: tonic::Status) -> Box<dyn std::error::Error> {
    Box::new(Rpc(status))
}

/// The command's calls on a connected client.
async fn call(args: &ClientArgs, client: &mut cuzk_daemon::client::Client) -> CliResult {
    match &args.command {
        ClientCommand::Submit(job) => {
            let answer = client
                .submit_proof(job.request()?)
                .await
                .map_err(rpc_error)?;
            let answer = answer.into_inner();
            if args.json {
                let line =
                    json!({"job_id": answer.job_id, "queue_position": answer.queue_position});
                println!("{line}");
            } else {
                println!("{}", answer.job_id);
                eprintln!("queue position {}", answer.queue_position);
            }
            Ok(())
        }
        ClientCommand::Await {
            job_id,
            timeout_ms,
            out,
        } => {
            let request = pb::AwaitProofRequest {
                job_id: job_id.clone(),
                timeout_ms: *timeout_ms,
            };
            let result = client.await_proof(request).await.map_err(rpc_error)?;
            report(&result.into_inner(), out.as_ref(), args.json)
        }
        ClientCommand::Prove { job, out } => {
            let request = pb::ProveRequest {
                submit: Some(job.request()?),
            };
            let answer = client.prove(request).await.map_err(rpc_error)?.into_inner();
            let result = answer.result.ok_or("the daemon sent no result")?;
            report(&result, out.as_ref(), args.json)
        }
        ClientCommand::Aggregate { sectors, out } => {
            let request = aggregate_request(sectors)?;
            let answer = client
                .aggregate_seal_proofs(request)
                .await
                .map_err(rpc_error)?
                .into_inner();
            crate::bench::write_file(out, &answer.aggregate)?;
            if args.json {
                let line = json!({
                    "bytes": answer.aggregate.len(), "proofs": answer.proofs,
                    "verified": answer.verified, "aggregate_ms": answer.aggregate_ms,
                });
                println!("{line}");
            } else {
                println!(
                    "aggregate of {} sectors: {} bytes, {} proofs, verified {}, {} ms",
                    sectors.c1.len(),
                    answer.aggregate.len(),
                    answer.proofs,
                    answer.verified,
                    answer.aggregate_ms
                );
            }
            Ok(())
        }
        ClientCommand::Cancel { job_id } => {
            let request = pb::CancelProofRequest {
                job_id: job_id.clone(),
            };
            let answer = client.cancel_proof(request).await.map_err(rpc_error)?;
            let was_running = answer.into_inner().was_running;
            match args.json {
                true => println!("{}", json!({"job_id": job_id, "was_running": was_running})),
                false => println!("{job_id} cancelled (was running: {was_running})"),
            }
            Ok(())
        }
        ClientCommand::Status => {
            let status = client
                .get_status(pb::GetStatusRequest {})
                .await
                .map_err(rpc_error)?;
            print_status(&status.into_inner(), args.json);
            Ok(())
        }
        ClientCommand::Metrics => {
            let metrics = client
                .get_metrics(pb::GetMetricsRequest {})
                .await
                .map_err(rpc_error)?;
            print!("{}", metrics.into_inner().prometheus_text);
            Ok(())
        }
        ClientCommand::Preload { circuit_id } => {
            let request = pb::PreloadSrsRequest {
                circuit_id: circuit_id.clone(),
            };
            let answer = client
                .preload_srs(request)
                .await
                .map_err(rpc_error)?
                .into_inner();
            println!(
                "{circuit_id}: {} bytes, {} ({} ms)",
                answer.size_bytes,
                if answer.already_loaded {
                    "already loaded"
                } else {
                    "loaded"
                },
                answer.load_time_ms
            );
            Ok(())
        }
        ClientCommand::Evict { circuit_id } => {
            let request = pb::EvictSrsRequest {
                circuit_id: circuit_id.clone(),
            };
            let answer = client
                .evict_srs(request)
                .await
                .map_err(rpc_error)?
                .into_inner();
            match answer.was_loaded {
                true => println!("{circuit_id}: freed {} bytes", answer.freed_bytes),
                false => println!("{circuit_id}: was not loaded"),
            }
            Ok(())
        }
    }
}

/// The `AggregateSealProofs` request of the sectors the flags name (their
/// C1 outputs read here for the commitments, ticket and seed).
fn aggregate_request(
    sectors: &crate::filecoin::AggregateArgs,
) -> Result<pb::AggregateSealProofsRequest, Box<dyn std::error::Error>> {
    let (seals, version) = local(sectors.sectors(true))?;
    let miner_id = sectors.miner_id.ok_or("--miner-id is missing")?;
    Ok(cuzk_daemon::kinds::aggregate_message(
        seals, miner_id, version,
    ))
}

/// Prints an outcome, writes its proof, and fails unless it completed.
fn report(result: &pb::AwaitProofResponse, out: Option<&PathBuf>, as_json: bool) -> CliResult {
    let status = result.status();
    if let (Some(path), JobStatus::Completed) = (out, status) {
        std::fs::write(path, &result.proof)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let name = status.as_str_name().to_lowercase();
    if as_json {
        let line = json!({
            "job_id": result.job_id, "status": name, "error": result.error_message,
            "proof_bytes": result.proof.len(), "partitions": result.partitions,
            "verified": result.verified, "total_ms": result.total_ms,
            "queue_wait_ms": result.queue_wait_ms, "srs_load_ms": result.srs_load_ms,
            "synthesis_ms": result.synthesis_ms, "gpu_compute_ms": result.gpu_compute_ms,
            "preamble_ms": result.preamble_ms, "lock_wait_ms": result.lock_wait_ms,
            "kernel_ms": result.kernel_ms, "epilogue_ms": result.epilogue_ms,
        });
        println!("{line}");
    } else {
        println!(
            "{} {name}: {} bytes, {} partition(s), verified {}, total {} ms \
             (queue {} ms, key {} ms, synthesis {} ms, prover {} ms)",
            result.job_id,
            result.proof.len(),
            result.partitions,
            result.verified,
            result.total_ms,
            result.queue_wait_ms,
            result.srs_load_ms,
            result.synthesis_ms,
            result.gpu_compute_ms
        );
    }
    match status {
        JobStatus::Completed => Ok(()),
        JobStatus::Timeout => Err(format!("{} is not finished yet", result.job_id).into()),
        _ => Err(format!("{} {name}: {}", result.job_id, result.error_message).into()),
    }
}

fn print_status(status: &pb::GetStatusResponse, as_json: bool) {
    let gpus: Vec<_> = status
        .gpus
        .iter()
        .map(|g| {
            json!({
        "ordinal": g.ordinal, "name": g.name, "lock_acquisitions": g.lock_acquisitions,
        "lock_held_ns": g.lock_held_ns, "lock_wait_ns": g.lock_wait_ns})
        })
        .collect();
    let keys: Vec<_> = status
        .loaded_srs
        .iter()
        .map(|k| {
            json!({
        "circuit_id": k.circuit_id, "size_bytes": k.size_bytes, "ref_count": k.ref_count})
        })
        .collect();
    let queues: Vec<_> = status
        .queues
        .iter()
        .map(|q| {
            json!({
        "proof_kind": q.proof_kind, "pending": q.pending, "in_progress": q.in_progress})
        })
        .collect();
    let all = json!({
        "gpus": gpus, "loaded_srs": keys, "queues": queues,
        "completed": status.total_proofs_completed, "failed": status.total_proofs_failed,
        "cancelled": status.total_proofs_cancelled, "uptime_seconds": status.uptime_seconds,
        "pinned_memory_bytes": status.pinned_memory_bytes,
        "partitions_to_synthesize": status.partitions_to_synthesize,
        "partitions_to_prove": status.partitions_to_prove,
    });
    if as_json {
        println!("{all}");
        return;
    }
    println!(
        "up {} s; proofs completed {}, failed {}, cancelled {}",
        status.uptime_seconds,
        status.total_proofs_completed,
        status.total_proofs_failed,
        status.total_proofs_cancelled
    );
    for g in &status.gpus {
        println!(
            "device {} ({}): lock taken {} times, held {:.3} s",
            g.ordinal,
            g.name,
            g.lock_acquisitions,
            g.lock_held_ns as f64 * 1e-9
        );
    }
    for k in &status.loaded_srs {
        println!(
            "key {}: {} bytes, {} job(s)",
            k.circuit_id, k.size_bytes, k.ref_count
        );
    }
    for q in &status.queues {
        println!(
            "{}: {} queued, {} running",
            q.proof_kind, q.pending, q.in_progress
        );
    }
    println!(
        "engine: {} partition(s) to synthesize, {} to prove",
        status.partitions_to_synthesize, status.partitions_to_prove
    );
}
