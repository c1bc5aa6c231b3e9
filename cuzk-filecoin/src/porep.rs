//! PoRep C2: the partition circuits of a sealed sector from its C1 output.

use base64::Engine as _;
use bellperson::groth16::aggregate::AggregateVersion;
use filecoin_proofs::{
    as_safe_commitment, parameters::public_params, DefaultPieceDomain, DefaultPieceHasher,
    PoRepConfig, SealCommitOutput, SealCommitPhase1Output,
};
use serde_json::Value;
use storage_proofs_core::api_version::ApiFeature;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::circuits::{Blank, BlankCircuit, Compound};
use crate::error::{bad, unless_panics};
use crate::registry::{with_tree, RegisteredProof};
use crate::request::{FilecoinRequest, Finisher, Verifier};
use crate::{FilecoinError, ProofKind, SectorSize};

type Scheme<Tree> = StackedDrg<'static, Tree, DefaultPieceHasher>;
type Circuit<Tree> = StackedCircuit<Tree, DefaultPieceHasher>;
type Comp<Tree> = StackedCompound<Tree, DefaultPieceHasher>;

/// Where a sector's C1 output came from and who sealed it: what
/// `verify_seal` needs beside the proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealIds {
    /// The miner's prover id (its id's LEB128 form, left-aligned).
    pub prover_id: [u8; 32],
    /// The sector number.
    pub sector_id: u64,
}

/// A C1 output in any of the forms it arrives in, reduced to
/// filecoin-proofs' own JSON (`SealCommitPhase1Output`) and its sector size
/// when the form names one.
pub(crate) struct C1Json {
    pub(crate) raw: Value,
    pub(crate) size: Option<SectorSize>,
    pub(crate) sector_num: Option<u64>,
    /// The seal proof, when the form names it.
    pub(crate) proof: Option<RegisteredProof>,
}

/// Reads `bytes` as filecoin-proofs' C1 JSON, as filecoin-proofs-api's
/// (vanilla proofs tagged with the registered proof), or as Curio's wrapper
/// (`{"SectorNum", "Phase1Out": base64(api JSON), "SectorSize"}`).
pub(crate) fn parse_c1(bytes: &[u8]) -> Result<C1Json, FilecoinError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| bad("C1 output", e))?;
    let Value::Object(mut map) = value else {
        return Err(bad("C1 output", "not a JSON object"));
    };
    if let Some(phase1) = map.remove("Phase1Out") {
        let encoded = phase1
            .as_str()
            .ok_or_else(|| bad("C1 output", "Phase1Out is not a string"))?;
        let inner = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|e| bad("C1 output", format!("Phase1Out is not base64: {e}")))?;
        let mut c1 = parse_c1(&inner)?;
        c1.sector_num = map.get("SectorNum").and_then(Value::as_u64);
        if let Some(bytes) = map.get("SectorSize").and_then(Value::as_u64) {
            let size = SectorSize::from_bytes(bytes)?;
            if c1.size.is_some_and(|s| s != size) {
                return Err(bad("C1 output", "SectorSize and registered_proof disagree"));
            }
            c1.size = Some(size);
        }
        return Ok(c1);
    }
    let mut size = None;
    let mut proof = None;
    if let Some(name) = map.remove("registered_proof") {
        let name = name
            .as_str()
            .ok_or_else(|| bad("C1 output", "registered_proof is not a string"))?;
        // A V1 seal proof has other challenges (and porep_id): refused
        // here, by name. Synthetic PoRep and NI-PoRep are proven with their
        // own configurations.
        let registered = RegisteredProof::from_name(ProofKind::PoRep, name)
            .and_then(RegisteredProof::check_proven)
            .map_err(|e| bad("C1 output", e))?;
        size = Some(registered.size);
        proof = Some(registered);
        // The api form tags the proofs by size: {"StackedDrg2KiBV1": [...]}.
        let tagged = map
            .remove("vanilla_proofs")
            .ok_or_else(|| bad("C1 output", "no vanilla_proofs"))?;
        let untagged = match tagged {
            Value::Object(tag) if tag.len() == 1 => {
                let (tag, proofs) = tag.into_iter().next().expect("one");
                let want = format!("StackedDrg{}V1", registered.size);
                if tag != want {
                    return Err(bad(
                        "C1 output",
                        format!("its vanilla_proofs are tagged {tag}, a {name} C1 has {want}"),
                    ));
                }
                proofs
            }
            _ => return Err(bad("C1 output", "vanilla_proofs is not tagged by proof")),
        };
        map.insert("vanilla_proofs".to_owned(), untagged);
    }
    Ok(C1Json {
        raw: Value::Object(map),
        size,
        sector_num: None,
        proof,
    })
}

