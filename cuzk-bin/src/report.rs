//! What a bench run reports: the figures printed and the JSON written.
//!
//! The JSON holds every lock hold (`lock_holds`: device, worker, taken_ns,
//! released_ns, with the prover's phase lengths) and every synthesis span,
//! on the prover's monotonic clock, so anyone can recompute lock occupancy
//! and overlap from it; and what the figures stand on ([`Provenance`]):
//! whether the proofs were verified, the synthesis mode, the backend, the
//! git revision and the machine.
//!
//! Lock occupancy (`lock_occupancy`, JSON written before it was renamed:
//! `efficiency`) is the share of a device's busy span in which its lock was
//! held: how well the workers keep the kernel region going, not how busy
//! the GPU was. `gpu_utilization` is that, measured by NVML.

use std::fmt::Write;

use cuzk_engine::metrics::{DeviceMetrics, GapHistogram, ProveSpan, StageMedians, SynthSpan};
use serde::Serialize;

use crate::bench::{HostPoolFigures, Measurement, Plan};
use crate::gpu_util::percent;
use crate::machine::{Machine, GIT_REVISION};

const NS_PER_S: f64 = 1e9;

/// What a run's figures stand on; every bench report and sweep row
/// carries it.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// Every request proof was batch-verified (false: `--no-verify`).
    pub verified: bool,
    /// The synthesis mode (`compiled`, `full`, ...).
    pub synthesis: String,
    /// Where the witness came from: `native program`, `gadgets`,
    /// `gadgets, in pieces` or `full synthesis`.
    pub witness: String,
    /// The prover backend of each device, e.g. `cuda x2`.
    pub backend: String,
    /// The git revision of the binary (`-dirty`: with uncommitted changes).
    pub git_revision: String,
    /// The machine.
    pub machine: Machine,
}

impl Provenance {
    /// The provenance of `measurement`, a run of `plan` on `machine`.
    pub fn new(plan: &Plan, measurement: &Measurement, machine: &Machine) -> Self {
        Self {
            verified: measurement.verified,
            synthesis: measurement.config.synthesis.to_string(),
            witness: plan.witness_source(measurement.config.synthesis).to_owned(),
            backend: measurement.backend.clone(),
            git_revision: GIT_REVISION.to_owned(),
            machine: machine.clone(),
        }
    }

    /// One line: `verified; compiled synthesis (witness: native program),
    /// cpu backend; revision abc1234; host (2 cores, ...)`.
    pub fn line(&self) -> String {
        let verified = if self.verified {
            "every request proof verified"
        } else {
            "NOT verified (--no-verify or verify = false)"
        };
        format!(
            "{verified}; {} synthesis (witness: {}), {} backend; revision {}; {}",
            self.synthesis, self.witness, self.backend, self.git_revision, self.machine
        )
    }
}

/// One bench run, as printed and as written to `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// e.g. `sha-chain/4`.
    pub workload: String,
    /// Verified, synthesis mode, backend, revision, machine.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Requests proven.
    pub requests: usize,
    /// Partitions per request.
    pub partitions: usize,
    /// Synthesis threads.
    pub partition_workers: usize,
    /// Prover threads per device.
    pub gpu_workers_per_device: usize,
    /// Synthesized-partition queue capacity.
    pub queue_depth: usize,
    /// Partitions were synthesized once and reused.
    pub cached_synthesis: bool,
    /// First submission to last request proof.
    pub wall_s: f64,
    /// `wall_s / requests`.
    pub seconds_per_request: f64,
    /// Request proofs per hour at this rate.
    pub proofs_per_hour: f64,
    /// Median submission-to-proof time of a request.
    pub median_request_latency_s: f64,
    /// Per device: lock holds, lock occupancy, GPU utilization, gaps.
    pub devices: Vec<DeviceFigures>,
    /// Per GPU worker: partitions and lock wait.
    pub gpu_workers: Vec<WorkerFigures>,
    /// Median per partition of each stage, in milliseconds.
    pub stage_medians_ms: StageFigures,
    /// The host pool's allocations, reuses and frees during the run.
    pub host_pool: HostPoolFigures,
    /// The process's peak resident memory when the report was made
    /// (VmHWM: the key, the compiled shapes and the run together; for a
    /// sweep, the peak so far); `None` where the OS does not say.
    pub peak_rss_bytes: Option<u64>,
    /// The host-memory budget (`--host-memory-limit`) in bytes, `None` for
    /// none.
    pub host_memory_limit_bytes: Option<u64>,
    /// The device-memory limit (`--device-memory-limit`) each device's
    /// keys were planned within, in bytes; `None` for none.
    pub device_memory_limit_bytes: Option<u64>,
    /// Partitions whose synthesis waited for the budget.
    pub host_memory_waits: u64,
    /// Their waiting in all, in seconds.
    pub host_memory_waited_s: f64,
    /// Every lock hold (the engine's last 100,000: see `spans_dropped`).
    pub lock_holds: Vec<HoldRecord>,
    /// Every synthesis (likewise).
    pub synthesis_spans: Vec<SynthRecord>,
    /// Spans the engine's bounded log dropped: when not 0, the figures
    /// above cover only the spans kept.
    pub spans_dropped: usize,
}

