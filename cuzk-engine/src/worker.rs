//! The two worker roles and the tasks they pass along.
//!
//! A partition worker pops a [`SynthTask`] (job, partition index),
//! synthesizes it and pushes a [`ProveTask`] into the bounded queue; a GPU
//! worker pops that and proves it under its device's lock. Each step runs
//! inside `catch_unwind`, so a panic fails the step's job and the worker
//! moves on to the next task. A failed prove goes to
//! [`devices::prove_failed`], which may retire the device and send the
//! partition back to the queue.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cuzk_pipeline::{gpu_prove, synthesize_source, synthesize_with, Partition, PipelineError};
use supraseal_c2::{monotonic_ns, GpuLock};

use crate::devices::{self, fail_if_none_left};
use crate::engine::Shared;
use crate::host::Ticket;
use crate::job::Job;
use crate::metrics::{GpuWorkerId, ProveSpan, SynthSpan};
use crate::queue::{Rank, Ranked};
use crate::{EngineError, Fault, PartitionRecord, RequestCircuits};

/// A partition still to be synthesized.
pub(crate) struct SynthTask {
    pub(crate) job: Arc<Job>,
    pub(crate) index: usize,
}

impl Ranked for SynthTask {
    fn rank(&self) -> Rank {
        self.job.rank(self.index)
    }
}

/// A synthesized partition waiting for a GPU worker.
pub(crate) struct ProveTask {
    pub(crate) job: Arc<Job>,
    pub(crate) index: usize,
    pub(crate) partition: Arc<Partition>,
    /// The partition worker that synthesized it (`None`: submitted so).
    pub(crate) synthesized_by: Option<usize>,
    /// Times it went back to the queue after a transient device error.
    pub(crate) retries: u32,
    /// Its place in the host-memory budget, given back when the task is
    /// dropped (proven, cancelled or failed; `None`: submitted
    /// synthesized, already in memory).
    #[expect(dead_code, reason = "held for its drop, which gives the bytes back")]
    pub(crate) memory: Option<Ticket>,
}

impl Ranked for ProveTask {
    fn rank(&self) -> Rank {
        self.job.rank(self.index)
    }
}

/// Raises the calling thread's nice value to `nice` (never lowers it: that
/// would need privileges). Best effort: a thread left at its priority only
/// competes harder with the GPU workers' host work.
pub(crate) fn lower_priority(nice: i32) {
    match supraseal_c2::current_thread_nice() {
        Ok(current) if current < nice => {
            let _ = supraseal_c2::set_current_thread_nice(nice);
        }
        _ => {}
    }
}

/// A partition worker's loop: runs until the synthesis queue closes. The
/// urgent lane's (`urgent_from`) takes only partitions of at least that
/// priority and keeps its thread's scheduling priority.
pub(crate) fn run_partition_worker(shared: &Shared, worker: usize, urgent_from: Option<i32>) {
    if urgent_from.is_none() {
        lower_priority(shared.config.synthesis_nice);
    }
    while let Some((task, taken_ns)) = shared.synth_queue.pop_at_least(urgent_from) {
        if !task.job.is_running() || fail_if_none_left(shared, &task.job) {
            continue;
        }
        let need = task.job.request.key.partition_bytes();
        if let Some(ticket) = shared.memory.admit(need, || task.job.is_running()) {
            let admitted_ns = monotonic_ns().max(taken_ns);
            // The lane's work on the global rayon pool, at normal priority,
            // not behind the synthesis pool's long jobs.
            let pool = urgent_from.is_none().then_some(&shared.synth_pool);
            synthesize(shared, worker, task, (taken_ns, admitted_ns), ticket, pool);
        }
    }
}

