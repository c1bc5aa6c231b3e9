//! A SnapDeals update of the sealed sector: fresh data encoded into a new
//! replica, and the vanilla partition proofs of that encoding in the form
//! filecoin-proofs-api hands to a prover (`PartitionProofBytes`, the
//! bincode of one `PartitionProof` per partition).

use std::fs;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use filecoin_proofs::{
    encode_into, generate_partition_proofs, verify_partition_proofs, Commitment, DefaultTreeHasher,
    PartitionProof, SectorUpdateConfig,
};
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::draws::Draws;
use crate::kinds::Tree;
use crate::seal::{create_replica_file, stage_piece, SealedSector};

pub struct UpdatedSector {
    pub comm_r_old: Commitment,
    pub comm_r_new: Commitment,
    pub comm_d_new: Commitment,
    /// bincode of `PartitionProof<Tree>`, one per partition, in order.
    pub partition_proofs: Vec<Vec<u8>>,
}

fn update_config(kind: RegisteredUpdateProof) -> SectorUpdateConfig {
    SectorUpdateConfig::from_porep_config(&kind.as_v1_config())
}

/// Encodes fresh data into a copy of `sector` (its replica is the sector
/// key) in `dir` and proves every partition of the update.
pub fn update_sector(
    kind: RegisteredUpdateProof,
    sector: &SealedSector,
    dir: &Path,
    draws: &Draws,
) -> Result<UpdatedSector> {
    let config = update_config(kind);
    let (staged, piece_infos) =
        stage_piece(&kind.as_v1_config(), dir, "update-data", |out, len| {
            draws.write_update_data(out, len)
        })?;
    let replica = dir.join("updated");
    let cache = dir.join("updated-cache");
    create_replica_file(&replica, u64::from(config.sector_size))?;
    fs::create_dir_all(&cache)?;

    let encoded = encode_into::<Tree>(
        &config,
        &replica,
        &cache,
        &sector.replica,
        &sector.cache,
        &staged,
        &piece_infos,
    )?;
    let proofs = generate_partition_proofs::<Tree>(
        config,
        sector.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &sector.replica,
        &sector.cache,
        &replica,
        &cache,
    )?;
    fs::remove_file(&staged)?;

    Ok(UpdatedSector {
        comm_r_old: sector.comm_r,
        comm_r_new: encoded.comm_r_new,
        comm_d_new: encoded.comm_d_new,
        partition_proofs: proofs
            .iter()
            .map(bincode::serialize)
            .collect::<Result<_, _>>()?,
    })
}

/// Verifies the vanilla partition proofs of an update, all partitions
/// together, as filecoin-proofs does.
pub fn verify_vanilla<Tree>(
    kind: RegisteredUpdateProof,
    comm_r_old: Commitment,
    comm_r_new: Commitment,
    comm_d_new: Commitment,
    partition_proofs: &[Vec<u8>],
) -> Result<bool>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let config = update_config(kind);
    ensure!(
        partition_proofs.len() == usize::from(config.update_partitions),
        "{kind:?} has {} partitions, not {}",
        usize::from(config.update_partitions),
        partition_proofs.len()
    );
    let proofs = partition_proofs
        .iter()
        .map(|bytes| bincode::deserialize::<PartitionProof<Tree>>(bytes))
        .collect::<Result<Vec<_>, _>>()
        .context("decoding a PartitionProof")?;
    verify_partition_proofs::<Tree>(config, &proofs, comm_r_old, comm_r_new, comm_d_new)
}