/// One device's lock figures.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceFigures {
    /// Device ordinal.
    pub device: u32,
    /// Lock holds.
    pub holds: usize,
    /// Sum of hold lengths.
    pub held_s: f64,
    /// First take to last release.
    pub busy_span_s: f64,
    /// `held_s / busy_span_s`: lock occupancy.
    pub lock_occupancy: f64,
    /// Mean GPU utilization NVML measured during the run (0 to 1), `null`
    /// without NVML or on the CPU backend.
    pub gpu_utilization: Option<f64>,
    /// Gaps between consecutive holds, by length.
    pub gaps: Gaps,
}

/// Gaps between consecutive lock holds, by length.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Gaps {
    /// Shorter than 50 ms.
    pub under_50ms: usize,
    /// From 50 to 500 ms.
    pub from_50_to_500ms: usize,
    /// Longer than 500 ms.
    pub over_500ms: usize,
}

impl Gaps {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: Gaps) {
        self.under_50ms += other.under_50ms;
        self.from_50_to_500ms += other.from_50_to_500ms;
        self.over_500ms += other.over_500ms;
    }
}

impl std::fmt::Display for Gaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.under_50ms, self.from_50_to_500ms, self.over_500ms
        )
    }
}

/// One GPU worker's figures.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerFigures {
    /// Worker index.
    pub worker: usize,
    /// Its device.
    pub device: u32,
    /// Partitions it proved.
    pub partitions: usize,
    /// Total lock wait.
    pub lock_wait_s: f64,
    /// Median lock wait per partition.
    pub median_lock_wait_ms: f64,
}

/// Stage medians in milliseconds (`null` where the stage never ran).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StageFigures {
    /// Synthesis.
    pub synthesis: Option<f64>,
    /// Of which the witness (compiled synthesis).
    pub witness: Option<f64>,
    /// Of which the matrix products (compiled synthesis).
    pub matrix: Option<f64>,
    /// Preamble (lock not held).
    pub preamble: Option<f64>,
    /// Waiting for the lock.
    pub lock_wait: Option<f64>,
    /// Kernel region (lock held).
    pub kernel: Option<f64>,
    /// Epilogue (lock not held).
    pub epilogue: Option<f64>,
}

/// One lock hold with the phases around it; preamble window =
/// `[taken − lock_wait − preamble, taken − lock_wait]`, epilogue window =
/// `[released, released + epilogue]`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct HoldRecord {
    /// Device ordinal.
    pub device: u32,
    /// GPU worker.
    pub worker: usize,
    /// Job id (submission order).
    pub job: u64,
    /// Partition index.
    pub partition: usize,
    /// Lock taken (monotonic ns).
    pub taken_ns: u64,
    /// Lock released (monotonic ns).
    pub released_ns: u64,
    /// Preamble length.
    pub preamble_ns: u64,
    /// Lock wait length.
    pub lock_wait_ns: u64,
    /// Epilogue length.
    pub epilogue_ns: u64,
}

