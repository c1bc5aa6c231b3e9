//! WinningPoSt and WindowPoSt (one partition) from the sectors' vanilla
//! proofs, as lotus and Curio hand them over: each sector's
//! `FallbackPoStSectorProof` in bincode.

use std::collections::BTreeMap;

use filecoin_proofs::parameters::{window_post_public_params, winning_post_public_params};
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, single_partition_vanilla_proofs,
    FallbackPoStSectorProof, PoStType, PublicReplicaInfo,
};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

use crate::circuits::{Blank, BlankCircuit, Compound};
use crate::error::bad;
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
    if vanilla.is_empty() {
        return Err(bad("vanilla proofs", "none given"));
    }
    if config.typ == PoStType::Winning && vanilla.len() != config.sector_count {
        return Err(bad(
            "vanilla proofs",
            format!(
                "{} given, WinningPoSt proves {}",
                vanilla.len(),
                config.sector_count
            ),
        ));
    }
    if vanilla.len() > config.sector_count {
        return Err(bad(
            "vanilla proofs",
            format!(
                "{} given, a {size} WindowPoSt partition holds {}",
                vanilla.len(),
                config.sector_count
            ),
        ));
    }
    let proofs = vanilla
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            bincode::deserialize::<FallbackPoStSectorProof<Tree>>(bytes)
                .map_err(|e| bad(format!("vanilla proof {i}"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sectors: Vec<_> = proofs
        .iter()
        .map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();
    let window = config.typ == PoStType::Window;
    let pub_inputs = fallback::PublicInputs {
        randomness: as_safe_commitment(&inputs.randomness, "randomness")?,
        prover_id: as_safe_commitment(&inputs.prover_id, "prover_id")?,
        sectors,
        k: window.then_some(inputs.partition_index),
    };
    let invalid = || FilecoinError::InvalidVanilla {
        what: "vanilla proofs".to_owned(),
        kind,
        size,
    };
    // Both helpers verify the vanilla proofs, as filecoin-proofs does
    // before proving.
    let mut pub_inputs = pub_inputs;
    let (pp, vanilla_partitions) = if window {
        let pp = window_post_public_params::<Tree>(&config)?;
        let one = single_partition_vanilla_proofs(&config, &pp, &pub_inputs, &proofs)
            .map_err(|_| invalid())?;
        (pp, vec![one])
    } else {
        let pp = winning_post_public_params::<Tree>(&config)?;
        let all = partition_vanilla_proofs(&config, &pp, &pub_inputs, 1, &proofs)
            .map_err(|_| invalid())?;
        // The circuit proves each of the 66 challenges as a one-challenge
        // "sector"; verify_winning_post lists the sector once per challenge
        // so that each gets its own challenge index. The circuit is the
        // same either way; the public inputs are the verifier's only so.
        let one = pub_inputs.sectors.clone();
        pub_inputs.sectors = (0..pp.sector_count).flat_map(|_| one.clone()).collect();
        (pp, all)
    };
    let replicas = proofs
        .iter()
        .map(|p| {
            let mut comm_r = [0u8; 32];
            comm_r.copy_from_slice(p.comm_r.as_ref());
            Ok((p.sector_id, PublicReplicaInfo::new(comm_r)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (randomness, prover_id) = (inputs.randomness, inputs.prover_id);
    let verifier: Verifier = Box::new(move |proof: &[u8]| {
        if window {
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
    });
    let partitions = Compound::<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>::new(
        pp,
        pub_inputs,
        vanilla_partitions,
    );
    Ok(FilecoinRequest::new(
        kind,
        size,
        Box::new(partitions),
        verifier,
    ))
}
