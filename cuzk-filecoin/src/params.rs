//! Filecoin parameter files: where they live and what they are called
//! (`FIL_PROOFS_PARAMETER_CACHE`, `v28-<id>.params` / `.vk` / `.meta`), and
//! test parameters written under those names.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use bellperson_lite::{LoadOptions, LoadReport, Parameters};
use supraseal_c2::GpuLock;

use crate::{CircuitId, FilecoinError};

/// The environment variable filecoin-proofs reads its parameter directory
/// from.
pub const PARAMETER_CACHE_ENV: &str = "FIL_PROOFS_PARAMETER_CACHE";

/// filecoin-proofs' default parameter directory.
pub const DEFAULT_PARAMETER_CACHE: &str = "/var/tmp/filecoin-proof-parameters/";

/// `explicit`, else `$FIL_PROOFS_PARAMETER_CACHE`, else filecoin-proofs'
/// default directory.
pub fn parameter_dir(explicit: Option<&Path>) -> PathBuf {
    match explicit {
        Some(dir) => dir.to_path_buf(),
        None => std::env::var_os(PARAMETER_CACHE_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMETER_CACHE)),
    }
}

/// Points filecoin-proofs (whose verifiers read the `.vk` files) at `dir`:
/// sets `FIL_PROOFS_PARAMETER_CACHE`, which filecoin-proofs reads once, at
/// its first use. Fails when it had already settled on another directory.
pub fn point_filecoin_proofs_at(dir: &Path) -> Result<(), FilecoinError> {
    std::env::set_var(PARAMETER_CACHE_ENV, dir);
    let settled = storage_proofs_core::parameter_cache::parameter_cache_dir();
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(&settled, dir) {
        Ok(())
    } else {
        Err(crate::error::bad(
            "parameter directory",
            format!(
                "filecoin-proofs already reads its parameters from {}, not {}",
                settled.display(),
                dir.display()
            ),
        ))
    }
}

/// The SnarkPack SRS NI-PoRep aggregates with, where filecoin-proofs reads
/// it: `v28-fil-inner-product-v1.srs` in its parameter directory (see
/// [`point_filecoin_proofs_at`]).
pub fn snarkpack_srs_path() -> PathBuf {
    // One file for every circuit and count: the arguments are unused.
    storage_proofs_core::parameter_cache::parameter_cache_srs_key_path("", 0)
}

/// How many proofs the test SRS [`setup`] writes can aggregate: NI-PoRep's
/// 126 partitions at 32 and 64 GiB, padded to a power of two.
const TEST_SRS_PROOFS: usize = 128;

/// Writes a test SnarkPack SRS (random powers: never for production, whose
/// file comes from Filecoin's trusted setup) as `v28-fil-inner-product-v1.srs`
/// in `dir` unless a file of that name is there. Returns the file it wrote.
fn write_test_srs(
    dir: &Path,
    mut rng: &mut dyn rand_core::RngCore,
) -> Result<Option<PathBuf>, FilecoinError> {
    let path = dir.join(
        snarkpack_srs_path()
            .file_name()
            .expect("the SRS path names a file"),
    );
    if path.exists() {
        return Ok(None);
    }
    // setup_fake_srs makes 2n powers, enough for n proofs.
    let srs = bellperson::groth16::aggregate::setup_fake_srs::<blstrs::Bls12, _>(
        &mut rng,
        TEST_SRS_PROOFS,
    );
    write_atomically(&path, |f| srs.write(f).map_err(Into::into))?;
    Ok(Some(path))
}

/// What [`setup`] wrote.
#[derive(Clone, Debug)]
pub struct SetupReport {
    /// The `.params` file.
    pub params: PathBuf,
    /// The `.vk` file.
    pub vk: PathBuf,
    /// Seconds spent generating.
    pub seconds: f64,
    /// Whether the `.params` file's sidecar now vouches for its points
    /// (generated here, so in their subgroups), sparing the first load
    /// the subgroup checks.
    pub sidecar: bellperson_lite::SidecarOutcome,
    /// The test SnarkPack SRS written beside a PoRep's files for NI-PoRep,
    /// when there was none.
    pub srs: Option<PathBuf>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FilecoinError + '_ {
    move |source| FilecoinError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Generates test parameters for `id` and writes `v28-<id>.params`, `.vk`
/// and `.meta` into `dir` (created if missing), so that filecoin-proofs
/// finds them there; for PoRep also a test SnarkPack SRS for NI-PoRep
/// unless the directory has one. The directory is checked to be writable before the
/// (long) generation starts; files are written under a temporary name and
/// renamed, so a reader never sees half a file. The `.params` file's
/// sidecar vouches that its points were generated here, so its first load
/// skips the subgroup checks (minutes at 32 GiB). Returns the parameters
/// too, so that a caller proving next need not read them back. The
/// fixed-base multiplications run under `lock` (its CUDA device: minutes at
/// 32 GiB, where the CPU's tables take hours), or on the CPU with `None`.
pub fn setup(
    id: CircuitId,
    dir: &Path,
    rng: &mut dyn rand_core::RngCore,
    lock: Option<&GpuLock>,
) -> Result<(Parameters, SetupReport), FilecoinError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    let probe = dir.join(".cuzk-write-test");
    fs::write(&probe, b"").map_err(io(&probe))?;
    let _ = fs::remove_file(&probe);

