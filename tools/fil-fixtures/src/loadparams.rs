//! `load-params`: the reference loader's time on a `.params` file.
//!
//! bellperson 0.27's `SuprasealParameters::new` calls supraseal-c2's
//! `SRS::try_new(path, false)`, which reads the whole file into pinned host
//! memory and decodes its points without subgroup checks. This times that
//! call, as the reference beside `cuzk load-params`, and reads the process's
//! peak resident memory from /proc/self/status (VmHWM).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

/// The peak resident memory of this process so far, in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(feature = "supraseal")]
fn load(path: &Path) -> Result<supraseal_c2::SRS> {
    supraseal_c2::SRS::try_new(path.to_path_buf(), false)
        .map_err(|e| anyhow::anyhow!("supraseal-c2 could not load {}: {e}", path.display()))
}

#[cfg(not(feature = "supraseal"))]
fn load(_path: &Path) -> Result<std::convert::Infallible> {
    anyhow::bail!("load-params times supraseal-c2's loader: build with --features supraseal")
}

pub fn run(path: &Path, json: Option<&Path>) -> Result<()> {
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let start = Instant::now();
    let (seconds, rss) = {
        // The SRS stays loaded until its peak memory has been read.
        let _srs = load(path)?;
        (start.elapsed().as_secs_f64(), peak_rss())
    };
    let record = serde_json::json!({
        "loader": "supraseal-c2 SRS::try_new (bellperson 0.27 SuprasealParameters::new)",
        "file": path.display().to_string(),
        "bytes": bytes,
        "seconds": seconds,
        "gb_per_s": bytes as f64 / seconds / 1e9,
        "peak_rss_bytes": rss,
    });
    println!(
        "supraseal-c2 loaded {} ({:.2} GB) in {seconds:.2} s ({:.2} GB/s), peak RSS {}",
        path.display(),
        bytes as f64 / 1e9,
        bytes as f64 / seconds / 1e9,
        rss.map_or_else(
            || "unknown".into(),
            |b| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
        ),
    );
    if let Some(json) = json {
        std::fs::write(json, serde_json::to_string_pretty(&record)? + "\n")
            .with_context(|| format!("cannot write {}", json.display()))?;
    }
    Ok(())
}
