//! `cuzk sweep`: the bench over a grid of worker counts, as a table.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::bench::{measure, warm_up, write_file, BenchError, Plan, RunArgs};
use crate::checks::{positive_list, writable_output, InputError};
use crate::config::{EngineSettings, FileConfig};
use crate::gpu_util::percent;
use crate::machine::Machine;
use crate::report::{BenchReport, Gaps, Provenance, StageFigures};

/// `cuzk sweep`.
#[derive(Args, Clone, Debug, Default)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Partition worker counts to try [default: 1,2,4]
    #[arg(long, value_delimiter = ',')]
    pub partition_workers_list: Option<Vec<usize>>,
    /// GPU workers per device to try [default: 1,2]
    #[arg(long, value_delimiter = ',')]
    pub gpu_workers_list: Option<Vec<usize>>,
    /// Numbers of devices to try: the first N of the plan's devices [default: all]
    #[arg(long, value_delimiter = ',')]
    pub device_counts: Option<Vec<usize>>,
    /// Draw the last grid point's timeline as SVG
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Write one row of figures per grid point as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// TOML file with defaults for these flags
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// One grid point's figures.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    /// e.g. `sha-chain/4`.
    pub workload: String,
    /// Verified, synthesis mode, backend, revision, machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Devices used.
    pub devices: usize,
    /// Synthesis threads.
    pub partition_workers: usize,
    /// Prover threads per device.
    pub gpu_workers_per_device: usize,
    /// Request proofs per hour.
    pub proofs_per_hour: f64,
    /// Wall time per request.
    pub seconds_per_request: f64,
    /// Lock occupancy per device (JSON written before it was renamed:
    /// `efficiency`).
    pub lock_occupancy: Vec<f64>,
    /// Mean GPU utilization per device, measured by NVML (`null` without).
    pub gpu_utilization: Vec<Option<f64>>,
    /// Lock gaps, summed over devices.
    pub gaps: Gaps,
    /// Stage medians, in milliseconds.
    pub stage_medians_ms: StageFigures,
}

impl SweepRow {
    fn new(report: &BenchReport) -> Self {
        let mut gaps = Gaps::default();
        for d in &report.devices {
            gaps.add(d.gaps);
        }
        Self {
            workload: report.workload.clone(),
            provenance: report.provenance.clone(),
            devices: report.devices.len(),
            partition_workers: report.partition_workers,
            gpu_workers_per_device: report.gpu_workers_per_device,
            proofs_per_hour: report.proofs_per_hour,
            seconds_per_request: report.seconds_per_request,
            lock_occupancy: report.devices.iter().map(|d| d.lock_occupancy).collect(),
            gpu_utilization: report.devices.iter().map(|d| d.gpu_utilization).collect(),
            gaps,
            stage_medians_ms: report.stage_medians_ms,
        }
    }
}

/// `cuzk sweep`: one key, one fresh engine per grid point, a table at the
/// end (and JSON when asked).
pub fn run_sweep(args: &SweepArgs, config: &FileConfig) -> Result<(), Box<dyn std::error::Error>> {
    let plan = Plan::resolve(&args.run, EngineSettings::default(), config)?;
    let synth_list = args
        .partition_workers_list
        .clone()
        .or(config.sweep.partition_workers_list.clone())
        .unwrap_or(vec![1, 2, 4]);
    let gpu_list = args
        .gpu_workers_list
        .clone()
        .or(config.sweep.gpu_workers_list.clone())
        .unwrap_or(vec![1, 2]);
    let all_devices = plan.engine.devices.clone();
    let counts = args
        .device_counts
        .clone()
        .unwrap_or(vec![all_devices.len()]);
    // Refuse what cannot work before minutes of setup.
    positive_list("--partition-workers-list", &synth_list)?;
    positive_list("--gpu-workers-list", &gpu_list)?;
    positive_list("--device-counts", &counts)?;
    if let Some(&value) = counts.iter().find(|&&c| c > all_devices.len()) {
        let (flag, max) = ("--device-counts", all_devices.len());
        return Err(InputError::TooMany { flag, value, max }.into());
    }
    plan.engine.validate().map_err(BenchError::Config)?;
    writable_output(args.json.as_ref())?;
    writable_output(args.timeline.as_ref())?;
    let machine = Machine::this();
    let key = plan.proving_key()?;
    plan.compile_shape()?;
    let cached = plan.cached_partitions()?;
    warm_up(&plan, &key, cached.as_deref())?;
    let mut rows = Vec::new();
    for &count in &counts {
        for &partition_workers in &synth_list {
            for &gpu_workers_per_device in &gpu_list {
                let mut engine = plan.engine.clone();
                engine.devices = all_devices[..count].to_vec();
                engine.partition_workers = partition_workers;
                engine.gpu_workers_per_device = gpu_workers_per_device;
                tracing::info!(
                    target: crate::logging::CLI,
                    devices = count,
                    partition_workers,
                    gpu_workers_per_device,
                    "sweep: next grid point"
                );
                let measurement = measure(&plan, engine, &key, cached.as_deref())?;
                let report = BenchReport::new(&plan, &measurement, &machine);
                rows.push(SweepRow::new(&report));
                if let Some(path) = &args.timeline {
                    let title = format!("cuzk sweep: {}", report.title());
                    let svg = crate::timeline::render(&measurement.metrics, &title);
                    write_file(path, &svg)?;
                }
            }
        }
    }
    print!("{}", table(&plan, &rows));
    if let Some(row) = rows.first() {
        println!("{}", row.provenance.line());
    }
    if let Some(path) = &args.json {
        write_file(path, &serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}

fn table(plan: &Plan, rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} request(s) × {} partitions{}",
        plan.label(),
        plan.requests,
        plan.partitions,
        if plan.cached_synthesis {
            ", cached synthesis"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "{:>7} {:>9} {:>6} {:>12} {:>10} {:>14} {:>14} {:>18} {:>10} {:>10}",
        "devices",
        "partition",
        "gpu",
        "proofs/hour",
        "s/request",
        "lock occupancy",
        "GPU util",
        "gaps <50/mid/>500",
        "synth ms",
        "kernel ms"
    );
    for row in rows {
        let occupancy: Vec<String> = row
            .lock_occupancy
            .iter()
            .map(|e| format!("{:.1}%", 100.0 * e))
            .collect();
        let utilization: Vec<String> = row
            .gpu_utilization
            .iter()
            .map(|&u| percent(u).replace(' ', ""))
            .collect();
        let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>6} {:>12.1} {:>10.2} {:>14} {:>14} {:>18} {:>10} {:>10}",
            row.devices,
            row.partition_workers,
            row.gpu_workers_per_device,
            row.proofs_per_hour,
            row.seconds_per_request,
            occupancy.join(" "),
            utilization.join(" "),
            row.gaps.to_string(),
            ms(row.stage_medians_ms.synthesis),
            ms(row.stage_medians_ms.kernel),
        );
    }
    out
}
