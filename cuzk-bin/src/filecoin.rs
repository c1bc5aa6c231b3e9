//! `cuzk setup|prove|verify --kind porep|winning-post|window-post|snap-deals`:
//! Filecoin proofs from the inputs lotus and Curio hand over, with
//! parameters under filecoin-proofs' names in a parameter directory.

use std::path::{Path, PathBuf};
use std::time::Instant;
use supraseal_c2::BackendChoice;

use clap::Args;
use cuzk_filecoin::aggregate::{self, SealedSectors, SnarkPack};
use cuzk_filecoin::{
    params, prover_id, CircuitId, FilecoinRequest, PostInputs, ProofKind, SealIds, SectorSize,
    UpdateCommitments,
};

use crate::logging::{secs, CLI};
use crate::progress;

/// An error that can cross threads (the bench synthesizes in parallel).
pub type AnyError = Box<dyn std::error::Error + Send + Sync>;

/// What the subcommands return.
pub type CliResult = Result<(), AnyError>;

/// The Filecoin proof kind and where its parameters are.
#[derive(Args, Clone, Debug, Default)]
pub struct KindArgs {
    /// A Filecoin proof kind (porep, winning-post, window-post, snap-deals)
    /// instead of a synthetic workload.
    #[arg(long)]
    pub kind: Option<String>,
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (PoRep: taken from the
    /// C1 output when it names one).
    #[arg(long)]
    pub sector_size: Option<String>,
    /// Parameter directory (default: $FIL_PROOFS_PARAMETER_CACHE, else
    /// /var/tmp/filecoin-proof-parameters/).
    #[arg(long)]
    pub param_dir: Option<PathBuf>,
}

/// A Filecoin request's inputs.
#[derive(Args, Clone, Debug, Default)]
pub struct InputArgs {
    /// PoRep: the C1 output (filecoin-proofs' JSON, filecoin-proofs-api's,
    /// or Curio's wrapper).
    #[arg(long)]
    pub c1: Option<PathBuf>,
    /// PoSt: a sector's vanilla proof (bincode), once per sector; SnapDeals:
    /// a partition proof, once per partition, in order.
    #[arg(long = "vanilla")]
    pub vanilla: Vec<PathBuf>,
    /// The miner id (its LEB128 form is the prover id).
    #[arg(long)]
    pub miner_id: Option<u64>,
    /// PoRep: the sector number (default: the C1 wrapper's SectorNum).
    #[arg(long)]
    pub sector_id: Option<u64>,
    /// PoSt: the randomness, 64 hex digits.
    #[arg(long)]
    pub randomness: Option<String>,
    /// WindowPoSt: the partition index.
    #[arg(long, default_value_t = 0)]
    pub partition_index: usize,
    /// SnapDeals: comm_r_old, 64 hex digits.
    #[arg(long)]
    pub comm_r_old: Option<String>,
    /// SnapDeals: comm_r_new, 64 hex digits.
    #[arg(long)]
    pub comm_r_new: Option<String>,
    /// SnapDeals: comm_d_new, 64 hex digits.
    #[arg(long)]
    pub comm_d_new: Option<String>,
}

impl KindArgs {
    fn kind(&self) -> Result<ProofKind, AnyError> {
        let kind = self.kind.as_deref().ok_or("--kind is missing")?;
        Ok(kind.parse()?)
    }

    fn size(&self) -> Result<Option<SectorSize>, AnyError> {
        Ok(match &self.sector_size {
            Some(s) => Some(s.parse()?),
            None => None,
        })
    }