/// One synthesis by a partition worker.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SynthRecord {
    /// Partition worker.
    pub worker: usize,
    /// Job id.
    pub job: u64,
    /// Partition index.
    pub partition: usize,
    /// Start of the synthesis itself, after any wait for the host-memory
    /// budget (monotonic ns).
    pub started_ns: u64,
    /// End (monotonic ns).
    pub ended_ns: u64,
}

impl BenchReport {
    /// The report of `measurement`, a run of `plan` on `machine`.
    pub fn new(plan: &Plan, measurement: &Measurement, machine: &Machine) -> Self {
        let metrics = &measurement.metrics;
        let wall_s = measurement.wall_ns as f64 / NS_PER_S;
        let latency = cuzk_engine::metrics::median(measurement.latencies_ns.clone());
        Self {
            workload: plan.label(),
            provenance: Provenance::new(plan, measurement, machine),
            requests: plan.requests,
            partitions: plan.partitions,
            partition_workers: measurement.config.partition_workers,
            gpu_workers_per_device: measurement.config.gpu_workers_per_device,
            queue_depth: measurement.config.effective_queue_depth(),
            cached_synthesis: plan.cached_synthesis,
            wall_s,
            seconds_per_request: wall_s / plan.requests as f64,
            proofs_per_hour: plan.requests as f64 * 3600.0 / wall_s,
            median_request_latency_s: latency.unwrap_or(0) as f64 / NS_PER_S,
            devices: metrics
                .devices
                .iter()
                .zip(&measurement.gpu_utilization)
                .map(|(d, &utilization)| device_figures(d, utilization))
                .collect(),
            gpu_workers: metrics
                .gpu_workers
                .iter()
                .map(|w| WorkerFigures {
                    worker: w.worker,
                    device: w.device,
                    partitions: w.partitions,
                    lock_wait_s: w.lock_wait_ns as f64 / NS_PER_S,
                    median_lock_wait_ms: w.median_lock_wait_ns as f64 / 1e6,
                })
                .collect(),
            stage_medians_ms: stage_figures(&metrics.stages),
            host_pool: measurement.host_pool,
            peak_rss_bytes: crate::machine::peak_rss_bytes(),
            host_memory_limit_bytes: measurement.host_memory.limit,
            device_memory_limit_bytes: measurement.config.device_memory_limit,
            host_memory_waits: measurement.host_memory.waits,
            host_memory_waited_s: measurement.host_memory.waited.as_secs_f64(),
            lock_holds: metrics.prove_spans.iter().map(hold_record).collect(),
            synthesis_spans: metrics.synth_spans.iter().map(synth_record).collect(),
            spans_dropped: metrics.spans_dropped,
        }
    }

    /// `sha-chain/4, 1 request × 10 partitions, 2 partition workers, ...`.
    pub fn title(&self) -> String {
        format!(
            "{}, {} request(s) × {} partitions, {} partition workers, {} GPU workers/device{}",
            self.workload,
            self.requests,
            self.partitions,
            self.partition_workers,
            self.gpu_workers_per_device,
            if self.cached_synthesis {
                ", cached synthesis"
            } else {
                ""
            }
        )
    }

