//! A Filecoin proof request: which circuit, its partitions, and how
//! filecoin-proofs verifies the result.

use std::fmt;
use std::path::{Path, PathBuf};

use bellperson_lite::{CompiledShape, Parameters, ProvingAssignment};
use blstrs::Scalar;
use cuzk_pipeline::Witness;
use ff::Field;
use supraseal_c2::{GpuLock, Srs};

use crate::circuits::{BlankCircuit, Partitions};
use crate::porep::{self, SealIds};
use crate::post::{self, PostInputs};
use crate::update::{self, UpdateCommitments};
use crate::{FilecoinError, ProofKind, RegisteredProof, SectorSize};

/// filecoin-proofs' verifier of one request, bound to its public inputs.
pub(crate) type Verifier = Box<dyn Fn(&[u8]) -> anyhow::Result<bool> + Send + Sync>;

/// What turns a request's partition proofs into the proof filecoin-proofs
/// returns, when that is more than their concatenation (NI-PoRep: their
/// SnarkPack aggregate).
pub(crate) type Finisher = Box<dyn Fn(&[u8]) -> anyhow::Result<Vec<u8>> + Send + Sync>;

/// One Filecoin circuit: a proof kind at a sector size. Its parameters,
/// compiled shape and SRS are shared by every request of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitId {
    /// The proof kind.
    pub kind: ProofKind,
    /// The sector size.
    pub size: SectorSize,
}

impl CircuitId {
    /// `kind` at `size`.
    pub fn new(kind: ProofKind, size: SectorSize) -> Self {
        CircuitId { kind, size }
    }

    pub(crate) fn blank(&self) -> Result<Box<dyn BlankCircuit>, FilecoinError> {
        match self.kind {
            ProofKind::PoRep => porep::blank(self.size),
            ProofKind::WinningPoSt | ProofKind::WindowPoSt => post::blank(self.kind, self.size),
            ProofKind::SnapDeals => update::blank(self.size),
        }
    }

    /// filecoin-proofs' parameter-cache identifier of this circuit (the
    /// `<id>` of `v28-<id>.params`).
    pub fn cache_id(&self) -> Result<String, FilecoinError> {
        Ok(self.blank()?.cache_id().to_owned())
    }

    /// `dir/v28-<id>.params`.
    pub fn params_path(&self, dir: &Path) -> Result<PathBuf, FilecoinError> {
        Ok(dir.join(format!("v28-{}.params", self.cache_id()?)))
    }

    /// `dir/v28-<id>.vk`.
    pub fn vk_path(&self, dir: &Path) -> Result<PathBuf, FilecoinError> {
        Ok(dir.join(format!("v28-{}.vk", self.cache_id()?)))
    }

    /// How many partitions (circuits) one proof of this kind has: 10 for a
    /// 32 GiB PoRep, 1 for PoSt (WindowPoSt is proven a partition at a
    /// time), 1 to 16 for SnapDeals.
    pub fn partitions(&self) -> usize {
        match self.kind {
            ProofKind::PoRep => usize::from(self.size.porep_config().partitions),
            ProofKind::WinningPoSt | ProofKind::WindowPoSt => 1,
            ProofKind::SnapDeals => update::partition_count(self.size),
        }
    }

    /// Compiles the circuit's shape from its blank circuit (once per
    /// circuit: the constraints do not depend on the witness).
    pub fn compile(&self) -> Result<CompiledShape, FilecoinError> {
        self.blank()?
            .compile()
            .map_err(|source| FilecoinError::Synthesis {
                partition: 0,
                source,
            })
    }

    /// Generates test parameters for this circuit's `shape` (from
    /// [`CircuitId::compile`]; a local trusted setup: never for production),
    /// the fixed-base multiplications under `lock` (on its CUDA device;
    /// `None`: the CPU's tables).
    pub fn generate_params(
        &self,
        shape: &CompiledShape,
        mut rng: &mut dyn rand_core::RngCore,
        lock: Option<&GpuLock>,
    ) -> Result<Parameters, FilecoinError> {
        bellperson_lite::generate_parameters_for_shape(shape, &mut rng, lock)
            .map_err(|e| FilecoinError::Setup(Box::new(e)))
    }
}

impl fmt::Display for CircuitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.kind, self.size)
    }
}

/// One proof request of a Filecoin kind, built from the inputs lotus and
/// Curio hand over, with its inputs checked (vanilla proofs verified).
pub struct FilecoinRequest {
    id: CircuitId,
    partitions: Box<dyn Partitions>,
    verifier: Verifier,
    finisher: Option<Finisher>,
}

impl fmt::Debug for FilecoinRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilecoinRequest")
            .field("id", &self.id)
            .field("partitions", &self.partitions.count())
            .finish_non_exhaustive()
    }
}

