//! Sealing one sector offline, as filecoin-proofs' own tests do: a piece of
//! random data fills the sector, then PreCommit 1 and 2 and Commit 1.

use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use filecoin_proofs::{
    add_piece, generate_piece_commitment, generate_synth_proofs, seal_commit_phase1,
    seal_pre_commit_phase1, seal_pre_commit_phase2, validate_cache_for_commit, Commitment,
    PieceInfo, PoRepConfig, ProverId, SealCommitPhase1Output,
};
use filecoin_proofs_api::ApiFeature;
use storage_proofs_core::sector::SectorId;

use crate::draws::{Draws, SealDraws};
use crate::kinds::Tree;

/// A sealed sector: its files (kept for PoSt and SnapDeals) and its C1
/// output.
pub struct SealedSector {
    pub sector_id: SectorId,
    pub comm_r: Commitment,
    pub comm_d: Commitment,
    pub replica: PathBuf,
    pub cache: PathBuf,
    pub c1: SealCommitPhase1Output<Tree>,
}

/// Writes a full-sector piece of data to `<dir>/<name>.piece` and stages it
/// into `<dir>/<name>.staged` with `add_piece`, as a deal's data is staged
/// before sealing.
pub fn stage_piece(
    config: &PoRepConfig,
    dir: &Path,
    name: &str,
    write_data: impl FnOnce(BufWriter<File>, u64) -> Result<()>,
) -> Result<(PathBuf, Vec<PieceInfo>)> {
    let piece_len = config.unpadded_bytes_amount();
    let piece_path = dir.join(format!("{name}.piece"));
    let staged_path = dir.join(format!("{name}.staged"));
    let piece_file =
        File::create(&piece_path).with_context(|| format!("creating {}", piece_path.display()))?;
    write_data(BufWriter::new(piece_file), piece_len.0)?;

    let piece_info = generate_piece_commitment(File::open(&piece_path)?, piece_len)?;
    let mut staged = File::create(&staged_path)
        .with_context(|| format!("creating {}", staged_path.display()))?;
    let (added, _) = add_piece(File::open(&piece_path)?, &mut staged, piece_len, &[])?;
    ensure!(
        added.commitment == piece_info.commitment,
        "add_piece's commitment differs from generate_piece_commitment's"
    );
    fs::remove_file(&piece_path)?;
    Ok((staged_path, vec![piece_info]))
}

/// Creates an empty file of `len` bytes for a replica to be written into.
pub fn create_replica_file(path: &Path, len: u64) -> Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.set_len(len)?;
    Ok(())
}

/// Seals a sector of random data in `dir` and runs Commit 1 on it.
pub fn seal_sector(
    config: &PoRepConfig,
    dir: &Path,
    prover_id: ProverId,
    draws: &Draws,
) -> Result<SealedSector> {
    let SealDraws {
        sector_id,
        ticket,
        seed,
    } = draws.seal();
    let sector_id = SectorId::from(sector_id);
    let (staged, piece_infos) = stage_piece(config, dir, "sealed-data", |out, len| {
        draws.write_piece_data(out, len)
    })?;
    let replica = dir.join("sealed");
    let cache = dir.join("sealed-cache");
    create_replica_file(&replica, 0)?;
    fs::create_dir_all(&cache)?;

    let phase1 = seal_pre_commit_phase1::<_, _, _, Tree>(
        config,
        &cache,
        &staged,
        &replica,
        prover_id,
        sector_id,
        ticket,
        &piece_infos,
    )?;
    let pre_commit = seal_pre_commit_phase2(config, phase1, &cache, &replica)?;
    if config.feature_enabled(ApiFeature::SyntheticPoRep) {
        // The synthetic challenges' vanilla proofs, which Commit 1 then
        // picks the interactive challenges' from.
        generate_synth_proofs::<_, Tree>(
            config,
            &cache,
            &replica,
            prover_id,
            sector_id,
            ticket,
            pre_commit.clone(),
            &piece_infos,
        )?;
    }
    validate_cache_for_commit::<_, _, Tree>(&cache, &replica)?;
    let c1 = seal_commit_phase1::<_, Tree>(
        config,
        &cache,
        &replica,
        prover_id,
        sector_id,
        ticket,
        seed,
        pre_commit.clone(),
        &piece_infos,
    )?;
    fs::remove_file(&staged)?;

    Ok(SealedSector {
        sector_id,
        comm_r: pre_commit.comm_r,
        comm_d: pre_commit.comm_d,
        replica,
        cache,
        c1,
    })
}
