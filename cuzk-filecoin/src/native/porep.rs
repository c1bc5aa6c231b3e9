//! The witness of a PoRep partition (`StackedCircuit`), natively.
//!
//! The circuit allocates a prefix (the replica id and its bits, the four
//! commitments, the comm_r check) and then one block per challenge: the
//! data leaf and its path in tree D, each parent's column and its path in
//! tree C, the challenge's bits, the challenged node's label in every layer
//! (SHA-256 of the replica id, the layer, the node and 37 parent labels),
//! the encoded node and its path in tree R, and the column of the labels
//! and its path in tree C. The blocks are computed in parallel.

use std::marker::PhantomData;

use blstrs::Scalar;
use cuzk_pipeline::witness::{sha256, Bit, NumSink, Word};
use filecoin_hashers::Hasher;
use serde::Deserialize;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::{self, PublicInputs, PublicParams};

use super::merkle::{poseidon_any, root, PathVec, TreeHash};
use super::num::{pack_bits, reverse_bit_numbering, to_bits_le};
use super::{check_equal, NativeError};

type Piece = filecoin_proofs::DefaultPieceHasher;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;
type Domain_<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// A column proof's column and inclusion proof. storage-proofs keeps both
/// fields crate-private; this reads them back through its serde form (the
/// form C1 outputs are written in), field for field.
#[derive(Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>, P: Deserialize<'de>"))]
struct ColumnProof<D, P> {
    column: Column<D>,
    inclusion_proof: P,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>"))]
struct Column<D> {
    _index: u32,
    rows: Vec<D>,
    _h: PhantomData<()>,
}

/// One parent's column, and its path in tree C.
struct Opening {
    rows: Vec<Scalar>,
    path: PathVec,
}

fn opening<Tree: MerkleTreeTrait>(
    proof: &stacked::ColumnProof<TreeProof<Tree>>,
) -> Result<Opening, NativeError> {
    let bytes = bincode::serialize(proof).map_err(|e| NativeError::Unsupported(e.to_string()))?;
    let mirror: ColumnProof<Domain_<Tree>, TreeProof<Tree>> = bincode::deserialize(&bytes)
        .map_err(|e| NativeError::Unsupported(format!("a column proof's form: {e}")))?;
    Ok(Opening {
        rows: mirror.column.rows.into_iter().map(Into::into).collect(),
        path: mirror.inclusion_proof.as_options(),
    })
}

/// What every challenge's block shares: the prefix's values.
struct Shared {
    replica_bits: Vec<Bit>,
    comm_d: Scalar,
    comm_c: Scalar,
    comm_r_last: Scalar,
    layers: usize,
}

/// The aux assignment of partition `k` of a PoRep with `vanilla` as its
/// vanilla proofs, for a shape of `num_aux` private variables.
pub(crate) fn partition<Tree: 'static + MerkleTreeTrait>(
    pub_params: &PublicParams<Tree>,
    pub_inputs: &PublicInputs<Domain_<Tree>, <Piece as Hasher>::Domain>,
    vanilla: &[stacked::Proof<Tree, Piece>],
    k: usize,
    num_aux: usize,
) -> Result<Vec<Scalar>, NativeError> {
    if <Tree::Hasher as Hasher>::name() != "poseidon_hasher" {
        return Err(NativeError::Unsupported(format!(
            "trees hashed with {}",
            <Tree::Hasher as Hasher>::name()
        )));
    }
    let tau = pub_inputs.tau.as_ref().ok_or(NativeError::Missing("tau"))?;
    let first = vanilla.first().ok_or(NativeError::Missing("challenge"))?;
    let challenges =
        pub_inputs.challenges(&pub_params.challenges, pub_params.graph.size(), Some(k));
    if challenges.len() != vanilla.len() {
        return Err(NativeError::False(format!(
            "{} vanilla proofs for {} challenges",
            vanilla.len(),
            challenges.len()
        )));
    }

    let mut prefix = Vec::new();
    let replica_id = prefix.num(pub_inputs.replica_id.into());
    let replica_bits = reverse_bit_numbering(to_bits_le(&mut prefix, &replica_id));
    let comm_d = prefix.num(tau.comm_d.into());
    let comm_r = prefix.num(tau.comm_r.into());
    let comm_r_last = prefix.num(first.comm_r_last().into());
    let comm_c = prefix.num(first.comm_c().into());
    let hash = poseidon_any(&mut prefix, &[comm_c, comm_r_last])?;
    check_equal(&hash, &comm_r, || {
        "comm_r is not H(comm_c, comm_r_last)".into()
    })?;

    let shared = Shared {
        replica_bits,
        comm_d,
        comm_c,
        comm_r_last,
        layers: pub_params.num_layers,
    };
    let items: Vec<(usize, &stacked::Proof<Tree, Piece>)> =
        challenges.into_iter().zip(vanilla).collect();
    super::blocks(num_aux, prefix, &items, |(challenge, proof), sink| {
        challenge_block::<Tree, _>(sink, &shared, *challenge, proof)
    })
}

