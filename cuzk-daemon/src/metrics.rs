//! The daemon's Prometheus metrics (OpenMetrics text, `prometheus-client`).
//!
//! Events (a job accepted, finished, rejected) update counters and
//! histograms as they happen; gauges of state (queues, keys, locks, the
//! host pool, NVML's figures of each GPU) are set from a [`Gauges`]
//! snapshot just before each render.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use cuzk_engine::{DeviceStatus, RequestProof};
use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use supraseal_c2::LockStats;

use crate::gpu::Reading;
use crate::keys::KeyStatus;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `reason` of outcomes forgotten after `result_ttl_secs`.
pub const COMPACTED_EXPIRED: &str = "expired";
/// The `reason` of outcomes forgotten beyond `journal_keep_finished`.
pub const COMPACTED_OVER_LIMIT: &str = "over_limit";

/// The kinds every per-kind gauge reports, zero included.
const KINDS: [&str; 6] = [
    "porep",
    "snap",
    "window-post",
    "winning-post",
    "sha-chain",
    "mul-chain",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    kind: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AggregateLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeviceLabels {
    device: u32,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CircuitLabels {
    circuit: String,
}

type Seconds = Counter<f64, AtomicU64>;
type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// 1 ms to about 9 minutes, doubling.
fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 20))
}

/// A job's end, as the `outcome` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Proven.
    Completed,
    /// Failed (the error is in the job's outcome).
    Failed,
    /// Cancelled.
    Cancelled,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One admission check in progress ([`Metrics::checking`]).
pub struct CheckGuard<'a> {
    metrics: &'a Metrics,
}

impl Drop for CheckGuard<'_> {
    fn drop(&mut self) {
        self.metrics.checks_running.dec();
    }
}

/// The state the gauges show, read just before rendering.
#[derive(Clone, Debug, Default)]
pub struct Gauges {
    /// `(kind, queued, running)` per kind with jobs.
    pub jobs: Vec<(&'static str, usize, usize)>,
    /// Partitions waiting in the engine: to synthesize, to prove.
    pub engine_partitions: (usize, usize),
    /// Each device's lock counters.
    pub locks: Vec<(u32, LockStats)>,
    /// Each device's state: serving, or retired after a sticky CUDA error.
    pub devices: Vec<DeviceStatus>,
    /// NVML's reading of each device on the CUDA backend (none on the CPU
    /// backend; every figure `None` without NVML).
    pub gpus: Vec<(u32, Reading)>,
    /// Loaded keys.
    pub keys: Vec<KeyStatus>,
    /// Pinned host memory kept for reuse, and the limit.
    pub host_pool: (u64, u64),
    /// This process's memory, the machine's, and the engine's budget.
    pub host_memory: HostMemory,
    /// Since the daemon started.
    pub uptime: Duration,
}

/// Host memory as Linux reports it (`None` where `/proc` does not say), and
/// the engine's budget for its partitions.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostMemory {
    /// The daemon's resident memory now (VmRSS).
    pub resident_bytes: Option<u64>,
    /// The daemon's peak resident memory since start (VmHWM).
    pub peak_resident_bytes: Option<u64>,
    /// What the machine can still give without swapping (MemAvailable).
    pub available_bytes: Option<u64>,
    /// The engine's host-memory budget and how often partitions waited
    /// for it.
    pub budget: cuzk_engine::host::Budget,
}

impl HostMemory {
    /// The figures now, with the budget of `engine` (none without one).
    pub fn read(engine: Option<&cuzk_engine::Engine>) -> Self {
        Self {
            resident_bytes: cuzk_engine::host::rss_bytes(),
            peak_resident_bytes: cuzk_engine::host::peak_rss_bytes(),
            available_bytes: cuzk_engine::host::available_bytes(),
            budget: engine.map(|e| e.host_memory()).unwrap_or_default(),
        }
    }
}

