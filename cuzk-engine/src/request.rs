//! What goes into the engine (a proof request and its key) and what comes
//! out (the request proof with per-partition timings).

use std::fmt;
use std::sync::Arc;

use bellperson_lite::{Parameters, PreparedVerifyingKey, Proof};
use cuzk_pipeline::{encode_request_proof, partition_seed, SharedSource, Workload};
use supraseal_c2::{PhaseTimings, Srs};

use crate::EngineError;

/// A workload's proving key as the engine uses it: the points loaded into
/// the prover, and the prepared verifying key for self-verification.
pub struct ProvingKey {
    srs: Srs,
    pvk: PreparedVerifyingKey,
}

impl ProvingKey {
    /// Loads `params` into the prover and prepares their verifying key.
    /// `params` may be dropped afterwards.
    pub fn new(params: &Parameters) -> Result<Self, EngineError> {
        Ok(Self {
            srs: params.srs()?,
            pvk: bellperson_lite::prepare_verifying_key(&params.vk),
        })
    }

    /// A key from points already loaded (e.g. read from a parameters file)
    /// and their prepared verifying key.
    pub fn from_parts(srs: Srs, pvk: PreparedVerifyingKey) -> Self {
        Self { srs, pvk }
    }

    /// The points, as the prover holds them.
    pub fn srs(&self) -> &Srs {
        &self.srs
    }

    /// The prepared verifying key.
    pub fn pvk(&self) -> &PreparedVerifyingKey {
        &self.pvk
    }

    /// The host memory one partition proven with this key holds from its
    /// synthesis to its proof: a, b and c over the evaluation domain and
    /// the assignment (one scalar for each of the key's A points), 32
    /// bytes a value.
    pub fn partition_bytes(&self) -> u64 {
        let domain = self.srs.domain_size() as u64;
        let assignment = self.srs.points().a.len() as u64;
        32 * (3 * domain + assignment)
    }
}

impl fmt::Debug for ProvingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProvingKey").finish_non_exhaustive()
    }
}

/// What a request's partitions are instances of.
#[derive(Clone, Debug)]
pub enum RequestCircuits {
    /// A synthetic workload: partition `j` of request `request` has seed
    /// [`partition_seed`]`(request, partitions, j)`.
    Workload {
        /// The circuit family and size.
        workload: Workload,
        /// The request number, the base of its partitions' seeds.
        request: u64,
    },
    /// A circuit source (a Filecoin proof request): partition `j` is its
    /// partition `j`, and its seed is `j`.
    Source(SharedSource),
}

/// One proof request: `partitions` partitions of one circuit.
#[derive(Clone, Debug)]
pub struct ProofRequest {
    /// What the partitions are.
    pub circuits: RequestCircuits,
    /// The key every partition is proven with.
    pub key: Arc<ProvingKey>,
    /// How many partitions (Filecoin's PoRep has 10).
    pub partitions: usize,
    /// Higher goes first; among equals, the older job goes first.
    pub priority: i32,
}

impl ProofRequest {
    /// A request of `partitions` partitions of `workload`, priority 0.
    pub fn new(workload: Workload, key: Arc<ProvingKey>, request: u64, partitions: usize) -> Self {
        Self {
            circuits: RequestCircuits::Workload { workload, request },
            key,
            partitions,
            priority: 0,
        }
    }

    /// A request for every partition of `source`, priority 0; `key` must be
    /// its circuit's.
    pub fn from_source(source: SharedSource, key: Arc<ProvingKey>) -> Self {
        Self {
            partitions: source.partitions(),
            circuits: RequestCircuits::Source(source),
            key,
            priority: 0,
        }
    }

    /// The same request with priority `priority`.
    pub fn with_priority(self, priority: i32) -> Self {
        Self { priority, ..self }
    }

    /// The workload, for a synthetic request.
    pub fn workload(&self) -> Option<Workload> {
        match &self.circuits {
            RequestCircuits::Workload { workload, .. } => Some(*workload),
            RequestCircuits::Source(_) => None,
        }
    }

    /// The request number (0 for a circuit source).
    pub fn request_number(&self) -> u64 {
        match &self.circuits {
            RequestCircuits::Workload { request, .. } => *request,
            RequestCircuits::Source(_) => 0,
        }
    }

    /// The seed of partition `index`.
    pub fn seed(&self, index: usize) -> u64 {
        match &self.circuits {
            RequestCircuits::Workload { request, .. } => {
                partition_seed(*request, self.partitions, index)
            }
            RequestCircuits::Source(_) => index as u64,
        }
    }
}

/// Where one partition's time went, on [`supraseal_c2::monotonic_ns`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionRecord {
    /// Its index in the request.
    pub index: usize,
    /// Its seed.
    pub seed: u64,
    /// The partition worker that synthesized it; `None` when it was
    /// submitted already synthesized.
    pub partition_worker: Option<usize>,
    /// When synthesis started.
    pub synth_started_ns: u64,
    /// When synthesis ended.
    pub synth_ended_ns: u64,
    /// The GPU worker that proved it.
    pub gpu_worker: usize,
    /// The device it was proven on.
    pub device: u32,
    /// The prover's phases and lock instants.
    pub prove: PhaseTimings,
}

/// A finished request: its partitions' proofs in order, with timings.
#[derive(Clone, Debug)]
pub struct RequestProof {
    /// The workload proven (`None` for a circuit source).
    pub workload: Option<Workload>,
    /// The request number.
    pub request: u64,
    /// One proof per partition, in partition order.
    pub proofs: Vec<Proof>,
    /// One record per partition, in partition order.
    pub partitions: Vec<PartitionRecord>,
    /// When the request was submitted.
    pub submitted_ns: u64,
    /// When its last partition was proven.
    pub completed_ns: u64,
    /// Whether the engine verified it (batch verification) before
    /// returning it.
    pub verified: bool,
}

impl RequestProof {
    /// The request proof's bytes: the partitions' 192-byte proofs in order.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode_request_proof(&self.proofs)
    }
}
