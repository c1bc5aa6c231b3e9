//! `fil-fixtures make`: seal, prove and write one fixture directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};
use filecoin_proofs::{commitment_from_fr, SealCommitPhase1Output};
use filecoin_proofs_api::seal::{
    SealCommitPhase1Output as ApiSealCommitPhase1Output, VanillaSealProof,
};
use filecoin_proofs_api::RegisteredSealProof;

use crate::draws::Draws;
use crate::fixture::{CurioC1, FixtureDir, Meta, PoStMeta, SnapMeta, C1, C1_CURIO, META};
use crate::kinds::{self, SectorSize, Tree};
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
}

/// What a run made, before it is written out.
struct Made {
    sector: SealedSector,
    winning: VanillaPoSt,
    window: VanillaPoSt,
    update: UpdatedSector,
}

pub fn make(opts: &MakeOptions) -> Result<()> {
    let kinds = opts.size.kinds();
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

fn timed<T>(stage: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    let start = Instant::now();
    let result = run();
    eprintln!("{stage}: {:.2} s", start.elapsed().as_secs_f64());
    result
}

/// The meta data of what was made; the file names are filled in as the
/// files are written.
fn describe(opts: &MakeOptions, made: &Made) -> Result<Meta> {
    let kinds = opts.size.kinds();
    let config = kinds::porep_config(kinds.seal)?;
    let sector = &made.sector;
    let post_meta = |vanilla: &VanillaPoSt| PoStMeta {
        registered_proof: vanilla.kind,
        randomness: vanilla.randomness,
        partition_index: 0,
        sector_ids: vanilla.sector_ids.clone(),
        vanilla_proofs: Vec::new(),
    };
    Ok(Meta {
        generator: format!(
            "fil-fixtures {} with filecoin-proofs 19.1.0",
            env!("CARGO_PKG_VERSION")
        ),
        fixture_seed: opts.seed,
        registered_seal_proof: kinds.seal,
        registered_seal_proof_number: kinds::seal_proof_number(kinds.seal)?,
        api_version: config.api_version.to_string(),
        sector_size: opts.size.bytes(),
        porep_id: config.porep_id,
        porep_partitions: usize::from(config.partitions),
        miner_id: opts.miner_id,
        prover_id: kinds::prover_id(opts.miner_id),
        sector_id: u64::from(sector.sector_id),
        ticket: sector.ticket,
        seed: sector.seed,
        comm_r: sector.comm_r,
        comm_d: sector.comm_d,
        replica_id: commitment_from_fr(sector.c1.replica_id.into()),
        c1: C1.to_string(),
        c1_curio: C1_CURIO.to_string(),
        winning: post_meta(&made.winning),
        window: post_meta(&made.window),
        snap: SnapMeta {
            registered_proof: kinds.update,
            comm_r_old: made.update.comm_r_old,
            comm_r_new: made.update.comm_r_new,
            comm_d_new: made.update.comm_d_new,
            partition_proofs: Vec::new(),
        },
    })
}

fn write_fixture(out: &Path, meta: &mut Meta, made: &Made) -> Result<()> {
    if out.exists() {
        fs::remove_dir_all(out)?;
    }
    let dir = FixtureDir::new(out);
    let c1 = &made.sector.c1;
    dir.write_json(C1, c1)?;
    let curio = CurioC1 {
        sector_num: meta.sector_id,
        phase1_out: serde_json::to_vec(&api_c1(meta.registered_seal_proof, c1)?)?,
        sector_size: meta.sector_size,
    };
    dir.write_json(C1_CURIO, &curio)?;
    meta.winning.vanilla_proofs = dir.write_numbered("winning/vanilla", &made.winning.proofs)?;
    meta.window.vanilla_proofs = dir.write_numbered("window/vanilla", &made.window.proofs)?;
    meta.snap.partition_proofs =
        dir.write_numbered("snap/partition", &made.update.partition_proofs)?;
    dir.write_json_pretty(META, meta)
}

/// filecoin-proofs-api's form of a C1 output: the vanilla proofs tagged with
/// the sector size's variant and the registered proof beside them.
fn api_c1(
    seal: RegisteredSealProof,
    c1: &SealCommitPhase1Output<Tree>,
) -> Result<ApiSealCommitPhase1Output> {
    let proofs = c1.vanilla_proofs.clone();
    let vanilla_proofs = match seal {
        RegisteredSealProof::StackedDrg2KiBV1_1 => VanillaSealProof::StackedDrg2KiBV1(proofs),
        RegisteredSealProof::StackedDrg8MiBV1_1 => VanillaSealProof::StackedDrg8MiBV1(proofs),
        RegisteredSealProof::StackedDrg512MiBV1_1 => VanillaSealProof::StackedDrg512MiBV1(proofs),
        other => bail!("{other:?} is not a seal proof this tool makes"),
    };
    Ok(ApiSealCommitPhase1Output {
        registered_proof: seal,
        vanilla_proofs,
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    })
}
