//! A job (one submitted request) and the handle its submitter holds.

use std::sync::{Arc, Weak};

use bellperson_lite::Proof;
use parking_lot::{Condvar, Mutex};
use supraseal_c2::monotonic_ns;

use crate::engine::Shared;
use crate::queue::Rank;
use crate::{EngineError, PartitionRecord, ProofRequest, RequestCircuits, RequestProof};

/// A request in flight: the partitions proven so far, or its outcome.
pub(crate) struct Job {
    /// Submission order: smaller is older.
    pub(crate) id: u64,
    pub(crate) request: ProofRequest,
    submitted_ns: u64,
    verify: bool,
    state: Mutex<JobState>,
    finished: Condvar,
}

enum JobState {
    Running {
        done: Vec<Option<(Proof, PartitionRecord)>>,
        remaining: usize,
    },
    Finished(Result<RequestProof, EngineError>),
    Collected,
}

impl Job {
    /// A job whose partitions are all still to be proven.
    pub(crate) fn new(id: u64, request: ProofRequest, verify: bool) -> Self {
        let partitions = request.partitions;
        Self {
            id,
            request,
            submitted_ns: monotonic_ns(),
            verify,
            state: Mutex::new(JobState::Running {
                done: (0..partitions).map(|_| None).collect(),
                remaining: partitions,
            }),
            finished: Condvar::new(),
        }
    }

    /// Where partition `index` of this job stands in the queues.
    pub(crate) fn rank(&self, index: usize) -> Rank {
        Rank {
            priority: self.request.priority,
            job: self.id,
            index,
        }
    }

    /// True until the job is proven, failed or cancelled: only then is it
    /// worth spending work on.
    pub(crate) fn is_running(&self) -> bool {
        matches!(*self.state.lock(), JobState::Running { .. })
    }

    /// Stores partition `record.index`'s proof. Returns true when that was
    /// the job's last partition.
    pub(crate) fn complete_partition(&self, proof: Proof, record: PartitionRecord) -> bool {
        let mut state = self.state.lock();
        let JobState::Running { done, remaining } = &mut *state else {
            return false;
        };
        if done[record.index].replace((proof, record)).is_none() {
            *remaining -= 1;
        }
        if *remaining > 0 {
            return false;
        }
        let (proofs, partitions) = done.drain(..).flatten().unzip();
        *state = JobState::Finished(Ok(RequestProof {
            workload: self.request.workload(),
            request: self.request.request_number(),
            proofs,
            partitions,
            submitted_ns: self.submitted_ns,
            completed_ns: monotonic_ns(),
            verified: false,
        }));
        drop(state);
        self.finished.notify_all();
        true
    }

    /// Fails the job with `error` unless it already has an outcome. Returns
    /// true when this call decided the outcome.
    pub(crate) fn fail(&self, error: EngineError) -> bool {
        let mut state = self.state.lock();
        if !matches!(*state, JobState::Running { .. }) {
            return false;
        }
        *state = JobState::Finished(Err(error));
        drop(state);
        self.finished.notify_all();
        true
    }

    /// Waits for the outcome and takes it.
    fn take_outcome(&self) -> Result<RequestProof, EngineError> {
        let mut state = self.state.lock();
        while matches!(*state, JobState::Running { .. }) {
            self.finished.wait(&mut state);
        }
        match std::mem::replace(&mut *state, JobState::Collected) {
            JobState::Finished(outcome) => outcome,
            // The only handle is consumed by `wait`, so nobody collects twice.
            JobState::Running { .. } | JobState::Collected => unreachable!("outcome taken twice"),
        }
    }

    /// Checks a proven request against its verifying key.
    fn verify(&self, mut proof: RequestProof) -> Result<RequestProof, EngineError> {
        let request = &self.request;
        let pvk = request.key.pvk();
        match &request.circuits {
            RequestCircuits::Workload { workload, request } => {
                cuzk_pipeline::verify_request(pvk, *workload, *request, &proof.proofs)
            }
            RequestCircuits::Source(source) => {
                cuzk_pipeline::verify_source_request(pvk, &**source, &proof.proofs)
            }
        }
        .map_err(EngineError::Verify)?;
        proof.verified = true;
        Ok(proof)
    }
}

/// The submitter's side of a job: wait for its proof, or cancel it.
///
/// Dropping the handle does not cancel the job; it runs to completion and
/// its outcome is discarded.
pub struct JobHandle {
    job: Arc<Job>,
    engine: Weak<Shared>,
}

impl JobHandle {
    pub(crate) fn new(job: Arc<Job>, engine: Weak<Shared>) -> Self {
        Self { job, engine }
    }

    /// The job's id, as found in the engine's metrics (`job` fields).
    /// Ids grow with submission order.
    pub fn id(&self) -> u64 {
        self.job.id
    }

    /// True once the job is proven, failed or cancelled.
    pub fn is_finished(&self) -> bool {
        !self.job.is_running()
    }

    /// Stops the job: its queued partitions (synthesized ones included) are
    /// dropped at once, partitions being worked on are abandoned when their
    /// current step ends, and [`JobHandle::wait`] returns
    /// [`EngineError::Cancelled`]. Does nothing if the job already finished.
    pub fn cancel(&self) {
        self.canceller().cancel();
    }

    /// A handle that can cancel this job from another thread while this one
    /// is consumed by [`JobHandle::wait`].
    pub fn canceller(&self) -> Canceller {
        Canceller {
            job: Arc::clone(&self.job),
            engine: Weak::clone(&self.engine),
        }
    }

    /// Waits for the request proof: every partition's proof in order, with
    /// its timings, verified first when the engine was configured to.
    pub fn wait(self) -> Result<RequestProof, EngineError> {
        let proof = self.job.take_outcome()?;
        if self.job.verify {
            self.job.verify(proof)
        } else {
            Ok(proof)
        }
    }
}

/// Cancels one job ([`JobHandle::cancel`]) without owning its handle: one
/// thread waits on the job while another decides to stop it.
#[derive(Clone)]
pub struct Canceller {
    job: Arc<Job>,
    engine: Weak<Shared>,
}

impl Canceller {
    /// As [`JobHandle::cancel`]; does nothing once the job has finished.
    pub fn cancel(&self) {
        if self.job.fail(EngineError::Cancelled) {
            if let Some(shared) = self.engine.upgrade() {
                shared.purge(self.job.id);
            }
        }
    }
}

impl std::fmt::Debug for Canceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canceller")
            .field("job", &self.job.id)
            .finish()
    }
}

impl std::fmt::Debug for JobHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobHandle")
            .field("id", &self.job.id)
            .field("finished", &self.is_finished())
            .finish()
    }
}
