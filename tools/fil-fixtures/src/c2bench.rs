//! `fil-fixtures c2-bench`: filecoin-proofs' own PoRep C2
//! (`seal_commit_phase2`) on one C1 output, N times one after another, each
//! proof checked with `verify_seal`: the reference that cuzk's PoRep C2
//! throughput is compared against. Built with the `supraseal` feature it
//! proves on the GPU through bellperson's `cuda-supraseal` backend (the
//! registry crate `supraseal-c2`), as lotus and Curio do; without it, on
//! bellperson's CPU prover.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, ensure, Context, Result};
use filecoin_proofs::{
    seal_commit_phase2, verify_seal, with_shape, DefaultTreeHasher, MerkleTreeTrait, PoRepConfig,
    SealCommitPhase1Output,
};
use filecoin_proofs_api::seal::SealCommitPhase1Output as ApiSealCommitPhase1Output;
use filecoin_proofs_api::RegisteredSealProof;
use serde::Serialize;
use storage_proofs_core::sector::SectorId;

use crate::fixture::{CurioC1, Meta};
use crate::kinds::{self, SectorSize};

/// The Groth16 backend this binary was built with.
pub const BACKEND: &str = if cfg!(feature = "supraseal") {
    "supraseal-c2"
} else {
    "cpu"
};

pub struct BenchOptions {
    pub c1: PathBuf,
    /// The fixture's meta.json; ids and the sector size come from it unless
    /// given.
    pub meta: Option<PathBuf>,
    pub requests: usize,
    pub json: Option<PathBuf>,
    pub miner_id: Option<u64>,
    pub sector_id: Option<u64>,
    pub sector_size: Option<SectorSize>,
    pub rev: Option<String>,
}

/// The JSON record of a run.
#[derive(Serialize)]
struct Record {
    tool: String,
    backend: &'static str,
    registered_seal_proof: RegisteredSealProof,
    sector_size: u64,
    partitions: usize,
    requests: usize,
    /// Each `seal_commit_phase2` call, in order; the first includes loading
    /// the parameters.
    request_seconds: Vec<f64>,
    first_request_seconds: f64,
    /// Mean over the requests after the first (null with one request).
    steady_request_seconds: Option<f64>,
    /// PoRep C2 proofs (whole `seal_commit_phase2` calls) per hour over the
    /// requests after the first (null with one request).
    proofs_per_hour: Option<f64>,
    /// The same over every request, the first included.
    proofs_per_hour_all: f64,
    /// `verify_seal` on each proof (not part of the request times).
    verify_seconds: Vec<f64>,
    verified: usize,
    miner_id: u64,
    sector_id: u64,
    c1: String,
    param_dir: String,
    date: String,
    hostname: String,
    nproc: usize,
    git_rev: Option<String>,
}

/// What one C1 file holds, in whichever of the three forms it came.
struct C1Input<Tree: MerkleTreeTrait> {
    c1: SealCommitPhase1Output<Tree>,
    /// The sector number, when the file names it (Curio form).
    sector_id: Option<u64>,
}

/// Points filecoin-proofs at the parameter directory. Its settings are read
/// once, on first use: this must run before any filecoin-proofs call.
pub fn use_param_dir(param_dir: &Path) -> Result<PathBuf> {
    let dir = fs::canonicalize(param_dir)
        .with_context(|| format!("parameter directory {}", param_dir.display()))?;
    ensure!(
        dir.is_dir(),
        "parameter directory {} is not a directory",
        dir.display()
    );
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
    Ok(dir)
}

pub fn run(opts: &BenchOptions, param_dir: &Path) -> Result<()> {
    ensure!(opts.requests >= 1, "--requests must be at least 1");
    let file = read_c1_file(&opts.c1)?;
    let meta_path = opts.meta.clone().or_else(|| {
        let next_to = opts.c1.parent()?.join(crate::fixture::META);
        next_to.exists().then_some(next_to)
    });
    let meta: Option<Meta> = match &meta_path {
        Some(path) => Some(
            serde_json::from_slice(
                &fs::read(path).with_context(|| format!("reading {}", path.display()))?,
            )
            .with_context(|| format!("parsing {}", path.display()))?,
        ),
        None => None,
    };

    let named = file
        .value
        .get("registered_proof")
        .map(|seal| serde_json::from_value(seal.clone()))
        .transpose()
        .with_context(|| format!("{}: reading registered_proof", opts.c1.display()))?;
    let seal = match (opts.sector_size, named, &meta) {
        (Some(size), _, _) => size.kinds().seal,
        (None, Some(seal), _) => seal,
        (None, None, Some(meta)) => meta.registered_seal_proof,
        (None, None, None) => {
            bail!("no sector size: give --sector-size or a meta.json (--meta, or next to the C1 file)")
        }
    };
    if let Some(named) = named {
        ensure!(
            named == seal,
            "the C1 output is for {named:?}, not {seal:?}"
        );
    }
    SectorSize::from_bytes(u64::from(seal.sector_size()))?;
    // The C1 output's type depends on the sector's tree shape (32 GiB and
    // 64 GiB have sub- and top-trees), so the rest is generic over it.
    with_shape!(
        u64::from(seal.sector_size()),
        run_shaped,
        opts,
        param_dir,
        file,
        meta,
        seal,
    )
}