/// The blank PoRep circuit at `size`.
pub(crate) fn blank(size: SectorSize) -> Result<Box<dyn BlankCircuit>, FilecoinError> {
    with_tree!(size, Tree => {
        let pp = public_params::<Tree>(&size.porep_config())?;
        Ok(Box::new(Blank::<Circuit<Tree>>::of::<Scheme<Tree>, Comp<Tree>>(&pp)))
    })
}

/// The PoRep request for a C1 output of seal proof `proof`.
pub(crate) fn request(
    c1: C1Json,
    proof: RegisteredProof,
    ids: SealIds,
) -> Result<FilecoinRequest, FilecoinError> {
    with_tree!(proof.size, Tree => request_for::<Tree>(c1, proof, ids))
}

fn request_for<Tree: 'static + MerkleTreeTrait>(
    c1: C1Json,
    proof: RegisteredProof,
    ids: SealIds,
) -> Result<FilecoinRequest, FilecoinError> {
    let size = proof.size;
    let out: SealCommitPhase1Output<Tree> =
        serde_json::from_value(c1.raw).map_err(|e| bad("C1 output", e))?;
    // Synthetic PoRep and NI-PoRep: their own porep_id and challenges
    // (NI-PoRep's in 13 or 126 partitions); the same circuit and
    // parameters as V1_1 (the blank circuit stays V1_1's).
    let config = proof.porep_config()?;
    let aggregated = config.feature_enabled(ApiFeature::NonInteractivePoRep);
    if aggregated {
        let path = crate::params::snarkpack_srs_path();
        if !path.exists() {
            return Err(FilecoinError::MissingSrs { path });
        }
    }
    if out.vanilla_proofs.len() != usize::from(config.partitions)
        || out.vanilla_proofs.iter().any(Vec::is_empty)
    {
        return Err(bad(
            "C1 output",
            format!(
                "{} partitions of vanilla proofs, {size} sectors have {}",
                out.vanilla_proofs.len(),
                usize::from(config.partitions)
            ),
        ));
    }
    let comm_r = as_safe_commitment(&out.comm_r, "comm_r")?;
    let comm_d: DefaultPieceDomain = as_safe_commitment(&out.comm_d, "comm_d")?;
    let pub_inputs = stacked::PublicInputs {
        replica_id: out.replica_id,
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(out.seed),
    };
    let pp = public_params::<Tree>(&config)?;
    // What seal_commit_phase1 checked: a C1 made for another sector size,
    // or tampered with, stops here rather than in synthesis.
    let valid = unless_panics("C1 output", || {
        Scheme::<Tree>::verify_all_partitions(&pp, &pub_inputs, &out.vanilla_proofs)
    })?
    .unwrap_or(false);
    if !valid {
        return Err(FilecoinError::InvalidVanilla {
            what: "C1 output".to_owned(),
            kind: ProofKind::PoRep,
            size,
        });
    }
    // verify_seal derives the replica id from the prover id, sector number,
    // ticket, comm_d and porep_id: a C1 output of another miner or sector
    // (or seal proof) would give a proof that it rejects.
    let replica_id = stacked::generate_replica_id::<Tree::Hasher, _>(
        &ids.prover_id,
        ids.sector_id,
        &out.ticket,
        comm_d,
        &config.porep_id,
    );
    if replica_id != out.replica_id {
        return Err(bad(
            "C1 output",
            format!(
                "its replica_id is not that of sector {} of {} sealed as {}",
                ids.sector_id,
                miner_of(&ids.prover_id),
                proof
            ),
        ));
    }
    let (comm_r, comm_d, ticket, seed) = (out.comm_r, out.comm_d, out.ticket, out.seed);
    let finisher = aggregated.then(|| aggregator::<Tree>(config.clone(), comm_r, seed));
    let verifier: Verifier = Box::new(move |proof: &[u8]| {
        filecoin_proofs::verify_seal::<Tree>(
            &config,
            comm_r,
            comm_d,
            ids.prover_id,
            ids.sector_id.into(),
            ticket,
            seed,
            proof,
        )
    });
    let partitions = Compound::<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>::new(
        pp,
        pub_inputs,
        out.vanilla_proofs,
    )
    .with_pieces(challenge_pieces::<Tree>)
    .with_native(native_witness::<Tree>);
    Ok(
        FilecoinRequest::new(ProofKind::PoRep, size, Box::new(partitions), verifier)
            .finished_by(finisher),
    )
}