/// Every metric the daemon exports.
pub struct Metrics {
    registry: Registry,
    accepted: Family<KindLabels, Counter>,
    finished: Family<OutcomeLabels, Counter>,
    rejected: Family<ReasonLabels, Counter>,
    recovered: Counter,
    quarantined: Counter,
    journal_retries: Counter,
    compacted: Family<ReasonLabels, Counter>,
    aggregates: Family<AggregateLabels, Counter>,
    checks_running: Gauge,
    checks_peak: Gauge,
    partitions: Family<KindLabels, Counter>,
    job_seconds: Histograms<KindLabels>,
    stage_seconds: Histograms<StageLabels>,
    queued: Family<KindLabels, Gauge>,
    running: Family<KindLabels, Gauge>,
    engine_partitions: Family<QueueLabels, Gauge>,
    lock_acquisitions: Family<DeviceLabels, Counter>,
    lock_held: Family<DeviceLabels, Seconds>,
    lock_wait: Family<DeviceLabels, Seconds>,
    device_up: Family<DeviceLabels, Gauge>,
    gpu_utilization: Family<DeviceLabels, Gauge<f64, AtomicU64>>,
    gpu_memory_used: Family<DeviceLabels, Gauge>,
    gpu_memory_total: Family<DeviceLabels, Gauge>,
    srs_bytes: Family<CircuitLabels, Gauge>,
    srs_jobs: Family<CircuitLabels, Gauge>,
    host_pool_bytes: Gauge,
    host_pool_limit: Gauge,
    resident: Gauge,
    peak_resident: Gauge,
    host_available: Gauge,
    uptime: Gauge<f64, AtomicU64>,
    /// Lock counters as last seen, to turn the lock's totals into counter
    /// increments; also serializes renders.
    seen_locks: Mutex<HashMap<u32, LockStats>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric at zero, registered under the `cuzk_` prefix.
    pub fn new() -> Self {
        let metrics = Self {
            registry: Registry::with_prefix("cuzk"),
            accepted: Family::default(),
            finished: Family::default(),
            rejected: Family::default(),
            recovered: Counter::default(),
            quarantined: Counter::default(),
            journal_retries: Counter::default(),
            compacted: Family::default(),
            aggregates: Family::default(),
            checks_running: Gauge::default(),
            checks_peak: Gauge::default(),
            partitions: Family::default(),
            job_seconds: Family::new_with_constructor(seconds_histogram),
            stage_seconds: Family::new_with_constructor(seconds_histogram),
            queued: Family::default(),
            running: Family::default(),
            engine_partitions: Family::default(),
            lock_acquisitions: Family::default(),
            lock_held: Family::default(),
            lock_wait: Family::default(),
            device_up: Family::default(),
            gpu_utilization: Family::default(),
            gpu_memory_used: Family::default(),
            gpu_memory_total: Family::default(),
            srs_bytes: Family::default(),
            srs_jobs: Family::default(),
            host_pool_bytes: Gauge::default(),
            host_pool_limit: Gauge::default(),
            resident: Gauge::default(),
            peak_resident: Gauge::default(),
            host_available: Gauge::default(),
            uptime: Gauge::default(),
            seen_locks: Mutex::default(),
        };
        // Both reasons from the start, so that a rate over them is defined.
        for reason in [COMPACTED_EXPIRED, COMPACTED_OVER_LIMIT] {
            let _ = metrics.compacted.get_or_create(&ReasonLabels { reason });
        }
        for outcome in ["made", "refused"] {
            let _ = metrics
                .aggregates
                .get_or_create(&AggregateLabels { outcome });
        }
        metrics.register_all()
    }

    /// Registers every metric: the ones events update here, then the
    /// state ones.
    fn register_all(mut self) -> Self {
        let r = &mut self.registry;
        r.register(
            "jobs_accepted",
            "Jobs accepted (written to the journal)",
            self.accepted.clone(),
        );
        r.register(
            "jobs_finished",
            "Jobs that reached an outcome",
            self.finished.clone(),
        );
        r.register(
            "jobs_rejected",
            "Submissions refused, by gRPC code",
            self.rejected.clone(),
        );
        r.register(
            "jobs_recovered",
            "Unfinished jobs found in the journal at start",
            self.recovered.clone(),
        );
        r.register(
            "admission_checks_running",
            "Submissions whose inputs are being checked now",
            self.checks_running.clone(),
        );
        r.register(
            "admission_checks_peak",
            "Most submissions checked at once since start (bounded by admission_checks)",
            self.checks_peak.clone(),
        );
        r.register(
            "journal_quarantined",
            "Journal entries found damaged at start and set aside, not run",
            self.quarantined.clone(),
        );
        r.register(
            "journal_write_retries",
            "Outcome writes the journal failed (a full disk, most likely) and tried again",
            self.journal_retries.clone(),
        );
        r.register(
            "journal_compacted",
            "Outcomes nobody fetched, forgotten by the journal: expired \
             (result_ttl_secs) or over_limit (journal_keep_finished)",
            self.compacted.clone(),
        );
        r.register(
            "seal_aggregates",
            "AggregateSealProofs calls: made (and verified) or refused",
            self.aggregates.clone(),
        );
        r.register(
            "partitions_proven",
            "Partitions of completed jobs",
            self.partitions.clone(),
        );
        r.register(
            "job_duration_seconds",
            "Completed jobs, acceptance to outcome",
            self.job_seconds.clone(),
        );
        r.register(
            "partition_stage_seconds",
            "Per partition: synthesis, preamble, lock_wait, kernel, epilogue",
            self.stage_seconds.clone(),
        );
        self.register_state()
    }

