//! Loading a parameters file into what the prover and verifier need, and
//! generating parameters for a synthetic workload.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bellperson_lite::{LoadOptions, Parameters, PreparedVerifyingKey, VerifyingKey};
use cuzk_filecoin::{CircuitId, FilecoinError};
use cuzk_pipeline::{ShapeCache, Workload};
use supraseal_c2::{Backend, BackendChoice, GpuLock, Srs};

use crate::logging::CLI;
use crate::progress;

/// Parameters read from a file, with their native SRS.
pub struct LoadedKey {
    /// The parameters as read.
    pub params: Parameters,
    /// The proving key's points, in native memory.
    pub srs: Srs,
}

/// `--full-param-checks`: every load of this process checks every point.
static FULL_PARAM_CHECKS: AtomicBool = AtomicBool::new(false);

/// Makes every later parameters load check every point, whatever the
/// sidecar of a file says (`--full-param-checks`).
pub fn set_full_param_checks(on: bool) {
    FULL_PARAM_CHECKS.store(on, Ordering::Relaxed);
}

/// How this process loads parameter files: a checked file's sidecar is
/// trusted unless `--full-param-checks`, and full checks are recorded.
pub fn load_options() -> LoadOptions {
    LoadOptions {
        full_checks: FULL_PARAM_CHECKS.load(Ordering::Relaxed),
        record: true,
    }
}

/// Reads and checks `path` (see [`Parameters::load`]), then copies its
/// points into a native SRS.
pub fn load(path: &Path) -> Result<LoadedKey, Box<dyn std::error::Error>> {
    let spinner = progress::spinner(format!("loading {}", path.display()));
    let (params, report) = Parameters::load(path, load_options())?;
    spinner.set_message("making the native SRS");
    let srs = params.srs()?;
    drop(spinner);
    tracing::info!(target: CLI, path = %path.display(), %report, "parameters loaded");
    Ok(LoadedKey { params, srs })
}

/// Reads and checks a Filecoin circuit's parameters from `dir`.
pub fn load_filecoin(id: CircuitId, dir: &Path) -> Result<Parameters, FilecoinError> {
    let spinner = progress::spinner(format!("loading {id}'s parameters"));
    let (params, report) = cuzk_filecoin::params::load_with(id, dir, load_options())?;
    drop(spinner);
    tracing::info!(target: CLI, circuit = %id, %report, "parameters loaded");
    Ok(params)
}

/// Reads only the verifying key at the head of the parameters file `path`
/// (the proving key's points after it are not needed, nor checked).
pub fn load_verifying_key(path: &Path) -> Result<PreparedVerifyingKey, Box<dyn std::error::Error>> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot read parameters {}: {e}", path.display()))?;
    let vk = VerifyingKey::read(std::io::BufReader::new(file))?;
    Ok(bellperson_lite::prepare_verifying_key(&vk))
}

/// The lock a setup's fixed-base multiplications run under: `device`'s
/// when `choice` gives a CUDA device there, else none (the CPU's own
/// tables). With where that is (`device N` or `the CPU`), for the log.
pub fn setup_lock(
    device: u32,
    choice: BackendChoice,
) -> Result<(Option<Arc<GpuLock>>, String), supraseal_c2::Error> {
    let lock = match choice {
        BackendChoice::Cpu => None,
        _ => Some(GpuLock::with_backend(device, choice)?),
    }
    .filter(|lock| lock.backend() == Backend::Cuda);
    let on = match &lock {
        Some(lock) => format!("device {}", lock.device()),
        None => "the CPU".to_owned(),
    };
    Ok((lock, on))
}

/// Generates parameters for `workload` (`cuzk setup`, and `bench` without
/// `--params`): the fixed-base multiplications on `device` when `choice`
/// gives a CUDA device there, else on the CPU's own tables, which beat the
/// per-point path behind a CPU lock. The shape comes from `shapes` (and is
/// compiled there when absent). Returns them with where they were made
/// (`device N` or `the CPU`), for the log.
pub fn generate(
    workload: Workload,
    device: u32,
    choice: BackendChoice,
    seed: Option<u64>,
    shapes: &ShapeCache,
) -> Result<(Parameters, String), Box<dyn std::error::Error>> {
    let (lock, on) = setup_lock(device, choice)?;
    let spinner = progress::spinner(format!("generating parameters for {workload} on {on}"));
    let params = cuzk_pipeline::setup_on(workload, lock.as_deref(), seed, shapes)?;
    drop(spinner);
    Ok((params, on))
}
