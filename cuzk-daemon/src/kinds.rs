//! Proof kinds: the one place where a `SubmitProofRequest` becomes work for
//! the engine ([`job_spec`]), and where a circuit id becomes a proving key
//! to load ([`Circuit`]).
//!
//! The synthetic kinds (`SHA_CHAIN`, `MUL_CHAIN`) are the workloads of
//! `shared/workloads.md`: `sector_size` is the workload size (blocks or
//! squarings), `sector_number` the request number, `synthetic_partitions`
//! the partition count. The Filecoin kinds (`POREP_SEAL_COMMIT`,
//! `SNAP_DEALS_UPDATE`, `WINDOW_POST_PARTITION`, `WINNING_POST`) become a
//! [`FilecoinRequest`] (its inputs parsed and its vanilla proofs verified
//! here, at submission) proven with the key of its circuit, a proof kind at
//! a sector size (`porep-32GiB`). The size comes from `sector_size` and/or
//! `registered_proof` (go-state-types' numbers, checked against each other
//! and against what cuzk proves); the requests Curio's callers send are in
//! `docs/daemon.md` (Curio compatibility) and `tests/curio.rs`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bellperson_lite::Parameters;
use cuzk_engine::{Engine, EngineError, JobHandle, ProofRequest, ProvingKey, Workload};
use cuzk_filecoin::aggregate::{SealedSector, SealedSectors, SnarkPack};
use cuzk_filecoin::{
    CircuitId, FilecoinError, FilecoinRequest, PostInputs, RegisteredProof, SealIds, SectorSize,
    UpdateCommitments,
};
use cuzk_pipeline::PipelineError;
use tonic::Code;

use crate::pb::{self, ProofKind};

/// Most partitions a synthetic request may have.
pub const MAX_SYNTHETIC_PARTITIONS: usize = 256;
/// Largest `mul-chain` (squarings) a request may name.
pub const MAX_MUL_CHAIN: usize = 1 << 26;
/// Largest `sha-chain` (blocks) a request may name.
pub const MAX_SHA_CHAIN: usize = 4096;

/// Why a request or circuit id cannot become engine work.
#[derive(Debug, thiserror::Error)]
pub enum KindError {
    /// `proof_kind` was left unset.
    #[error("proof_kind is missing")]
    MissingKind,
    /// `proof_kind` is a number no kind has.
    #[error("unknown proof_kind {0}")]
    UnknownKind(i32),
    /// A field is missing or out of range.
    #[error("{field}: {why}")]
    Invalid {
        /// The request field.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// A circuit id that names no circuit.
    #[error(
        "unknown circuit id '{0}' (expected NAME/SIZE, e.g. mul-chain/64, or KIND-SIZE, e.g. porep-32GiB)"
    )]
    UnknownCircuit(String),
    /// The Filecoin inputs do not make a request (malformed, or vanilla
    /// proofs that do not verify).
    #[error(transparent)]
    Filecoin(#[from] FilecoinError),
}

impl KindError {
    /// The gRPC code the caller gets.
    pub fn code(&self) -> Code {
        match self {
            // A file the box lacks, not the caller's mistake.
            KindError::Filecoin(FilecoinError::MissingSrs { .. }) => Code::FailedPrecondition,
            _ => Code::InvalidArgument,
        }
    }

    fn invalid(field: &'static str, why: impl Into<String>) -> Self {
        KindError::Invalid {
            field,
            why: why.into(),
        }
    }
}

/// What a proving key is for; its `Display` is the circuit id that
/// `PreloadSRS`, `EvictSRS` and `GetStatus` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Circuit {
    /// A synthetic workload at one size.
    Synthetic(Workload),
    /// A Filecoin proof kind at a sector size.
    Filecoin(CircuitId),
}

