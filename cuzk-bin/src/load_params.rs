//! `cuzk load-params`: loads a parameters file as `bench` and `prove` do
//! (the global `--full-param-checks` forces full checks there too) and
//! says how long each phase took, how fast, and the peak resident memory.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

use bellperson_lite::{sidecar_path, LoadOptions, Parameters, ParamsError, SidecarOutcome};
use clap::Args;

use crate::progress::{self, Progress};
use crate::CliResult;

/// `cuzk load-params`.
#[derive(Args, Debug)]
pub struct LoadParamsArgs {
    /// The parameters file
    #[arg(long, value_name = "FILE")]
    params: PathBuf,
    /// Do not write the sidecar after full checks
    #[arg(long)]
    no_record: bool,
    /// Read through the streaming reader instead: sequential chunks, every point's subgroup checked one by one (the path before mapped loading, for comparison)
    #[arg(long, conflicts_with = "no_record")]
    stream: bool,
    /// Also make the native SRS, as bench and prove do (it shares the decoded points: the peak should not grow)
    #[arg(long)]
    srs: bool,
}

/// Loads `--params` once and prints what it took.
pub fn load_params(args: &LoadParamsArgs) -> CliResult {
    let path = &args.params;
    let bytes = std::fs::metadata(path)
        .map_err(|e| format!("cannot read parameters {}: {e}", path.display()))?
        .len();
    println!("file          {} ({:.2} GB)", path.display(), gb(bytes));
    let params = if args.stream {
        stream(path, bytes)?
    } else {
        let options = LoadOptions {
            record: !args.no_record,
            ..crate::keys::load_options()
        };
        let spinner = loading(path);
        let (params, report) = Parameters::load(path, options)?;
        drop(spinner);
        println!("mode          {}", report.mode);
        println!(
            "decode+hash   {:.2} s  (decode {:.1} thread-s, hash {:.1} thread-s)",
            report.scan.as_secs_f64(),
            report.decode_cpu.as_secs_f64(),
            report.hash_cpu.as_secs_f64()
        );
        println!("subgroup      {:.2} s", report.checks.as_secs_f64());
        println!(
            "total         {:.2} s  {:.2} GB/s",
            report.total.as_secs_f64(),
            report.gb_per_s()
        );
        let sidecar = sidecar_path(path);
        match report.sidecar {
            SidecarOutcome::Trusted => println!("sidecar       trusted ({})", sidecar.display()),
            SidecarOutcome::Written => println!("sidecar       written ({})", sidecar.display()),
            SidecarOutcome::NotWritten(why) => println!("sidecar       not written: {why}"),
            SidecarOutcome::NotRecorded => println!("sidecar       not recorded (--no-record)"),
        }
        params
    };
    print_peak("peak RSS");
    if args.srs {
        let started = Instant::now();
        let spinner = progress::spinner("making the native SRS");
        let srs = params.srs()?;
        drop(spinner);
        println!("native SRS    {:.2} s", started.elapsed().as_secs_f64());
        print_peak("peak RSS");
        drop(srs);
    }
    Ok(())
}

/// The streaming reader, timed.
fn stream(path: &Path, bytes: u64) -> Result<Parameters, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let spinner = loading(path);
    let file =
        File::open(path).map_err(|e| format!("cannot read parameters {}: {e}", path.display()))?;
    let params = Parameters::read(BufReader::with_capacity(1 << 20, file)).map_err(|source| {
        ParamsError::File {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    drop(spinner);
    println!("mode          stream (every check, point by point)");
    println!(
        "total         {seconds:.2} s  {:.2} GB/s",
        gb(bytes) / seconds.max(1e-9)
    );
    Ok(params)
}

fn loading(path: &Path) -> Progress {
    progress::spinner(format!("loading {}", path.display()))
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

fn print_peak(label: &str) {
    match crate::machine::peak_rss_bytes() {
        Some(peak) => println!(
            "{label:<13} {:.2} GiB (VmHWM)",
            peak as f64 / (1u64 << 30) as f64
        ),
        None => println!("{label:<13} unknown (no /proc/self/status)"),
    }
}
