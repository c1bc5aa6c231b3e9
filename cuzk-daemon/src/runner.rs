//! From the queue to an outcome: the dispatcher hands queued jobs to the
//! engine, at most `engine_jobs` at once, and one task per running job
//! takes a lease on its key, submits it and records what comes back.

use std::sync::Arc;
use std::time::Duration;

use cuzk_engine::{EngineError, RequestProof};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::daemon::{cancelled_outcome, failed_outcome, Daemon, Lifecycle};
use crate::jobs::Job;
use crate::metrics::Outcome;
use crate::pb;
use crate::pb::await_proof_response::Status as JobStatus;

/// Hands queued jobs to the engine, best rank first, while a place in the
/// window is free; stops when the daemon starts draining.
pub(crate) async fn dispatch(daemon: Arc<Daemon>) {
    let places = Arc::new(Semaphore::new(daemon.engine_jobs));
    loop {
        let next = async {
            let place = Arc::clone(&places).acquire_owned().await;
            (place, daemon.table.next().await)
        };
        tokio::select! {
            (Ok(place), job) = next => {
                tokio::spawn(run(Arc::clone(&daemon), job, place));
            }
            () = daemon.reached(Lifecycle::Draining) => return,
        }
    }
}

async fn run(daemon: Arc<Daemon>, job: Arc<Job>, place: OwnedSemaphorePermit) {
    let span = tracing::info_span!("job", id = %job.id, kind = job.spec.kind,
        circuit = %job.spec.circuit, partitions = job.spec.partitions);
    async move {
        match prove(&daemon, &job).await {
            Some((outcome, kind, proof)) => {
                let status = outcome.status().as_str_name();
                match outcome.error_message.as_str() {
                    "" => tracing::info!(status, total_ms = outcome.total_ms, "finished"),
                    error => tracing::info!(status, total_ms = outcome.total_ms, error, "finished"),
                }
                daemon.finish(&job, outcome, kind, proof.as_ref()).await;
            }
            None => {
                // The engine shut down under it: the journal still has it
                // as accepted, so it runs again after the restart.
                tracing::info!("left for the next start");
                daemon.table.remove(job.seq);
            }
        }
        drop(place);
    }
    .instrument(span)
    .await
}

type Proven = (pb::AwaitProofResponse, Outcome, Option<RequestProof>);

/// Runs `job` through the engine; `None` when the daemon stopped first.
async fn prove(daemon: &Daemon, job: &Job) -> Option<Proven> {
    let queue_wait = job.queued_at.elapsed();
    let failed = |err: &dyn std::error::Error| {
        let mut outcome = failed_outcome(job.seq, err);
        outcome.total_ms = crate::daemon::unix_ms().saturating_sub(job.accepted_unix_ms);
        Some((outcome, Outcome::Failed, None))
    };
    let (lease, load_time) = match daemon.keys.lease(job.spec.circuit).await {
        Ok(leased) => leased,
        Err(err) => return failed(&err),
    };
    if job.cancel.asked() {
        return Some((cancelled_outcome(job), Outcome::Cancelled, None));
    }
    let engine = daemon.engine()?;
    let (spec, key) = (job.spec.clone(), lease.key());
    let handle = tokio::task::spawn_blocking(move || spec.submit(&engine, key))
        .await
        .ok()?;
    tracing::debug!(
        queue_wait_ms = queue_wait.as_millis() as u64,
        "handed to the engine"
    );
    // The engine's wait blocks (and verifies the proofs when configured to):
    // a thread of the blocking pool per running job, of which there are at
    // most the daemon's places in the engine.
    job.cancel.attach(handle.canceller());
    let result = tokio::task::spawn_blocking(move || handle.wait())
        .await
        .unwrap_or(Err(EngineError::Shutdown));
    drop(lease);
    match result {
        Ok(proof) => {
            let bytes = match finished(job, &proof).await {
                Ok(bytes) => bytes,
                Err(err) => return failed(&*err),
            };
            let outcome = completed(
                job,
                &proof,
                bytes,
                queue_wait,
                load_time.unwrap_or_default(),
            );
            Some((outcome, Outcome::Completed, Some(proof)))
        }
        Err(EngineError::Cancelled) => Some((cancelled_outcome(job), Outcome::Cancelled, None)),
        Err(EngineError::Shutdown) => None,
        Err(err) => failed(&err),
    }
}

/// The proof as filecoin-proofs returns it: the partitions' proofs, or for
/// NI-PoRep their SnarkPack aggregate, checked (CPU work, so on the
/// blocking pool).
async fn finished(
    job: &Job,
    proof: &RequestProof,
) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    let bytes = proof.to_bytes();
    let Some(request) = job.spec.filecoin.clone().filter(|r| r.aggregated()) else {
        return Ok(bytes);
    };
    match tokio::task::spawn_blocking(move || request.finish(bytes)).await {
        Ok(finished) => Ok(finished?),
        Err(_) => Err("finishing the proof panicked".into()),
    }
}

/// A completed job's response: the proof and where the time went.
fn completed(
    job: &Job,
    proof: &RequestProof,
    bytes: Vec<u8>,
    queue_wait: Duration,
    load_time: Duration,
) -> pb::AwaitProofResponse {
    let ms = |ns: u64| ns / 1_000_000;
    let sum =
        |f: &dyn Fn(&cuzk_engine::PartitionRecord) -> u64| ms(proof.partitions.iter().map(f).sum());
    for record in &proof.partitions {
        let t = &record.prove;
        tracing::debug!(
            partition = record.index,
            device = record.device,
            synthesis_us = record
                .synth_ended_ns
                .saturating_sub(record.synth_started_ns)
                / 1000,
            preamble_us = t.preamble_ns / 1000,
            lock_wait_us = t.lock_wait_ns / 1000,
            kernel_us = t.kernel_ns / 1000,
            epilogue_us = t.epilogue_ns / 1000,
            "partition proven"
        );
    }
    pb::AwaitProofResponse {
        job_id: job.id.clone(),
        status: JobStatus::Completed as i32,
        proof: bytes,
        queue_wait_ms: queue_wait.as_millis() as u64,
        srs_load_ms: load_time.as_millis() as u64,
        synthesis_ms: sum(&|r| r.synth_ended_ns.saturating_sub(r.synth_started_ns)),
        gpu_compute_ms: sum(&|r| r.prove.preamble_ns + r.prove.kernel_ns + r.prove.epilogue_ns),
        total_ms: crate::daemon::unix_ms().saturating_sub(job.accepted_unix_ms),
        preamble_ms: sum(&|r| r.prove.preamble_ns),
        lock_wait_ms: sum(&|r| r.prove.lock_wait_ns),
        kernel_ms: sum(&|r| r.prove.kernel_ns),
        epilogue_ms: sum(&|r| r.prove.epilogue_ns),
        partitions: proof.partitions.len() as u32,
        verified: proof.verified,
        ..Default::default()
    }
}
