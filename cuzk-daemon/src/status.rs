//! What the daemon says of its state: `GetStatus` over gRPC, and `/status`
//! as JSON over HTTP, for a scheduler deciding whether to send this box more
//! work. Both are built from one [`Gauges`] snapshot (the one `/metrics`
//! renders) and the outcome totals, so that each figure is read in one
//! place and the three views agree.

use cuzk_engine::DeviceStatus;
use serde::Serialize;
use supraseal_c2::LockStats;

use crate::daemon::{Daemon, Lifecycle};
use crate::gpu::Reading;
use crate::metrics::Gauges;
use crate::pb;

/// `/status`: the daemon at one moment.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct StatusReport {
    /// cuzk-daemon's version.
    pub version: &'static str,
    /// Whether submissions are taken (false once shutdown has begun).
    pub accepting_jobs: bool,
    pub uptime_seconds: f64,
    pub jobs: JobsReport,
    /// Partitions waiting in the engine's queues.
    pub engine_partitions: PartitionsReport,
    pub host_memory: HostMemoryReport,
    pub devices: Vec<DeviceReport>,
    /// The proving keys loaded (in host memory).
    pub keys: Vec<KeyReport>,
}

/// The daemon's jobs: its table (queued, running) and its outcomes.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct JobsReport {
    /// Waiting in the daemon's queue.
    pub queued: usize,
    /// Handed to the engine.
    pub running: usize,
    /// `max_jobs`: a submission beyond queued + running is refused.
    pub max_jobs: usize,
    /// `engine_jobs`: jobs the engine is given at once.
    pub engine_jobs: usize,
    /// Outcomes recorded since start.
    pub finished: FinishedReport,
    /// Queued and running by kind, for the kinds with jobs.
    pub by_kind: Vec<KindReport>,
}

/// Outcomes recorded since start.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct FinishedReport {
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// One kind's jobs.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct KindReport {
    pub kind: &'static str,
    pub queued: usize,
    pub running: usize,
}

/// Partitions waiting in the engine.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct PartitionsReport {
    /// Not yet taken by a partition worker.
    pub to_synthesize: usize,
    /// Synthesized, waiting for a GPU worker.
    pub to_prove: usize,
}

/// Host memory: the process's and the machine's (`null` where Linux does
/// not say), the engine's budget, the pinned pool.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct HostMemoryReport {
    /// The daemon's resident memory (VmRSS).
    pub process_resident_bytes: Option<u64>,
    /// Its peak since start (VmHWM).
    pub process_peak_resident_bytes: Option<u64>,
    /// What the machine can still give without swapping (MemAvailable).
    pub available_bytes: Option<u64>,
    /// The engine's budget for its partitions (`null`: none).
    pub budget_bytes: Option<u64>,
    /// Partitions whose synthesis waited for the budget, and how long in
    /// all.
    pub budget_waits: u64,
    pub budget_waited_seconds: f64,
    /// Page-locked memory kept for reuse, and its limit.
    pub pinned_pool_bytes: u64,
    pub pinned_pool_limit_bytes: u64,
}

/// One device.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct DeviceReport {
    pub device: u32,
    /// `cpu` or `cuda`: where its kernel region runs.
    pub backend: Option<String>,
    /// False once a sticky CUDA error retired it.
    pub up: bool,
    pub retired_error: Option<String>,
    pub lock_acquisitions: u64,
    pub lock_held_seconds: f64,
    pub lock_wait_seconds: f64,
    /// NVML's figures: `null` without NVML or on the CPU backend.
    pub utilization_percent: Option<u32>,
    pub memory_free_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
}

/// One loaded proving key.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct KeyReport {
    pub circuit: String,
    pub size_bytes: u64,
    /// Jobs holding it (it cannot be evicted while any does).
    pub jobs: usize,
}

/// One device as a snapshot has it: state, lock counters, NVML's reading.
struct DeviceView<'g> {
    device: u32,
    status: Option<&'g DeviceStatus>,
    lock: LockStats,
    reading: Reading,
}

/// Every device of `gauges`, its figures gathered.
fn device_views(gauges: &Gauges) -> impl Iterator<Item = DeviceView<'_>> {
    gauges.locks.iter().map(|&(device, lock)| DeviceView {
        device,
        status: gauges.devices.iter().find(|d| d.device == device),
        lock,
        reading: gauges
            .gpus
            .iter()
            .find(|g| g.0 == device)
            .map_or_else(Reading::default, |g| g.1),
    })
}

