//! A Merkle tree of which only a few leaves are known: every other leaf has
//! one default value, so every subtree without a known leaf has the same
//! root at its height, computed once. That is how a production-size tree
//! (2^30 leaves at 32 GiB) is opened at a few thousand leaves in
//! milliseconds, with the hashers storage-proofs' trees use.

use std::collections::BTreeMap;

use anyhow::{ensure, Result};
use filecoin_hashers::{Hasher, PoseidonArity};
use generic_array::typenum::Unsigned;
use merkletree::hash::Algorithm;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};

pub struct SparseTree<H: Hasher> {
    /// Children per node, from the leaves' parents up to the root.
    arities: Vec<usize>,
    /// The value of a node with no known leaf under it, per height (0: the
    /// default leaf).
    defaults: Vec<H::Domain>,
    /// The nodes with a known leaf under them, per height.
    known: Vec<BTreeMap<u64, H::Domain>>,
}

impl<H: Hasher> SparseTree<H> {
    /// Hashes the tree of `arities` (from the bottom level up) whose leaves
    /// are `leaves` where given and `default_leaf` elsewhere.
    pub fn new(
        arities: Vec<usize>,
        default_leaf: H::Domain,
        leaves: BTreeMap<u64, H::Domain>,
    ) -> Result<Self> {
        let mut tree = SparseTree {
            defaults: vec![default_leaf],
            known: vec![leaves],
            arities,
        };
        let width = tree.width();
        ensure!(
            tree.known[0].keys().all(|&leaf| leaf < width),
            "a leaf lies outside a tree of {width} leaves"
        );
        for height in 0..tree.arities.len() {
            let arity = tree.arities[height] as u64;
            let default = hash_children::<H>(&vec![tree.defaults[height]; arity as usize], height);
            let mut parents = BTreeMap::new();
            for &child in tree.known[height].keys() {
                let parent = child / arity;
                parents
                    .entry(parent)
                    .or_insert_with(|| hash_children::<H>(&tree.children(height, parent), height));
            }
            tree.defaults.push(default);
            tree.known.push(parents);
        }
        Ok(tree)
    }

    /// The shape of a tree of storage-proofs' type `Tree` over `leaves`
    /// leaves: base trees of `Tree::Arity`, joined by one level of
    /// `SubTreeArity` and one of `TopTreeArity` where the shape has them.
    pub fn arities_of<Tree: MerkleTreeTrait>(leaves: usize) -> Result<Vec<usize>> {
        let base = Tree::Arity::to_usize();
        let joins: Vec<usize> = [
            Tree::SubTreeArity::to_usize(),
            Tree::TopTreeArity::to_usize(),
        ]
        .into_iter()
        .filter(|&arity| arity > 0)
        .collect();
        let mut base_leaves = leaves / joins.iter().product::<usize>();
        let mut arities = Vec::new();
        while base_leaves > 1 {
            ensure!(
                base_leaves.is_multiple_of(base),
                "{leaves} leaves do not make a tree of arity {base}"
            );
            arities.push(base);
            base_leaves /= base;
        }
        arities.extend(joins);
        Ok(arities)
    }

    fn width(&self) -> u64 {
        self.arities.iter().map(|&a| a as u64).product()
    }

    /// The value of a node at `height` with no known leaf under it.
    pub fn default_at(&self, height: usize) -> H::Domain {
        self.defaults[height]
    }

    pub fn root(&self) -> H::Domain {
        self.node(self.arities.len(), 0)
    }

    fn node(&self, height: usize, index: u64) -> H::Domain {
        self.known[height]
            .get(&index)
            .copied()
            .unwrap_or(self.defaults[height])
    }

    fn children(&self, height: usize, parent: u64) -> Vec<H::Domain> {
        let arity = self.arities[height] as u64;
        (parent * arity..(parent + 1) * arity)
            .map(|child| self.node(height, child))
            .collect()
    }

