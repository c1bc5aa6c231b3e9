//! The daemon's state and its operations, one per RPC; `service.rs` only
//! translates between these and gRPC.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cuzk_engine::{DeviceStatus, Engine};
use parking_lot::Mutex;
use tokio::sync::watch;
use tonic::{Code, Status};

use crate::auth::Access;
use crate::error::status;
use crate::gpu;
use crate::jobs::{parse_job_id, Admission, Cancelled, Job, JobTable};
use crate::journal::Journal;
use crate::keys::{KeyRegistry, Preloaded};
use crate::kinds::{self, Circuit};
use crate::metrics::{Gauges, HostMemory, Metrics, Outcome, COMPACTED_OVER_LIMIT};
use crate::pb;
use crate::pb::await_proof_response::Status as JobStatus;
use crate::{DaemonConfig, DaemonError};

/// Where the daemon is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Lifecycle {
    /// Taking work.
    Serving,
    /// Refusing submissions, letting running jobs finish.
    Draining,
    /// Done: awaiters are told to come back after the restart.
    Stopped,
}

/// Outcomes recorded since start, for `GetStatus` and `/status`.
#[derive(Default)]
pub(crate) struct Totals {
    completed: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
}

impl Totals {
    /// `(completed, failed, cancelled)` so far.
    pub(crate) fn read(&self) -> (u64, u64, u64) {
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        (
            load(&self.completed),
            load(&self.failed),
            load(&self.cancelled),
        )
    }
}

/// Everything the RPCs, the dispatcher and the runners share.
pub(crate) struct Daemon {
    pub(crate) config: DaemonConfig,
    /// Who may call what (`tokens_file`).
    pub(crate) access: Access,
    /// Taken out (and dropped) at shutdown.
    engine: Mutex<Option<Arc<Engine>>>,
    pub(crate) keys: KeyRegistry,
    pub(crate) journal: Arc<Journal>,
    pub(crate) table: JobTable,
    pub(crate) metrics: Metrics,
    /// Jobs handed to the engine at once (`engine_jobs`, default applied).
    pub(crate) engine_jobs: usize,
    /// Admission checks at once (`admission_checks`).
    checks: tokio::sync::Semaphore,
    started: Instant,
    lifecycle: watch::Sender<Lifecycle>,
    pub(crate) totals: Totals,
}