    /// The figures as printed by `cuzk bench`.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{} (queue depth {})", self.title(), self.queue_depth);
        let _ = writeln!(out, "  {}", self.provenance.line());
        let _ = writeln!(out, "  wall time            {:.2} s", self.wall_s);
        let _ = writeln!(out, "  proofs per hour      {:.1}", self.proofs_per_hour);
        let _ = writeln!(
            out,
            "  seconds per request  {:.2} s (median latency {:.2} s)",
            self.seconds_per_request, self.median_request_latency_s
        );
        for d in &self.devices {
            let Gaps {
                under_50ms: short,
                from_50_to_500ms: mid,
                over_500ms: long,
            } = d.gaps;
            let _ = writeln!(
                out,
                "  device {}: lock occupancy {:.1} % ({} holds, {:.2} s held over a {:.2} s busy span), GPU utilization {} (NVML)\n    lock gaps: {short} < 50 ms, {mid} 50-500 ms, {long} > 500 ms",
                d.device,
                100.0 * d.lock_occupancy,
                d.holds,
                d.held_s,
                d.busy_span_s,
                percent(d.gpu_utilization)
            );
        }
        for w in &self.gpu_workers {
            let _ = writeln!(
                out,
                "  GPU worker {} (device {}): {} partitions, lock wait {:.2} s total, median {:.1} ms",
                w.worker, w.device, w.partitions, w.lock_wait_s, w.median_lock_wait_ms
            );
        }
        let _ = writeln!(out, "  stage medians: {}", self.stage_medians_ms);
        let pool = &self.host_pool;
        let _ = writeln!(
            out,
            "  host pool: {} vectors reused, {} allocated, {} blocks freed during the run (limit {:.1} GiB)",
            pool.reused,
            pool.allocated,
            pool.freed,
            pool.limit_bytes as f64 / (1u64 << 30) as f64
        );
        if let Some(peak) = self.peak_rss_bytes {
            let _ = writeln!(
                out,
                "  peak host memory: {:.1} GiB (the process's VmHWM: key, shapes and run)",
                peak as f64 / (1u64 << 30) as f64
            );
        }
        let _ = match self.host_memory_limit_bytes {
            Some(limit) => writeln!(
                out,
                "  host memory budget: {}, {} partition(s) waited for it ({:.1} s in all)",
                bytesize::ByteSize(limit),
                self.host_memory_waits,
                self.host_memory_waited_s
            ),
            None => writeln!(out, "  host memory budget: none"),
        };
        if let Some(limit) = self.device_memory_limit_bytes {
            let _ = writeln!(
                out,
                "  device memory limit: {} a device (keys planned within it)",
                bytesize::ByteSize(limit)
            );
        }
        out
    }
}

impl std::fmt::Display for StageFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stages = [
            ("synthesis", self.synthesis),
            ("preamble", self.preamble),
            ("lock wait", self.lock_wait),
            ("kernel", self.kernel),
            ("epilogue", self.epilogue),
        ];
        let parts: Vec<String> = stages
            .iter()
            .map(|(name, ms)| match ms {
                Some(ms) => format!("{name} {ms:.1} ms"),
                None => format!("{name} -"),
            })
            .collect();
        f.write_str(&parts.join(", "))?;
        if let (Some(w), Some(m)) = (self.witness, self.matrix) {
            write!(
                f,
                " (compiled synthesis: witness {w:.1} ms + matrix products {m:.1} ms)"
            )?;
        }
        Ok(())
    }
}

fn device_figures(d: &DeviceMetrics, gpu_utilization: Option<f64>) -> DeviceFigures {
    let GapHistogram {
        under_50ms,
        from_50_to_500ms,
        over_500ms,
    } = d.gaps;
    DeviceFigures {
        device: d.device,
        holds: d.holds,
        held_s: d.held_ns as f64 / NS_PER_S,
        busy_span_s: d.busy_span_ns as f64 / NS_PER_S,
        lock_occupancy: d.lock_occupancy,
        gpu_utilization,
        gaps: Gaps {
            under_50ms,
            from_50_to_500ms,
            over_500ms,
        },
    }
}

fn stage_figures(s: &StageMedians) -> StageFigures {
    let ms = |ns: Option<u64>| ns.map(|ns| ns as f64 / 1e6);
    StageFigures {
        synthesis: ms(s.synthesis_ns),
        witness: ms(s.witness_ns),
        matrix: ms(s.matrix_ns),
        preamble: ms(s.preamble_ns),
        lock_wait: ms(s.lock_wait_ns),
        kernel: ms(s.kernel_ns),
        epilogue: ms(s.epilogue_ns),
    }
}

fn hold_record(span: &ProveSpan) -> HoldRecord {
    let hold = span.hold();
    HoldRecord {
        device: hold.device,
        worker: hold.worker,
        job: hold.job,
        partition: hold.partition,
        taken_ns: hold.taken_ns,
        released_ns: hold.released_ns,
        preamble_ns: span.timings.preamble_ns,
        lock_wait_ns: span.timings.lock_wait_ns,
        epilogue_ns: span.timings.epilogue_ns,
    }
}

fn synth_record(span: &SynthSpan) -> SynthRecord {
    SynthRecord {
        worker: span.worker,
        job: span.job,
        partition: span.partition,
        started_ns: span.admitted_ns,
        ended_ns: span.ended_ns,
    }
}
