//! The public handle and the state its threads share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use bellperson_lite::CompiledShape;
use cuzk_pipeline::{Partition, ShapeCache, SourceError};
use supraseal_c2::{Backend, FaultPlan, GpuLock, LockStats};

use crate::devices::{fail_if_none_left, DeviceStatus, Devices};
use crate::host::MemoryGate;
use crate::job::{Job, JobHandle};
use crate::metrics::{GpuWorkerId, MetricsSnapshot, Recorder};
use crate::queue::WorkQueue;
use crate::worker::{self, ProveTask, SynthTask};
use crate::{ConfigError, EngineConfig, EngineError, ProofRequest, SynthesisMode, Workload};

/// What the engine's threads share: the queues, the locks, the log.
pub(crate) struct Shared {
    pub(crate) config: EngineConfig,
    /// Partitions to synthesize. Unbounded: a task is two words.
    pub(crate) synth_queue: WorkQueue<SynthTask>,
    /// Synthesized partitions waiting for a GPU worker, bounded by
    /// `queue_depth` for what partition workers push.
    pub(crate) gpu_queue: WorkQueue<ProveTask>,
    /// One lock per device, in `config.devices` order.
    pub(crate) locks: Vec<Arc<GpuLock>>,
    /// Which of them still serve.
    pub(crate) devices: Devices,
    pub(crate) gpu_workers: Vec<GpuWorkerId>,
    pub(crate) recorder: Recorder,
    /// Compiled shapes, one per workload, compiled on first use (and
    /// possibly shared with other engines).
    pub(crate) shapes: Arc<ShapeCache>,
    /// The threads the matrix products of synthesis run on, at the
    /// configured nice value (the partition workers compute the witnesses
    /// themselves, at the same value).
    pub(crate) synth_pool: rayon::ThreadPool,
    /// Admits partitions' synthesis within the host-memory budget.
    pub(crate) memory: Arc<MemoryGate>,
    next_job: AtomicU64,
}

impl Shared {
    /// Drops every queued task of job `job`, freeing the partitions they
    /// hold. The tasks are dropped here, after the queues' mutexes are
    /// released.
    pub(crate) fn purge(&self, job: u64) {
        drop(self.synth_queue.remove_unless(|task| task.job.id != job));
        drop(self.gpu_queue.remove_unless(|task| task.job.id != job));
    }

    /// Fails `job` with `error` (unless it already has an outcome) and
    /// drops its queued tasks.
    pub(crate) fn fail_job(&self, job: &Job, error: EngineError) {
        if job.fail(error) {
            self.purge(job.id);
        }
    }
}

/// The proving engine: a pool of partition workers feeding a bounded queue
/// of synthesized partitions, drained by GPU workers that share one lock
/// per device.
///
/// Dropping it shuts it down (see the crate docs for the protocol): queued
/// jobs fail with [`EngineError::Shutdown`], the steps being run finish,
/// and every thread is joined before `drop` returns.
pub struct Engine {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Engine {
    /// Starts the workers of `config`.
    pub fn new(config: EngineConfig) -> Result<Self, EngineError> {
        Self::with_shapes(config, Arc::default())
    }