/// The pauses before each attempt to journal an outcome (about 61 s in
/// all).
const FINISH_RETRIES_MS: [u64; 8] = [0, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000];

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Daemon {
    /// The daemon over a started engine and an open journal.
    pub(crate) fn new(
        config: DaemonConfig,
        access: Access,
        engine: Engine,
        journal: Journal,
    ) -> Result<Self, DaemonError> {
        log_nvml(&engine.devices());
        let engine_jobs = config.engine_jobs(engine.config());
        let engine = Arc::new(engine);
        Ok(Self {
            keys: KeyRegistry::new(
                config.params_dir(),
                config.fil_param_dir(),
                config.generate_params,
                config.full_param_checks,
                Arc::downgrade(&engine),
            ),
            table: JobTable::new(config.max_jobs),
            engine: Mutex::new(Some(engine)),
            journal: Arc::new(journal),
            metrics: Metrics::new(),
            engine_jobs,
            checks: tokio::sync::Semaphore::new(config.admission_checks),
            started: Instant::now(),
            lifecycle: watch::Sender::new(Lifecycle::Serving),
            totals: Totals::default(),
            access,
            config,
        })
    }

    /// The engine, until shutdown takes it.
    pub(crate) fn engine(&self) -> Option<Arc<Engine>> {
        self.engine.lock().clone()
    }

    /// Takes the engine out for shutdown.
    pub(crate) fn take_engine(&self) -> Option<Arc<Engine>> {
        self.engine.lock().take()
    }

    pub(crate) fn lifecycle(&self) -> Lifecycle {
        *self.lifecycle.borrow()
    }

    pub(crate) fn set_lifecycle(&self, to: Lifecycle) {
        self.lifecycle.send_if_modified(|now| {
            let later = to > *now;
            if later {
                *now = to;
            }
            later
        });
    }

    /// Resolves once the daemon has reached `stage` (or a later one).
    pub(crate) async fn reached(&self, stage: Lifecycle) {
        let mut rx = self.lifecycle.subscribe();
        let _ = rx.wait_for(|now| *now >= stage).await;
    }

    /// `SubmitProof`: checks the request, admits it, writes it to the
    /// journal and queues it. Returns the job and its queue position.
    pub(crate) async fn submit(
        &self,
        request: pb::SubmitProofRequest,
    ) -> Result<(Arc<Job>, usize), Status> {
        if self.lifecycle() != Lifecycle::Serving {
            self.metrics.rejected("unavailable");
            return Err(Status::unavailable("the daemon is shutting down"));
        }
        // The cheap checks first: a known request id gets its job back and
        // a full table refuses before any input is looked at.
        let reservation = match self.table.reserve(&request.request_id) {
            Ok(r) => r,
            Err(Admission::Existing(job)) => return Ok((job, 0)),
            Err(Admission::Full { held }) => {
                self.metrics.rejected("resource_exhausted");
                return Err(Status::resource_exhausted(format!(
                    "{held} jobs are queued or running (max_jobs = {}); retry later",
                    self.config.max_jobs
                )));
            }
        };
        // Building a Filecoin request verifies its vanilla proofs: seconds
        // of CPU for a 32 GiB PoRep, so on the blocking pool and at most
        // `admission_checks` at once, whatever a client floods in.
        let check = self
            .checks
            .acquire()
            .await
            .map_err(|_| Status::unavailable("the daemon is shutting down"))?;
        let checking = self.metrics.checking();
        let (request, spec) = tokio::task::spawn_blocking(move || {
            let spec = kinds::job_spec(&request);
            (request, spec)
        })
        .await
        .map_err(|_| Status::internal("checking the request panicked"))?;
        drop((checking, check));
        let spec = spec.map_err(|err| {
            self.metrics.rejected(code_label(err.code()));
            status(err.code(), &err)
        })?;
        if let Circuit::Filecoin(_) = spec.circuit {
            self.check_key(spec.circuit).await?;
        }
        let accepted_unix_ms = unix_ms();
        let journal = Arc::clone(&self.journal);
        let request_id = request.request_id.clone();
        let seq = tokio::task::spawn_blocking(move || journal.accept(&request, accepted_unix_ms))
            .await
            .map_err(|_| Status::internal("the journal write panicked"))?
            .map_err(|err| status(Code::Internal, &err))?;
        let job = Arc::new(Job::new(seq, request_id, spec, accepted_unix_ms));
        self.metrics.accepted(job.spec.kind);
        let position = self.table.insert(reservation, Arc::clone(&job));
        tracing::info!(job = %job.id, kind = job.spec.kind, circuit = %job.spec.circuit,
            partitions = job.spec.partitions, position, "accepted");
        Ok((job, position))
    }

    /// Refuses (`FAILED_PRECONDITION`, naming the file) a job whose key is
    /// neither loaded nor on disk.
    async fn check_key(&self, circuit: Circuit) -> Result<(), Status> {
        self.keys.check_available(circuit).await.map_err(|err| {
            self.metrics.rejected(code_label(err.code()));
            status(err.code(), &err)
        })
    }

    /// Re-queues every unfinished job of the journal (at start).
    pub(crate) fn recover(&self) -> Result<usize, DaemonError> {
        for seq in self.journal.quarantined() {
            tracing::error!(
                job = %crate::jobs::job_id(*seq),
                "journal entry damaged: moved to the journal's quarantine table, not run"
            );
        }
        self.metrics.quarantined(self.journal.quarantined().len());
        self.forgotten(COMPACTED_OVER_LIMIT, self.journal.compacted());
        let unfinished = self.journal.unfinished()?;
        let count = unfinished.len();
        for (seq, entry) in unfinished {
            let request = entry.request.unwrap_or_default();
            let spec = kinds::job_spec(&request);
            let job = match spec {
                Ok(spec) => Job::new(seq, request.request_id, spec, entry.accepted_unix_ms),
                Err(err) => {
                    // Accepted by an earlier version that knew this kind.
                    let outcome = failed_outcome(seq, &err);
                    let forgotten =
                        self.journal
                            .finish(seq, entry.accepted_unix_ms, &outcome, unix_ms())?;
                    self.forgotten(COMPACTED_OVER_LIMIT, &forgotten);
                    continue;
                }
            };
            tracing::info!(job = %job.id, circuit = %job.spec.circuit, "recovered from the journal");
            self.table.insert_recovered(Arc::new(job));
        }
        self.metrics.recovered(count);
        Ok(count)
    }

    /// Records `job`'s outcome: the journal first, then metrics, then its
    /// awaiters.
    pub(crate) async fn finish(
        &self,
        job: &Arc<Job>,
        outcome: pb::AwaitProofResponse,
        kind: Outcome,
        proof: Option<&cuzk_engine::RequestProof>,
    ) {
        // A full disk is a bad day, not the end of a proof: the write is
        // tried again for about a minute (the journal reopens its file
        // after an I/O error) before the outcome is handed out unjournaled,
        // its job then to run again after a restart.
        let finished_ms = unix_ms();
        for (attempt, pause_ms) in FINISH_RETRIES_MS.iter().enumerate() {
            tokio::time::sleep(Duration::from_millis(*pause_ms)).await;
            let journal = Arc::clone(&self.journal);
            let (seq, accepted, record) = (job.seq, job.accepted_unix_ms, outcome.clone());
            let written = tokio::task::spawn_blocking(move || {
                journal.finish(seq, accepted, &record, finished_ms)
            })
            .await;
            let last = attempt + 1 == FINISH_RETRIES_MS.len();
            match written {
                Ok(Ok(forgotten)) => {
                    self.forgotten(COMPACTED_OVER_LIMIT, &forgotten);
                    if attempt > 0 {
                        tracing::info!(job = %job.id, attempt = attempt + 1, "outcome journaled");
                    }
                    break;
                }
                Ok(Err(err)) if last => {
                    tracing::error!(job = %job.id, error = %crate::error::error_chain(&err),
                        "outcome not journaled; the job will run again after a restart")
                }
                Ok(Err(err)) => {
                    tracing::warn!(job = %job.id, error = %crate::error::error_chain(&err),
                        attempt = attempt + 1, "outcome not journaled yet; trying again");
                    self.metrics.journal_retry();
                }
                Err(_) => {
                    tracing::error!(job = %job.id, "the journal write panicked");
                    break;
                }
            }
        }
        let total = match kind {
            Outcome::Completed => &self.totals.completed,
            Outcome::Failed => &self.totals.failed,
            Outcome::Cancelled => &self.totals.cancelled,
        };
        total.fetch_add(1, Ordering::Relaxed);
        let elapsed = Duration::from_millis(unix_ms().saturating_sub(job.accepted_unix_ms));
        self.metrics.finished(job.spec.kind, kind, elapsed, proof);
        self.table.remove(job.seq);
        job.outcome.send_replace(Some(Arc::new(outcome)));
    }

    /// Counts and logs outcomes nobody fetched that the journal forgot,
    /// for `reason`, in the order they finished.
    pub(crate) fn forgotten(&self, reason: &'static str, jobs: &[u64]) {
        let (Some(first), Some(last)) = (jobs.first(), jobs.last()) else {
            return;
        };
        self.metrics.compacted(reason, jobs.len());
        tracing::info!(reason, entries = jobs.len(), first = %crate::jobs::job_id(*first),
            last = %crate::jobs::job_id(*last), "journal compacted: unfetched outcomes forgotten");
    }

    /// `AwaitProof`: the outcome of `job_id`, waiting up to `timeout` (zero:
    /// no limit). A terminal outcome handed out is removed from the journal.
    pub(crate) async fn await_outcome(
        &self,
        job_id: &str,
        timeout: Duration,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let seq = parse_job_id(job_id).ok_or_else(|| not_found(job_id))?;
        let outcome = match self.table.get(seq) {
            Some(job) => {
                let mut outcome = job.outcome.subscribe();
                let wait = outcome.wait_for(Option::is_some);
                let limit = async {
                    match timeout.is_zero() {
                        true => std::future::pending().await,
                        false => tokio::time::sleep(timeout).await,
                    }
                };
                tokio::select! {
                    ready = wait => match ready {
                        Ok(slot) => slot.as_deref().cloned().expect("waited for Some"),
                        Err(_) => return Err(Status::internal("the job's outcome was lost")),
                    },
                    () = limit => return Ok(timed_out(job_id)),
                    () = self.reached(Lifecycle::Stopped) => return Err(Status::unavailable(
                        "the daemon stopped before the job finished; it runs again after restart")),
                }
            }
            None => self.journaled_outcome(seq, job_id).await?,
        };
        let journal = Arc::clone(&self.journal);
        // Fetched: forget it (best effort; a leftover expires).
        let _ = tokio::task::spawn_blocking(move || journal.remove(seq)).await;
        Ok(outcome)
    }

    async fn journaled_outcome(
        &self,
        seq: u64,
        job_id: &str,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let journal = Arc::clone(&self.journal);
        let entry = tokio::task::spawn_blocking(move || journal.get(seq))
            .await
            .map_err(|_| Status::internal("the journal read panicked"))?
            .map_err(|err| status(Code::Internal, &err))?;
        match entry.and_then(|e| e.outcome) {
            Some(outcome) => Ok(outcome),
            None => Err(self.gone(seq, job_id).await),
        }
    }

    /// `NOT_FOUND` for a job the journal does not hold, saying whether it
    /// was never accepted or its outcome is gone.
    async fn gone(&self, seq: u64, job_id: &str) -> Status {
        let journal = Arc::clone(&self.journal);
        let accepted = tokio::task::spawn_blocking(move || journal.was_accepted(seq)).await;
        match accepted {
            Ok(Ok(true)) => Status::not_found(format!(
                "job '{job_id}' is no longer held: its outcome was fetched, or expired \
                 (result_ttl_secs = {}, journal_keep_finished = {})",
                self.config.result_ttl_secs, self.config.journal_keep_finished
            )),
            _ => not_found(job_id),
        }
    }

    /// `CancelProof`: true when the job was running (handed to the engine).
    pub(crate) async fn cancel(&self, job_id: &str) -> Result<bool, Status> {
        let seq = parse_job_id(job_id).ok_or_else(|| not_found(job_id))?;
        match self.table.cancel(seq) {
            Cancelled::Queued(job) => {
                tracing::info!(job = %job.id, "cancelled while queued");
                let outcome = cancelled_outcome(&job);
                self.finish(&job, outcome, Outcome::Cancelled, None).await;
                Ok(false)
            }
            Cancelled::Running => {
                tracing::info!(job = job_id, "cancelling a running job");
                Ok(true)
            }
            Cancelled::NotHeld => {
                self.journaled_outcome(seq, job_id).await?;
                Ok(false)
            }
        }
    }

    /// `AggregateSealProofs`: the request's fields checked here, then each
    /// sector's proof, the aggregation and the aggregate's check on the
    /// blocking pool, sharing the admission checks' bound (CPU work that a
    /// flood must not multiply).
    pub(crate) async fn aggregate(
        &self,
        request: pb::AggregateSealProofsRequest,
    ) -> Result<pb::AggregateSealProofsResponse, Status> {
        if self.lifecycle() != Lifecycle::Serving {
            return Err(Status::unavailable("the daemon is shutting down"));
        }
        let refuse = |e: kinds::KindError| {
            self.metrics.aggregate(false);
            status(e.code(), &e)
        };
        let (seals, version) = kinds::aggregate_request(request).map_err(refuse)?;
        let check = self
            .checks
            .acquire()
            .await
            .map_err(|_| Status::unavailable("the daemon is shutting down"))?;
        let started = Instant::now();
        let sectors = seals.sectors.len();
        let made = tokio::task::spawn_blocking(move || {
            let aggregate = cuzk_filecoin::aggregate::aggregate_seal_proofs(&seals, version)?;
            let proofs = cuzk_filecoin::aggregate::aggregated_proofs(seals.proof, sectors)?;
            Ok::<_, cuzk_filecoin::FilecoinError>((aggregate, proofs))
        })
        .await
        .map_err(|_| Status::internal("aggregating panicked"))?;
        drop(check);
        let (aggregate, proofs) = made.map_err(|e| refuse(e.into()))?;
        self.metrics.aggregate(true);
        let took = started.elapsed();
        tracing::info!(sectors, proofs, %version, seconds = took.as_secs_f64(), "seal proofs aggregated");
        Ok(pb::AggregateSealProofsResponse {
            aggregate,
            proofs: proofs as u32,
            verified: true,
            aggregate_ms: took.as_millis() as u64,
        })
    }

    /// `PreloadSRS`.
    pub(crate) async fn preload(&self, circuit_id: &str) -> Result<Preloaded, Status> {
        let circuit = Circuit::parse(circuit_id).map_err(|e| status(e.code(), &e))?;
        self.keys
            .preload(circuit)
            .await
            .map_err(|e| status(e.code(), &e))
    }

    /// `EvictSRS`: the bytes freed, if the key was loaded.
    pub(crate) fn evict(&self, circuit_id: &str) -> Result<Option<u64>, Status> {
        let circuit = Circuit::parse(circuit_id).map_err(|e| status(e.code(), &e))?;
        let freed = self.keys.evict(circuit).map_err(|e| status(e.code(), &e))?;
        tracing::info!(%circuit, freed_bytes = freed, "evict");
        Ok(freed)
    }

    /// The state the gauges and `GetStatus` show.
    pub(crate) fn gauges(&self) -> Gauges {
        let engine = self.engine();
        let pool = supraseal_c2::host_pool_stats();
        let devices = engine.as_ref().map_or_else(Vec::new, |e| e.devices());
        Gauges {
            jobs: self.table.counts(),
            engine_partitions: engine.as_ref().map_or((0, 0), |e| e.queued_partitions()),
            locks: engine.as_ref().map_or_else(Vec::new, |e| e.lock_stats()),
            gpus: on_cuda(&devices).map(|d| (d, gpu::read(d))).collect(),
            devices,
            keys: self.keys.loaded(),
            host_pool: (pool.cached_bytes, pool.limit_bytes),
            host_memory: HostMemory::read(engine.as_deref()),
            uptime: self.started.elapsed(),
        }
    }

    /// `GetMetrics` and `/metrics`.
    pub(crate) fn metrics_text(&self) -> String {
        self.metrics.render(&self.gauges())
    }
}

