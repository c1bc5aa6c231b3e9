//! WinningPoSt and WindowPoSt vanilla proofs of CC sectors made without
//! sealing them, at any size.
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
    commitment_from_fr, generate_fallback_sector_challenges, DefaultTreeHasher,
    FallbackPoStSectorProof, PoStType, ProverId,
};
use filecoin_proofs_api::RegisteredPoStProof;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use storage_proofs_core::{merkle::MerkleTreeTrait, sector::SectorId};
use storage_proofs_post::fallback::{Proof, SectorProof};

use crate::cc::random_domain;
use crate::post::{challenged_sectors, VanillaPoSt};
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
