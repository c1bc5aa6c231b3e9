//! Device faults: which devices still serve, and what happens to a
//! partition whose prove failed on one.
//!
//! A sticky CUDA error ([`supraseal_c2::CudaErrorKind::Sticky`]) retires
//! its device: its GPU workers take no more partitions, and the partition
//! goes back to the queue for the devices left (without counting as a
//! retry). When no device is left, that partition's job fails with the
//! error, and every later partition's job fails with
//! [`EngineError::NoDevice`]; the engine keeps answering. A transient error
//! or an out-of-memory one sends the partition back up to
//! [`crate::EngineConfig::partition_retries`] times; anything else (a
//! panic, a shape error) fails the job at once.

use bellperson_lite::ProverError;
use cuzk_pipeline::PipelineError;
use parking_lot::Mutex;
use supraseal_c2::{monotonic_ns, Backend, CudaErrorKind};

use crate::engine::Shared;
use crate::job::Job;
use crate::metrics::GpuWorkerId;
use crate::worker::ProveTask;
use crate::EngineError;

/// Why and when a device was retired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retirement {
    /// The sticky error.
    pub error: supraseal_c2::Error,
    /// When it was retired ([`monotonic_ns`]).
    pub at_ns: u64,
}

/// One device as [`crate::Engine::devices`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceStatus {
    /// The device ordinal.
    pub device: u32,
    /// Where its kernel region runs.
    pub backend: Backend,
    /// `None` while it serves; why it stopped once retired.
    pub retired: Option<Retirement>,
}

/// Each device's retirement, if any, in `config.devices` order.
pub(crate) struct Devices {
    retired: Mutex<Vec<Option<Retirement>>>,
}

impl Devices {
    pub(crate) fn new(count: usize) -> Self {
        Self {
            retired: Mutex::new(vec![None; count]),
        }
    }

    /// Retires the device in `slot` for `error`; false if it already was.
    fn retire(&self, slot: usize, error: &supraseal_c2::Error) -> bool {
        let mut retired = self.retired.lock();
        if retired[slot].is_some() {
            return false;
        }
        retired[slot] = Some(Retirement {
            error: error.clone(),
            at_ns: monotonic_ns(),
        });
        true
    }

    pub(crate) fn is_retired(&self, slot: usize) -> bool {
        self.retired.lock()[slot].is_some()
    }

    /// How many devices still serve.
    pub(crate) fn serving(&self) -> usize {
        self.retired.lock().iter().filter(|r| r.is_none()).count()
    }

    /// Each slot's retirement.
    pub(crate) fn retirements(&self) -> Vec<Option<Retirement>> {
        self.retired.lock().clone()
    }

    /// The error for a job that finds no device left: the most recent
    /// retirement's. `None` while a device serves.
    pub(crate) fn none_left(&self, devices: &[u32]) -> Option<EngineError> {
        let retired = self.retired.lock();
        if retired.iter().any(Option::is_none) {
            return None;
        }
        let (slot, last) = retired
            .iter()
            .enumerate()
            .filter_map(|(slot, r)| r.as_ref().map(|r| (slot, r)))
            .max_by_key(|(_, r)| r.at_ns)?;
        Some(EngineError::NoDevice {
            device: devices[slot],
            source: last.error.clone(),
        })
    }
}

/// The native error under a partition's failure, if it came from the prover.
fn native_error(error: &EngineError) -> Option<&supraseal_c2::Error> {
    match error {
        EngineError::Partition {
            source: PipelineError::Prover(ProverError::Native(native)),
            ..
        } => Some(native),
        _ => None,
    }
}

/// Decides what becomes of `task`, whose prove on `id`'s device failed
/// with `error` (see the module docs).
pub(crate) fn prove_failed(
    shared: &Shared,
    id: GpuWorkerId,
    mut task: ProveTask,
    error: EngineError,
) {
    let kind = native_error(&error).and_then(supraseal_c2::Error::cuda_kind);
    match kind {
        Some(CudaErrorKind::Sticky) => {
            let native = native_error(&error).expect("a CUDA kind has a native error");
            if shared.devices.retire(id.slot, native) {
                log::error!(
                    "device {} retired after a sticky CUDA error; {} device(s) left: {native}",
                    id.device,
                    shared.devices.serving()
                );
            }
            if shared.devices.serving() > 0 {
                return requeue(shared, task);
            }
        }
        Some(CudaErrorKind::Transient | CudaErrorKind::OutOfMemory)
            if task.retries < shared.config.partition_retries =>
        {
            task.retries += 1;
            log::warn!(
                "device {}: partition {} of job {} failed, trying again ({} of {}): {}",
                id.device,
                task.index,
                task.job.id,
                task.retries,
                shared.config.partition_retries,
                native_error(&error).expect("a CUDA kind has a native error"),
            );
            return requeue(shared, task);
        }
        _ => {}
    }
    shared.fail_job(&task.job, error);
}

/// Puts `task` back in the queue of synthesized partitions, for any GPU
/// worker of a device that still serves.
pub(crate) fn requeue(shared: &Shared, task: ProveTask) {
    if let Err(refused) = shared.gpu_queue.push(task) {
        refused.job.fail(EngineError::Shutdown);
    }
}

/// Fails `job` if no device is left to prove it on; true if it did.
pub(crate) fn fail_if_none_left(shared: &Shared, job: &Job) -> bool {
    match shared.devices.none_left(&shared.config.devices) {
        Some(error) => {
            shared.fail_job(job, error);
            true
        }
        None => false,
    }
}