/// The ordinals of the devices on the CUDA backend: the ones NVML can read.
fn on_cuda(devices: &[DeviceStatus]) -> impl Iterator<Item = u32> + '_ {
    devices
        .iter()
        .filter(|d| d.backend == supraseal_c2::Backend::Cuda)
        .map(|d| d.device)
}

/// Loads NVML at start when a device is on the CUDA backend, so that no
/// request pays for the first load; warns when it cannot be loaded.
fn log_nvml(devices: &[DeviceStatus]) {
    if on_cuda(devices).next().is_none() {
        return;
    }
    if let Err(err) = gpu::load() {
        tracing::warn!(error = %err,
            "NVML not loaded: GPU utilization and memory are not measured");
    }
}

fn not_found(job_id: &str) -> Status {
    Status::not_found(format!(
        "no job '{job_id}': never accepted, or its outcome was fetched or expired"
    ))
}

/// The `reason` label of a refused submission.
fn code_label(code: Code) -> &'static str {
    match code {
        Code::FailedPrecondition => "failed_precondition",
        _ => "invalid_argument",
    }
}

fn timed_out(job_id: &str) -> pb::AwaitProofResponse {
    pb::AwaitProofResponse {
        job_id: job_id.to_owned(),
        status: JobStatus::Timeout as i32,
        ..Default::default()
    }
}

/// The outcome of a job cancelled before it produced a proof.
pub(crate) fn cancelled_outcome(job: &Job) -> pb::AwaitProofResponse {
    pb::AwaitProofResponse {
        job_id: job.id.clone(),
        status: JobStatus::Cancelled as i32,
        error_message: "cancelled".to_owned(),
        total_ms: unix_ms().saturating_sub(job.accepted_unix_ms),
        ..Default::default()
    }
}

/// The outcome of a job that failed with `err`.
pub(crate) fn failed_outcome(seq: u64, err: &dyn std::error::Error) -> pb::AwaitProofResponse {
    pb::AwaitProofResponse {
        job_id: crate::jobs::job_id(seq),
        status: JobStatus::Failed as i32,
        error_message: crate::error::error_chain(err),
        ..Default::default()
    }
}
