//! `cuzk setup`, `cuzk prove` and `cuzk verify`: one request, no engine
//! tuning, for users who want a proof file and a yes or no.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use cuzk_pipeline::{partition_seed, ShapeCache, Workload};

use crate::checks::{positive, writable_file};
use crate::logging::{ns_secs, secs, CLI};
use crate::{filecoin, keys, progress, CliResult};

/// Which circuit: the workload family and its size.
#[derive(Args, Clone, Debug)]
pub struct WorkloadArgs {
    /// Circuit family: sha-chain or mul-chain.
    #[arg(long, default_value = "sha-chain")]
    pub workload: String,
    /// Blocks (sha-chain) or squarings (mul-chain).
    #[arg(long, default_value_t = 1)]
    pub size: usize,
}

impl WorkloadArgs {
    fn resolve(&self) -> Result<Workload, cuzk_pipeline::PipelineError> {
        Workload::new(&self.workload, self.size)
    }
}

/// Arguments of `cuzk setup`.
#[derive(Args, Debug)]
pub struct SetupArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Where to write the parameters (bellperson's .params format).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Where the fixed-base multiplications run: auto (device 0 when CUDA is
    /// built in and present), cpu or cuda. The same --seed gives the same
    /// file on either.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Derive the secret values from this seed (ChaCha20), so that a run can
    /// be repeated byte for byte. Whoever knows the seed can forge proofs:
    /// test parameters only. Without it the values come from the operating
    /// system.
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    fil: filecoin::KindArgs,
}

/// One request and the parameters it is proved with: what `prove` and
/// `verify` share.
#[derive(Args, Debug)]
pub struct RequestArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Parameters file written by `cuzk setup` (or bellperson).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Partitions in the request.
    #[arg(long, default_value_t = 1)]
    partitions: usize,
    /// Request number: partition j uses seed request*partitions + j.
    #[arg(long, default_value_t = 0)]
    request: u64,
    #[command(flatten)]
    fil: filecoin::KindArgs,
    #[command(flatten)]
    input: filecoin::InputArgs,
}

impl RequestArgs {
    fn resolve(&self) -> Result<(Workload, &PathBuf), Box<dyn std::error::Error>> {
        positive("--partitions", self.partitions)?;
        let params = self.params.as_ref().ok_or("--params is missing")?;
        Ok((self.workload.resolve()?, params))
    }
}

/// Arguments of `cuzk prove`.
#[derive(Args, Debug)]
pub struct ProveArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// Where to write the request proof (192 bytes per partition).
    #[arg(long)]
    out: PathBuf,
    /// Prover backend: auto (CUDA when built in and present), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Write the proof without verifying it first (it is verified by default).
    #[arg(long)]
    no_verify: bool,
}

/// Arguments of `cuzk verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// The request proof to check.
    #[arg(long)]
    proof: PathBuf,
}

/// Arguments of `cuzk aggregate`.
#[derive(Args, Debug)]
pub struct AggregateArgs {
    #[command(flatten)]
    sectors: filecoin::AggregateArgs,
    /// Parameter directory: the PoRep `.vk` and the SnarkPack SRS
    /// (`v28-fil-inner-product-v1.srs`; default: $FIL_PROOFS_PARAMETER_CACHE,
    /// else /var/tmp/filecoin-proof-parameters/).
    #[arg(long)]
    param_dir: Option<PathBuf>,
    /// Where to write the aggregate.
    #[arg(long, required_unless_present = "verify", conflicts_with = "verify")]
    out: Option<PathBuf>,
    /// Check this aggregate of the sectors' proofs instead of making one
    /// (then no --proof).
    #[arg(long)]
    verify: Option<PathBuf>,
}

/// `cuzk aggregate`.
pub fn aggregate(args: &AggregateArgs) -> CliResult {
    crate::checks::writable_output(args.out.as_ref())?;
    filecoin::aggregate(
        &args.sectors,
        args.param_dir.as_deref(),
        args.out.as_deref(),
        args.verify.as_deref(),
    )
    .map_err(widen)
}