    fn dir(&self) -> PathBuf {
        params::parameter_dir(self.param_dir.as_deref())
    }
}

/// `cuzk setup --kind K --sector-size S [--param-dir D] [--backend B]`:
/// the fixed-base multiplications on device 0 when `choice` gives CUDA
/// there, else on the CPU.
pub fn setup(args: &KindArgs, choice: BackendChoice) -> CliResult {
    let size = args.size()?.ok_or("--sector-size is missing")?;
    let id = CircuitId::new(args.kind()?, size);
    let dir = args.dir();
    crate::checks::writable_dir(&dir)?;
    let (lock, on) = crate::keys::setup_lock(0, choice)?;
    let spinner = progress::spinner(format!(
        "generating test parameters for {id} on {on} into {}",
        dir.display()
    ));
    let (_, report) = params::setup(id, &dir, &mut rand::thread_rng(), lock.as_deref())?;
    drop(spinner);
    tracing::info!(
        target: CLI,
        params = %report.params.display(),
        vk = %report.vk.display(),
        seconds = report.seconds,
        on,
        sidecar = ?report.sidecar,
        "test parameters written"
    );
    Ok(())
}

/// The request the arguments describe.
pub fn request(kind: &KindArgs, input: &InputArgs) -> Result<FilecoinRequest, AnyError> {
    let kind_of = kind.kind()?;
    let size = kind.size()?;
    let miner = input.miner_id.ok_or("--miner-id is missing")?;
    let need_size = || size.ok_or("--sector-size is missing");
    let vanilla = || -> Result<Vec<Vec<u8>>, AnyError> {
        if input.vanilla.is_empty() {
            return Err("--vanilla is missing".into());
        }
        input.vanilla.iter().map(|p| read(p)).collect()
    };
    Ok(match kind_of {
        ProofKind::PoRep => {
            let path = input.c1.as_ref().ok_or("--c1 is missing")?;
            let c1 = read(path)?;
            let sector_id = input
                .sector_id
                .or_else(|| FilecoinRequest::c1_sector_number(&c1))
                .ok_or("--sector-id is missing (the C1 output does not name its sector)")?;
            let ids = SealIds {
                prover_id: prover_id(miner),
                sector_id,
            };
            FilecoinRequest::porep(&c1, size, ids)?
        }
        ProofKind::WinningPoSt | ProofKind::WindowPoSt => {
            let randomness = hex32(input.randomness.as_deref(), "--randomness")?;
            let inputs = PostInputs {
                randomness,
                prover_id: prover_id(miner),
                partition_index: input.partition_index,
            };
            if kind_of == ProofKind::WinningPoSt {
                FilecoinRequest::winning_post(need_size()?, inputs, &vanilla()?)?
            } else {
                FilecoinRequest::window_post(need_size()?, inputs, &vanilla()?)?
            }
        }
        ProofKind::SnapDeals => {
            let comms = UpdateCommitments {
                comm_r_old: hex32(input.comm_r_old.as_deref(), "--comm-r-old")?,
                comm_r_new: hex32(input.comm_r_new.as_deref(), "--comm-r-new")?,
                comm_d_new: hex32(input.comm_d_new.as_deref(), "--comm-d-new")?,
            };
            FilecoinRequest::snap_deals(need_size()?, comms, &vanilla()?)?
        }
    })
}

/// `cuzk prove --kind K ... --out FILE`: proves on one device (or the CPU)
/// and, when `verify`, checks the proof with filecoin-proofs' verifier
/// before writing it. The caller has checked that `out` can be written.
pub fn prove(
    kind: &KindArgs,
    input: &InputArgs,
    out: &Path,
    backend: &str,
    verify: bool,
) -> CliResult {
    let dir = kind.dir();
    params::point_filecoin_proofs_at(&dir)?;
    let request = request(kind, input)?;
    let id = request.id();
    let started = Instant::now();
    let parameters = crate::keys::load_filecoin(id, &dir)?;
    let srs = parameters.srs()?;
    tracing::info!(
        target: CLI,
        path = %id.params_path(&dir)?.display(),
        seconds = secs(started),
        "parameters ready"
    );
    let lock = supraseal_c2::GpuLock::with_backend(0, backend.parse()?)?;
    let started = Instant::now();
    let partitions = request.partitions().count();
    let spinner = progress::spinner(format!("proving {id}: {partitions} partitions"));
    let proof = request.prove(&srs, &lock, None)?;
    drop(spinner);
    tracing::info!(target: CLI, circuit = %id, partitions, seconds = secs(started), "proved");
    if verify {
        check_filecoin_proofs(&request, &dir, &proof)?;
    }
    crate::bench::write_file(out, &proof)?;
    tracing::info!(
        target: CLI,
        path = %out.display(),
        bytes = proof.len(),
        verified = verify,
        "{}",
        if verify {
            "proof written, verified by filecoin-proofs"
        } else {
            "proof written, NOT verified (--no-verify)"
        }
    );
    Ok(())
}

/// `cuzk verify --kind K ... --proof FILE`: filecoin-proofs' own verifier.
pub fn verify(kind: &KindArgs, input: &InputArgs, proof: &Path) -> CliResult {
    params::point_filecoin_proofs_at(&kind.dir())?;
    let request = request(kind, input)?;
    let bytes = read(proof)?;
    check_filecoin_proofs(&request, &kind.dir(), &bytes)?;
    println!("ok: the {} proof verifies (filecoin-proofs)", request.id());
    Ok(())
}

/// Runs filecoin-proofs' verifier, which reads the `.vk` from `dir` (see
/// `params::point_filecoin_proofs_at`).
fn check_filecoin_proofs(request: &FilecoinRequest, dir: &Path, proof: &[u8]) -> CliResult {
    let vk = request.id().vk_path(dir)?;
    if !vk.exists() {
        return Err(format!("missing verifying key {}", vk.display()).into());
    }
    if request.verify_with_filecoin_proofs(proof)? {
        Ok(())
    } else {
        Err(format!("the {} proof does not verify", request.id()).into())
    }
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, AnyError> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()).into())
}

