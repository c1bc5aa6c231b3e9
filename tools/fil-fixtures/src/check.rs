//! `fil-fixtures check`: reads a fixture directory back, as a consumer
//! would, and verifies every vanilla proof in it against `meta.json` alone.
//! Each check also makes sure a wrong public input is rejected, so that a
//! check which passes everything cannot go unnoticed.
//!
//! Groth parameters are not needed: these are the checks filecoin-proofs
//! runs on vanilla proofs before it builds circuits from them.

use std::path::Path;

use anyhow::{ensure, Context, Result};
use filecoin_hashers::Domain;
use filecoin_proofs::with_shape;
use filecoin_proofs::{
    as_safe_commitment, commitment_from_fr, parameters::public_params, DefaultPieceDomain,
    DefaultPieceHasher, DefaultTreeHasher, FallbackPoStSectorProof, PoRepConfig,
    SealCommitPhase1Output,
};
use filecoin_proofs_api::seal::SealCommitPhase1Output as ApiSealCommitPhase1Output;
use filecoin_proofs_api::ApiFeature;
use storage_proofs_core::{
    merkle::{MerkleProofTrait, MerkleTreeTrait},
    proof::ProofScheme,
};
use storage_proofs_porep::stacked::{generate_replica_id, PublicInputs, StackedDrg, Tau};

use crate::fixture::{api_c1_json, CurioC1, FixtureDir, Meta, PoStMeta, SnapMeta, META};
use crate::kinds::{self, SectorSize};
use crate::{post, snap};

pub fn check_fixture(root: &Path) -> Result<()> {
    let dir = FixtureDir::new(root);
    let meta: Meta = dir.read_json(META)?;
    check_ids(&meta)?;
    with_shape!(meta.sector_size, check_porep, &dir, &meta,)?;
    if let Some(winning) = &meta.winning {
        with_shape!(meta.sector_size, check_post, &dir, winning, meta.prover_id,)
            .context("WinningPoSt")?;
    }
    if let Some(window) = &meta.window {
        with_shape!(meta.sector_size, check_post, &dir, window, meta.prover_id,)
            .context("WindowPoSt")?;
    }
    if let Some(snap) = &meta.snap {
        with_shape!(meta.sector_size, check_snap, &dir, snap,).context("SnapDeals")?;
    }
    Ok(())
}

fn check_porep<Tree>(dir: &FixtureDir, meta: &Meta) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let c1: SealCommitPhase1Output<Tree> = dir.read_json(&meta.c1)?;
    check_c1(meta, &c1).context("c1.json")?;
    check_curio_c1(dir, meta, &c1).context("c1-curio.json")
}

/// Runs a verification expected to fail and says whether it did (a `false`
/// or an error). storage-proofs logs each failed inclusion proof as an
/// error; expected here, so logging is off meanwhile.
fn rejects(verify: impl FnOnce() -> Result<bool>) -> bool {
    let level = log::max_level();
    log::set_max_level(log::LevelFilter::Off);
    let verdict = verify();
    log::set_max_level(level);
    !matches!(verdict, Ok(true))
}

fn flip_first_byte(mut bytes: [u8; 32]) -> [u8; 32] {
    bytes[0] ^= 1;
    bytes
}

fn check_ids(meta: &Meta) -> Result<()> {
    let size = SectorSize::from_bytes(meta.sector_size)?;
    let seal = size.kinds().seal;
    let seal = kinds::with_variant(seal, kinds::variant(meta.registered_seal_proof)?)?;
    ensure!(
        meta.registered_seal_proof == seal,
        "seal proof {:?} is not the one of the sector size",
        meta.registered_seal_proof
    );
    ensure!(meta.porep_id == kinds::porep_id(seal)?, "porep_id");
    ensure!(
        meta.registered_seal_proof_number == kinds::seal_proof_number(seal)?,
        "registered_seal_proof_number"
    );
    ensure!(
        meta.prover_id == kinds::prover_id(meta.miner_id),
        "prover_id"
    );
    Ok(())
}

fn check_c1<Tree>(meta: &Meta, c1: &SealCommitPhase1Output<Tree>) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    ensure!(
        (c1.comm_r, c1.comm_d, c1.seed, c1.ticket)
            == (meta.comm_r, meta.comm_d, meta.seed, meta.ticket),
        "commitments or randomness differ from meta.json"
    );
    let config = kinds::porep_config(meta.registered_seal_proof)?;
    let replica_id = generate_replica_id::<DefaultTreeHasher, _>(
        &meta.prover_id,
        meta.sector_id,
        &meta.ticket,
        meta.comm_d,
        &config.porep_id,
    );
    ensure!(
        replica_id == c1.replica_id,
        "replica_id is not derived from the ids in meta.json"
    );
    ensure!(
        commitment_from_fr(replica_id.into()) == meta.replica_id,
        "meta.json's replica_id"
    );
    ensure!(
        c1.vanilla_proofs.len() == usize::from(config.partitions),
        "{} partitions of vanilla proofs, not {}",
        c1.vanilla_proofs.len(),
        usize::from(config.partitions)
    );
    verify_c1_proofs(meta, c1, &config)
}