impl Circuit {
    /// The circuit named by `circuit_id`: `mul-chain/64`, `sha-chain/4`, or
    /// a Filecoin kind and sector size (`porep-32GiB`, `window-post-2KiB`,
    /// `winning-post-32GiB`, `snap-deals-64GiB`).
    pub fn parse(circuit_id: &str) -> Result<Self, KindError> {
        let unknown = || KindError::UnknownCircuit(circuit_id.to_owned());
        if let Ok(workload) = circuit_id.parse::<Workload>() {
            check_synthetic_size(workload)?;
            return Ok(Circuit::Synthetic(workload));
        }
        let (kind, size) = circuit_id.rsplit_once('-').ok_or_else(unknown)?;
        let kind = kind.parse().map_err(|_| unknown())?;
        let size = size.parse().map_err(|_| unknown())?;
        Ok(Circuit::Filecoin(CircuitId::new(kind, size)))
    }

    /// Where its parameters file is: `<name>-<size>.params` in `params_dir`
    /// for a synthetic circuit, filecoin-proofs' `v28-<id>.params` in
    /// `fil_param_dir` for a Filecoin one.
    pub fn params_path(
        &self,
        params_dir: &Path,
        fil_param_dir: &Path,
    ) -> Result<PathBuf, FilecoinError> {
        match self {
            Circuit::Synthetic(w) => {
                Ok(params_dir.join(format!("{}-{}.params", w.name(), w.size())))
            }
            Circuit::Filecoin(id) => id.params_path(fil_param_dir),
        }
    }

    /// Fresh random parameters of a synthetic circuit (slow: a trusted
    /// setup for tests only). `None` for a Filecoin circuit, whose
    /// parameters come from its files.
    pub fn generate(&self) -> Option<Result<Parameters, PipelineError>> {
        match self {
            Circuit::Synthetic(w) => Some(cuzk_pipeline::setup(*w)),
            Circuit::Filecoin(_) => None,
        }
    }

    /// Checks that `params` (read from a file) were made for this circuit,
    /// against one synthesized instance. A Filecoin circuit's file is named
    /// by filecoin-proofs' cache id of the circuit, and its proofs are
    /// verified by the engine; it is not checked here.
    pub fn check(&self, params: &Parameters) -> Result<(), PipelineError> {
        match self {
            Circuit::Synthetic(w) => {
                let partition = cuzk_pipeline::synthesize_partition(*w, 0)?;
                cuzk_pipeline::check_params(params, &partition)
            }
            Circuit::Filecoin(_) => Ok(()),
        }
    }

    /// Has `engine` compile the shape before the first job, and for a
    /// synthetic circuit pin its partitions' memory too (not for a Filecoin
    /// one: at 32 GiB that would not fit the host).
    pub fn prepare(&self, engine: &Engine) -> Result<(), EngineError> {
        match self {
            Circuit::Synthetic(w) => engine.prepare(*w).map(drop),
            // The key a request's source names (FilecoinRequest's
            // circuit_key is its circuit id).
            Circuit::Filecoin(id) => {
                engine.compile_circuit(&id.to_string(), || id.compile().map_err(Into::into))
            }
        }
    }
}

impl fmt::Display for Circuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Circuit::Synthetic(w) => write!(f, "{w}"),
            Circuit::Filecoin(id) => write!(f, "{id}"),
        }
    }
}

/// A job as the daemon runs it: the key it needs and the request it
/// hands the engine.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The kind, as metrics and status name it.
    pub kind: &'static str,
    /// The circuit whose key proves it.
    pub circuit: Circuit,
    /// The request number (the base of the partitions' seeds; synthetic
    /// kinds only).
    pub request: u64,
    /// Partitions in the request.
    pub partitions: usize,
    /// Higher goes first.
    pub priority: i32,
    /// A Filecoin kind's request (its partitions' circuits).
    pub filecoin: Option<Arc<FilecoinRequest>>,
}

impl JobSpec {
    /// Hands the job to `engine`, proven with `key` (the key of
    /// `self.circuit`).
    pub fn submit(&self, engine: &Engine, key: Arc<ProvingKey>) -> JobHandle {
        let request = match (&self.filecoin, self.circuit) {
            (Some(source), _) => ProofRequest::from_source(Arc::clone(source) as _, key),
            (None, Circuit::Synthetic(workload)) => {
                ProofRequest::new(workload, key, self.request, self.partitions)
            }
            (None, Circuit::Filecoin(id)) => {
                unreachable!("a {id} job always carries its request")
            }
        };
        engine.submit(request.with_priority(self.priority))
    }
}