impl DeviceView<'_> {
    fn retired_error(&self) -> Option<String> {
        let retired = self.status?.retired.as_ref()?;
        Some(retired.error.to_string())
    }

    fn report(&self) -> DeviceReport {
        let memory = self.reading.memory;
        let seconds = |ns: u64| ns as f64 * 1e-9;
        let retired_error = self.retired_error();
        DeviceReport {
            device: self.device,
            backend: self.status.map(|d| d.backend.to_string()),
            up: retired_error.is_none(),
            retired_error,
            lock_acquisitions: self.lock.acquisitions,
            lock_held_seconds: seconds(self.lock.hold_ns),
            lock_wait_seconds: seconds(self.lock.wait_ns),
            utilization_percent: self.reading.utilization_percent,
            memory_free_bytes: memory.map(|m| m.free_bytes),
            memory_total_bytes: memory.map(|m| m.total_bytes),
        }
    }

    fn grpc(&self) -> pb::GpuStatus {
        let memory = self.reading.memory;
        let name = self.status.map_or_else(String::new, |d| {
            format!("{} device {}", d.backend, self.device)
        });
        let retired_error = self.retired_error();
        pb::GpuStatus {
            ordinal: self.device,
            name,
            lock_acquisitions: self.lock.acquisitions,
            lock_held_ns: self.lock.hold_ns,
            lock_wait_ns: self.lock.wait_ns,
            retired: retired_error.is_some(),
            retired_error: retired_error.unwrap_or_default(),
            vram_total_bytes: memory.map_or(0, |m| m.total_bytes),
            vram_free_bytes: memory.map_or(0, |m| m.free_bytes),
            utilization_percent: self.reading.utilization_percent,
            ..Default::default()
        }
    }
}

impl Daemon {
    /// `GetStatus`.
    pub(crate) fn status(&self) -> pb::GetStatusResponse {
        let gauges = self.gauges();
        let loaded_srs = gauges
            .keys
            .iter()
            .map(|k| pb::SrsStatus {
                circuit_id: k.circuit.clone(),
                tier: pb::srs_status::Tier::Hot as i32,
                size_bytes: k.size_bytes,
                ref_count: k.leases as u32,
            })
            .collect();
        let queues = gauges
            .jobs
            .iter()
            .map(|&(kind, queued, running)| pb::QueueStatus {
                proof_kind: kind.to_owned(),
                pending: queued as u32,
                in_progress: running as u32,
            })
            .collect();
        let (completed, failed, cancelled) = self.totals.read();
        pb::GetStatusResponse {
            gpus: device_views(&gauges).map(|d| d.grpc()).collect(),
            loaded_srs,
            queues,
            total_proofs_completed: completed,
            total_proofs_failed: failed,
            total_proofs_cancelled: cancelled,
            uptime_seconds: gauges.uptime.as_secs(),
            pinned_memory_bytes: gauges.host_pool.0,
            pinned_memory_limit_bytes: gauges.host_pool.1,
            partitions_to_synthesize: gauges.engine_partitions.0 as u32,
            partitions_to_prove: gauges.engine_partitions.1 as u32,
        }
    }

    /// `/status`.
    pub(crate) fn status_report(&self) -> StatusReport {
        let gauges = self.gauges();
        let (completed, failed, cancelled) = self.totals.read();
        let by_kind: Vec<KindReport> = gauges
            .jobs
            .iter()
            .map(|&(kind, queued, running)| KindReport {
                kind,
                queued,
                running,
            })
            .collect();
        let host = gauges.host_memory;
        StatusReport {
            version: env!("CARGO_PKG_VERSION"),
            accepting_jobs: self.lifecycle() == Lifecycle::Serving,
            uptime_seconds: gauges.uptime.as_secs_f64(),
            jobs: JobsReport {
                queued: by_kind.iter().map(|k| k.queued).sum(),
                running: by_kind.iter().map(|k| k.running).sum(),
                max_jobs: self.config.max_jobs,
                engine_jobs: self.engine_jobs,
                finished: FinishedReport {
                    completed,
                    failed,
                    cancelled,
                },
                by_kind,
            },
            engine_partitions: PartitionsReport {
                to_synthesize: gauges.engine_partitions.0,
                to_prove: gauges.engine_partitions.1,
            },
            host_memory: HostMemoryReport {
                process_resident_bytes: host.resident_bytes,
                process_peak_resident_bytes: host.peak_resident_bytes,
                available_bytes: host.available_bytes,
                budget_bytes: host.budget.limit,
                budget_waits: host.budget.waits,
                budget_waited_seconds: host.budget.waited.as_secs_f64(),
                pinned_pool_bytes: gauges.host_pool.0,
                pinned_pool_limit_bytes: gauges.host_pool.1,
            },
            devices: device_views(&gauges).map(|d| d.report()).collect(),
            keys: gauges
                .keys
                .iter()
                .map(|k| KeyReport {
                    circuit: k.circuit.clone(),
                    size_bytes: k.size_bytes,
                    jobs: k.leases,
                })
                .collect(),
        }
    }
}