impl FilecoinRequest {
    pub(crate) fn new(
        kind: ProofKind,
        size: SectorSize,
        partitions: Box<dyn Partitions>,
        verifier: Verifier,
    ) -> Self {
        FilecoinRequest {
            id: CircuitId::new(kind, size),
            partitions,
            verifier,
            finisher: None,
        }
    }

    /// The same request, its proof finished by `finisher`.
    pub(crate) fn finished_by(mut self, finisher: Option<Finisher>) -> Self {
        self.finisher = finisher;
        self
    }

    /// PoRep C2 from a C1 output (filecoin-proofs' JSON, filecoin-proofs-api's
    /// JSON, or Curio's wrapper of either, also of Curio's `Commit1OutRaw`).
    /// `size` is the size the caller expects (e.g. its parameters'); the C1
    /// must be for it. Without one, the size the C1 names is taken. A C1
    /// that names a registered proof cuzk does not prove (non-interactive
    /// PoRep, V1), or a sector (Curio's `SectorNum`) or replica id other
    /// than `ids` give, is refused. The seal proof is the one the C1 names
    /// (filecoin-proofs-api's form and Curio's wrapper name it: `V1_1` or
    /// Synthetic PoRep), else `V1_1`; [`FilecoinRequest::porep_as`] says
    /// which for a C1 that does not name it.
    pub fn porep(c1: &[u8], size: Option<SectorSize>, ids: SealIds) -> Result<Self, FilecoinError> {
        Self::porep_request(c1, size, None, ids)
    }

    /// [`FilecoinRequest::porep`] for the seal proof `proof` (a `V1_1` or
    /// Synthetic PoRep seal proof; go-state-types' number, e.g. a request's
    /// `registered_proof`): the C1 must be for its size and, if it names its
    /// seal proof, name this one.
    pub fn porep_as(
        c1: &[u8],
        proof: RegisteredProof,
        ids: SealIds,
    ) -> Result<Self, FilecoinError> {
        // A proof of another kind fails its porep_config.
        Self::porep_request(c1, Some(proof.size), Some(proof), ids)
    }

    fn porep_request(
        c1: &[u8],
        size: Option<SectorSize>,
        proof: Option<RegisteredProof>,
        ids: SealIds,
    ) -> Result<Self, FilecoinError> {
        let c1 = porep::parse_c1(c1)?;
        if let Some(named) = c1.sector_num.filter(|&n| n != ids.sector_id) {
            return Err(crate::error::bad(
                "C1 output",
                format!(
                    "it is for sector {named} (SectorNum), not {}",
                    ids.sector_id
                ),
            ));
        }
        let size = match (size, c1.size) {
            (Some(want), Some(got)) if want != got => {
                return Err(crate::error::bad(
                    "C1 output",
                    format!("it is for {got} sectors, not {want}"),
                ))
            }
            (Some(size), _) | (None, Some(size)) => size,
            (None, None) => {
                return Err(crate::error::bad(
                    "C1 output",
                    "it does not name its sector size: give one",
                ))
            }
        };
        let proof = match (proof, c1.proof) {
            (Some(given), Some(named)) if given != named => {
                return Err(crate::error::bad(
                    "C1 output",
                    format!("it is a {named} C1, not {given}"),
                ))
            }
            (Some(proof), _) | (None, Some(proof)) => proof,
            (None, None) => RegisteredProof::proven(ProofKind::PoRep, size),
        };
        porep::request(c1, proof, ids)
    }

    /// The sector number a Curio-wrapped C1 output names, if any.
    pub fn c1_sector_number(c1: &[u8]) -> Option<u64> {
        porep::parse_c1(c1).ok().and_then(|c1| c1.sector_num)
    }

    /// WinningPoSt from the challenged sector's vanilla proof.
    pub fn winning_post(
        size: SectorSize,
        inputs: PostInputs,
        vanilla: &[Vec<u8>],
    ) -> Result<Self, FilecoinError> {
        post::request(ProofKind::WinningPoSt, size, inputs, vanilla)
    }

    /// One WindowPoSt partition from its sectors' vanilla proofs.
    pub fn window_post(
        size: SectorSize,
        inputs: PostInputs,
        vanilla: &[Vec<u8>],
    ) -> Result<Self, FilecoinError> {
        post::request(ProofKind::WindowPoSt, size, inputs, vanilla)
    }

    /// SnapDeals from its partition proofs.
    pub fn snap_deals(
        size: SectorSize,
        comms: UpdateCommitments,
        partition_proofs: &[Vec<u8>],
    ) -> Result<Self, FilecoinError> {
        update::request(size, comms, partition_proofs)
    }

    /// The circuit this request proves.
    pub fn id(&self) -> CircuitId {
        self.id
    }