/// The kind's name in metrics labels and status.
pub fn kind_label(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::Unspecified => "unspecified",
        ProofKind::PorepSealCommit => "porep",
        ProofKind::SnapDealsUpdate => "snap",
        ProofKind::WindowPostPartition => "window-post",
        ProofKind::WinningPost => "winning-post",
        ProofKind::ShaChain => "sha-chain",
        ProofKind::MulChain => "mul-chain",
    }
}

/// Maps a submission to the job the daemon runs, or says which field is
/// wrong (`INVALID_ARGUMENT`). A Filecoin request is built here, its
/// vanilla proofs verified: seconds for a 32 GiB PoRep, so call it off the
/// async threads.
pub fn job_spec(req: &pb::SubmitProofRequest) -> Result<JobSpec, KindError> {
    let kind = match ProofKind::try_from(req.proof_kind) {
        Ok(ProofKind::Unspecified) => return Err(KindError::MissingKind),
        Ok(kind) => kind,
        Err(_) => return Err(KindError::UnknownKind(req.proof_kind)),
    };
    let priority = priority(req.priority)?;
    match kind {
        ProofKind::ShaChain | ProofKind::MulChain => synthetic(kind, req, priority),
        _ => {
            let proof = check_filecoin(kind, req)?;
            let request = Arc::new(filecoin_request(kind, proof, req)?);
            Ok(JobSpec {
                kind: kind_label(kind),
                circuit: Circuit::Filecoin(request.id()),
                request: 0,
                partitions: request.partitions().count(),
                priority,
                filecoin: Some(request),
            })
        }
    }
}

/// The Filecoin request of a submission whose fields `check_filecoin`
/// passed, for the sector size and registered proof it found.
fn filecoin_request(
    kind: ProofKind,
    (size, registered): (Option<SectorSize>, Option<RegisteredProof>),
    req: &pb::SubmitProofRequest,
) -> Result<FilecoinRequest, KindError> {
    let need_size = || {
        size.ok_or_else(|| {
            KindError::invalid(
                "sector_size",
                "neither sector_size nor registered_proof says the sector size",
            )
        })
    };
    let prover_id = cuzk_filecoin::prover_id(req.miner_id);
    let post = || -> Result<PostInputs, KindError> {
        Ok(PostInputs {
            randomness: bytes32("randomness", &req.randomness)?,
            prover_id,
            partition_index: req.partition_index as usize,
        })
    };
    let request = match kind {
        ProofKind::PorepSealCommit => {
            let ids = SealIds {
                prover_id,
                sector_id: req.sector_number,
            };
            // A registered proof given decides V1_1 or Synthetic PoRep (the
            // C1 must agree if it names one); else the C1 output's own (Curio's
            // wrapper and filecoin-proofs-api's form name it) is taken.
            match registered {
                Some(proof) => FilecoinRequest::porep_as(&req.vanilla_proof, proof, ids)?,
                None => FilecoinRequest::porep(&req.vanilla_proof, size, ids)?,
            }
        }
        ProofKind::WinningPost => {
            FilecoinRequest::winning_post(need_size()?, post()?, &req.vanilla_proofs)?
        }
        ProofKind::WindowPostPartition => {
            FilecoinRequest::window_post(need_size()?, post()?, &req.vanilla_proofs)?
        }
        ProofKind::SnapDealsUpdate => {
            let comms =
                UpdateCommitments::from_bytes(&req.comm_r_old, &req.comm_r_new, &req.comm_d_new)?;
            FilecoinRequest::snap_deals(need_size()?, comms, &req.vanilla_proofs)?
        }
        _ => unreachable!("{kind:?} is not a Filecoin kind"),
    };
    Ok(request)
}