fn run_shaped<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(
    opts: &BenchOptions,
    param_dir: &Path,
    file: C1File,
    meta: Option<Meta>,
    seal: RegisteredSealProof,
) -> Result<()> {
    let input = read_c1::<Tree>(file)
        .with_context(|| format!("{} is not a C1 output this tool reads", opts.c1.display()))?;
    let miner_id = opts
        .miner_id
        .or(meta.as_ref().map(|m| m.miner_id))
        .context("no miner id: give --miner-id or a meta.json")?;
    let sector_id = opts
        .sector_id
        .or(input.sector_id)
        .or(meta.as_ref().map(|m| m.sector_id))
        .context("no sector id: give --sector-id or a meta.json")?;
    let config = kinds::porep_config(seal)?;
    let prover_id = kinds::prover_id(miner_id);
    check_param_files::<Tree>(&config, seal)?;

    let partitions = usize::from(config.partitions);
    eprintln!(
        "c2-bench: filecoin-proofs 19.1 seal_commit_phase2, backend {BACKEND}, {seal:?} \
         ({partitions} partition{}), {} request{}, parameters from {}",
        if partitions == 1 { "" } else { "s" },
        opts.requests,
        if opts.requests == 1 { "" } else { "s" },
        param_dir.display()
    );
    let c1 = &input.c1;
    let mut request_seconds = Vec::with_capacity(opts.requests);
    let mut verify_seconds = Vec::with_capacity(opts.requests);
    let mut verified = 0;
    for r in 0..opts.requests {
        let phase1 = clone_c1(c1);
        let start = Instant::now();
        let output =
            seal_commit_phase2::<Tree>(&config, phase1, prover_id, SectorId::from(sector_id))
                .with_context(|| format!("seal_commit_phase2 (request {r})"))?;
        let seconds = start.elapsed().as_secs_f64();
        request_seconds.push(seconds);

        let start = Instant::now();
        let ok = verify_seal::<Tree>(
            &config,
            c1.comm_r,
            c1.comm_d,
            prover_id,
            SectorId::from(sector_id),
            c1.ticket,
            c1.seed,
            &output.proof,
        )
        .with_context(|| format!("verify_seal (request {r})"))?;
        verify_seconds.push(start.elapsed().as_secs_f64());
        verified += usize::from(ok);
        eprintln!(
            "  request {r}: {seconds:.3} s{}, {} proof bytes, verify_seal {}",
            if r == 0 {
                " (includes loading the parameters)"
            } else {
                ""
            },
            output.proof.len(),
            if ok { "ok" } else { "FAILED" }
        );
    }

    let record = summarize(
        opts,
        seal,
        &config,
        request_seconds,
        verify_seconds,
        verified,
        (miner_id, sector_id),
        param_dir,
    );
    print_summary(&record);
    if let Some(path) = &opts.json {
        let mut text = serde_json::to_vec_pretty(&record)?;
        text.push(b'\n');
        fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("c2-bench: wrote {}", path.display());
    }
    ensure!(
        verified == record.requests,
        "{} of {} proofs failed verify_seal",
        record.requests - verified,
        record.requests
    );
    Ok(())
}

/// `SealCommitPhase1Output`'s derived Clone asks for `Tree: Clone`, which
/// the tree type is not; its fields are.
fn clone_c1<Tree: MerkleTreeTrait>(
    c1: &SealCommitPhase1Output<Tree>,
) -> SealCommitPhase1Output<Tree> {
    SealCommitPhase1Output {
        vanilla_proofs: c1.vanilla_proofs.clone(),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    }
}

/// filecoin-proofs names a missing parameter file only deep inside its
/// error chain (and the supraseal backend never generates one): say it first.
fn check_param_files<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(
    config: &PoRepConfig,
    seal: RegisteredSealProof,
) -> Result<()> {
    for path in [
        config.get_cache_params_path::<Tree>()?,
        config.get_cache_verifying_key_path::<Tree>()?,
    ] {
        ensure!(
            path.is_file(),
            "missing parameter file {} (for {seal:?}; `cuzk setup --kind porep --sector-size \
             {}` writes it)",
            path.display(),
            size_name(u64::from(seal.sector_size()))
        );
    }
    Ok(())
}

