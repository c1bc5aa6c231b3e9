//! WinningPoSt and WindowPoSt (one partition) from the sectors' vanilla
//! proofs, as lotus and Curio hand them over: each sector's
//! `FallbackPoStSectorProof` in bincode.

use std::collections::BTreeMap;

use filecoin_proofs::parameters::{window_post_public_params, winning_post_public_params};
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, single_partition_vanilla_proofs,
    FallbackPoStSectorProof, PoStConfig, PoStType, PublicReplicaInfo,
};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

use crate::circuits::{Blank, BlankCircuit, Compound};
use crate::error::{bad, unless_panics};
use crate::registry::with_tree;
use crate::request::{FilecoinRequest, Verifier};
use crate::{FilecoinError, ProofKind, SectorSize};

type Scheme<Tree> = FallbackPoSt<'static, Tree>;
type Circuit<Tree> = FallbackPoStCircuit<Tree>;
type Comp<Tree> = FallbackPoStCompound<Tree>;

/// What a PoSt request proves, beside its vanilla proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostInputs {
    /// The chain randomness (a canonical field element).
    pub randomness: [u8; 32],
    /// The miner's prover id.
    pub prover_id: [u8; 32],
    /// WindowPoSt: which partition of the deadline (0 for WinningPoSt).
    pub partition_index: usize,
}

fn post_type(kind: ProofKind) -> PoStType {
    match kind {
        ProofKind::WinningPoSt => PoStType::Winning,
        _ => PoStType::Window,
    }
}

/// The blank PoSt circuit of `kind` at `size`.
pub(crate) fn blank(
    kind: ProofKind,
    size: SectorSize,
) -> Result<Box<dyn BlankCircuit>, FilecoinError> {
    let config = size.post_config(post_type(kind));
    with_tree!(size, Tree => {
        let pp = match config.typ {
            PoStType::Winning => winning_post_public_params::<Tree>(&config)?,
            PoStType::Window => window_post_public_params::<Tree>(&config)?,
        };
        Ok(Box::new(Blank::<Circuit<Tree>>::of::<Scheme<Tree>, Comp<Tree>>(&pp)))
    })
}

/// The PoSt request of `kind` at `size` for the sectors' `vanilla` proofs.
pub(crate) fn request(
    kind: ProofKind,
    size: SectorSize,
    inputs: PostInputs,
    vanilla: &[Vec<u8>],
) -> Result<FilecoinRequest, FilecoinError> {
    with_tree!(size, Tree => request_for::<Tree>(kind, size, inputs, vanilla))
}

fn request_for<Tree: 'static + MerkleTreeTrait>(
    kind: ProofKind,
    size: SectorSize,
    inputs: PostInputs,
    vanilla: &[Vec<u8>],
) -> Result<FilecoinRequest, FilecoinError> {
    let config = size.post_config(post_type(kind));
    let proofs = parse_vanilla::<Tree>(&config, size, vanilla)?;
    let window = config.typ == PoStType::Window;
    let mut pub_inputs = fallback::PublicInputs {
        randomness: as_safe_commitment(&inputs.randomness, "randomness")?,
        prover_id: as_safe_commitment(&inputs.prover_id, "prover_id")?,
        sectors: proofs
            .iter()
            .map(|p| PublicSector {
                id: p.sector_id,
                comm_r: p.comm_r,
            })
            .collect(),
        k: window.then_some(inputs.partition_index),
    };
    let invalid = |_| FilecoinError::InvalidVanilla {
        what: "vanilla proofs".to_owned(),
        kind,
        size,
    };
    // Both helpers verify the vanilla proofs, as filecoin-proofs does
    // before proving.
    let (pp, vanilla_partitions) = if window {
        let pp = window_post_public_params::<Tree>(&config)?;
        let one = unless_panics("vanilla proofs", || {
            single_partition_vanilla_proofs(&config, &pp, &pub_inputs, &proofs)
        })?
        .map_err(invalid)?;
        (pp, vec![one])
    } else {
        let pp = winning_post_public_params::<Tree>(&config)?;
        let all = unless_panics("vanilla proofs", || {
            partition_vanilla_proofs(&config, &pp, &pub_inputs, 1, &proofs)
        })?
        .map_err(invalid)?;
        // The circuit proves each of the 66 challenges as a one-challenge
        // "sector"; verify_winning_post lists the sector once per challenge
        // so that each gets its own challenge index. The circuit is the
        // same either way; the public inputs are the verifier's only so.
        let one = pub_inputs.sectors.clone();
        pub_inputs.sectors = (0..pp.sector_count).flat_map(|_| one.clone()).collect();
        (pp, all)
    };
    let verifier = verifier::<Tree>(config, inputs, &proofs)?;
    let partitions = Compound::<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>::new(
        pp,
        pub_inputs,
        vanilla_partitions,
    )
    .with_pieces(sector_pieces::<Tree>)
    .with_native(native_witness::<Tree>);
    Ok(FilecoinRequest::new(
        kind,
        size,
        Box::new(partitions),
        verifier,
    ))
}

