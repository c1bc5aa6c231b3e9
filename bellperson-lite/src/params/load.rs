//! Loading a parameters file: mapped, decoded in parallel, and its points'
//! subgroups checked once per file contents (a sidecar records a checked
//! file's digest; see `sidecar.rs`).

use std::fmt;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::decode::{digest_only, scan, Scan};
use super::layout::Layout;
use super::mapped::{InMemory, Mapped, Pages};
use super::sidecar::{self, FullChecksReason, Verdict, Vouch};
use super::{subgroup, Parameters};
use crate::error::ParamsError;

/// How [`Parameters::load`] checks a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Check every point's subgroup even when a sidecar vouches for the
    /// file.
    pub full_checks: bool,
    /// After full checks pass, write the sidecar (`<file>.cuzk-checked`)
    /// so that later loads can skip them.
    pub record: bool,
}

impl Default for LoadOptions {
    /// Trust a matching sidecar, and write one after full checks.
    fn default() -> Self {
        LoadOptions {
            full_checks: false,
            record: true,
        }
    }
}

/// How a load checked the points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadMode {
    /// Every check: on the curve, canonical, not the identity, in the
    /// subgroup.
    FullChecks(FullChecksReason),
    /// The sidecar matched the file's digest: every check but the
    /// subgroup's, which this checker already did on these bytes.
    Digest,
}

/// What happened to the sidecar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SidecarOutcome {
    /// It matched, and was trusted.
    Trusted,
    /// It was written after full checks.
    Written,
    /// Writing it failed (a read-only directory, say); the load went on.
    NotWritten(String),
    /// Not written: [`LoadOptions::record`] was off.
    NotRecorded,
}

/// What a load did and how long each part took.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    /// How the points were checked.
    pub mode: LoadMode,
    /// The file's length.
    pub bytes: u64,
    /// Wall time of the pass that maps, decodes and hashes the file.
    pub scan: Duration,
    /// Of the scan: thread time decoding, summed over threads.
    pub decode_cpu: Duration,
    /// Of the scan: thread time hashing, summed over threads.
    pub hash_cpu: Duration,
    /// Wall time of the subgroup checks (zero in digest mode).
    pub checks: Duration,
    /// Wall time of the whole load.
    pub total: Duration,
    /// The sidecar.
    pub sidecar: SidecarOutcome,
}

impl LoadReport {
    /// The file's bytes over the whole load's time, in GB/s.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.total.as_secs_f64().max(1e-9) / 1e9
    }
}

impl fmt::Display for LoadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadMode::Digest => f.write_str("digest (sidecar matches)"),
            LoadMode::FullChecks(reason) => {
                let why = match reason {
                    FullChecksReason::Forced => "forced",
                    FullChecksReason::NoSidecar => "no sidecar",
                    FullChecksReason::OtherChecker => "sidecar from another checker",
                    FullChecksReason::Changed => "file differs from its sidecar",
                    FullChecksReason::Unreadable => "sidecar unreadable",
                };
                write!(f, "full checks ({why})")
            }
        }
    }
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {:.2} GB in {:.2} s ({:.2} GB/s); decode+hash {:.2} s \
             (decode {:.1}, hash {:.1} thread-s), subgroup checks {:.2} s; sidecar ",
            self.mode,
            self.bytes as f64 / 1e9,
            self.total.as_secs_f64(),
            self.gb_per_s(),
            self.scan.as_secs_f64(),
            self.decode_cpu.as_secs_f64(),
            self.hash_cpu.as_secs_f64(),
            self.checks.as_secs_f64(),
        )?;
        match &self.sidecar {
            SidecarOutcome::Trusted => f.write_str("trusted"),
            SidecarOutcome::Written => f.write_str("written"),
            SidecarOutcome::NotWritten(why) => write!(f, "not written ({why})"),
            SidecarOutcome::NotRecorded => f.write_str("not recorded"),
        }
    }
}

/// Whether a failed sidecar write was already reported (warned once per
/// process; later ones go to the debug log).
static WARNED: AtomicBool = AtomicBool::new(false);

impl Parameters {
    /// Loads a parameters file: maps it, decodes every section in parallel
    /// and hashes it in the same pass, then checks every point's subgroup
    /// unless its sidecar (`<file>.cuzk-checked`) says this checker
    /// already did for exactly these bytes. After full checks it writes
    /// the sidecar when `options.record` is set; a directory that cannot
    /// take it is warned about (once) and the load goes on. Every other
    /// check (counts against the file's length, points on the curve,
    /// canonical, not the identity) runs on every load. Errors name the
    /// file, and a bad point its section and index.
    pub fn load(
        path: impl AsRef<Path>,
        options: LoadOptions,
    ) -> Result<(Self, LoadReport), ParamsError> {
        let path = path.as_ref();
        load_file(path, options).map_err(|e| in_file(path, e))
    }