/// The Filecoin proof kind of a request's kind.
fn filecoin_kind(kind: ProofKind) -> cuzk_filecoin::ProofKind {
    match kind {
        ProofKind::PorepSealCommit => cuzk_filecoin::ProofKind::PoRep,
        ProofKind::SnapDealsUpdate => cuzk_filecoin::ProofKind::SnapDeals,
        ProofKind::WindowPostPartition => cuzk_filecoin::ProofKind::WindowPoSt,
        ProofKind::WinningPost => cuzk_filecoin::ProofKind::WinningPoSt,
        _ => unreachable!("{kind:?} is not a Filecoin kind"),
    }
}

/// The sector size of a Filecoin submission, from `sector_size` and
/// `registered_proof` (go-state-types' number: `abi.RegisteredSealProof`
/// for PoRep, `abi.RegisteredPoStProof` for PoSt, `abi.RegisteredUpdateProof`
/// for SnapDeals), which must agree when both are set, and the registered
/// proof when one is set. A registered proof that cuzk does not prove (a
/// non-interactive PoRep, a V1 seal proof, a V1 WindowPoSt) is refused.
///
/// `registered_proof` 0 is both a real number (the 2 KiB proof of the
/// first group: `StackedDrg2KiBV1`, `StackedDrgWinning2KiBV1`, the 2 KiB
/// update) and what an unset field reads as. With `sector_size` set, 0
/// is taken as unset (the size decides; nothing is lost: cuzk proves those
/// 2 KiB WinningPoSt and update proofs anyway, and a V1 PoRep C1 output names
/// its own proof, which is refused). With neither set, 0 is the number:
/// 2 KiB for WinningPoSt and SnapDeals (a wrong guess cannot be proven: the
/// vanilla proofs of another size do not parse or verify), the C1 output's
/// own size for PoRep, and an error for WindowPoSt (0 is a WinningPoSt
/// proof).
fn filecoin_size(
    kind: ProofKind,
    req: &pb::SubmitProofRequest,
) -> Result<(Option<SectorSize>, Option<RegisteredProof>), KindError> {
    let fil = filecoin_kind(kind);
    let size = match req.sector_size {
        0 => None,
        bytes => Some(SectorSize::from_bytes(bytes).map_err(|_| {
            KindError::invalid(
                "sector_size",
                format!("{bytes} bytes is not a Filecoin sector size"),
            )
        })?),
    };
    let registered = match (req.registered_proof, size, fil) {
        (0, Some(_), _) | (0, None, cuzk_filecoin::ProofKind::PoRep) => None,
        (0, None, cuzk_filecoin::ProofKind::WindowPoSt) => {
            return Err(KindError::invalid(
                "sector_size",
                "neither sector_size nor registered_proof is set \
                 (registered_proof 0 is StackedDrgWinning2KiBV1, a WinningPoSt proof)",
            ))
        }
        (number, _, _) => Some(
            RegisteredProof::from_number(fil, number)
                .map_err(|e| KindError::invalid("registered_proof", e.to_string()))?,
        ),
    };
    let Some(registered) = registered else {
        return Ok((size, None));
    };
    if let Some(size) = size.filter(|&s| s != registered.size) {
        return Err(KindError::invalid(
            "registered_proof",
            format!(
                "sector_size {} ({size}) and registered_proof {} ({}) disagree",
                req.sector_size,
                registered.number(),
                registered.name()
            ),
        ));
    }
    registered
        .check_proven()
        .map_err(|e| KindError::invalid("registered_proof", e.to_string()))?;
    Ok((Some(registered.size), Some(registered)))
}

