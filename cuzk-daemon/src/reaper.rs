//! One thread that watches every job handed to the engine: it passes
//! cancellations on and collects outcomes.
//!
//! The engine's `JobHandle::wait` blocks and takes the handle, so a job
//! cannot be cancelled while a thread waits on it. The reaper keeps the
//! handles instead and polls them (`is_finished`, a lock and a flag check
//! each) every millisecond while any job runs; a finished job's `wait`
//! (which returns at once, or after self-verification) runs on the blocking
//! pool. With no job running the reaper sleeps on its channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use cuzk_engine::{EngineError, JobHandle, RequestProof};
use tokio::sync::oneshot;

/// How often running jobs are looked at.
const POLL: Duration = Duration::from_millis(1);

/// What the engine made of a job.
pub(crate) type EngineOutcome = Result<RequestProof, EngineError>;

struct Watched {
    handle: JobHandle,
    cancel: Arc<AtomicBool>,
    cancel_sent: bool,
    done: oneshot::Sender<EngineOutcome>,
}

/// The sending side; the thread ends when it is dropped and every job it
/// watches has finished.
pub(crate) struct Reaper {
    watch: mpsc::Sender<Watched>,
}

impl Reaper {
    /// Starts the thread; finished jobs' `wait` runs on `runtime`'s
    /// blocking pool.
    pub(crate) fn start(runtime: tokio::runtime::Handle) -> std::io::Result<Self> {
        let (watch, jobs) = mpsc::channel();
        std::thread::Builder::new()
            .name("cuzk-reaper".to_owned())
            .spawn(move || run(&jobs, &runtime))?;
        Ok(Self { watch })
    }

    /// Watches `handle` until its job finishes, cancelling it once `cancel`
    /// is set, and returns its outcome.
    pub(crate) async fn outcome(
        &self,
        handle: JobHandle,
        cancel: Arc<AtomicBool>,
    ) -> EngineOutcome {
        let (done, outcome) = oneshot::channel();
        let watched = Watched {
            handle,
            cancel,
            cancel_sent: false,
            done,
        };
        if self.watch.send(watched).is_err() {
            return Err(EngineError::Shutdown);
        }
        // The sender is only dropped after sending, unless the thread died.
        outcome.await.unwrap_or(Err(EngineError::Shutdown))
    }
}

fn run(jobs: &mpsc::Receiver<Watched>, runtime: &tokio::runtime::Handle) {
    let mut watching: Vec<Watched> = Vec::new();
    let mut open = true;
    while open || !watching.is_empty() {
        if watching.is_empty() {
            match jobs.recv() {
                Ok(job) => watching.push(job),
                Err(_) => open = false,
            }
        } else {
            match jobs.recv_timeout(POLL) {
                Ok(job) => watching.push(job),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
        watching.extend(jobs.try_iter());
        for job in &mut watching {
            if !job.cancel_sent && job.cancel.load(Ordering::SeqCst) {
                job.handle.cancel();
                job.cancel_sent = true;
            }
        }
        let (finished, running): (Vec<_>, Vec<_>) =
            watching.drain(..).partition(|job| job.handle.is_finished());
        watching = running;
        for job in finished {
            runtime.spawn_blocking(move || {
                let _ = job.done.send(job.handle.wait());
            });
        }
    }
}