pub(crate) fn hex32(value: Option<&str>, flag: &str) -> Result<[u8; 32], AnyError> {
    let value = value.ok_or_else(|| format!("{flag} is missing"))?;
    let bytes = hex::decode(value.trim()).map_err(|e| format!("{flag}: not hex: {e}"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("{flag}: {} bytes, expected 32", b.len()).into())
}

/// The sectors of a SnarkPack aggregate of seal proofs (`cuzk aggregate`,
/// `cuzk client aggregate`): `--c1 FILE --proof FILE` once per sector, in
/// the aggregate's order.
#[derive(Args, Clone, Debug, Default)]
pub struct AggregateArgs {
    /// A sector's C1 output (any form `cuzk prove` reads), once per sector:
    /// its commitments, ticket and seed are read from it.
    #[arg(long = "c1", required = true)]
    pub c1: Vec<PathBuf>,
    /// The sector's seal proof (as `cuzk prove --kind porep` writes it),
    /// once per sector, in the order of --c1.
    #[arg(long = "proof")]
    pub proofs: Vec<PathBuf>,
    /// The sectors' numbers, once per sector in the order of --c1 (default:
    /// each C1 wrapper's SectorNum).
    #[arg(long = "sector-id")]
    pub sector_ids: Vec<u64>,
    /// The miner id (its LEB128 form is the prover id).
    #[arg(long)]
    pub miner_id: Option<u64>,
    /// The sector size (default: the one the C1 outputs name).
    #[arg(long)]
    pub sector_size: Option<String>,
    /// SnarkPack version: v2 (the chain's today) or v1.
    #[arg(long, default_value = "v2")]
    pub snarkpack: String,
}

impl AggregateArgs {
    /// The sectors and the SnarkPack version; with `proofs`, each sector's
    /// proof read (one --proof a --c1), else none may be given.
    pub fn sectors(&self, proofs: bool) -> Result<(SealedSectors, SnarkPack), AnyError> {
        let miner = self.miner_id.ok_or("--miner-id is missing")?;
        let n = self.c1.len();
        match (proofs, self.proofs.len()) {
            (true, given) if given != n => {
                return Err(format!("{n} --c1 but {given} --proof: give one proof a sector").into())
            }
            (false, given) if given > 0 => {
                return Err("--verify checks the aggregate alone: drop --proof".into())
            }
            _ => {}
        }
        if !self.sector_ids.is_empty() && self.sector_ids.len() != n {
            return Err(format!(
                "{n} --c1 but {} --sector-id: give one a sector, or none",
                self.sector_ids.len()
            )
            .into());
        }
        let size = match &self.sector_size {
            Some(s) => Some(s.parse::<SectorSize>()?),
            None => None,
        };
        let mut c1s = Vec::with_capacity(n);
        for (i, path) in self.c1.iter().enumerate() {
            let proof = match proofs {
                true => read(&self.proofs[i])?,
                false => Vec::new(),
            };
            c1s.push((read(path)?, self.sector_ids.get(i).copied(), proof));
        }
        let seals = SealedSectors::from_c1s(prover_id(miner), size, c1s)?;
        Ok((seals, self.snarkpack.parse()?))
    }
}

/// `cuzk aggregate ... (--out FILE | --verify FILE)`: the sectors' proofs
/// aggregated with SnarkPack here (each proof and the aggregate checked by
/// filecoin-proofs' verifiers), or an aggregate checked, with the `.vk` and
/// SnarkPack SRS of `param_dir`.
pub fn aggregate(
    args: &AggregateArgs,
    param_dir: Option<&Path>,
    out: Option<&Path>,
    check: Option<&Path>,
) -> CliResult {
    let dir = params::parameter_dir(param_dir);
    params::point_filecoin_proofs_at(&dir)?;
    let (seals, version) = args.sectors(check.is_none())?;
    let sectors = seals.sectors.len();
    if let Some(path) = check {
        let bytes = read(path)?;
        if !aggregate::verify_seal_aggregate(&seals, &bytes, version)? {
            return Err(format!(
                "{} is not the {version} aggregate of these {sectors} sectors' proofs",
                path.display()
            )
            .into());
        }
        println!(
            "ok: the {version} aggregate of {sectors} {} proofs verifies (filecoin-proofs)",
            seals.proof
        );
        return Ok(());
    }
    let out = out.ok_or("--out is missing (or --verify an aggregate)")?;
    let started = Instant::now();
    let spinner = progress::spinner(format!("aggregating {sectors} sectors' proofs ({version})"));
    let bytes = aggregate::aggregate_seal_proofs(&seals, version)?;
    drop(spinner);
    crate::bench::write_file(out, &bytes)?;
    tracing::info!(
        target: CLI,
        path = %out.display(),
        sectors,
        proofs = aggregate::aggregated_proofs(seals.proof, sectors)?,
        bytes = bytes.len(),
        seconds = secs(started),
        "aggregate written, verified by filecoin-proofs"
    );
    Ok(())
}