/// Synthesizes `task`, taken from the queue at `taken_ns`: its span starts
/// there, so that spans follow the order partitions were taken in.
fn synthesize(
    shared: &Shared,
    worker: usize,
    task: SynthTask,
    (taken_ns, admitted_ns): (u64, u64),
    mut memory: Ticket,
    pool: Option<&rayon::ThreadPool>,
) {
    let seed = task.job.request.seed(task.index);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if shared.config.fault == Some(Fault::PanicInSynthesis { seed }) {
            panic!("injected panic while synthesizing seed {seed}");
        }
        // The witness on this thread, the matrix products on the pool: a
        // pool thread never runs a long sequential witness, so it never
        // makes another partition's products wait behind one.
        let mode = shared.config.synthesis;
        match &task.job.request.circuits {
            RequestCircuits::Workload { workload, .. } => {
                synthesize_with(mode, &shared.shapes, *workload, seed, pool)
            }
            RequestCircuits::Source(source) => {
                synthesize_source(mode, &shared.shapes, &**source, task.index, pool)
            }
        }
    }));
    let partition = match settle(task.index, outcome) {
        Ok(partition) => partition,
        Err(error) => return shared.fail_job(&task.job, error),
    };
    let [a, ..] = partition.assignment.evaluations();
    memory.synthesized(a.heap_bytes());
    shared.recorder.record_synthesis(SynthSpan {
        worker,
        job: task.job.id,
        partition: task.index,
        started_ns: taken_ns,
        admitted_ns,
        ended_ns: partition.synth_ended_ns,
        compiled: partition.compiled,
    });
    if !task.job.is_running() {
        // Cancelled or failed meanwhile: let the partition go now.
        return;
    }
    let next = ProveTask {
        job: task.job,
        index: task.index,
        partition: Arc::new(partition),
        synthesized_by: Some(worker),
        retries: 0,
        memory: Some(memory),
    };
    // Blocks while the GPU side is `queue_depth` partitions behind.
    if let Err(refused) = shared.gpu_queue.push_bounded(next) {
        refused.job.fail(EngineError::Shutdown);
    }
}

/// A GPU worker's loop: runs until the synthesized-partition queue closes,
/// or until its device is retired while another still serves. The workers
/// of the last device retired stay, to fail what still arrives.
pub(crate) fn run_gpu_worker(shared: &Shared, id: GpuWorkerId) {
    let lock = &shared.locks[id.slot];
    while let Some((task, _)) = shared.gpu_queue.pop_at_least(id.urgent_from) {
        if !task.job.is_running() || fail_if_none_left(shared, &task.job) {
            continue;
        }
        if shared.devices.is_retired(id.slot) {
            return devices::requeue(shared, task);
        }
        prove(shared, id, lock, task);
    }
}

fn prove(shared: &Shared, id: GpuWorkerId, lock: &GpuLock, task: ProveTask) {
    let seed = task.partition.seed;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if shared.config.fault == Some(Fault::PanicUnderLock { seed }) {
            let _held = lock.lock();
            panic!("injected panic under the lock of device {}", id.device);
        }
        gpu_prove(&task.partition, task.job.request.key.srs(), lock)
    }));
    let mut proven = match settle(task.index, outcome) {
        Ok(proven) => proven,
        Err(error) => return devices::prove_failed(shared, id, task, error),
    };
    if shared.config.fault == Some(Fault::CorruptProof { seed }) {
        proven.proof.c = -proven.proof.c;
    }
    shared.recorder.record_prove(ProveSpan {
        device: id.device,
        worker: id.index,
        job: task.job.id,
        partition: task.index,
        timings: proven.timings,
    });
    let record = PartitionRecord {
        index: task.index,
        seed,
        partition_worker: task.synthesized_by,
        synth_started_ns: task.partition.synth_started_ns,
        synth_ended_ns: task.partition.synth_ended_ns,
        gpu_worker: id.index,
        device: id.device,
        prove: proven.timings,
    };
    task.job.complete_partition(proven.proof, record);
}

/// Turns a step's outcome (value, pipeline error, or panic) into the
/// engine's terms.
fn settle<T>(
    partition: usize,
    outcome: std::thread::Result<Result<T, PipelineError>>,
) -> Result<T, EngineError> {
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(source)) => Err(EngineError::Partition { partition, source }),
        Err(payload) => Err(EngineError::Panicked {
            partition,
            message: panic_message(&*payload),
        }),
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}