fn verify_c1_proofs<Tree>(
    meta: &Meta,
    c1: &SealCommitPhase1Output<Tree>,
    config: &PoRepConfig,
) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    // filecoin-proofs' vanilla verifier checks the challenge bits and the
    // roots of the comm_d and comm_r_last openings but not their paths,
    // which the circuit does check.
    for proof in c1.vanilla_proofs.iter().flatten() {
        ensure!(
            proof.comm_d_proofs.verify() && proof.comm_r_last_proof.verify(),
            "an opening of comm_d or comm_r_last does not hash to its root"
        );
    }
    let pub_params = public_params::<Tree>(config)?;
    let inputs = |seed, comm_r| -> Result<_> {
        Ok(PublicInputs {
            replica_id: c1.replica_id,
            seed: Some(seed),
            tau: Some(Tau {
                comm_d: DefaultPieceDomain::try_from_bytes(&meta.comm_d)?,
                comm_r: as_safe_commitment(&comm_r, "comm_r")?,
            }),
            k: None,
        })
    };
    let verify = |seed, comm_r| -> Result<bool> {
        StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(
            &pub_params,
            &inputs(seed, comm_r)?,
            &c1.vanilla_proofs,
        )
    };
    ensure!(
        verify(meta.seed, meta.comm_r)?,
        "the PoRep vanilla proofs do not verify"
    );
    // A non-interactive PoRep's challenges ignore the seed; its proofs
    // must still fail for another comm_r.
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        ensure!(
            rejects(|| verify(meta.seed, flip_first_byte(meta.comm_r))),
            "the PoRep vanilla proofs verify under another comm_r"
        );
    } else {
        ensure!(
            rejects(|| verify(flip_first_byte(meta.seed), meta.comm_r)),
            "the PoRep vanilla proofs verify under another seed"
        );
    }
    Ok(())
}

/// Curio's wrapper must hold filecoin-proofs-api's form of the very C1
/// output in `c1.json`.
fn check_curio_c1<Tree: MerkleTreeTrait>(
    dir: &FixtureDir,
    meta: &Meta,
    c1: &SealCommitPhase1Output<Tree>,
) -> Result<()> {
    let curio: CurioC1 = dir.read_json(&meta.c1_curio)?;
    ensure!(
        (curio.sector_num, curio.sector_size) == (meta.sector_id, meta.sector_size),
        "SectorNum or SectorSize differ from meta.json"
    );
    let api: ApiSealCommitPhase1Output =
        serde_json::from_slice(&curio.phase1_out).context("parsing Phase1Out")?;
    ensure!(
        api.registered_proof == meta.registered_seal_proof,
        "Phase1Out is tagged {:?}",
        api.registered_proof
    );
    let phase1_out: serde_json::Value = serde_json::from_slice(&curio.phase1_out)?;
    ensure!(
        phase1_out == api_c1_json(meta.registered_seal_proof, c1)?,
        "Phase1Out does not hold the C1 output of c1.json"
    );
    Ok(())
}

fn check_post<Tree>(dir: &FixtureDir, post_meta: &PoStMeta, prover_id: [u8; 32]) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let proofs = dir.read_all(&post_meta.vanilla_proofs)?;
    ensure!(
        proofs.len() == post_meta.sector_ids.len()
            && proofs.len() == post_meta.comm_rs.len()
            && !proofs.is_empty(),
        "{} vanilla proofs for {} sectors and {} comm_r",
        proofs.len(),
        post_meta.sector_ids.len(),
        post_meta.comm_rs.len()
    );
    for (bytes, (id, comm_r)) in proofs
        .iter()
        .zip(post_meta.sector_ids.iter().zip(&post_meta.comm_rs))
    {
        let proof: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes)?;
        ensure!(
            u64::from(proof.sector_id) == *id
                && hex::encode(commitment_from_fr(proof.comm_r.into())) == *comm_r,
            "sector {id}: its vanilla proof names another sector or comm_r"
        );
    }
    let verify = |randomness| {
        post::verify_vanilla::<Tree>(
            post_meta.registered_proof,
            prover_id,
            randomness,
            post_meta.partition_index,
            &proofs,
        )
    };
    ensure!(
        verify(post_meta.randomness)?,
        "the vanilla proofs do not verify"
    );
    ensure!(
        rejects(|| verify(flip_first_byte(post_meta.randomness))),
        "the vanilla proofs verify under other randomness"
    );
    Ok(())
}

fn check_snap<Tree>(dir: &FixtureDir, snap_meta: &SnapMeta) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let proofs = dir.read_all(&snap_meta.partition_proofs)?;
    let verify = |comm_d_new| {
        snap::verify_vanilla::<Tree>(
            snap_meta.registered_proof,
            snap_meta.comm_r_old,
            snap_meta.comm_r_new,
            comm_d_new,
            &proofs,
        )
    };
    ensure!(
        verify(snap_meta.comm_d_new)?,
        "the partition proofs do not verify"
    );
    ensure!(
        rejects(|| verify(flip_first_byte(snap_meta.comm_d_new))),
        "the partition proofs verify against another comm_d_new"
    );
    Ok(())
}