    /// The gauges set from a [`Gauges`] snapshot (the devices' in
    /// [`Metrics::register_devices`]).
    fn register_state(mut self) -> Self {
        let r = &mut self.registry;
        r.register(
            "jobs_queued",
            "Jobs waiting in the daemon's queue",
            self.queued.clone(),
        );
        r.register(
            "jobs_running",
            "Jobs handed to the engine",
            self.running.clone(),
        );
        r.register(
            "engine_partitions_waiting",
            "Partitions waiting in the engine's queues",
            self.engine_partitions.clone(),
        );
        r.register(
            "srs_bytes",
            "Bytes of each loaded proving key",
            self.srs_bytes.clone(),
        );
        r.register(
            "srs_jobs",
            "Jobs holding each loaded proving key",
            self.srs_jobs.clone(),
        );
        r.register(
            "pinned_host_pool_bytes",
            "Page-locked host memory kept for reuse",
            self.host_pool_bytes.clone(),
        );
        r.register(
            "pinned_host_pool_limit_bytes",
            "Most page-locked memory the pool keeps",
            self.host_pool_limit.clone(),
        );
        r.register(
            "process_resident_bytes",
            "The daemon's resident memory now (VmRSS)",
            self.resident.clone(),
        );
        r.register(
            "process_peak_resident_bytes",
            "The daemon's peak resident memory since start (VmHWM)",
            self.peak_resident.clone(),
        );
        r.register(
            "host_memory_available_bytes",
            "Memory the machine can still give without swapping (MemAvailable)",
            self.host_available.clone(),
        );
        r.register(
            "uptime_seconds",
            "Seconds since the daemon started",
            self.uptime.clone(),
        );
        self.register_devices()
    }

    /// Each device's lock counters, whether it serves, and what NVML
    /// measures of it.
    fn register_devices(mut self) -> Self {
        let r = &mut self.registry;
        r.register(
            "gpu_lock_acquisitions",
            "Times each device's lock was taken",
            self.lock_acquisitions.clone(),
        );
        r.register(
            "gpu_lock_held_seconds",
            "Time each device's lock was held (rate = occupancy)",
            self.lock_held.clone(),
        );
        r.register(
            "gpu_lock_wait_seconds",
            "Time GPU workers waited for each device's lock",
            self.lock_wait.clone(),
        );
        r.register(
            "device_up",
            "1 while the device serves, 0 once a sticky CUDA error retired it",
            self.device_up.clone(),
        );
        r.register(
            "gpu_utilization_ratio",
            "NVML: share of its last sample period a kernel ran on the device \
             (absent without NVML)",
            self.gpu_utilization.clone(),
        );
        r.register(
            "gpu_memory_used_bytes",
            "NVML: device memory allocated, by any process",
            self.gpu_memory_used.clone(),
        );
        r.register(
            "gpu_memory_total_bytes",
            "NVML: device memory installed",
            self.gpu_memory_total.clone(),
        );
        self
    }

    /// A job of `kind` was accepted.
    pub fn accepted(&self, kind: &'static str) {
        self.accepted.get_or_create(&KindLabels { kind }).inc();
    }

    /// Unfinished jobs found in the journal at start.
    pub fn recovered(&self, jobs: usize) {
        self.recovered.inc_by(jobs as u64);
    }

