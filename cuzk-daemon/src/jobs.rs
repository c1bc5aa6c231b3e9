//! The jobs the daemon holds in memory: queued ones (in a priority queue,
//! waiting for a place in the engine) and running ones (handed to the
//! engine). A job leaves the table when its outcome is recorded; from then
//! on only the journal has it.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::{watch, Notify};

use cuzk_engine::Canceller;

use crate::kinds::JobSpec;
use crate::pb;

/// What a job's awaiters see: nothing yet, then its outcome.
pub(crate) type OutcomeSlot = Option<Arc<pb::AwaitProofResponse>>;

/// One accepted job.
pub(crate) struct Job {
    /// Its number in the journal.
    pub(crate) seq: u64,
    /// Its id as clients see it.
    pub(crate) id: String,
    /// The caller's key, possibly empty.
    pub(crate) request_id: String,
    /// What to prove.
    pub(crate) spec: JobSpec,
    /// When it was first accepted (Unix ms; survives restarts).
    pub(crate) accepted_unix_ms: u64,
    /// When it entered this process's queue.
    pub(crate) queued_at: Instant,
    /// `CancelProof`'s way to a running job, before and after the engine
    /// has it.
    pub(crate) cancel: CancelSwitch,
    /// Its outcome, once recorded.
    pub(crate) outcome: watch::Sender<OutcomeSlot>,
}

impl Job {
    /// A job with no outcome yet.
    pub(crate) fn new(seq: u64, request_id: String, spec: JobSpec, accepted_unix_ms: u64) -> Self {
        Self {
            seq,
            id: job_id(seq),
            request_id,
            spec,
            accepted_unix_ms,
            queued_at: Instant::now(),
            cancel: CancelSwitch::default(),
            outcome: watch::Sender::new(None),
        }
    }
}

/// A running job's cancellation. `CancelProof` may come while the job's key
/// is still being loaded (nothing to cancel in the engine yet) or once the
/// engine has it; the switch remembers the first and passes the second on
/// at once, so that no thread has to poll for it.
#[derive(Default)]
pub(crate) struct CancelSwitch(Mutex<CancelState>);

#[derive(Default)]
enum CancelState {
    #[default]
    Open,
    /// Asked for before the engine had the job.
    Asked,
    /// The engine has the job.
    Engine(Canceller),
}

impl CancelSwitch {
    /// Asks for the job to stop: at once when the engine has it, else as
    /// soon as it is handed over.
    pub(crate) fn ask(&self) {
        let mut state = self.0.lock();
        match &*state {
            CancelState::Engine(canceller) => canceller.cancel(),
            CancelState::Open | CancelState::Asked => *state = CancelState::Asked,
        }
    }

    /// True when cancelling was asked for before the engine had the job.
    pub(crate) fn asked(&self) -> bool {
        matches!(*self.0.lock(), CancelState::Asked)
    }

    /// The engine has the job now: a cancel asked for earlier takes effect.
    pub(crate) fn attach(&self, canceller: Canceller) {
        let mut state = self.0.lock();
        if matches!(*state, CancelState::Asked) {
            canceller.cancel();
        }
        *state = CancelState::Engine(canceller);
    }
}

/// The id clients see for journal entry `seq`.
pub fn job_id(seq: u64) -> String {
    format!("job-{seq}")
}

/// The journal entry a client's job id names, if it is one of ours.
pub fn parse_job_id(id: &str) -> Option<u64> {
    id.strip_prefix("job-")?.parse().ok()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Queued,
    Running,
}

/// A place in the queue: higher priority first, then older first.
#[derive(PartialEq, Eq)]
struct Rank {
    priority: i32,
    seq: u64,
}