    /// Whether its proof is an aggregate of the partitions' proofs
    /// (NI-PoRep) rather than their 192-byte proofs one after another.
    pub fn aggregated(&self) -> bool {
        self.finisher.is_some()
    }

    /// Its partitions.
    pub fn partitions(&self) -> &dyn Partitions {
        &*self.partitions
    }

    /// The proof as filecoin-proofs' prover returns it, from the partitions'
    /// 192-byte proofs in order: those bytes as they are, except for
    /// NI-PoRep, whose partitions' proofs filecoin-proofs aggregates with
    /// SnarkPack (`aggregate_seal_commit_proofs`, version 2) using the SRS
    /// in its parameter directory; the aggregate is then checked with
    /// `verify_seal`, as `seal_commit_phase2` does. CPU work for NI-PoRep,
    /// none for the other kinds.
    pub fn finish(&self, partition_proofs: Vec<u8>) -> Result<Vec<u8>, FilecoinError> {
        let Some(finish) = &self.finisher else {
            return Ok(partition_proofs);
        };
        let proof = finish(&partition_proofs)?;
        if !self.verify_with_filecoin_proofs(&proof)? {
            return Err(FilecoinError::Upstream(anyhow::anyhow!(
                "the SnarkPack aggregate of the {} partitions' proofs does not verify",
                self.partitions.count()
            )));
        }
        Ok(proof)
    }

    /// Verifies `proof` (as [`FilecoinRequest::finish`] returns it) with
    /// filecoin-proofs' own verifier (`verify_seal`, `verify_winning_post`,
    /// `verify_window_post`, `verify_empty_sector_update_proof`), which
    /// reads the `.vk` from `FIL_PROOFS_PARAMETER_CACHE`.
    pub fn verify_with_filecoin_proofs(&self, proof: &[u8]) -> Result<bool, FilecoinError> {
        Ok((self.verifier)(proof)?)
    }

    /// Proves every partition in turn (full synthesis, or the compiled path
    /// when `shape` is given) with `srs` under `lock`, and returns the proof
    /// bytes as filecoin-proofs writes them ([`FilecoinRequest::finish`]).
    /// Each partition's recorded public inputs are checked against the ones
    /// a verifier computes.
    pub fn prove(
        &self,
        srs: &Srs,
        lock: &GpuLock,
        shape: Option<&CompiledShape>,
    ) -> Result<Vec<u8>, FilecoinError> {
        let mut rng = rand::thread_rng();
        let mut out = Vec::with_capacity(self.partitions.count() * bellperson_lite::PROOF_BYTES);
        for k in 0..self.partitions.count() {
            let assignment = self.synthesize(k, shape)?;
            let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
            let (proofs, _) =
                bellperson_lite::prove_from_assignments(&[assignment], srs, lock, &[r], &[s])?;
            out.extend_from_slice(&proofs[0].to_bytes());
        }
        self.finish(out)
    }

    /// Synthesizes partition `k` and checks its public inputs.
    pub fn synthesize(
        &self,
        k: usize,
        shape: Option<&CompiledShape>,
    ) -> Result<ProvingAssignment, FilecoinError> {
        let assignment = match shape {
            None => self.partitions.synthesize(k)?,
            Some(shape) => {
                shape.evaluate(self.partitions.record_witness(shape, k, Witness::Native)?)
            }
        };
        if assignment.public_inputs() != self.partitions.public_inputs(k)? {
            return Err(crate::error::bad(
                format!("partition {k}"),
                "its circuit's public inputs differ from the verifier's",
            ));
        }
        Ok(assignment)
    }
}

/// A Filecoin request as the engine takes it: partitions of one circuit
/// (keyed `kind-size`, so requests of a circuit share its compiled shape).
impl cuzk_pipeline::CircuitSource for FilecoinRequest {
    fn circuit_key(&self) -> String {
        self.id.to_string()
    }

    fn partitions(&self) -> usize {
        self.partitions.count()
    }

    fn compile(&self) -> Result<CompiledShape, cuzk_pipeline::SourceError> {
        Ok(self.id.compile()?)
    }

    fn record_witness(
        &self,
        shape: &CompiledShape,
        index: usize,
        witness: Witness,
    ) -> Result<bellperson_lite::ShapedWitness, cuzk_pipeline::SourceError> {
        Ok(self.partitions.record_witness(shape, index, witness)?)
    }

    fn witness_source(&self, witness: Witness) -> &'static str {
        self.partitions.witness_source(witness)
    }

    fn synthesize_full(
        &self,
        index: usize,
    ) -> Result<ProvingAssignment, cuzk_pipeline::SourceError> {
        Ok(self.partitions.synthesize(index)?)
    }

    fn public_inputs(&self, index: usize) -> Result<Vec<Scalar>, cuzk_pipeline::SourceError> {
        Ok(self.partitions.public_inputs(index)?)
    }
}
