//! WinningPoSt and WindowPoSt vanilla proofs of the sealed sector, in the
//! form filecoin-proofs-api and lotus hand to a prover: the bincode of one
//! `FallbackPoStSectorProof` per sector.

use anyhow::{ensure, Context, Result};
use filecoin_proofs::{
    as_safe_commitment, generate_fallback_sector_challenges, generate_single_vanilla_proof,
    generate_winning_post_sector_challenge,
    parameters::{window_post_public_params, winning_post_public_params},
    single_partition_vanilla_proofs, DefaultTreeHasher, FallbackPoStSectorProof, PoStConfig,
    PoStType, PrivateReplicaInfo, ProverId,
};
use filecoin_proofs_api::RegisteredPoStProof;
use storage_proofs_core::{
    merkle::{MerkleProofTrait, MerkleTreeTrait},
    proof::ProofScheme,
    sector::SectorId,
};
use storage_proofs_post::fallback::{FallbackPoSt, PublicInputs, PublicSector};

use crate::kinds::Tree;
use crate::seal::SealedSector;

/// One PoSt's vanilla proofs and the sectors they prove, in order.
pub struct VanillaPoSt {
    pub kind: RegisteredPoStProof,
    pub randomness: [u8; 32],
    pub sector_ids: Vec<u64>,
    /// Their comm_r, in the same order.
    pub comm_rs: Vec<[u8; 32]>,
    /// bincode of `FallbackPoStSectorProof<Tree>`, one per sector.
    pub proofs: Vec<Vec<u8>>,
}

/// Proves the sealed sector, the only one of its miner, for a PoSt of
/// `kind` under `randomness`.
pub fn prove_sector(
    kind: RegisteredPoStProof,
    sector: &SealedSector,
    prover_id: ProverId,
    randomness: [u8; 32],
) -> Result<VanillaPoSt> {
    let config = kind.as_v1_config();
    let proving_set = [sector.sector_id];
    let challenged = challenged_sectors::<Tree>(&config, randomness, &proving_set, prover_id)?;
    let challenges =
        generate_fallback_sector_challenges::<Tree>(&config, &randomness, &challenged, prover_id)?;
    let replica = PrivateReplicaInfo::<Tree>::new(
        sector.replica.clone(),
        sector.comm_r,
        sector.cache.clone(),
    )?;

    let mut post = VanillaPoSt {
        kind,
        randomness,
        sector_ids: Vec::new(),
        comm_rs: Vec::new(),
        proofs: Vec::new(),
    };
    for sector_id in challenged {
        let leaves = &challenges[&sector_id];
        let proof = generate_single_vanilla_proof::<Tree>(&config, sector_id, &replica, leaves)?;
        post.sector_ids.push(u64::from(sector_id));
        post.comm_rs.push(sector.comm_r);
        post.proofs.push(bincode::serialize(&proof)?);
    }
    Ok(post)
}

/// The sectors of `proving_set` a PoSt challenges: WinningPoSt picks them
/// from the randomness, WindowPoSt takes them all.
pub fn challenged_sectors<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    randomness: [u8; 32],
    proving_set: &[SectorId],
    prover_id: ProverId,
) -> Result<Vec<SectorId>> {
    Ok(match config.typ {
        PoStType::Winning => generate_winning_post_sector_challenge::<Tree>(
            config,
            &randomness,
            proving_set.len() as u64,
            prover_id,
        )?
        .into_iter()
        .map(|index| proving_set[index as usize])
        .collect(),
        PoStType::Window => proving_set.to_vec(),
    })
}

/// Checks vanilla proofs as filecoin-proofs does before it proves them:
/// shaped into partition `partition_index` and verified against the
/// randomness and prover id, whose challenges they must answer.
pub fn verify_vanilla<Tree>(
    kind: RegisteredPoStProof,
    prover_id: ProverId,
    randomness: [u8; 32],
    partition_index: usize,
    proofs: &[Vec<u8>],
) -> Result<bool>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let config = kind.as_v1_config();
    let proofs = proofs
        .iter()
        .map(|bytes| bincode::deserialize::<FallbackPoStSectorProof<Tree>>(bytes))
        .collect::<Result<Vec<_>, _>>()
        .context("decoding a FallbackPoStSectorProof")?;
    for proof in &proofs {
        // The circuit takes comm_r_last from this field, the vanilla
        // verifier from the inclusion proofs' roots: they must agree.
        for sector in &proof.vanilla_proof.sectors {
            ensure!(
                sector
                    .inclusion_proofs
                    .iter()
                    .all(|inclusion| inclusion.root() == sector.comm_r_last),
                "sector {:?}: comm_r_last is not the root of its inclusion proofs",
                proof.sector_id
            );
        }
    }
    let pub_params = match config.typ {
        PoStType::Winning => winning_post_public_params::<Tree>(&config)?,
        PoStType::Window => window_post_public_params::<Tree>(&config)?,
    };
    let sectors: Vec<_> = proofs
        .iter()
        .map(|proof| PublicSector {
            id: proof.sector_id,
            comm_r: proof.comm_r,
        })
        .collect();
    let sectors = match config.typ {
        // WinningPoSt proves its 66 challenges as 66 one-challenge slots.
        // Listing the sector once, as generate_winning_post_with_vanilla
        // does, would check the first challenge only; verify_winning_post
        // repeats the sectors to fill every slot, and so does this.
        PoStType::Winning => (0..pub_params.sector_count)
            .flat_map(|_| sectors.iter().cloned())
            .collect(),
        PoStType::Window => sectors,
    };
    let pub_inputs = PublicInputs {
        randomness: as_safe_commitment(&randomness, "randomness")?,
        prover_id: as_safe_commitment(&prover_id, "prover_id")?,
        sectors,
        k: Some(partition_index),
    };
    let partition = single_partition_vanilla_proofs(&config, &pub_params, &pub_inputs, &proofs)?;
    FallbackPoSt::<Tree>::verify(&pub_params, &pub_inputs, &partition)
}