    /// The inclusion proof of `leaf` in storage-proofs' form for a tree of
    /// arities `A`, `B`, `C` (base, sub-tree and top-tree), as
    /// `Tree::gen_proof` would make it.
    pub fn proof<A, B, C>(&self, leaf: u64) -> Result<MerkleProof<H, A, B, C>>
    where
        A: PoseidonArity,
        B: PoseidonArity,
        C: PoseidonArity,
    {
        ensure!(
            leaf < self.width(),
            "leaf {leaf} lies outside a tree of {} leaves",
            self.width()
        );
        let mut path = Vec::with_capacity(self.arities.len());
        let mut index = leaf;
        for height in 0..self.arities.len() {
            let arity = self.arities[height] as u64;
            let (parent, position) = (index / arity, (index % arity) as usize);
            let mut siblings = self.children(height, parent);
            siblings.remove(position);
            path.push((siblings, position));
            index = parent;
        }
        let proof = MerkleProof::from_parts(self.node(0, leaf), self.root(), path);
        Ok(proof)
    }
}

fn hash_children<H: Hasher>(children: &[H::Domain], height: usize) -> H::Domain {
    let mut hasher = H::Function::default();
    hasher.multi_node(children, height)
}

#[cfg(test)]
mod tests {
    use super::*;

    use filecoin_hashers::{poseidon::PoseidonHasher, sha256::Sha256Hasher, Domain};
    use generic_array::typenum::{U0, U2, U8};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use storage_proofs_core::merkle::{generate_tree, DiskTree, MerkleProofTrait};

    /// With every leaf given, the sparse tree is the tree storage-proofs
    /// builds: the same root, and for each leaf the same opening.
    fn same_as_storage_proofs<Tree>(leaves: usize)
    where
        Tree: MerkleTreeTrait,
        Tree::Store: 'static,
    {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let (data, tree) = generate_tree::<Tree, _>(&mut rng, leaves, None);
        let known: BTreeMap<u64, _> = data
            .chunks(32)
            .enumerate()
            .map(|(i, bytes)| {
                let leaf = <Tree::Hasher as Hasher>::Domain::try_from_bytes(bytes).unwrap();
                (i as u64, leaf)
            })
            .collect();
        let arities = SparseTree::<Tree::Hasher>::arities_of::<Tree>(leaves).unwrap();
        let sparse = SparseTree::<Tree::Hasher>::new(arities, known[&0], known).unwrap();
        assert_eq!(sparse.root(), tree.root());
        for leaf in [0, 1, leaves / 3, leaves - 1] {
            let expected = tree.gen_proof(leaf).unwrap();
            let proof: MerkleProof<
                Tree::Hasher,
                Tree::Arity,
                Tree::SubTreeArity,
                Tree::TopTreeArity,
            > = sparse.proof(leaf as u64).unwrap();
            assert_eq!(proof.path(), expected.path(), "leaf {leaf}");
            assert_eq!(
                (proof.leaf(), proof.root()),
                (expected.leaf(), expected.root())
            );
            assert!(proof.validate(leaf) && proof.verify());
        }
    }

    #[test]
    fn full_trees_match_storage_proofs_trees_of_every_shape() {
        type Sha = Sha256Hasher;
        type Pos = PoseidonHasher;
        same_as_storage_proofs::<DiskTree<Sha, U2, U0, U0>>(64);
        same_as_storage_proofs::<DiskTree<Pos, U8, U0, U0>>(64);
        same_as_storage_proofs::<DiskTree<Pos, U8, U8, U0>>(512);
        same_as_storage_proofs::<DiskTree<Pos, U8, U8, U2>>(1024);
    }

    /// Leaves left out take the default value: the tree is the one with
    /// the default written at each of them.
    #[test]
    fn unknown_leaves_take_the_default() {
        let arities = vec![8, 8, 2];
        let value = |i: u64| <PoseidonHasher as Hasher>::Domain::from(blstrs::Scalar::from(i + 3));
        let default = value(1000);
        let some: BTreeMap<u64, _> = [5, 6, 77, 127].into_iter().map(|i| (i, value(i))).collect();
        let all: BTreeMap<u64, _> = (0..128)
            .map(|i| (i, some.get(&i).copied().unwrap_or(default)))
            .collect();
        let sparse = SparseTree::<PoseidonHasher>::new(arities.clone(), default, some).unwrap();
        let full = SparseTree::<PoseidonHasher>::new(arities, default, all).unwrap();
        assert_eq!(sparse.root(), full.root());
        for leaf in [0, 5, 64, 127] {
            let a = sparse.proof::<U8, U8, U2>(leaf).unwrap();
            let b = full.proof::<U8, U8, U2>(leaf).unwrap();
            assert_eq!(a.path(), b.path());
            assert_eq!(a.leaf(), b.leaf());
        }
        assert!(sparse.proof::<U8, U8, U2>(128).is_err(), "outside the tree");
    }
}
