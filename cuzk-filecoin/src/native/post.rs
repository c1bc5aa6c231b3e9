//! The witness of a WinningPoSt or WindowPoSt partition
//! (`FallbackPoStCircuit`), natively: per sector, comm_r_last, comm_c and
//! comm_r, the comm_r check, then each challenged leaf and its path in
//! tree R. The circuit has no prefix; the sectors are computed in parallel.

use blstrs::Scalar;
use cuzk_pipeline::witness::NumSink;
use filecoin_hashers::Hasher;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{self, FallbackPoStCircuit};

use super::merkle::{poseidon_any, root, PathVec, TreeHash};
use super::{check_equal, NativeError};

/// The aux assignment of `circuit` (partition `k`'s circuit, which holds
/// each sector's commitments and leaves: the public sector repeated where
/// the partition is short) with `vanilla`'s paths, for a shape of
/// `num_aux` private variables.
pub(crate) fn partition<Tree: 'static + MerkleTreeTrait>(
    circuit: &FallbackPoStCircuit<Tree>,
    vanilla: &fallback::Proof<Tree::Proof>,
    num_aux: usize,
) -> Result<Vec<Scalar>, NativeError> {
    if <Tree::Hasher as Hasher>::name() != "poseidon_hasher" {
        return Err(NativeError::Unsupported(format!(
            "trees hashed with {}",
            <Tree::Hasher as Hasher>::name()
        )));
    }
    if circuit.sectors.len() != vanilla.sectors.len() {
        return Err(NativeError::False(format!(
            "{} sectors for {} vanilla sector proofs",
            circuit.sectors.len(),
            vanilla.sectors.len()
        )));
    }
    let items: Vec<_> = circuit
        .sectors
        .iter()
        .zip(&vanilla.sectors)
        .enumerate()
        .collect();
    super::blocks(num_aux, Vec::new(), &items, |(i, (sector, proof)), sink| {
        sector_block(sink, *i, sector, proof.as_options())
    })
}

/// `Sector::synthesize` of sector `i`.
fn sector_block<Tree: MerkleTreeTrait, S: NumSink + ?Sized>(
    sink: &mut S,
    i: usize,
    sector: &fallback::Sector<Tree>,
    paths: Vec<PathVec>,
) -> Result<(), NativeError> {
    let missing = NativeError::Missing;
    let comm_r_last = sink.num(sector.comm_r_last.ok_or(missing("comm_r_last"))?);
    let comm_c = sink.num(sector.comm_c.ok_or(missing("comm_c"))?);
    let comm_r = sink.num(sector.comm_r.ok_or(missing("comm_r"))?);
    let hash = poseidon_any(sink, &[comm_c, comm_r_last])?;
    check_equal(&hash, &comm_r, || {
        format!("sector {i}: comm_r is not H(comm_c, comm_r_last)")
    })?;
    if sector.leafs.len() != paths.len() {
        return Err(NativeError::False(format!(
            "sector {i}: {} leaves for {} paths",
            sector.leafs.len(),
            paths.len()
        )));
    }
    for (leaf, path) in sector.leafs.iter().zip(&paths) {
        let leaf = sink.num(leaf.ok_or(missing("challenged leaf"))?);
        let reached = root(sink, TreeHash::Poseidon, leaf, path)?;
        check_equal(&reached, &comm_r_last, || {
            format!("sector {i}: a challenge's path does not reach comm_r_last")
        })?;
    }
    Ok(())
}