    /// A submission's inputs are being checked, until the guard drops.
    pub fn checking(&self) -> CheckGuard<'_> {
        let now = self.checks_running.inc() + 1;
        self.checks_peak
            .inner()
            .fetch_max(now, std::sync::atomic::Ordering::Relaxed);
        CheckGuard { metrics: self }
    }

    /// An outcome's journal write failed and is tried again.
    pub fn journal_retry(&self) {
        self.journal_retries.inc();
    }

    /// Damaged journal entries set aside at start.
    pub fn quarantined(&self, entries: usize) {
        self.quarantined.inc_by(entries as u64);
    }

    /// Finished journal entries forgotten, for `reason`
    /// ([`COMPACTED_EXPIRED`] or [`COMPACTED_OVER_LIMIT`]).
    pub fn compacted(&self, reason: &'static str, entries: usize) {
        self.compacted
            .get_or_create(&ReasonLabels { reason })
            .inc_by(entries as u64);
    }

    /// An `AggregateSealProofs` call ended: `made` (verified) or not.
    pub fn aggregate(&self, made: bool) {
        let outcome = if made { "made" } else { "refused" };
        self.aggregates
            .get_or_create(&AggregateLabels { outcome })
            .inc();
    }

    /// A submission was refused with gRPC code `reason` (snake case).
    pub fn rejected(&self, reason: &'static str) {
        self.rejected.get_or_create(&ReasonLabels { reason }).inc();
    }

    /// A job of `kind` ended after `elapsed`; `proof` when it completed.
    pub fn finished(
        &self,
        kind: &'static str,
        outcome: Outcome,
        elapsed: Duration,
        proof: Option<&RequestProof>,
    ) {
        let outcome = outcome.label();
        self.finished
            .get_or_create(&OutcomeLabels { kind, outcome })
            .inc();
        let Some(proof) = proof else { return };
        let labels = KindLabels { kind };
        self.job_seconds
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
        self.partitions
            .get_or_create(&labels)
            .inc_by(proof.partitions.len() as u64);
        for record in &proof.partitions {
            let t = &record.prove;
            let synthesis = record
                .synth_ended_ns
                .saturating_sub(record.synth_started_ns);
            for (stage, ns) in [
                ("synthesis", synthesis),
                ("preamble", t.preamble_ns),
                ("lock_wait", t.lock_wait_ns),
                ("kernel", t.kernel_ns),
                ("epilogue", t.epilogue_ns),
            ] {
                self.stage_seconds
                    .get_or_create(&StageLabels { stage })
                    .observe(ns as f64 * 1e-9);
            }
        }
    }

    /// The OpenMetrics text, with the gauges set from `gauges`.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut seen = self.seen_locks.lock();
        self.set_gauges(gauges, &mut seen);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }

    fn set_gauges(&self, gauges: &Gauges, seen: &mut HashMap<u32, LockStats>) {
        for kind in KINDS {
            let (queued, running) = gauges
                .jobs
                .iter()
                .find(|c| c.0 == kind)
                .map_or((0, 0), |c| (c.1, c.2));
            self.queued
                .get_or_create(&KindLabels { kind })
                .set(queued as i64);
            self.running
                .get_or_create(&KindLabels { kind })
                .set(running as i64);
        }
        let (synthesis, prove) = gauges.engine_partitions;
        for (queue, n) in [("synthesis", synthesis), ("prove", prove)] {
            self.engine_partitions
                .get_or_create(&QueueLabels { queue })
                .set(n as i64);
        }
        for &(device, now) in &gauges.locks {
            let before = seen.insert(device, now).unwrap_or_default();
            let labels = DeviceLabels { device };
            let delta = |now: u64, before: u64| now.saturating_sub(before);
            self.lock_acquisitions
                .get_or_create(&labels)
                .inc_by(delta(now.acquisitions, before.acquisitions));
            self.lock_held
                .get_or_create(&labels)
                .inc_by(delta(now.hold_ns, before.hold_ns) as f64 * 1e-9);
            self.lock_wait
                .get_or_create(&labels)
                .inc_by(delta(now.wait_ns, before.wait_ns) as f64 * 1e-9);
        }
        for status in &gauges.devices {
            let labels = DeviceLabels {
                device: status.device,
            };
            let up = i64::from(status.retired.is_none());
            self.device_up.get_or_create(&labels).set(up);
        }
        self.set_gpus(&gauges.gpus);
        self.srs_bytes.clear();
        self.srs_jobs.clear();
        for key in &gauges.keys {
            let labels = CircuitLabels {
                circuit: key.circuit.clone(),
            };
            self.srs_bytes
                .get_or_create(&labels)
                .set(key.size_bytes as i64);
            self.srs_jobs.get_or_create(&labels).set(key.leases as i64);
        }
        self.host_pool_bytes.set(gauges.host_pool.0 as i64);
        self.host_pool_limit.set(gauges.host_pool.1 as i64);
        self.uptime.set(gauges.uptime.as_secs_f64());
        // 0 where /proc does not say.
        let bytes = |figure: Option<u64>| figure.map_or(0, |b| b as i64);
        let host = &gauges.host_memory;
        self.resident.set(bytes(host.resident_bytes));
        self.peak_resident.set(bytes(host.peak_resident_bytes));
        self.host_available.set(bytes(host.available_bytes));
    }

    /// NVML's figures: a series only for what it measured, so that an
    /// unmeasured device reads as absent rather than idle.
    fn set_gpus(&self, gpus: &[(u32, Reading)]) {
        self.gpu_utilization.clear();
        self.gpu_memory_used.clear();
        self.gpu_memory_total.clear();
        for &(device, reading) in gpus {
            let labels = DeviceLabels { device };
            if let Some(percent) = reading.utilization_percent {
                self.gpu_utilization
                    .get_or_create(&labels)
                    .set(f64::from(percent) / 100.0);
            }
            if let Some(memory) = reading.memory {
                self.gpu_memory_used
                    .get_or_create(&labels)
                    .set(memory.used_bytes as i64);
                self.gpu_memory_total
                    .get_or_create(&labels)
                    .set(memory.total_bytes as i64);
            }
        }
    }
}
