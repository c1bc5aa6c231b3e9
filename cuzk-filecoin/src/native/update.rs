//! The witness of a SnapDeals partition (`EmptySectorUpdateCircuit`),
//! natively.
//!
//! The circuit derives every challenge's bits before its first challenge
//! block, so the prefix holds the public inputs' bits, the commitments,
//! `phi`, the apex tree and its path to comm_d_new, and the digests the
//! challenges are drawn from; then each challenge's block (its `rho`, the
//! new replica label, the paths in the old and new trees R and to its apex
//! leaf in tree D) is computed in parallel.

use blstrs::Scalar;
use cuzk_pipeline::witness::{Bit, BitSink, NumSink};
use ff::PrimeFieldBits;
use generic_array::typenum::U2;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::{hs, TreeRHasher, POSEIDON_CONSTANTS_GEN_RANDOMNESS};
use storage_proofs_update::EmptySectorUpdateCircuit;

use super::merkle::{poseidon_any, root_of_bits, sha256_leaves, TreeHash};
use super::num::{pack_bits, select};
use super::poseidon::hash_with;
use super::{check_equal, NativeError};

/// What every challenge's block shares.
struct Shared {
    partition_bits: Vec<Bit>,
    h_select_bits: Vec<Bit>,
    phi: Scalar,
    root_r_old: Scalar,
    root_r_new: Scalar,
    apex_leafs: Vec<Scalar>,
}

fn some(v: &Option<Scalar>, what: &'static str) -> Result<Scalar, NativeError> {
    v.ok_or(NativeError::Missing(what))
}

/// The aux assignment of `circuit` (a partition's circuit, which holds
/// every value of its proof) for a shape of `num_aux` private variables.
pub(crate) fn partition<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>>(
    circuit: &EmptySectorUpdateCircuit<TreeR>,
    num_aux: usize,
) -> Result<Vec<Scalar>, NativeError> {
    let pp = &circuit.pub_params;
    let (pub_in, priv_in) = (&circuit.pub_inputs, &circuit.priv_inputs);
    let proofs = &priv_in.challenge_proofs;
    let first = proofs.first().ok_or(NativeError::Missing("challenge"))?;
    let hs = hs(pp.sector_nodes);
    let mut s = Vec::new();

    let k_and_h = s.num(some(&pub_in.k_and_h_select, "k_and_h_select")?);
    let bits: Vec<Bit> = k_and_h
        .to_le_bits()
        .into_iter()
        .take(pp.partition_bit_len + hs.len())
        .map(|b| s.alloc(b))
        .collect();
    let (partition_bits, h_select_bits) = bits.split_at(pp.partition_bit_len);
    let partition = pack_bits(&mut s, partition_bits);
    let comm_r_old = s.num(some(&pub_in.comm_r_old, "comm_r_old")?);
    let comm_d_new = s.num(some(&pub_in.comm_d_new, "comm_d_new")?);
    let comm_r_new = s.num(some(&pub_in.comm_r_new, "comm_r_new")?);
    let phi = hash_with::<_, U2>(
        &mut s,
        &[comm_d_new, comm_r_old],
        &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
    );
    let comm_c = s.num(some(&priv_in.comm_c, "comm_c")?);
    let root_r_old = s.num(some(&priv_in.root_r_old, "root_r_old")?);
    let root_r_new = s.num(some(&priv_in.root_r_new, "root_r_new")?);
    let apex_leafs = priv_in
        .apex_leafs
        .iter()
        .map(|l| some(l, "apex leaf").map(|l| s.num(l)))
        .collect::<Result<Vec<_>, _>>()?;
    // The partition's path from its apex root to comm_d_new: the last
    // levels of every challenge's tree D path, the same for all.
    let partition_path = first.path_d_new[pp.challenge_bit_len - pp.partition_bit_len..]
        .iter()
        .map(|siblings| {
            let sibling = siblings
                .first()
                .ok_or(NativeError::Missing("partition sibling"))?;
            Ok(vec![s.num(some(sibling, "partition sibling")?)])
        })
        .collect::<Result<Vec<_>, NativeError>>()?;

    let old = poseidon_any(&mut s, &[comm_c, root_r_old])?;
    check_equal(&old, &comm_r_old, || {
        "comm_r_old is not H(comm_c, root_r_old)".into()
    })?;
    let new = poseidon_any(&mut s, &[comm_c, root_r_new])?;
    check_equal(&new, &comm_r_new, || {
        "comm_r_new is not H(comm_c, root_r_new)".into()
    })?;

    // apex_por: the apex tree, then its root's path to comm_d_new.
    let mut row = apex_leafs.clone();
    while row.len() > 1 {
        row = row
            .chunks(2)
            .map(|pair| sha256_leaves(&mut s, pair))
            .collect();
    }
    let apex_root = *row.first().ok_or(NativeError::Missing("apex leaf"))?;
    let reached = root_of_bits(
        &mut s,
        TreeHash::Sha256,
        apex_root,
        partition_bits,
        &partition_path,
    )?;
    check_equal(&reached, &comm_d_new, || {
        "the apex root's path does not reach comm_d_new".into()
    })?;

    let generated = challenge_bits(&mut s, pp, comm_r_new, partition)?;
    let shared = Shared {
        partition_bits: partition_bits.to_vec(),
        h_select_bits: h_select_bits.to_vec(),
        phi,
        root_r_old,
        root_r_new,
        apex_leafs,
    };
    let items: Vec<_> = generated.iter().zip(proofs).enumerate().collect();
    super::blocks(num_aux, s, &items, |(i, (bits, proof)), sink| {
        challenge_block::<TreeR, _>(sink, &shared, pp, *i, bits, proof)
    })
}