    /// Starts the workers of `config`, taking compiled shapes from `shapes`
    /// (which the caller may fill ahead, `shapes.get(workload)`, so that no
    /// request waits for a compilation, or share between engines).
    pub fn with_shapes(config: EngineConfig, shapes: Arc<ShapeCache>) -> Result<Self, EngineError> {
        config.validate()?;
        let gpu_workers = gpu_worker_ids(&config);
        let locks = config
            .devices
            .iter()
            .map(|&device| {
                GpuLock::with_backend(device, config.backend)
                    .and_then(|lock| {
                        lock.set_device_memory_limit(config.device_memory_limit)?;
                        Ok(lock)
                    })
                    .map_err(|source| EngineError::Device { device, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let faults = config
            .inject_faults
            .clone()
            .merged(FaultPlan::from_env().map_err(ConfigError::FaultPlan)?);
        if !faults.is_empty() {
            for lock in &locks {
                lock.set_fault_plan(&faults);
            }
        }
        let nice = config.synthesis_nice;
        let synth_pool = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("cuzk-synth-pool-{i}"))
            .start_handler(move |_| worker::lower_priority(nice))
            .build()
            .map_err(|e| EngineError::Spawn {
                name: "cuzk-synth-pool".to_owned(),
                source: std::io::Error::other(e),
            })?;
        let shared = Arc::new(Shared {
            synth_queue: WorkQueue::new(usize::MAX),
            gpu_queue: WorkQueue::new(config.effective_queue_depth())
                .unbounded_from(config.urgent_priority),
            devices: Devices::new(locks.len()),
            locks,
            gpu_workers,
            recorder: Recorder::keeping(config.records_kept),
            shapes,
            synth_pool,
            memory: Arc::new(MemoryGate::new(config.host_memory_limit)),
            next_job: AtomicU64::new(0),
            config,
        });
        // If a spawn fails, dropping the half-built engine joins the rest.
        let mut engine = Self {
            shared,
            threads: Vec::new(),
        };
        for worker in 0..engine.shared.config.partition_workers {
            engine.spawn(format!("cuzk-synth-{worker}"), move |shared| {
                worker::run_partition_worker(shared, worker, None)
            })?;
        }
        if let Some(urgent) = engine.shared.config.urgent_priority {
            let worker = engine.shared.config.partition_workers;
            engine.spawn("cuzk-synth-urgent".to_owned(), move |shared| {
                worker::run_partition_worker(shared, worker, Some(urgent))
            })?;
        }
        for id in engine.shared.gpu_workers.clone() {
            let name = match id.urgent_from {
                None => format!("cuzk-gpu{}-{}", id.device, id.index),
                Some(_) => format!("cuzk-gpu{}-urgent", id.device),
            };
            engine.spawn(name, move |shared| worker::run_gpu_worker(shared, id))?;
        }
        Ok(engine)
    }

    fn spawn(
        &mut self,
        name: String,
        body: impl FnOnce(&Shared) + Send + 'static,
    ) -> Result<(), EngineError> {
        let shared = Arc::clone(&self.shared);
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || body(&shared))
            .map_err(|source| EngineError::Spawn { name, source })?;
        self.threads.push(thread);
        Ok(())
    }

    /// Gets ready for requests of `workload` so that the first ones do not
    /// wait: compiles its shape (in the compiled synthesis modes) and has
    /// the host pool page-lock the evaluation memory of every partition the
    /// engine can hold at once (one per partition worker, queue slot and GPU
    /// worker), raising the pool's default limit to hold them all (not one
    /// set by `CUZK_HOST_POOL_BYTES`; a warning says when it is too low).
    /// Optional: both otherwise happen on first use, where the page-locking
    /// holds the CUDA driver and stalls the GPU workers.
    /// Returns for how many partitions memory is kept (0 in full mode,
    /// whose evaluations are ordinary vectors).
    pub fn prepare(&self, workload: Workload) -> Result<usize, EngineError> {
        let config = &self.shared.config;
        if config.synthesis == SynthesisMode::Full {
            return Ok(0);
        }
        let shape = self
            .shared
            .shapes
            .get(workload)
            .map_err(|source| EngineError::Prepare {
                workload: workload.to_string(),
                source,
            })?;
        // Every worker (the urgent lane's too: one partition worker, one
        // GPU worker per device) and every queue slot.
        let lane = config
            .urgent_priority
            .map_or(0, |_| 1 + config.devices.len());
        let in_flight =
            config.partition_workers + config.effective_queue_depth() + config.gpu_workers() + lane;
        // Room for all of them: a partition dropped into a full pool is
        // freed, and its successor's memory page-locked anew, holding the
        // CUDA driver meanwhile (at 2^27, seconds that stalled the other
        // worker's kernel region).
        let limit = supraseal_c2::raise_host_pool_limit(
            shape.evaluation_bytes().saturating_mul(in_flight as u64),
        );
        let kept = shape.reserve_evaluations(in_flight);
        if kept < in_flight {
            log::warn!(
                "the host pool ({limit} bytes at most) keeps page-locked memory for {kept} of the \
                 {in_flight} partitions the engine can hold; the others are page-locked when \
                 they are synthesized, which stalls the GPU workers (CUZK_HOST_POOL_BYTES sets \
                 the limit)"
            );
        }
        Ok(kept)
    }

    /// Compiles the shape of a circuit that is not a workload (a Filecoin
    /// kind) under `key`, the [`CircuitSource::circuit_key`] its requests
    /// give, so that the first of them does not wait for it (a 32 GiB
    /// PoRep's takes a minute and more); once, however often it is asked.
    /// A no-op in full synthesis, which has no shape. Unlike
    /// [`Engine::prepare`] it page-locks nothing ahead: a production
    /// circuit's evaluations for every partition the engine can hold would
    /// not fit the host.
    ///
    /// [`CircuitSource::circuit_key`]: cuzk_pipeline::CircuitSource::circuit_key
    pub fn compile_circuit(
        &self,
        key: &str,
        compile: impl FnOnce() -> Result<CompiledShape, SourceError>,
    ) -> Result<(), EngineError> {
        if self.shared.config.synthesis == SynthesisMode::Full {
            return Ok(());
        }
        self.shared
            .shapes
            .get_or_compile(key, compile)
            .map(drop)
            .map_err(|source| EngineError::Prepare {
                workload: key.to_owned(),
                source,
            })
    }

    /// The configuration the engine was built from.
    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    /// Queues every partition of `request` for synthesis and returns at
    /// once. A request with no partitions fails with
    /// [`EngineError::EmptyRequest`], one submitted when every device is
    /// retired with [`EngineError::NoDevice`].
    pub fn submit(&self, request: ProofRequest) -> JobHandle {
        let (job, handle) = self.new_job(request);
        if job.request.partitions == 0 {
            job.fail(EngineError::EmptyRequest);
        }
        if fail_if_none_left(&self.shared, &job) {
            return handle;
        }
        warn_if_over_budget(&self.shared, &job);
        for index in 0..job.request.partitions {
            let task = SynthTask {
                job: Arc::clone(&job),
                index,
            };
            if self.shared.synth_queue.push(task).is_err() {
                job.fail(EngineError::Shutdown);
            }
        }
        handle
    }

    /// Queues already synthesized partitions of `request` straight for the
    /// GPU workers (for measuring the GPU side alone: the same partitions
    /// may be submitted again and again). `partitions[j]` must be partition
    /// `j` of `request`; otherwise the job fails with
    /// [`EngineError::SynthesizedCount`] or
    /// [`EngineError::SynthesizedMismatch`]. These partitions do not count
    /// against `queue_depth`: they are in memory already.
    pub fn submit_synthesized(
        &self,
        request: ProofRequest,
        partitions: Vec<Arc<Partition>>,
    ) -> JobHandle {
        let (job, handle) = self.new_job(request);
        if let Err(error) = check_synthesized(&job.request, &partitions) {
            job.fail(error);
            return handle;
        }
        if fail_if_none_left(&self.shared, &job) {
            return handle;
        }
        for (index, partition) in partitions.into_iter().enumerate() {
            let task = ProveTask {
                job: Arc::clone(&job),
                index,
                partition,
                synthesized_by: None,
                retries: 0,
                memory: None,
            };
            if self.shared.gpu_queue.push(task).is_err() {
                job.fail(EngineError::Shutdown);
            }
        }
        handle
    }

    fn new_job(&self, request: ProofRequest) -> (Arc<Job>, JobHandle) {
        let id = self.shared.next_job.fetch_add(1, Ordering::Relaxed);
        let job = Arc::new(Job::new(id, request, self.shared.config.verify));
        let handle = JobHandle::new(Arc::clone(&job), Arc::downgrade(&self.shared));
        (job, handle)
    }

    /// The figures so far, with every lock hold and synthesis span.
    pub fn metrics(&self) -> MetricsSnapshot {
        let shared = &self.shared;
        shared
            .recorder
            .snapshot(&shared.config.devices, &shared.gpu_workers)
    }

    /// The host-memory budget and how often partitions waited for it.
    pub fn host_memory(&self) -> crate::host::Budget {
        self.shared.memory.budget()
    }

    /// Partitions proven so far (cheaper than [`Engine::metrics`]).
    pub fn partitions_proven(&self) -> usize {
        self.shared.recorder.partitions_proven()
    }

    /// Partitions waiting: `(to synthesize, synthesized)`.
    pub fn queued_partitions(&self) -> (usize, usize) {
        (self.shared.synth_queue.len(), self.shared.gpu_queue.len())
    }

    /// Each device with the backend its kernel region runs on.
    pub fn backends(&self) -> Vec<(u32, Backend)> {
        let shared = &self.shared;
        let backends = shared.locks.iter().map(|lock| lock.backend());
        shared
            .config
            .devices
            .iter()
            .copied()
            .zip(backends)
            .collect()
    }

    /// Each device: its backend, and whether it still serves or was retired
    /// after a sticky CUDA error (and why).
    pub fn devices(&self) -> Vec<DeviceStatus> {
        let shared = &self.shared;
        let retired = shared.devices.retirements();
        (shared.config.devices.iter().zip(&shared.locks).zip(retired))
            .map(|((&device, lock), retired)| DeviceStatus {
                device,
                backend: lock.backend(),
                retired,
            })
            .collect()
    }

    /// Each device with its lock's own counters.
    pub fn lock_stats(&self) -> Vec<(u32, LockStats)> {
        let shared = &self.shared;
        shared
            .config
            .devices
            .iter()
            .copied()
            .zip(shared.locks.iter().map(|lock| lock.stats()))
            .collect()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let unsynthesized = self.shared.synth_queue.close();
        let unproven = self.shared.gpu_queue.close();
        for job in unsynthesized
            .iter()
            .map(|t| &t.job)
            .chain(unproven.iter().map(|t| &t.job))
        {
            job.fail(EngineError::Shutdown);
        }
        drop((unsynthesized, unproven));
        for thread in self.threads.drain(..) {
            // Workers catch the panics of their steps; a thread can only end
            // in a panic if unwinding itself failed, and then there is
            // nothing left to fail.
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.shared.config)
            .field("threads", &self.threads.len())
            .finish_non_exhaustive()
    }
}

/// The GPU workers: `gpu_workers_per_device` on each device, then the
/// urgent lane's one per device (when there is a lane), numbered after
/// them.
fn gpu_worker_ids(config: &EngineConfig) -> Vec<GpuWorkerId> {
    let per_device = config.gpu_workers_per_device;
    let mut ids: Vec<GpuWorkerId> = config
        .devices
        .iter()
        .enumerate()
        .flat_map(|(slot, &device)| {
            (0..per_device).map(move |k| GpuWorkerId {
                index: slot * per_device + k,
                device,
                slot,
                urgent_from: None,
            })
        })
        .collect();
    if let Some(urgent) = config.urgent_priority {
        let first = ids.len();
        ids.extend(
            config
                .devices
                .iter()
                .enumerate()
                .map(|(slot, &device)| GpuWorkerId {
                    index: first + slot,
                    device,
                    slot,
                    urgent_from: Some(urgent),
                }),
        );
    }
    ids
}

fn check_synthesized(
    request: &ProofRequest,
    partitions: &[Arc<Partition>],
) -> Result<(), EngineError> {
    if request.partitions == 0 {
        return Err(EngineError::EmptyRequest);
    }
    if partitions.len() != request.partitions {
        return Err(EngineError::SynthesizedCount {
            expected: request.partitions,
            got: partitions.len(),
        });
    }
    let stranger = partitions
        .iter()
        .enumerate()
        .position(|(j, p)| p.workload != request.workload() || p.seed != request.seed(j));
    match stranger {
        Some(partition) => Err(EngineError::SynthesizedMismatch { partition }),
        None => Ok(()),
    }
}

/// Says so, before its long work starts, when one of `job`'s partitions
/// does not fit the host-memory budget even alone: its partitions then go
/// one at a time and may pass the budget.
fn warn_if_over_budget(shared: &Shared, job: &Job) {
    let need = job.request.key.partition_bytes();
    if let Some((limit, resident)) = shared.memory.too_small_for(need) {
        log::warn!(
            "job {}: one partition may hold {} beside the {} this process holds, over the \
             host-memory budget of {}: its partitions go one at a time and may pass the \
             budget (--host-memory-limit, or host_memory_limit in [engine], sets it)",
            job.id,
            bytesize::ByteSize(need),
            bytesize::ByteSize(resident),
            bytesize::ByteSize(limit),
        );
    }
}