/// Partition `k`'s circuit as runs of its sectors, a few runs per thread
/// of the current pool: `FallbackPoStCircuit` proves each sector (a
/// WinningPoSt challenge is a sector of its own) apart from the others and
/// allocates nothing before them.
fn sector_pieces<Tree: 'static + MerkleTreeTrait>(
    partitions: &Compound<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>,
    k: usize,
) -> Result<Vec<Circuit<Tree>>, FilecoinError> {
    let whole = partitions.circuit(k)?;
    let runs = 4 * rayon::current_num_threads();
    let per_run = whole.sectors.len().div_ceil(runs).max(1);
    let mut rest = whole.sectors;
    let mut pieces = Vec::with_capacity(runs);
    while !rest.is_empty() {
        let tail = rest.split_off(per_run.min(rest.len()));
        pieces.push(FallbackPoStCircuit {
            prover_id: whole.prover_id,
            sectors: rest,
        });
        rest = tail;
    }
    Ok(pieces)
}

/// Partition `k`'s aux assignment from the PoSt witness program.
fn native_witness<Tree: 'static + MerkleTreeTrait>(
    partitions: &Compound<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>,
    k: usize,
    num_aux: usize,
) -> Result<Vec<blstrs::Scalar>, crate::NativeError> {
    let circuit = partitions
        .circuit(k)
        .map_err(|e| crate::NativeError::Unsupported(e.to_string()))?;
    let vanilla = partitions
        .vanilla
        .get(k)
        .ok_or(crate::NativeError::Missing("partition"))?;
    crate::native::post_partition(&circuit, vanilla, num_aux)
}

/// The sectors' vanilla proofs, as many as the PoSt proves.
fn parse_vanilla<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    size: SectorSize,
    vanilla: &[Vec<u8>],
) -> Result<Vec<FallbackPoStSectorProof<Tree>>, FilecoinError> {
    let count = |what: String| bad("vanilla proofs", what);
    let (n, most) = (vanilla.len(), config.sector_count);
    if n == 0 {
        return Err(count("none given".to_owned()));
    }
    if config.typ == PoStType::Winning && n != most {
        return Err(count(format!("{n} given, WinningPoSt proves {most}")));
    }
    if n > most {
        return Err(count(format!(
            "{n} given, a {size} WindowPoSt partition holds {most}"
        )));
    }
    vanilla
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            bincode::deserialize::<FallbackPoStSectorProof<Tree>>(bytes)
                .map_err(|e| bad(format!("vanilla proof {i}"), e))
        })
        .collect()
}

/// filecoin-proofs' verifier of this PoSt, for the sectors of `proofs`.
fn verifier<Tree: 'static + MerkleTreeTrait>(
    config: PoStConfig,
    inputs: PostInputs,
    proofs: &[FallbackPoStSectorProof<Tree>],
) -> Result<Verifier, FilecoinError> {
    let replicas = proofs
        .iter()
        .map(|p| {
            let mut comm_r = [0u8; 32];
            comm_r.copy_from_slice(p.comm_r.as_ref());
            Ok((p.sector_id, PublicReplicaInfo::new(comm_r)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (randomness, prover_id) = (inputs.randomness, inputs.prover_id);
    Ok(Box::new(move |proof: &[u8]| {
        if config.typ == PoStType::Window {
            let replicas: BTreeMap<_, _> = replicas.iter().cloned().collect();
            filecoin_proofs::verify_window_post::<Tree>(
                &config,
                &randomness,
                &replicas,
                prover_id,
                proof,
            )
        } else {
            filecoin_proofs::verify_winning_post::<Tree>(
                &config,
                &randomness,
                &replicas,
                prover_id,
                proof,
            )
        }
    }))
}