impl Ord for Rank {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.priority
            .cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

#[derive(Default)]
struct Inner {
    jobs: HashMap<u64, (Arc<Job>, Phase)>,
    /// Queued jobs by rank; entries of jobs no longer queued are skipped
    /// when popped.
    queue: BinaryHeap<Rank>,
    by_request_id: HashMap<String, u64>,
    /// Admissions granted whose journal write is under way.
    reserved: usize,
}

/// Why a submission was not given a new place.
pub(crate) enum Admission {
    /// A job with the same request id is queued or running.
    Existing(Arc<Job>),
    /// The table is full.
    Full {
        /// Jobs queued or running (or being admitted).
        held: usize,
    },
}

/// A granted admission: the table counts it until the job is inserted or
/// the reservation dropped.
pub(crate) struct Reservation<'a> {
    table: &'a JobTable,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.table.inner.lock().reserved -= 1;
    }
}

/// What `cancel` found.
pub(crate) enum Cancelled {
    /// It was queued; it is out of the table now.
    Queued(Arc<Job>),
    /// It is running; its cancel flag is set.
    Running,
    /// The table does not have it.
    NotHeld,
}

/// The queued and running jobs.
pub(crate) struct JobTable {
    inner: Mutex<Inner>,
    queued: Notify,
    max_jobs: usize,
}

impl JobTable {
    /// A table that admits up to `max_jobs` jobs queued or running.
    pub(crate) fn new(max_jobs: usize) -> Self {
        Self {
            inner: Mutex::default(),
            queued: Notify::new(),
            max_jobs,
        }
    }

    /// Admits one more job, unless the caller's request id names a job the
    /// table has or the table is full.
    pub(crate) fn reserve(&self, request_id: &str) -> Result<Reservation<'_>, Admission> {
        let mut inner = self.inner.lock();
        if let Some(seq) = (!request_id.is_empty())
            .then(|| inner.by_request_id.get(request_id))
            .flatten()
        {
            return Err(Admission::Existing(Arc::clone(&inner.jobs[seq].0)));
        }
        let held = inner.jobs.len() + inner.reserved;
        if held >= self.max_jobs {
            return Err(Admission::Full { held });
        }
        inner.reserved += 1;
        Ok(Reservation { table: self })
    }

    /// Queues a job admitted by `reservation`; returns how many queued jobs
    /// go before it.
    pub(crate) fn insert(&self, reservation: Reservation<'_>, job: Arc<Job>) -> usize {
        let position = self.push(job);
        drop(reservation);
        position
    }

    /// Queues a job found in the journal at start (accepted before, so
    /// admitted whatever the limit).
    pub(crate) fn insert_recovered(&self, job: Arc<Job>) {
        self.push(job);
    }

    fn push(&self, job: Arc<Job>) -> usize {
        let rank = Rank {
            priority: job.spec.priority,
            seq: job.seq,
        };
        let mut inner = self.inner.lock();
        let position = inner
            .jobs
            .values()
            .filter(|(other, phase)| {
                *phase == Phase::Queued
                    && (other.spec.priority, std::cmp::Reverse(other.seq))
                        > (rank.priority, std::cmp::Reverse(rank.seq))
            })
            .count();
        if !job.request_id.is_empty() {
            inner.by_request_id.insert(job.request_id.clone(), job.seq);
        }
        inner.jobs.insert(job.seq, (job, Phase::Queued));
        inner.queue.push(rank);
        drop(inner);
        self.queued.notify_one();
        position
    }

    /// Waits for the highest-ranked queued job and marks it running.
    pub(crate) async fn next(&self) -> Arc<Job> {
        loop {
            if let Some(job) = self.pop() {
                return job;
            }
            self.queued.notified().await;
        }
    }

    fn pop(&self) -> Option<Arc<Job>> {
        let mut inner = self.inner.lock();
        while let Some(rank) = inner.queue.pop() {
            if let Some((job, phase)) = inner.jobs.get_mut(&rank.seq) {
                if *phase == Phase::Queued {
                    *phase = Phase::Running;
                    return Some(Arc::clone(job));
                }
            }
        }
        None
    }

    /// The job `seq`, if queued or running.
    pub(crate) fn get(&self, seq: u64) -> Option<Arc<Job>> {
        self.inner
            .lock()
            .jobs
            .get(&seq)
            .map(|(job, _)| Arc::clone(job))
    }

    /// Takes a queued job out, or flags a running one for cancelling.
    pub(crate) fn cancel(&self, seq: u64) -> Cancelled {
        let mut inner = self.inner.lock();
        match inner.jobs.get(&seq) {
            Some((_, Phase::Queued)) => {
                let (job, _) = inner.jobs.remove(&seq).expect("present");
                inner.forget_request_id(&job);
                Cancelled::Queued(job)
            }
            Some((job, Phase::Running)) => {
                job.cancel.ask();
                Cancelled::Running
            }
            None => Cancelled::NotHeld,
        }
    }

    /// Drops job `seq` from the table (its outcome is recorded, or the
    /// daemon is stopping and the journal will run it again).
    pub(crate) fn remove(&self, seq: u64) {
        let mut inner = self.inner.lock();
        if let Some((job, _)) = inner.jobs.remove(&seq) {
            inner.forget_request_id(&job);
        }
    }

    /// `(kind, queued, running)` for every kind the table holds.
    pub(crate) fn counts(&self) -> Vec<(&'static str, usize, usize)> {
        let inner = self.inner.lock();
        let mut counts: Vec<(&'static str, usize, usize)> = Vec::new();
        for (job, phase) in inner.jobs.values() {
            let index = match counts.iter().position(|c| c.0 == job.spec.kind) {
                Some(i) => i,
                None => {
                    counts.push((job.spec.kind, 0, 0));
                    counts.len() - 1
                }
            };
            match phase {
                Phase::Queued => counts[index].1 += 1,
                Phase::Running => counts[index].2 += 1,
            }
        }
        counts.sort_unstable();
        counts
    }

    /// Jobs handed to the engine (or on their way).
    pub(crate) fn running(&self) -> usize {
        let inner = self.inner.lock();
        inner
            .jobs
            .values()
            .filter(|(_, phase)| *phase == Phase::Running)
            .count()
    }
}