    /// Reads parameters from a byte slice, checking every count against
    /// the bytes that remain and every point (on the curve, canonical,
    /// not the identity, in the subgroup), all sections in parallel.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ParamsError> {
        checked(bytes, &InMemory)
    }

    /// Reads a parameters file like [`from_bytes`](Self::from_bytes),
    /// mapped; every point is checked and no sidecar is read or written
    /// (see [`load`](Self::load) for that). Errors name the file.
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self, ParamsError> {
        let path = path.as_ref();
        let read = || {
            let mapped = Mapped::new(&File::open(path)?)?;
            checked(mapped.bytes(), &mapped)
        };
        read().map_err(|e| in_file(path, e))
    }

    /// Records, in the sidecar of the parameters file at `path`, that this
    /// build generated it: its points are multiples of the group
    /// generators, so a load need not check their subgroups (it still
    /// checks everything else). Hashes the file without decoding it. Only
    /// for a file that this build's setup has just written; a directory
    /// that cannot take the sidecar is reported, not an error.
    pub fn vouch_generated(path: impl AsRef<Path>) -> Result<SidecarOutcome, ParamsError> {
        let path = path.as_ref();
        let hash = || -> Result<(u64, [u8; 32]), ParamsError> {
            let mapped = Mapped::new(&File::open(path)?)?;
            let layout = Layout::of(mapped.bytes())?;
            let digest = digest_only(mapped.bytes(), &layout, &mapped);
            Ok((layout.len as u64, digest))
        };
        let (len, digest) = hash().map_err(|e| in_file(path, e))?;
        Ok(record(
            &sidecar::path_of(path),
            Vouch::Generated,
            len,
            &digest,
        ))
    }
}

/// Decodes `bytes` with every check.
fn checked(bytes: &[u8], pages: &dyn Pages) -> Result<Parameters, ParamsError> {
    let layout = Layout::of(bytes)?;
    let Scan { params, .. } = scan(bytes, &layout, pages)?;
    subgroup::check(&params, &layout.queries)?;
    Ok(params)
}

fn load_file(path: &Path, options: LoadOptions) -> Result<(Parameters, LoadReport), ParamsError> {
    let started = Instant::now();
    let mapped = Mapped::new(&File::open(path)?)?;
    let layout = Layout::of(mapped.bytes())?;
    let scanned = scan(mapped.bytes(), &layout, &mapped)?;
    drop(mapped);
    let scan_time = started.elapsed();
    let len = layout.len as u64;
    let sidecar_path = sidecar::path_of(path);
    let verdict = match options.full_checks {
        true => Verdict::Untrusted(FullChecksReason::Forced),
        false => sidecar::judge(&sidecar_path, len, &scanned.digest),
    };
    let (mode, checks, sidecar) = match verdict {
        Verdict::Trusted => (LoadMode::Digest, Duration::ZERO, SidecarOutcome::Trusted),
        Verdict::Untrusted(reason) => {
            let checking = Instant::now();
            subgroup::check(&scanned.params, &layout.queries)?;
            let checks = checking.elapsed();
            let outcome = match options.record {
                true => record(&sidecar_path, Vouch::Checked, len, &scanned.digest),
                false => SidecarOutcome::NotRecorded,
            };
            (LoadMode::FullChecks(reason), checks, outcome)
        }
    };
    let report = LoadReport {
        mode,
        bytes: len,
        scan: scan_time,
        decode_cpu: scanned.decode_cpu,
        hash_cpu: scanned.hash_cpu,
        checks,
        total: started.elapsed(),
        sidecar,
    };
    tracing::debug!(path = %path.display(), %report, "parameters loaded");
    Ok((scanned.params, report))
}

/// Writes the sidecar; a failure is warned about once and reported.
fn record(path: &Path, vouch: Vouch, len: u64, digest: &[u8; 32]) -> SidecarOutcome {
    match sidecar::record(path, vouch, len, digest) {
        Ok(()) => SidecarOutcome::Written,
        Err(e) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    sidecar = %path.display(),
                    error = %e,
                    "cannot record checked parameters; every load of this file will check every point"
                );
            } else {
                tracing::debug!(sidecar = %path.display(), error = %e, "cannot record checked parameters");
            }
            SidecarOutcome::NotWritten(e.to_string())
        }
    }
}

pub(super) fn in_file(path: &Path, source: ParamsError) -> ParamsError {
    ParamsError::File {
        path: path.to_path_buf(),
        source: Box::new(source),
    }
}