/// `gen_challenge_bits`: each challenge's bits (without the partition's),
/// from digests of comm_r_new and the digest's index.
fn challenge_bits<S: NumSink + ?Sized>(
    s: &mut S,
    pp: &storage_proofs_update::PublicParams,
    comm_r_new: Scalar,
    partition: Scalar,
) -> Result<Vec<Vec<Bit>>, NativeError> {
    let per_challenge = pp.challenge_bit_len - pp.partition_bit_len;
    let per_digest = 254 / per_challenge;
    let digests = pp.challenge_count.div_ceil(per_digest) as u64;
    let mut generated = Vec::with_capacity(pp.challenge_count);
    for j in 0..digests {
        let index = s.num(partition * Scalar::from(digests) + Scalar::from(j));
        let digest =
            hash_with::<_, U2>(s, &[comm_r_new, index], &POSEIDON_CONSTANTS_GEN_RANDOMNESS);
        let bits = super::num::to_bits_le(s, &digest);
        let take = if j == digests - 1 {
            pp.challenge_count - generated.len()
        } else {
            per_digest
        };
        generated.extend(bits.chunks(per_challenge).take(take).map(<[Bit]>::to_vec));
    }
    Ok(generated)
}

/// One challenge of `EmptySectorUpdateCircuit::synthesize`.
fn challenge_block<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>, S: NumSink + ?Sized>(
    s: &mut S,
    shared: &Shared,
    pp: &storage_proofs_update::PublicParams,
    i: usize,
    generated: &[Bit],
    proof: &storage_proofs_update::circuit::ChallengeProof<TreeR>,
) -> Result<(), NativeError> {
    let c_bits: Vec<Bit> = generated
        .iter()
        .chain(&shared.partition_bits)
        .copied()
        .collect();
    let hs = hs(pp.sector_nodes);

    // get_challenge_high_bits: each h's high bits packed, kept where its
    // h_select bit is set, summed.
    let mut selected = Scalar::from(0u64);
    for (h, select_bit) in hs.iter().zip(&shared.h_select_bits) {
        let high = pack_bits(s, &c_bits[c_bits.len() - h..]);
        let kept = s.num(if select_bit.value() {
            high
        } else {
            Scalar::from(0u64)
        });
        selected += kept;
    }
    let c_high = s.num(selected);
    let rho = hash_with::<_, U2>(s, &[shared.phi, c_high], &POSEIDON_CONSTANTS_GEN_RANDOMNESS);

    let leaf_r_old = s.num(some(&proof.leaf_r_old, "leaf_r_old")?);
    let leaf_d_new = s.num(some(&proof.leaf_d_new, "leaf_d_new")?);
    let d_rho = s.num(leaf_d_new * rho);
    let leaf_r_new = s.num(leaf_r_old + d_rho);
    let at = |what: &str| format!("challenge {i}: {what}");
    if Some(leaf_r_new) != proof.leaf_r_new {
        return Err(NativeError::False(at(
            "leaf_r_new is not leaf_r_old + leaf_d_new * rho",
        )));
    }

    let path_r_old = alloc_path(s, &proof.path_r_old)?;
    let reached = root_of_bits(s, TreeHash::Poseidon, leaf_r_old, &c_bits, &path_r_old)?;
    check_equal(&reached, &shared.root_r_old, || {
        at("its old replica path does not reach root_r_old")
    })?;
    let path_r_new = alloc_path(s, &proof.path_r_new)?;
    let reached = root_of_bits(s, TreeHash::Poseidon, leaf_r_new, &c_bits, &path_r_new)?;
    check_equal(&reached, &shared.root_r_new, || {
        at("its new replica path does not reach root_r_new")
    })?;

    let apex_bits = pp.apex_leaf_bit_len;
    let to_apex = pp.challenge_bit_len - pp.partition_bit_len - apex_bits;
    let apex_leaf = select(s, &shared.apex_leafs, &c_bits[to_apex..to_apex + apex_bits]);
    let path_d = proof
        .path_d_new
        .iter()
        .take(to_apex)
        .map(|siblings| {
            let sibling = siblings
                .first()
                .ok_or(NativeError::Missing("tree D sibling"))?;
            Ok(vec![s.num(some(sibling, "tree D sibling")?)])
        })
        .collect::<Result<Vec<_>, NativeError>>()?;
    let reached = root_of_bits(s, TreeHash::Sha256, leaf_d_new, &c_bits[..to_apex], &path_d)?;
    check_equal(&reached, &apex_leaf, || {
        at("its data path does not reach its apex leaf")
    })
}

/// A path's siblings, every level's allocated in order.
fn alloc_path<S: NumSink + ?Sized>(
    s: &mut S,
    path: &[Vec<Option<Scalar>>],
) -> Result<Vec<Vec<Scalar>>, NativeError> {
    path.iter()
        .map(|siblings| {
            siblings
                .iter()
                .map(|v| some(v, "a replica path sibling").map(|v| s.num(v)))
                .collect()
        })
        .collect()
}
