//! The sidecar `<file>.cuzk-checked`: a record, beside a parameters file,
//! that this checker has checked every point of exactly these bytes.
//!
//! It is five lines of text:
//!
//! ```text
//! cuzk checked parameters, format 1
//! checker: bellperson-lite 0.1.0
//! checks: on-curve canonical non-identity subgroup(64 subset sums a run)
//! digest: blake3-units-8MiB 3f2a…(64 hex digits)
//! length: 2812345678
//! ```
//!
//! A load trusts it only when all five lines are what this build would
//! write for the file it just hashed: another format, another checker
//! version (its checks may differ), another set of checks, another digest
//! or length all mean full checks, after which the sidecar is written anew.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::decode::DIGEST_NAME;

/// Appended to the parameters file's name.
pub const SUFFIX: &str = ".cuzk-checked";

/// Longest sidecar read; anything longer is not one of ours.
const MAX_BYTES: u64 = 4096;

/// Why a load checks every point instead of trusting a sidecar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullChecksReason {
    /// The caller asked for full checks.
    Forced,
    /// There is no sidecar.
    NoSidecar,
    /// The sidecar was written by another checker (version, format or
    /// set of checks), so it vouches for other checks.
    OtherChecker,
    /// The file's length or digest differs from the sidecar's.
    Changed,
    /// The sidecar could not be read.
    Unreadable,
}

/// What a sidecar says about the file just hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// This checker checked exactly these bytes.
    Trusted,
    /// Not trusted, and why.
    Untrusted(FullChecksReason),
}

/// The sidecar of the parameters file `params`.
pub fn path_of(params: &Path) -> PathBuf {
    let mut name = params.as_os_str().to_owned();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// The lines that name the format, the checker and its checks.
fn preamble() -> String {
    format!(
        "cuzk checked parameters, format 1\n\
         checker: bellperson-lite {}\n\
         checks: on-curve canonical non-identity subgroup(64 subset sums a run)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The whole sidecar for a file of `len` bytes with `digest`.
fn render(len: u64, digest: &[u8; 32]) -> String {
    let hex = blake3::Hash::from(*digest).to_hex();
    format!("{}digest: {DIGEST_NAME} {hex}\nlength: {len}\n", preamble())
}

/// Judges the sidecar at `path` against a file of `len` bytes with
/// `digest`.
pub(super) fn judge(path: &Path, len: u64, digest: &[u8; 32]) -> Verdict {
    let text = match read_small(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Verdict::Untrusted(FullChecksReason::NoSidecar)
        }
        Err(_) => return Verdict::Untrusted(FullChecksReason::Unreadable),
    };
    if text == render(len, digest) {
        Verdict::Trusted
    } else if text.starts_with(&preamble()) {
        Verdict::Untrusted(FullChecksReason::Changed)
    } else {
        Verdict::Untrusted(FullChecksReason::OtherChecker)
    }
}

fn read_small(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    fs::File::open(path)?
        .take(MAX_BYTES)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// Writes the sidecar at `path` through a temporary file and a rename, so
/// that a reader never sees half of one.
pub(super) fn record(path: &Path, len: u64, digest: &[u8; 32]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = fs::write(&tmp, render(len, digest)).and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
