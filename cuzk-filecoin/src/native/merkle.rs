//! Mirror of storage-proofs' Merkle inclusion gadget (`por::PoRCircuit`
//! and its `AuthPath`): per level, the index bits and the siblings
//! allocated, the node inserted among them, the level's hash.

use blstrs::Scalar;
use cuzk_pipeline::witness::{sha256, Bit, NumSink};
use generic_array::typenum::{U11, U2, U4, U8};

use super::num::{insert, pack_bits, reverse_bit_numbering, to_bits_le};
use super::poseidon;
use super::NativeError;

/// The hash of a tree's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TreeHash {
    /// Tree D: SHA-256 of the children, truncated to 254 bits.
    Sha256,
    /// Trees C and R: Poseidon of the children.
    Poseidon,
}

/// A Merkle path as `MerkleProofTrait::as_options` gives it: each level's
/// siblings and the node's index among the level's children.
pub(crate) type Path = [(Vec<Option<Scalar>>, Option<usize>)];

/// An owned [`Path`].
pub(crate) type PathVec = Vec<(Vec<Option<Scalar>>, Option<usize>)>;

/// The root that `leaf` and `path` give, allocating what `PoRCircuit`
/// allocates for them (the leaf and the root are allocated elsewhere).
pub(crate) fn root<S: NumSink + ?Sized>(
    sink: &mut S,
    hash: TreeHash,
    leaf: Scalar,
    path: &Path,
) -> Result<Scalar, NativeError> {
    let mut cur = leaf;
    for (siblings, index) in path {
        let arity = siblings.len() + 1;
        let index = index.ok_or(NativeError::Missing("a Merkle path index"))?;
        let index_bits: Vec<Bit> = (0..arity.trailing_zeros())
            .map(|i| sink.alloc((index >> i) & 1 == 1))
            .collect();
        let siblings = siblings
            .iter()
            .map(|s| s.map(|s| sink.num(s)))
            .collect::<Option<Vec<Scalar>>>()
            .ok_or(NativeError::Missing("a Merkle path sibling"))?;
        cur = level(sink, hash, &cur, &index_bits, &siblings)?;
    }
    Ok(cur)
}

/// `por_no_challenge_input`: the root that `leaf` and `siblings` (already
/// allocated, level by level) give, the insertion indexes taken from
/// `bits` in order (the challenge's bits, least significant first).
pub(crate) fn root_of_bits<S: NumSink + ?Sized>(
    sink: &mut S,
    hash: TreeHash,
    leaf: Scalar,
    bits: &[Bit],
    siblings: &[Vec<Scalar>],
) -> Result<Scalar, NativeError> {
    let mut cur = leaf;
    let mut bits = bits.iter().copied();
    for level_siblings in siblings {
        let arity = level_siblings.len() + 1;
        let index_bits: Vec<Bit> = (0..arity.trailing_zeros())
            .map(|_| bits.next().ok_or(NativeError::Missing("a challenge bit")))
            .collect::<Result<_, _>>()?;
        cur = level(sink, hash, &cur, &index_bits, level_siblings)?;
    }
    Ok(cur)
}

/// One level of a path: the node inserted among its siblings, hashed.
fn level<S: NumSink + ?Sized>(
    sink: &mut S,
    hash: TreeHash,
    cur: &Scalar,
    index_bits: &[Bit],
    siblings: &[Scalar],
) -> Result<Scalar, NativeError> {
    let children = insert(sink, cur, index_bits, siblings);
    Ok(match hash {
        TreeHash::Sha256 => sha256_leaves(sink, &children),
        TreeHash::Poseidon => poseidon_any(sink, &children)?,
    })
}

/// `Sha256Function::hash_multi_leaf_circuit` (and `hash2_circuit`): each
/// leaf's 255 bits allocated, padded to 32 bytes and put in byte order,
/// hashed, the digest's first 254 bits (in little-endian byte order)
/// packed into an element.
pub(crate) fn sha256_leaves<S: NumSink + ?Sized>(sink: &mut S, leaves: &[Scalar]) -> Scalar {
    let mut bits = Vec::with_capacity(leaves.len() * 256);
    for leaf in leaves {
        bits.extend(reverse_bit_numbering(to_bits_le(sink, leaf)));
    }
    let digest = sha256::sha256(sink, &bits);
    pack_bits(sink, &reverse_bit_numbering(digest))
}

/// Poseidon of `preimage` with the constants of its length.
pub(crate) fn poseidon_any<S: NumSink + ?Sized>(
    sink: &mut S,
    preimage: &[Scalar],
) -> Result<Scalar, NativeError> {
    Ok(match preimage.len() {
        2 => poseidon::hash::<_, U2>(sink, preimage),
        4 => poseidon::hash::<_, U4>(sink, preimage),
        8 => poseidon::hash::<_, U8>(sink, preimage),
        11 => poseidon::hash::<_, U11>(sink, preimage),
        n => return Err(NativeError::Unsupported(format!("Poseidon of arity {n}"))),
    })
}