/// NI-PoRep's last step, as `seal_commit_phase2` takes it: the partitions'
/// proofs of one sector aggregated with SnarkPack (version 2), whose
/// transcript hashes comm_r alone (NI-PoRep has no seed to hash).
fn aggregator<Tree: 'static + MerkleTreeTrait>(
    config: PoRepConfig,
    comm_r: [u8; 32],
    seed: [u8; 32],
) -> Finisher {
    Box::new(move |partition_proofs: &[u8]| {
        filecoin_proofs::aggregate_seal_commit_proofs::<Tree>(
            &config,
            &[comm_r],
            &[seed],
            &[SealCommitOutput {
                proof: partition_proofs.to_vec(),
            }],
            AggregateVersion::V2,
        )
    })
}

/// Partition `k`'s circuit as one piece per challenge: `StackedCircuit`
/// allocates the replica id and the commitments, then each challenge's
/// openings and labels apart from the others', so a circuit built from one
/// challenge's vanilla proof is the prefix and that challenge's block.
fn challenge_pieces<Tree: 'static + MerkleTreeTrait>(
    partitions: &Compound<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>,
    k: usize,
) -> Result<Vec<Circuit<Tree>>, FilecoinError> {
    partitions
        .vanilla(k)?
        .iter()
        .map(|challenge| partitions.circuit_of(k, &vec![challenge.clone()]))
        .collect()
}

/// Partition `k`'s aux assignment from the PoRep witness program.
fn native_witness<Tree: 'static + MerkleTreeTrait>(
    partitions: &Compound<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>,
    k: usize,
    num_aux: usize,
) -> Result<Vec<blstrs::Scalar>, crate::NativeError> {
    let vanilla = partitions
        .vanilla
        .get(k)
        .ok_or(crate::NativeError::Missing("partition"))?;
    crate::native::porep_partition(
        &partitions.pub_params,
        &partitions.pub_inputs,
        vanilla,
        k,
        num_aux,
    )
}

/// "miner N" for a prover id that is the LEB128 form of N, else the prover
/// id in hex.
pub(crate) fn miner_of(prover_id: &[u8; 32]) -> String {
    let mut miner = 0u64;
    for (i, &byte) in prover_id.iter().enumerate().take(10) {
        miner |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if crate::prover_id(miner) == *prover_id {
                return format!("miner {miner}");
            }
            break;
        }
    }
    let hex: String = prover_id.iter().map(|b| format!("{b:02x}")).collect();
    format!("prover id {hex}")
}