/// The sectors of an `AggregateSealProofs` request and its SnarkPack
/// version: each sector's fields checked (commitments as raw bytes or CIDs).
/// The seal proof and the proofs themselves are checked by
/// [`cuzk_filecoin::aggregate::aggregate_seal_proofs`].
pub fn aggregate_request(
    req: pb::AggregateSealProofsRequest,
) -> Result<(SealedSectors, SnarkPack), KindError> {
    use cuzk_filecoin::{commitment, CommitmentKind};
    let proof = RegisteredProof::from_number(cuzk_filecoin::ProofKind::PoRep, req.registered_proof)
        .map_err(|e| KindError::invalid("registered_proof", e.to_string()))?;
    let version = match pb::SnarkPackVersion::try_from(req.version) {
        Ok(pb::SnarkPackVersion::SnarkPackDefault | pb::SnarkPackVersion::SnarkPackV2) => {
            SnarkPack::V2
        }
        Ok(pb::SnarkPackVersion::SnarkPackV1) => SnarkPack::V1,
        Err(_) => {
            return Err(KindError::invalid(
                "version",
                format!("unknown SnarkPack version {}", req.version),
            ))
        }
    };
    let sectors = req
        .sectors
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let in_sector = |e: &dyn fmt::Display| {
                KindError::invalid("sectors", format!("sector {}: {e}", i + 1))
            };
            Ok(SealedSector {
                sector_id: s.sector_number,
                comm_r: commitment("comm_r", &s.comm_r, CommitmentKind::Sealed)
                    .map_err(|e| in_sector(&e))?,
                comm_d: commitment("comm_d", &s.comm_d, CommitmentKind::Unsealed)
                    .map_err(|e| in_sector(&e))?,
                ticket: bytes32("ticket", &s.ticket).map_err(|e| in_sector(&e))?,
                seed: bytes32("seed", &s.seed).map_err(|e| in_sector(&e))?,
                proof: s.proof,
            })
        })
        .collect::<Result<Vec<_>, KindError>>()?;
    let seals = SealedSectors {
        proof,
        prover_id: cuzk_filecoin::prover_id(req.miner_id),
        sectors,
    };
    Ok((seals, version))
}

/// The `AggregateSealProofs` request of miner `miner_id`'s `seals`: what
/// [`aggregate_request`] reads back (commitments sent as raw bytes).
pub fn aggregate_message(
    seals: SealedSectors,
    miner_id: u64,
    version: SnarkPack,
) -> pb::AggregateSealProofsRequest {
    let version = match version {
        SnarkPack::V1 => pb::SnarkPackVersion::SnarkPackV1,
        SnarkPack::V2 => pb::SnarkPackVersion::SnarkPackV2,
    };
    pb::AggregateSealProofsRequest {
        registered_proof: seals.proof.number(),
        miner_id,
        version: version as i32,
        sectors: seals
            .sectors
            .into_iter()
            .map(|s| pb::SealedSector {
                sector_number: s.sector_id,
                comm_r: s.comm_r.to_vec(),
                comm_d: s.comm_d.to_vec(),
                ticket: s.ticket.to_vec(),
                seed: s.seed.to_vec(),
                proof: s.proof,
            })
            .collect(),
    }
}

/// A 32-byte field (a commitment, randomness).
fn bytes32(field: &'static str, bytes: &[u8]) -> Result<[u8; 32], KindError> {
    bytes
        .try_into()
        .map_err(|_| KindError::invalid(field, format!("{} bytes; it is 32", bytes.len())))
}

/// Curio's priorities as the engine's ranks (higher first); unset is NORMAL.
fn priority(value: i32) -> Result<i32, KindError> {
    match pb::Priority::try_from(value) {
        Ok(pb::Priority::Unspecified) => Ok(pb::Priority::Normal as i32),
        Ok(p) => Ok(p as i32),
        Err(_) => Err(KindError::invalid(
            "priority",
            format!("unknown priority {value}"),
        )),
    }
}