impl Inner {
    fn forget_request_id(&mut self, job: &Job) {
        if self.by_request_id.get(&job.request_id) == Some(&job.seq) {
            self.by_request_id.remove(&job.request_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::{job_spec, JobSpec};

    fn spec(priority: i32) -> JobSpec {
        let req = pb::SubmitProofRequest {
            proof_kind: pb::ProofKind::MulChain as i32,
            sector_size: 8,
            priority,
            ..Default::default()
        };
        job_spec(&req).unwrap()
    }

    fn submit(table: &JobTable, seq: u64, priority: i32, request_id: &str) -> usize {
        let reservation = table.reserve(request_id).ok().unwrap();
        let job = Arc::new(Job::new(seq, request_id.to_owned(), spec(priority), 0));
        table.insert(reservation, job)
    }

    #[tokio::test]
    async fn higher_priority_then_older_first() {
        let table = JobTable::new(10);
        assert_eq!(submit(&table, 1, 2, ""), 0);
        assert_eq!(submit(&table, 2, 2, ""), 1);
        assert_eq!(submit(&table, 3, 4, ""), 0);
        let order: Vec<u64> = [table.next().await, table.next().await, table.next().await]
            .iter()
            .map(|j| j.seq)
            .collect();
        assert_eq!(order, vec![3, 1, 2]);
        assert_eq!(table.running(), 3);
    }

    #[test]
    fn admission_is_bounded_and_request_ids_dedupe() {
        let table = JobTable::new(2);
        submit(&table, 1, 2, "a");
        assert!(matches!(table.reserve("a"), Err(Admission::Existing(j)) if j.seq == 1));
        submit(&table, 2, 2, "");
        assert!(matches!(
            table.reserve("b"),
            Err(Admission::Full { held: 2 })
        ));
        assert!(matches!(table.cancel(1), Cancelled::Queued(_)));
        assert!(matches!(table.cancel(1), Cancelled::NotHeld));
        // A cancelled job's request id is free again, and so is its place.
        assert!(table.reserve("a").is_ok());
    }
}