fn size_name(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{}GiB", b >> 30),
        b if b >= 1 << 20 => format!("{}MiB", b >> 20),
        b => format!("{}KiB", b >> 10),
    }
}

/// A C1 file as JSON: filecoin-proofs-api's form (which names its seal
/// proof) or filecoin-proofs' own, Curio's wrapper taken off.
struct C1File {
    value: serde_json::Value,
    /// The sector number, when the file names it (Curio's wrapper).
    sector_id: Option<u64>,
}

/// Reads a C1 output in filecoin-proofs' form (`c1.json`),
/// filecoin-proofs-api's form, or Curio's wrapper (`c1-curio.json`).
fn read_c1_file(path: &Path) -> Result<C1File> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))?;
    if value.get("Phase1Out").is_none() {
        return Ok(C1File {
            value,
            sector_id: None,
        });
    }
    let curio: CurioC1 = serde_json::from_value(value)
        .with_context(|| format!("{} is not a C1 output this tool reads", path.display()))?;
    Ok(C1File {
        value: serde_json::from_slice(&curio.phase1_out)
            .with_context(|| format!("{}: parsing Phase1Out", path.display()))?,
        sector_id: Some(curio.sector_num),
    })
}

/// The C1 output of `file` for the tree shape `Tree`.
fn read_c1<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(
    file: C1File,
) -> Result<C1Input<Tree>> {
    let mut input = if file.value.get("registered_proof").is_some() {
        from_api(serde_json::from_value(file.value)?)?
    } else {
        C1Input {
            c1: serde_json::from_value(file.value)?,
            sector_id: None,
        }
    };
    input.sector_id = file.sector_id;
    Ok(input)
}

fn from_api<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(
    api: ApiSealCommitPhase1Output,
) -> Result<C1Input<Tree>> {
    Ok(C1Input {
        c1: SealCommitPhase1Output::<Tree> {
            vanilla_proofs: api.vanilla_proofs.try_into()?,
            comm_r: api.comm_r,
            comm_d: api.comm_d,
            replica_id: api.replica_id,
            seed: api.seed,
            ticket: api.ticket,
        },
        sector_id: None,
    })
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    opts: &BenchOptions,
    seal: RegisteredSealProof,
    config: &PoRepConfig,
    request_seconds: Vec<f64>,
    verify_seconds: Vec<f64>,
    verified: usize,
    (miner_id, sector_id): (u64, u64),
    param_dir: &Path,
) -> Record {
    let requests = request_seconds.len();
    let rest = &request_seconds[1..];
    let rest_sum: f64 = rest.iter().sum();
    let all_sum: f64 = request_seconds.iter().sum();
    let steady = (!rest.is_empty()).then(|| rest_sum / rest.len() as f64);
    Record {
        tool: format!(
            "fil-fixtures {} c2-bench, filecoin-proofs 19.1.0 seal_commit_phase2",
            env!("CARGO_PKG_VERSION")
        ),
        backend: BACKEND,
        registered_seal_proof: seal,
        sector_size: u64::from(seal.sector_size()),
        partitions: usize::from(config.partitions),
        requests,
        first_request_seconds: request_seconds[0],
        steady_request_seconds: steady,
        proofs_per_hour: steady.map(|s| 3600.0 / s),
        proofs_per_hour_all: requests as f64 * 3600.0 / all_sum,
        request_seconds,
        verify_seconds,
        verified,
        miner_id,
        sector_id,
        c1: opts.c1.display().to_string(),
        param_dir: param_dir.display().to_string(),
        date: utc_now(),
        hostname: hostname(),
        nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
        git_rev: opts
            .rev
            .clone()
            .or_else(|| std::env::var("CUZK_GIT_REV").ok())
            .filter(|rev| !rev.is_empty()),
    }
}

fn print_summary(record: &Record) {
    println!(
        "c2-bench: {} {:?} ({} partition{}), backend {}, on {} ({} cores)",
        record.tool,
        record.registered_seal_proof,
        record.partitions,
        if record.partitions == 1 { "" } else { "s" },
        record.backend,
        record.hostname,
        record.nproc
    );
    println!(
        "  first request        {:.3} s (includes loading the parameters)",
        record.first_request_seconds
    );
    match (record.steady_request_seconds, record.proofs_per_hour) {
        (Some(seconds), Some(per_hour)) => {
            println!(
                "  requests 1..{}        {seconds:.3} s each (mean)",
                record.requests - 1
            );
            println!("  proofs per hour      {per_hour:.1} (after the first)");
        }
        _ => println!("  proofs per hour      - (one request: give --requests 2 or more)"),
    }
    println!("  proofs per hour, all {:.1}", record.proofs_per_hour_all);
    println!(
        "  verified             {} of {}",
        record.verified, record.requests
    );
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_string())
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