fn synthetic(
    kind: ProofKind,
    req: &pb::SubmitProofRequest,
    priority: i32,
) -> Result<JobSpec, KindError> {
    if !req.vanilla_proof.is_empty() || !req.vanilla_proofs.is_empty() {
        return Err(KindError::invalid(
            "vanilla_proof",
            "synthetic kinds take no vanilla proof",
        ));
    }
    let name = kind_label(kind);
    let size = usize::try_from(req.sector_size).unwrap_or(usize::MAX);
    if size == 0 {
        return Err(KindError::invalid(
            "sector_size",
            format!("the {name} size (sector_size) must be at least 1"),
        ));
    }
    let workload =
        Workload::new(name, size).map_err(|e| KindError::invalid("proof_kind", e.to_string()))?;
    check_synthetic_size(workload)?;
    let partitions = (req.synthetic_partitions as usize).max(1);
    if partitions > MAX_SYNTHETIC_PARTITIONS {
        return Err(KindError::invalid(
            "synthetic_partitions",
            format!("{partitions} is more than {MAX_SYNTHETIC_PARTITIONS}"),
        ));
    }
    Ok(JobSpec {
        kind: name,
        circuit: Circuit::Synthetic(workload),
        request: req.sector_number,
        partitions,
        priority,
        filecoin: None,
    })
}

fn check_synthetic_size(workload: Workload) -> Result<(), KindError> {
    let limit = match workload {
        Workload::ShaChain { .. } => MAX_SHA_CHAIN,
        Workload::MulChain { .. } => MAX_MUL_CHAIN,
    };
    if workload.size() > limit {
        return Err(KindError::invalid(
            "sector_size",
            format!(
                "{} of size {} is larger than this daemon proves ({limit})",
                workload.name(),
                workload.size()
            ),
        ));
    }
    Ok(())
}

