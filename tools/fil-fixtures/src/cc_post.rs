//! WinningPoSt and WindowPoSt vanilla proofs of CC sectors, and SnapDeals
//! partition proofs of an update of one, made without sealing, at any size.
//!
//! A PoSt opens each challenged sector's tree R at a few leaves and proves
//! comm_r = H(comm_c, comm_r_last); nothing ties the leaves to labels. So
//! each sector gets a drawn comm_c and a sparse tree R (`SparseTree`) whose
//! challenged leaves are drawn and whose other leaves share one default: a
//! full WindowPoSt partition (2,349 sectors at 32 GiB) takes seconds.

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{
    as_safe_commitment, commitment_from_fr, generate_fallback_sector_challenges, DefaultTreeDomain,
    DefaultTreeHasher, FallbackPoStSectorProof, PoStType, ProverId, SectorUpdateConfig,
};
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredUpdateProof};
use generic_array::typenum::{U0, U2};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use storage_proofs_core::{merkle::MerkleTreeTrait, sector::SectorId};
use storage_proofs_post::fallback::{Proof, SectorProof};
use storage_proofs_update::{
    ChallengeProof, Challenges, PartitionProof, PublicParams as UpdateParams,
};

use crate::cc::{random_domain, zero_tree_d, CcSector};
use crate::post::{challenged_sectors, VanillaPoSt};
use crate::snap::UpdatedSector;
use crate::sparse::SparseTree;

/// The vanilla proofs of a PoSt of `kind` under `randomness` over CC
/// sectors numbered from `first_sector`: the one sector of a WinningPoSt,
/// or a full WindowPoSt partition (the kind's sectors per partition).
pub fn cc_post<Tree>(
    kind: RegisteredPoStProof,
    first_sector: u64,
    prover_id: ProverId,
    randomness: [u8; 32],
    rng: &mut dyn RngCore,
) -> Result<VanillaPoSt>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let config = kind.as_v1_config();
    let proving_set: Vec<SectorId> = match config.typ {
        PoStType::Winning => vec![SectorId::from(first_sector)],
        PoStType::Window => (0..config.sector_count as u64)
            .map(|i| SectorId::from(first_sector + i))
            .collect(),
    };
    let challenged = challenged_sectors::<Tree>(&config, randomness, &proving_set, prover_id)?;
    let challenges =
        generate_fallback_sector_challenges::<Tree>(&config, &randomness, &challenged, prover_id)?;
    let leaves = (u64::from(config.sector_size) / 32) as usize;
    let arities = SparseTree::<DefaultTreeHasher>::arities_of::<Tree>(leaves)?;

    // Each sector draws from a generator of its own, seeded in order, so
    // that the sectors are made in parallel and the same seed gives the
    // same files.
    let seeded: Vec<(SectorId, u64)> = challenged.iter().map(|&s| (s, rng.next_u64())).collect();
    let proofs = seeded
        .par_iter()
        .map(|&(sector_id, seed)| {
            let leafs = challenges
                .get(&sector_id)
                .ok_or_else(|| anyhow!("no challenges for sector {sector_id:?}"))?;
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let proof = sector_proof::<Tree>(sector_id, leafs, &arities, &mut rng)?;
            Ok((
                commitment_from_fr(proof.comm_r.into()),
                bincode::serialize(&proof)?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let (comm_rs, proofs) = proofs.into_iter().unzip();
    let post = VanillaPoSt {
        kind,
        randomness,
        sector_ids: challenged.iter().map(|&s| u64::from(s)).collect(),
        comm_rs,
        proofs,
    };
    Ok(post)
}

/// One sector's proof: a drawn comm_c, and tree R opened at `leafs`.
fn sector_proof<Tree>(
    sector_id: SectorId,
    leafs: &[u64],
    arities: &[usize],
    rng: &mut dyn RngCore,
) -> Result<FallbackPoStSectorProof<Tree>>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let opened: BTreeMap<u64, _> = leafs.iter().map(|&l| (l, random_domain(rng))).collect();
    let tree_r =
        SparseTree::<DefaultTreeHasher>::new(arities.to_vec(), random_domain(rng), opened)?;
    let comm_c = random_domain(rng);
    let comm_r_last = tree_r.root();
    let inclusion_proofs = leafs
        .iter()
        .map(|&leaf| tree_r.proof(leaf))
        .collect::<Result<Vec<_>>>()?;
    Ok(FallbackPoStSectorProof {
        sector_id,
        comm_r: <DefaultTreeHasher as Hasher>::Function::hash2(&comm_c, &comm_r_last),
        vanilla_proof: Proof {
            sectors: vec![SectorProof {
                inclusion_proofs,
                comm_c,
                comm_r_last,
            }],
        },
    })
}

/// The partition proofs of a SnapDeals update of the CC `sector` with
/// zero data (what a CC sector is updated with when a deal's data is all
/// zeros). Zero data leaves every replica node as it was (the new node is
/// the old plus data times rho), so tree R new is the sector's tree R and
/// comm_r_new = comm_r_old; tree D new is the zero tree, so comm_d_new is
/// the zero commitment and every apex leaf the zero subtree root at its
/// height. The challenges follow from comm_r_new, by storage-proofs'
/// `Challenges`, and open tree R wherever they fall.
pub fn cc_update<Tree>(
    kind: RegisteredUpdateProof,
    sector: &CcSector<Tree>,
) -> Result<UpdatedSector>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let config = SectorUpdateConfig::from_porep_config(&kind.as_v1_config());
    let params = UpdateParams::from_sector_size(u64::from(config.sector_size));
    let tree_d = zero_tree_d(params.sector_nodes)?;
    let apex_height =
        params.challenge_bit_len - params.partition_bit_len - params.apex_leaf_bit_len;
    let apex_leafs = vec![tree_d.default_at(apex_height); params.apex_leaf_count];
    let comm_r = as_safe_commitment::<DefaultTreeDomain, _>(&sector.c1.comm_r, "comm_r")?;
    let partition_proofs = (0..params.partition_count)
        .map(|k| {
            let challenge_proofs = Challenges::new(params.sector_nodes, comm_r, k)
                .map(|c| {
                    let leaf = u64::from(c);
                    Ok(ChallengeProof {
                        proof_r_old: sector.tree_r.proof(leaf)?,
                        proof_d_new: tree_d.proof::<U2, U0, U0>(leaf)?,
                        proof_r_new: sector.tree_r.proof(leaf)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let proof = PartitionProof::<Tree> {
                comm_c: sector.comm_c,
                apex_leafs: apex_leafs.clone(),
                challenge_proofs,
            };
            Ok(bincode::serialize(&proof)?)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(UpdatedSector {
        comm_r_old: sector.c1.comm_r,
        comm_r_new: sector.c1.comm_r,
        comm_d_new: tree_d.root().into(),
        partition_proofs,
    })
}