/// `cuzk setup`.
pub fn setup(args: &SetupArgs) -> CliResult {
    if args.fil.kind.is_some() {
        if args.seed.is_some() {
            return Err("--seed applies to the synthetic workloads, not to --kind".into());
        }
        return filecoin::setup(&args.fil, args.backend.parse()?).map_err(widen);
    }
    let path = args.params.as_ref().ok_or("--params is missing")?;
    let workload = args.workload.resolve()?;
    writable_file(path)?;
    let started = Instant::now();
    let (params, on) = keys::generate(
        workload,
        0,
        args.backend.parse()?,
        args.seed,
        &ShapeCache::new(),
    )?;
    let generate_s = secs(started);
    let spinner = progress::spinner(format!("writing {}", path.display()));
    params.write_file(path)?;
    drop(spinner);
    tracing::info!(
        target: CLI,
        path = %path.display(),
        domain = params.h.len() + 1,
        aux = params.l.len(),
        on,
        seed = args.seed,
        generate_s,
        seconds = secs(started),
        "parameters written"
    );
    Ok(())
}

/// `cuzk prove`.
pub fn prove(args: &ProveArgs) -> CliResult {
    let req = &args.request;
    writable_file(&args.out)?;
    let verify = !args.no_verify;
    if req.fil.kind.is_some() {
        let (fil, input) = (&req.fil, &req.input);
        return filecoin::prove(fil, input, &args.out, &args.backend, verify).map_err(widen);
    }
    let (workload, params) = req.resolve()?;
    let key = keys::load(params)?;
    let lock = supraseal_c2::GpuLock::with_backend(0, args.backend.parse()?)?;
    let started = Instant::now();
    let bar = progress::bar(req.partitions as u64, "partitions", "proved");
    let mut proofs = Vec::with_capacity(req.partitions);
    for j in 0..req.partitions {
        let seed = partition_seed(req.request, req.partitions, j);
        let partition = cuzk_pipeline::synthesize_partition(workload, seed)?;
        cuzk_pipeline::check_params(&key.params, &partition)?;
        let proof = cuzk_pipeline::gpu_prove(&partition, &key.srs, &lock)?;
        let t = &proof.timings;
        tracing::info!(
            target: CLI,
            partition = j,
            of = req.partitions,
            synthesis_s = ns_secs(partition.synth_ns()),
            prove_s = ns_secs(total_prove_ns(t)),
            kernel_s = ns_secs(t.kernel_ns),
            backend = %lock.backend(),
            residency = %t.residency,
            "partition proved"
        );
        proofs.push(proof.proof);
        bar.inc(1);
    }
    drop(bar);
    if verify {
        let pvk = bellperson_lite::prepare_verifying_key(&key.params.vk);
        cuzk_pipeline::verify_request(&pvk, workload, req.request, &proofs)
            .map_err(cuzk_engine::EngineError::Verify)?;
    }
    let bytes = cuzk_pipeline::encode_request_proof(&proofs);
    crate::bench::write_file(&args.out, &bytes)?;
    tracing::info!(
        target: CLI,
        path = %args.out.display(),
        bytes = bytes.len(),
        seconds = secs(started),
        verified = verify,
        "{}",
        if verify {
            "request proof written"
        } else {
            "request proof written, NOT verified (--no-verify)"
        }
    );
    Ok(())
}

/// `cuzk verify`.
pub fn verify(args: &VerifyArgs) -> CliResult {
    let req = &args.request;
    if req.fil.kind.is_some() {
        return filecoin::verify(&req.fil, &req.input, &args.proof).map_err(widen);
    }
    let (workload, params) = req.resolve()?;
    let bytes = std::fs::read(&args.proof)
        .map_err(|e| format!("cannot read proof {}: {e}", args.proof.display()))?;
    let proofs = cuzk_pipeline::decode_request_proof(&bytes, req.partitions)?;
    let vk = keys::load_verifying_key(params)?;
    cuzk_pipeline::verify_request(&vk, workload, req.request, &proofs)?;
    println!(
        "ok: {} partition proofs of {workload} request {} verify",
        req.partitions, req.request
    );
    Ok(())
}

/// A thread-safe error as the CLI's error type.
fn widen(e: filecoin::AnyError) -> Box<dyn std::error::Error> {
    e
}

fn total_prove_ns(t: &supraseal_c2::PhaseTimings) -> u64 {
    t.preamble_ns + t.lock_wait_ns + t.kernel_ns + t.epilogue_ns
}