/// The fields each Filecoin kind cannot do without; answers the sector
/// size (`None`: a PoRep whose C1 output is to say it) and the registered
/// proof, when the request sets one.
fn check_filecoin(
    kind: ProofKind,
    req: &pb::SubmitProofRequest,
) -> Result<(Option<SectorSize>, Option<RegisteredProof>), KindError> {
    let found = filecoin_size(kind, req)?;
    match kind {
        ProofKind::PorepSealCommit => {
            if req.vanilla_proof.is_empty() {
                return Err(KindError::invalid(
                    "vanilla_proof",
                    "the C1 output is missing",
                ));
            }
            serde_json::from_slice::<serde::de::IgnoredAny>(&req.vanilla_proof).map_err(|e| {
                KindError::invalid("vanilla_proof", format!("the C1 output is not JSON: {e}"))
            })?;
        }
        _ if req.vanilla_proofs.is_empty() => {
            return Err(KindError::invalid(
                "vanilla_proofs",
                "no vanilla proofs were given",
            ));
        }
        ProofKind::WindowPostPartition | ProofKind::WinningPost if req.randomness.len() != 32 => {
            return Err(KindError::invalid(
                "randomness",
                format!("{} bytes; PoSt randomness is 32", req.randomness.len()),
            ));
        }
        _ => {}
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_requests_read_back_what_the_client_sends() {
        let sector = |n: u8| SealedSector {
            sector_id: u64::from(n),
            comm_r: [n; 32],
            comm_d: [n + 1; 32],
            ticket: [n + 2; 32],
            seed: [n + 3; 32],
            proof: vec![n; 192],
        };
        let seals = SealedSectors {
            proof: RegisteredProof::proven(cuzk_filecoin::ProofKind::PoRep, SectorSize::S2KiB),
            prover_id: cuzk_filecoin::prover_id(1000),
            sectors: vec![sector(1), sector(9)],
        };
        for version in [SnarkPack::V1, SnarkPack::V2] {
            let message = aggregate_message(seals.clone(), 1000, version);
            let (back, read) = aggregate_request(message).unwrap();
            assert_eq!(
                (back.proof, back.prover_id, read),
                (seals.proof, seals.prover_id, version)
            );
            assert_eq!(back.sectors, seals.sectors);
        }
        let mut short = aggregate_message(seals, 1000, SnarkPack::V2);
        short.sectors[1].seed.pop();
        let error = aggregate_request(short).unwrap_err().to_string();
        assert!(error.contains("sector 2: seed: 31 bytes"), "{error}");
    }

    fn mul(size: u64, partitions: u32) -> pb::SubmitProofRequest {
        pb::SubmitProofRequest {
            proof_kind: ProofKind::MulChain as i32,
            sector_size: size,
            sector_number: 7,
            synthetic_partitions: partitions,
            ..Default::default()
        }
    }

    #[test]
    fn synthetic_requests_map_to_engine_requests() {
        let spec = job_spec(&mul(64, 3)).unwrap();
        assert_eq!(spec.circuit.to_string(), "mul-chain/64");
        assert_eq!((spec.request, spec.partitions), (7, 3));
        assert_eq!(spec.priority, pb::Priority::Normal as i32);
        assert_eq!(job_spec(&mul(64, 0)).unwrap().partitions, 1);
        let circuit = Circuit::parse("sha-chain/2").unwrap();
        let path = circuit.params_path(Path::new("p"), Path::new("f")).unwrap();
        assert_eq!(path, Path::new("p/sha-chain-2.params"));
    }

    #[test]
    fn filecoin_circuit_ids_round_trip() {
        for id in [
            "porep-32GiB",
            "window-post-2KiB",
            "winning-post-64GiB",
            "snap-deals-8MiB",
        ] {
            let circuit = Circuit::parse(id).unwrap();
            assert!(matches!(circuit, Circuit::Filecoin(_)), "{id}");
            assert_eq!(circuit.to_string(), id);
        }
        let circuit = Circuit::parse("window-post-2KiB").unwrap();
        let path = circuit.params_path(Path::new("p"), Path::new("f")).unwrap();
        assert!(path.starts_with("f"), "{}", path.display());
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("v28-") && name.ends_with(".params"),
            "{name}"
        );
        assert!(Circuit::parse("porep-3GiB").is_err());
        assert!(Circuit::parse("seal-ish-2KiB").is_err());
    }

    #[test]
    fn bad_requests_name_the_field() {
        let err = |req: pb::SubmitProofRequest| {
            let e = job_spec(&req).unwrap_err();
            (e.code(), e.to_string())
        };
        let (code, text) = err(mul(0, 1));
        assert_eq!(code, Code::InvalidArgument);
        assert!(text.starts_with("sector_size"), "{text}");
        assert!(err(mul(64, 1000)).1.starts_with("synthetic_partitions"));
        let garbage = pb::SubmitProofRequest {
            vanilla_proof: b"garbage".to_vec(),
            ..mul(64, 1)
        };
        assert!(err(garbage).1.starts_with("vanilla_proof"));
        let unknown = pb::SubmitProofRequest {
            proof_kind: 55,
            ..mul(64, 1)
        };
        assert_eq!(err(unknown).1, "unknown proof_kind 55");
        let porep = pb::SubmitProofRequest {
            proof_kind: ProofKind::PorepSealCommit as i32,
            sector_size: 32 << 30,
            vanilla_proof: b"{\"Phase1Out\":\"\"}".to_vec(),
            ..Default::default()
        };
        let (code, text) = err(porep.clone());
        assert_eq!(code, Code::InvalidArgument);
        assert!(text.contains("C1 output"), "{text}");
        let (code, text) = err(pb::SubmitProofRequest {
            proof_kind: ProofKind::SnapDealsUpdate as i32,
            vanilla_proofs: vec![vec![1]],
            comm_r_old: vec![0; 31],
            ..porep.clone()
        });
        assert_eq!(code, Code::InvalidArgument);
        assert!(text.contains("comm_r_old: 31 bytes"), "{text}");
        let (code, text) = err(pb::SubmitProofRequest {
            vanilla_proof: b"\x00\x01garbage".to_vec(),
            ..porep.clone()
        });
        assert_eq!(code, Code::InvalidArgument);
        assert!(text.contains("not JSON"), "{text}");
        let (_, text) = err(pb::SubmitProofRequest {
            sector_size: 12345,
            ..porep
        });
        assert!(text.contains("not a Filecoin sector size"), "{text}");
        assert!(Circuit::parse("porep-32g").is_err());
        assert!(Circuit::parse("mul-chain/0").is_err());
    }
}
