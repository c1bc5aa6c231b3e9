//! `fil-fixtures make`: seal, prove and write one fixture directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Result};
use filecoin_proofs::{commitment_from_fr, DefaultTreeHasher, SealCommitPhase1Output};
use filecoin_proofs_api::{RegisteredSealProof, RegisteredUpdateProof};
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::draws::Draws;
use crate::fixture::{write_c1, FixtureDir, Meta, PoStMeta, SnapMeta, META};
use crate::kinds::{self, SealVariant, SectorSize};
use crate::post::{self, VanillaPoSt};
use crate::seal::{self, SealedSector};
use crate::snap::{self, UpdatedSector};

pub struct MakeOptions {
    pub size: SectorSize,
    pub seed: u64,
    pub miner_id: u64,
    pub out: PathBuf,
    /// Where the sector's files are made; removed afterwards unless kept.
    pub sector_dir: PathBuf,
    pub keep_sector: bool,
    /// Seal with this twin of the size's seal proof.
    pub variant: SealVariant,
}

/// What a run made, before it is written out.
struct Made {
    sector: SealedSector,
    winning: VanillaPoSt,
    window: VanillaPoSt,
    update: UpdatedSector,
}

pub fn make(opts: &MakeOptions) -> Result<()> {
    ensure!(
        opts.size.sealable(),
        "a {:?} sector cannot be sealed here (hundreds of GiB of disk, hours of \
         labelling): `fil-fixtures cc` makes its C1 output without sealing",
        opts.size
    );
    let kinds = opts.kinds()?;
    let config = kinds::porep_config(kinds.seal)?;
    let prover_id = kinds::prover_id(opts.miner_id);
    let draws = Draws::new(opts.seed);
    if opts.sector_dir.exists() {
        fs::remove_dir_all(&opts.sector_dir)?;
    }
    fs::create_dir_all(&opts.sector_dir)?;

    let sector = timed("seal (add_piece, PC1, PC2, C1)", || {
        seal::seal_sector(&config, &opts.sector_dir, prover_id, &draws)
    })?;
    let randomness = draws.post();
    let winning = timed("WinningPoSt vanilla", || {
        post::prove_sector(kinds.winning, &sector, prover_id, randomness.winning)
    })?;
    let window = timed("WindowPoSt vanilla", || {
        post::prove_sector(kinds.window, &sector, prover_id, randomness.window)
    })?;
    let update = timed("SnapDeals encode_into and partition proofs", || {
        snap::update_sector(kinds.update, &sector, &opts.sector_dir, &draws)
    })?;
    let made = Made {
        sector,
        winning,
        window,
        update,
    };

    let mut meta = describe(opts, &made)?;
    write_fixture(&opts.out, &mut meta, &made)?;
    if !opts.keep_sector {
        fs::remove_dir_all(&opts.sector_dir)?;
    }
    Ok(())
}

impl MakeOptions {
    /// The registered proofs the fixture is made with.
    fn kinds(&self) -> Result<kinds::ProofKinds> {
        let mut kinds = self.size.kinds();
        kinds.seal = kinds::with_variant(kinds.seal, self.variant)?;
        Ok(kinds)
    }
}

pub fn timed<T>(stage: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    let start = Instant::now();
    let result = run();
    eprintln!("{stage}: {:.2} s", start.elapsed().as_secs_f64());
    result
}

/// The meta data of a sector's PoRep: ids, randomness and commitments; the
/// file names are filled in as the files are written.
pub fn seal_meta<Tree: MerkleTreeTrait<Hasher = DefaultTreeHasher>>(
    size: SectorSize,
    seal: RegisteredSealProof,
    fixture_seed: u64,
    miner_id: u64,
    sector_id: u64,
    c1: &SealCommitPhase1Output<Tree>,
    generator: &str,
) -> Result<Meta> {
    let config = kinds::porep_config(seal)?;
    Ok(Meta {
        generator: format!(
            "fil-fixtures {} {generator} with filecoin-proofs 19.1.0",
            env!("CARGO_PKG_VERSION")
        ),
        fixture_seed,
        registered_seal_proof: seal,
        registered_seal_proof_number: kinds::seal_proof_number(seal)?,
        api_version: config.api_version.to_string(),
        sector_size: size.bytes(),
        porep_id: config.porep_id,
        porep_partitions: usize::from(config.partitions),
        miner_id,
        prover_id: kinds::prover_id(miner_id),
        sector_id,
        ticket: c1.ticket,
        seed: c1.seed,
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: commitment_from_fr(c1.replica_id.into()),
        c1: String::new(),
        c1_curio: String::new(),
        winning: None,
        window: None,
        snap: None,
    })
}

fn describe(opts: &MakeOptions, made: &Made) -> Result<Meta> {
    let sector = &made.sector;
    let meta = seal_meta(
        opts.size,
        opts.kinds()?.seal,
        opts.seed,
        opts.miner_id,
        u64::from(sector.sector_id),
        &sector.c1,
        "(a sealed sector)",
    )?;
    ensure!(
        (sector.comm_r, sector.comm_d) == (meta.comm_r, meta.comm_d),
        "the C1 output's commitments differ from PreCommit 2's"
    );
    Ok(meta)
}

/// Writes a PoSt's vanilla proofs as `<name>/vanilla-<i>.bin` and returns
/// their meta data.
pub fn write_post(dir: &FixtureDir, name: &str, vanilla: &VanillaPoSt) -> Result<PoStMeta> {
    Ok(PoStMeta {
        registered_proof: vanilla.kind,
        randomness: vanilla.randomness,
        partition_index: 0,
        sector_ids: vanilla.sector_ids.clone(),
        comm_rs: vanilla.comm_rs.iter().map(hex::encode).collect(),
        vanilla_proofs: dir.write_numbered(&format!("{name}/vanilla"), &vanilla.proofs)?,
    })
}

/// Writes an update's partition proofs as `snap/partition-<i>.bin` and
/// returns their meta data.
pub fn write_update(
    dir: &FixtureDir,
    kind: RegisteredUpdateProof,
    update: &UpdatedSector,
) -> Result<SnapMeta> {
    Ok(SnapMeta {
        registered_proof: kind,
        comm_r_old: update.comm_r_old,
        comm_r_new: update.comm_r_new,
        comm_d_new: update.comm_d_new,
        partition_proofs: dir.write_numbered("snap/partition", &update.partition_proofs)?,
    })
}

/// Replaces `out` with an empty fixture directory.
pub fn fresh_dir(out: &Path) -> Result<FixtureDir> {
    if out.exists() {
        fs::remove_dir_all(out)?;
    }
    Ok(FixtureDir::new(out))
}

fn write_fixture(out: &Path, meta: &mut Meta, made: &Made) -> Result<()> {
    let dir = fresh_dir(out)?;
    write_c1(&dir, meta, &made.sector.c1)?;
    meta.winning = Some(write_post(&dir, "winning", &made.winning)?);
    meta.window = Some(write_post(&dir, "window", &made.window)?);
    let update = SectorSize::from_bytes(meta.sector_size)?.kinds().update;
    meta.snap = Some(write_update(&dir, update, &made.update)?);
    dir.write_json_pretty(META, meta)
}