    let started = Instant::now();
    let shape = id.compile()?;
    let need = shape
        .params_file_bytes()
        .map_err(|e| FilecoinError::Setup(Box::new(e.into())))?
        + SMALL_FILES;
    check_room(id, dir, need, free_bytes(dir).map_err(io(dir))?)?;
    let params = id.generate_params(&shape, rng, lock)?;
    drop(shape);
    let seconds = started.elapsed().as_secs_f64();
    let (params_path, vk_path) = (id.params_path(dir)?, id.vk_path(dir)?);
    write_atomically(&params_path, |f| params.write(f))?;
    let sidecar = Parameters::vouch_generated(&params_path)?;
    write_atomically(&vk_path, |f| params.vk.write(f))?;
    let meta_path = params_path.with_extension("meta");
    let meta = format!("{{\"sector_size\":{}}}", id.size.bytes());
    write_atomically(&meta_path, |f| {
        f.write_all(meta.as_bytes()).map_err(Into::into)
    })?;
    // NI-PoRep proves on the same parameters, then aggregates.
    let srs = match id.kind {
        crate::ProofKind::PoRep => write_test_srs(dir, rng)?,
        _ => None,
    };
    let report = SetupReport {
        params: params_path,
        vk: vk_path,
        seconds,
        sidecar,
        srs,
    };
    Ok((params, report))
}

/// Room for the `.vk`, `.meta` and sidecar files beside the `.params`
/// file: each is far smaller.
const SMALL_FILES: u64 = 1 << 20;

/// Refuses a setup whose files (`need` bytes: the `.params` file's size,
/// known from the shape, and the small files) would not fit in `dir`'s
/// `available` bytes, before its long work (minutes at 32 GiB, whose file
/// is about 47 GB) rather than when the write fails at its end.
fn check_room(id: CircuitId, dir: &Path, need: u64, available: u64) -> Result<(), FilecoinError> {
    if need > available {
        return Err(FilecoinError::NoRoom {
            dir: dir.to_path_buf(),
            circuit: id,
            need,
            available,
        });
    }
    Ok(())
}

/// The bytes an unprivileged process may still write in `dir`'s file
/// system.
fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Writes `path` whole through `write`; errors name the file.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> Result<(), bellperson_lite::ParamsError>,
) -> Result<(), FilecoinError> {
    bellperson_lite::files::write_atomically(path, write).map_err(|source| {
        FilecoinError::Params(bellperson_lite::ParamsError::File {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
    })
}

/// Reads `id`'s `.params` file from `dir` with
/// [`bellperson_lite::Parameters::load`]'s defaults: every point checked
/// on the first load, the subgroup checks skipped on later loads of the
/// same bytes (a sidecar `<file>.cuzk-checked` records them, or vouches
/// for a file [`setup`] generated). Names the
/// file it looked for when it is missing.
pub fn load(id: CircuitId, dir: &Path) -> Result<Parameters, FilecoinError> {
    Ok(load_with(id, dir, LoadOptions::default())?.0)
}

/// Like [`load`], with `options` (`full_checks` to check every point
/// whatever the sidecar says), and the load's report.
pub fn load_with(
    id: CircuitId,
    dir: &Path,
    options: LoadOptions,
) -> Result<(Parameters, LoadReport), FilecoinError> {
    let path = id.params_path(dir)?;
    if !path.exists() {
        return Err(FilecoinError::MissingParams { path, circuit: id });
    }
    Ok(Parameters::load(&path, options)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProofKind, SectorSize};

    #[test]
    fn a_test_srs_is_written_once_and_never_over_another() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = rand::thread_rng();
        let path = dir.path().join("v28-fil-inner-product-v1.srs");
        assert_eq!(
            write_test_srs(dir.path(), &mut rng).unwrap(),
            Some(path.clone())
        );
        let bytes = fs::read(&path).unwrap();
        let srs = bellperson::groth16::aggregate::GenericSRS::<blstrs::Bls12>::read(
            &mut bytes.as_slice(),
        )
        .unwrap();
        // n proofs need 2n powers.
        assert_eq!(srs.g_alpha_powers.len(), 2 * TEST_SRS_PROOFS);
        // A file of that name (the production SRS, say) is left alone.
        fs::write(&path, b"not ours").unwrap();
        assert_eq!(write_test_srs(dir.path(), &mut rng).unwrap(), None);
        assert_eq!(fs::read(&path).unwrap(), b"not ours");
    }

    #[test]
    fn a_setup_that_will_not_fit_is_refused_with_the_sizes() {
        let id = CircuitId::new(ProofKind::PoRep, SectorSize::S2KiB);
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(dir.path()).unwrap();
        assert!(free > 0);
        assert!(check_room(id, dir.path(), free, free).is_ok());
        let error = check_room(id, dir.path(), 47 << 30, 40 << 30).unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, FilecoinError::NoRoom { need, available, .. }
            if need == 47 << 30 && available == 40 << 30)
        );
        for part in [
            &dir.path().display().to_string(),
            "porep-2KiB",
            "47.0 GiB",
            "40.0 GiB",
        ] {
            assert!(text.contains(part), "{text:?} lacks {part:?}");
        }
    }
}