/// `Proof::synthesize` of one challenge.
fn challenge_block<Tree: MerkleTreeTrait, S: NumSink + ?Sized>(
    sink: &mut S,
    shared: &Shared,
    challenge: usize,
    proof: &stacked::Proof<Tree, Piece>,
) -> Result<(), NativeError> {
    let at = |what: &str| format!("challenge {challenge}: {what}");
    let data_leaf = sink.num(proof.comm_d_proofs.leaf().into());
    let comm_d_path = proof.comm_d_proofs.as_options();
    let reached = root(sink, TreeHash::Sha256, data_leaf, &comm_d_path)?;
    check_equal(&reached, &shared.comm_d, || {
        at("its data path does not reach comm_d")
    })?;

    let columns = &proof.replica_column_proofs;
    let mut drg = Vec::with_capacity(columns.drg_parents.len());
    let mut exp = Vec::with_capacity(columns.exp_parents.len());
    for (parents, out) in [
        (&columns.drg_parents, &mut drg),
        (&columns.exp_parents, &mut exp),
    ] {
        for parent in parents {
            let opening = opening::<Tree>(parent)?;
            if opening.rows.len() != shared.layers {
                return Err(NativeError::False(at("a parent column of another height")));
            }
            let rows: Vec<Scalar> = opening.rows.iter().map(|&r| sink.num(r)).collect();
            let hash = poseidon_any(sink, &rows)?;
            let reached = root(sink, TreeHash::Poseidon, hash, &opening.path)?;
            check_equal(&reached, &shared.comm_c, || {
                at("a parent's column path does not reach comm_c")
            })?;
            out.push(rows);
        }
    }

    // UInt64::alloc: the challenge's bits, least significant first.
    let node: Vec<Bit> = (0..64)
        .map(|i| sink.alloc((challenge >> i) & 1 == 1))
        .collect();
    let mut labels = Vec::with_capacity(shared.layers);
    for layer in 1..=shared.layers {
        let mut parents: Vec<Vec<Bit>> = drg
            .iter()
            .map(|rows| reverse_bit_numbering(to_bits_le(sink, &rows[layer - 1])))
            .collect();
        if layer > 1 {
            parents.extend(
                exp.iter()
                    .map(|rows| reverse_bit_numbering(to_bits_le(sink, &rows[layer - 2]))),
            );
        }
        labels.push(label(
            sink,
            &shared.replica_bits,
            &parents,
            layer as u32,
            &node,
        ));
    }

    let key = labels.last().ok_or(NativeError::Missing("layer"))?;
    let encoded = sink.num(key + data_leaf);
    let reached = root(
        sink,
        TreeHash::Poseidon,
        encoded,
        &proof.comm_r_last_proof.as_options(),
    )?;
    check_equal(&reached, &shared.comm_r_last, || {
        at("its replica path does not reach comm_r_last")
    })?;

    let column_hash = poseidon_any(sink, &labels)?;
    let c_x = opening::<Tree>(&columns.c_x)?;
    let reached = root(sink, TreeHash::Poseidon, column_hash, &c_x.path)?;
    check_equal(&reached, &shared.comm_c, || {
        at("its column path does not reach comm_c")
    })
}

/// `create_label_circuit`: SHA-256 of the replica id, the layer and the
/// node, and the parents' labels repeated to 37 (`TOTAL_PARENTS`), packed
/// into an element.
fn label<S: NumSink + ?Sized>(
    sink: &mut S,
    replica_bits: &[Bit],
    parents: &[Vec<Bit>],
    layer: u32,
    node: &[Bit],
) -> Scalar {
    // Layer 1's six base parents six times and one more; the other
    // layers' fourteen base and expander parents twice and nine more.
    let expanded = parents.iter().cycle().take(37);
    let mut message = Vec::with_capacity(39 * 256);
    message.extend_from_slice(replica_bits);
    message.resize(256, Bit::Const(false));
    message.extend(Word::constant(layer).bits_be());
    message.extend(node.iter().rev());
    message.resize(512, Bit::Const(false));
    for parent in expanded {
        message.extend_from_slice(parent);
        while !message.len().is_multiple_of(256) {
            message.push(Bit::Const(false));
        }
    }
    let digest = sha256::sha256(sink, &message);
    pack_bits(sink, &reverse_bit_numbering(digest))
}
