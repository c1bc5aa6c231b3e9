//! A committed-capacity sector's PoRep C1 output without sealing the sector.
//!
//! A C2 needs vanilla proofs that verify, not a sealed sector. In a
//! committed-capacity (CC) sector every data node is zero, so comm_d is the
//! zero commitment of the size and each replica node is its last layer's
//! label. The challenges follow from replica_id and the seed alone. A
//! challenged node's labels are SHA-256 over replica_id, the layer, the
//! node and its parents' labels, so only the columns of the challenged
//! nodes and of their parents are ever read: the parents' columns are drawn
//! at random, the challenged columns computed from them layer by layer, in
//! increasing node order (a challenged node that is also another's parent
//! keeps one column). Trees C and R hold those columns' hashes and replica
//! nodes and one default leaf everywhere else (`SparseTree`), so a 32 GiB
//! sector's C1 takes seconds and a few hundred MB.
//!
//! The result is what `seal_commit_phase1` would give for a sector whose
//! unread labels are the drawn ones: storage-proofs' `verify_all_partitions`
//! and, once proven, `verify_seal` accept it (`check` runs the first).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{anyhow, ensure, Result};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::{sha256::Sha256Hasher, Domain, HashFunction, Hasher};
use filecoin_proofs::with_shape;
use filecoin_proofs::{
    commitment_from_fr, parameters::public_params, DefaultPieceDomain, DefaultPieceHasher,
    DefaultTreeDomain, DefaultTreeHasher, PoRepConfig, ProverId, SealCommitPhase1Output,
};
use generic_array::typenum::{U0, U2};
use rand::RngCore;
use sha2::{Digest, Sha256};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_porep::stacked::{
    generate_replica_id, Column, ColumnProof, EncodingProof, LabelingProof, Proof, PublicInputs,
    ReplicaColumnProof, StackedBucketGraph, TOTAL_PARENTS,
};

use crate::cc_post::{cc_post, cc_update};
use crate::draws::{Draws, SealDraws};
use crate::fixture::{write_c1, META};
use crate::kinds::{self, SectorSize};
use crate::make::{fresh_dir, seal_meta, timed, write_post, write_update};
use crate::sparse::SparseTree;

pub struct CcOptions {
    pub size: SectorSize,
    pub seed: u64,
    pub miner_id: u64,
    pub out: PathBuf,
}

/// `fil-fixtures cc`: writes a fixture directory holding a CC sector's C1
/// output (`meta.json`, `c1.json`, `c1-curio.json`) and the vanilla proofs
/// of a WinningPoSt of it and of a full WindowPoSt partition of CC sectors
/// numbered from it (`winning/`, `window/`).
pub fn make_cc(opts: &CcOptions) -> Result<()> {
    with_shape!(opts.size.bytes(), write_cc, opts,)
}

fn write_cc<Tree>(opts: &CcOptions) -> Result<()>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let config = kinds::porep_config(opts.size.kinds().seal)?;
    let draws = Draws::new(opts.seed);
    let seal = draws.seal();
    let sector = timed("CC C1 (labels, sparse trees, vanilla proofs)", || {
        cc_c1::<Tree>(
            &config,
            kinds::prover_id(opts.miner_id),
            &seal,
            &mut draws.unread_labels(),
        )
    })?;
    let c1 = &sector.c1;
    let mut meta = seal_meta(
        opts.size,
        opts.size.kinds().seal,
        opts.seed,
        opts.miner_id,
        seal.sector_id,
        c1,
        "cc (a committed-capacity sector, not sealed)",
    )?;
    let randomness = draws.post();
    let kinds = opts.size.kinds();
    let prover_id = kinds::prover_id(opts.miner_id);
    let mut post_rng = draws.cc_post();
    let winning = timed("CC WinningPoSt vanilla proof", || {
        cc_post::<Tree>(
            kinds.winning,
            seal.sector_id,
            prover_id,
            randomness.winning,
            &mut post_rng,
        )
    })?;
    let window = timed("CC WindowPoSt vanilla proofs (one partition)", || {
        cc_post::<Tree>(
            kinds.window,
            seal.sector_id,
            prover_id,
            randomness.window,
            &mut post_rng,
        )
    })?;
    let update = timed("CC SnapDeals partition proofs (zero new data)", || {
        cc_update::<Tree>(kinds.update, &sector)
    })?;
    let dir = fresh_dir(&opts.out)?;
    timed("write", || {
        write_c1(&dir, &mut meta, c1)?;
        meta.winning = Some(write_post(&dir, "winning", &winning)?);
        meta.window = Some(write_post(&dir, "window", &window)?);
        meta.snap = Some(write_update(&dir, kinds.update, &update)?);
        dir.write_json_pretty(META, &meta)
    })
}

/// An opening of tree C or R of the sector shape `Tree`.
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// Labels of one node, layer 1 first.
type Column32 = Vec<DefaultTreeDomain>;

/// A CC sector made by [`cc_c1`]: its C1 output, and what a SnapDeals
/// update of it opens (tree R and comm_c).
pub struct CcSector<Tree: MerkleTreeTrait> {
    pub c1: SealCommitPhase1Output<Tree>,
    pub tree_r: SparseTree<DefaultTreeHasher>,
    pub comm_c: DefaultTreeDomain,
}

/// The C1 output of a CC sector with the ids and randomness of `draws`,
/// its unread labels and unopened tree leaves drawn from `labels_rng`.
pub fn cc_c1<Tree>(
    config: &PoRepConfig,
    prover_id: ProverId,
    draws: &SealDraws,
    labels_rng: &mut dyn RngCore,
) -> Result<CcSector<Tree>>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let pub_params = public_params::<Tree>(config)?;
    let graph = &pub_params.graph;
    let nodes = graph.size();

    let tree_d = zero_tree_d(nodes)?;
    let comm_d: [u8; 32] = tree_d.root().into();
    let replica_id = generate_replica_id::<DefaultTreeHasher, _>(
        &prover_id,
        draws.sector_id,
        &draws.ticket,
        comm_d,
        &config.porep_id,
    );

    let inputs = PublicInputs::<DefaultTreeDomain, DefaultPieceDomain> {
        replica_id,
        seed: Some(draws.seed),
        tau: None,
        k: None,
    };
    let partitions = usize::from(config.partitions);
    let challenges: Vec<Vec<usize>> = (0..partitions)
        .map(|k| inputs.challenges(&pub_params.challenges, nodes, Some(k)))
        .collect();
    let challenged: BTreeSet<u64> = challenges.iter().flatten().map(|&c| c as u64).collect();
    let parents = Parents::of(graph, &challenged)?;
    let columns = label_columns(
        &replica_id,
        pub_params.num_layers,
        &challenged,
        &parents,
        labels_rng,
    )?;

    let arities = SparseTree::<DefaultTreeHasher>::arities_of::<Tree>(nodes)?;
    let column_hashes = columns
        .iter()
        .map(|(&node, rows)| Ok((node, column(node, rows)?.hash().into())))
        .collect::<Result<BTreeMap<_, _>>>()?;
    let tree_c = SparseTree::<DefaultTreeHasher>::new(
        arities.clone(),
        random_domain(labels_rng),
        column_hashes,
    )?;
    // Encoding adds a data node, zero in a CC sector, to the key (the last
    // layer's label): each replica node is that label.
    let replica = challenged
        .iter()
        .map(|&node| Ok((node, last_label(&columns, node)?)))
        .collect::<Result<BTreeMap<_, _>>>()?;
    let tree_r = SparseTree::<DefaultTreeHasher>::new(arities, random_domain(labels_rng), replica)?;
    let comm_r = <DefaultTreeHasher as Hasher>::Function::hash2(&tree_c.root(), &tree_r.root());

    let trees = Trees {
        d: &tree_d,
        c: &tree_c,
        r: &tree_r,
    };
    let vanilla_proofs = challenges
        .iter()
        .map(|partition| {
            partition
                .iter()
                .map(|&challenge| {
                    challenge_proof::<Tree>(challenge as u64, &parents, &columns, &trees)
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;

    let c1 = SealCommitPhase1Output {
        vanilla_proofs,
        comm_r: commitment_from_fr(comm_r.into()),
        comm_d,
        replica_id,
        seed: draws.seed,
        ticket: draws.ticket,
    };
    Ok(CcSector {
        c1,
        comm_c: tree_c.root(),
        tree_r,
    })
}

/// Tree D of a sector of `nodes` zero data nodes (a CC sector, or the new
/// data of a zero-data update): binary SHA-256, every leaf zero.
pub(crate) fn zero_tree_d(nodes: usize) -> Result<SparseTree<Sha256Hasher>> {
    ensure!(nodes.is_power_of_two(), "{nodes} nodes make no binary tree");
    SparseTree::new(
        vec![2; nodes.trailing_zeros() as usize],
        DefaultPieceDomain::default(),
        BTreeMap::new(),
    )
}

/// The DRG and expansion parents of every challenged node, as the graph
/// lists them (DRG parents first).
struct Parents {
    drg_degree: usize,
    of: BTreeMap<u64, Vec<u32>>,
}

impl Parents {
    fn of(
        graph: &StackedBucketGraph<DefaultTreeHasher>,
        challenged: &BTreeSet<u64>,
    ) -> Result<Self> {
        let mut of = BTreeMap::new();
        for &node in challenged {
            let mut parents = vec![0u32; graph.degree()];
            graph.parents(node as usize, &mut parents)?;
            of.insert(node, parents);
        }
        Ok(Parents {
            drg_degree: graph.base_graph().degree(),
            of,
        })
    }

    fn drg(&self, node: u64) -> &[u32] {
        &self.of[&node][..self.drg_degree]
    }

    fn expansion(&self, node: u64) -> &[u32] {
        &self.of[&node][self.drg_degree..]
    }

    /// What a label at `layer` hashes: the DRG parents' labels in the same
    /// layer, then, above layer 1, the expansion parents' labels in the
    /// layer below, repeated to `TOTAL_PARENTS` labels.
    fn labels(
        &self,
        columns: &BTreeMap<u64, Column32>,
        node: u64,
        layer: usize,
    ) -> Result<Vec<DefaultTreeDomain>> {
        let at = |parent: &u32, layer: usize| {
            columns
                .get(&u64::from(*parent))
                .and_then(|rows| rows.get(layer - 1))
                .copied()
                .ok_or_else(|| {
                    anyhow!("node {node}'s parent {parent} has no label at layer {layer} yet")
                })
        };
        let mut labels = self
            .drg(node)
            .iter()
            .map(|parent| at(parent, layer))
            .collect::<Result<Vec<_>>>()?;
        if layer > 1 {
            for parent in self.expansion(node) {
                labels.push(at(parent, layer - 1)?);
            }
        }
        Ok(labels.iter().copied().cycle().take(TOTAL_PARENTS).collect())
    }
}

/// The columns of the challenged nodes and of their parents: a parent's
/// labels are drawn at random, a challenged node's computed. DRG parents
/// precede their node, and expansion parents are read one layer down, so
/// going up layer by layer in increasing node order finds every label a
/// challenged node hashes already made.
fn label_columns(
    replica_id: &DefaultTreeDomain,
    layers: usize,
    challenged: &BTreeSet<u64>,
    parents: &Parents,
    rng: &mut dyn RngCore,
) -> Result<BTreeMap<u64, Column32>> {
    let mut columns: BTreeMap<u64, Column32> = BTreeMap::new();
    for node in challenged {
        columns.insert(*node, Vec::with_capacity(layers));
    }
    let free: BTreeSet<u64> = parents
        .of
        .values()
        .flatten()
        .map(|&parent| u64::from(parent))
        .filter(|parent| !challenged.contains(parent))
        .collect();
    for node in free {
        columns.insert(node, (0..layers).map(|_| random_domain(rng)).collect());
    }
    for layer in 1..=layers {
        for &node in challenged {
            let parent_labels = parents.labels(&columns, node, layer)?;
            let label = sdr_label(replica_id, layer as u32, node, &parent_labels)?;
            columns.get_mut(&node).expect("inserted above").push(label);
        }
    }
    Ok(columns)
}

/// SDR's label of `node` at `layer`: SHA-256 of replica_id, the layer (u32
/// big-endian) and the node (u64 big-endian) in a 64-byte block, then the
/// parents' labels, its top two bits cleared to make a field element.
fn sdr_label(
    replica_id: &DefaultTreeDomain,
    layer: u32,
    node: u64,
    parent_labels: &[DefaultTreeDomain],
) -> Result<DefaultTreeDomain> {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(AsRef::<[u8]>::as_ref(replica_id));
    block[32..36].copy_from_slice(&layer.to_be_bytes());
    block[36..44].copy_from_slice(&node.to_be_bytes());
    let mut hasher = Sha256::new();
    hasher.update(block);
    for label in parent_labels {
        hasher.update(AsRef::<[u8]>::as_ref(label));
    }
    let mut digest: [u8; 32] = hasher.finalize().into();
    digest[31] &= 0x3f;
    DefaultTreeDomain::try_from_bytes(&digest)
}

fn last_label(columns: &BTreeMap<u64, Column32>, node: u64) -> Result<DefaultTreeDomain> {
    columns[&node]
        .last()
        .copied()
        .ok_or_else(|| anyhow!("node {node} has no labels"))
}

fn column(node: u64, rows: &Column32) -> Result<Column<DefaultTreeHasher>> {
    let index = u32::try_from(node)?;
    Column::new(index, rows.clone())
}

pub(crate) fn random_domain(rng: &mut dyn RngCore) -> DefaultTreeDomain {
    Fr::random(rng).into()
}

struct Trees<'a> {
    d: &'a SparseTree<Sha256Hasher>,
    c: &'a SparseTree<DefaultTreeHasher>,
    r: &'a SparseTree<DefaultTreeHasher>,
}

/// One challenge's vanilla proof, as storage-proofs assembles it from a
/// sealed sector's trees and labels.
fn challenge_proof<Tree>(
    challenge: u64,
    parents: &Parents,
    columns: &BTreeMap<u64, Column32>,
    trees: &Trees,
) -> Result<Proof<Tree, DefaultPieceHasher>>
where
    Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>,
{
    let column_proof = |node: u64| -> Result<ColumnProof<TreeProof<Tree>>> {
        let opening = trees.c.proof(node)?;
        ColumnProof::from_column(column(node, &columns[&node])?, opening)
    };
    let openings = |nodes: &[u32]| -> Result<Vec<_>> {
        nodes.iter().map(|&n| column_proof(u64::from(n))).collect()
    };
    let layers = columns[&challenge].len();
    ensure!(layers > 0, "challenge {challenge} has no labels");
    let labeling_proofs = (1..=layers)
        .map(|layer| {
            let labels = parents.labels(columns, challenge, layer)?;
            Ok(LabelingProof::new(layer as u32, challenge, labels))
        })
        .collect::<Result<Vec<_>>>()?;
    let encoding_proof = EncodingProof::new(
        layers as u32,
        challenge,
        parents.labels(columns, challenge, layers)?,
    );
    Ok(Proof {
        comm_d_proofs: trees.d.proof::<U2, U0, U0>(challenge)?,
        comm_r_last_proof: trees.r.proof(challenge)?,
        replica_column_proofs: ReplicaColumnProof {
            c_x: column_proof(challenge)?,
            drg_parents: openings(parents.drg(challenge))?,
            exp_parents: openings(parents.expansion(challenge))?,
        },
        labeling_proofs,
        encoding_proof,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use filecoin_proofs::{compute_comm_d, SectorSize as FilSectorSize};
    use serde_json::Value;

    use super::*;
    use crate::check::check_fixture;
    use crate::fixture::{FixtureDir, C1};

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("fil-fixtures-test-{}-{name}", std::process::id()))
    }

    /// Writes the CC fixture of `size` and runs `check` on it: every
    /// partition's vanilla proofs verify with storage-proofs' own
    /// `verify_all_partitions`, and not under another seed.
    /// (`test` names the scratch directory: tests run at once.)
    fn make_and_check(test: &str, size: SectorSize) -> PathBuf {
        let out = scratch(&format!("{test}-{size:?}"));
        let opts = CcOptions {
            size,
            seed: 1,
            miner_id: 1000,
            out: out.clone(),
        };
        make_cc(&opts).unwrap();
        check_fixture(&out).unwrap_or_else(|e| panic!("{size:?}: {e:#}"));
        out
    }

    #[test]
    fn cc_c1_verifies_at_test_sizes_as_sealed_fixtures_do() {
        for size in [SectorSize::Kib2, SectorSize::Mib8] {
            let out = make_and_check("test-sizes", size);
            std::fs::remove_dir_all(out).unwrap();
        }
        // The sealed fixtures cuzk's tests prove pass the same check.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cuzk-filecoin/fixtures");
        for dir in ["2KiB", "8MiB", "cc-2KiB", "cc-8MiB"] {
            check_fixture(&fixtures.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e:#}"));
        }
    }

    /// A 32 GiB and a 64 GiB C1 output (10 partitions of 18 challenges), a
    /// full WindowPoSt partition (2,349 and 2,300 sectors) and a SnapDeals
    /// update (16 partitions), made and vanilla-verified.
    #[test]
    fn cc_fixtures_verify_at_production_sizes() {
        for (size, window_sectors) in [(SectorSize::Gib32, 2349), (SectorSize::Gib64, 2300)] {
            let out = make_and_check("production", size);
            let meta: Value = FixtureDir::new(&out).read_json(META).unwrap();
            assert_eq!(meta["porep_partitions"], 10);
            let window = meta["window"]["vanilla_proofs"].as_array().unwrap();
            assert_eq!(window.len(), window_sectors, "{size:?}");
            let snap = meta["snap"]["partition_proofs"].as_array().unwrap();
            assert_eq!(snap.len(), 16, "{size:?}: SnapDeals partitions");
            std::fs::remove_dir_all(out).unwrap();
        }
    }

    /// comm_d is the zero commitment of the size: filecoin-proofs'
    /// commitment of a sector without pieces at the sizes it can hash in
    /// memory here, and the comm_d of every CC sector on the network at 32
    /// and 64 GiB (the digests of baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq
    /// and baga6ea4seaqomqafu276g53zko4k23xzh4h4uecjwicbmvhsuqi7o4bhthhm4aq).
    #[test]
    fn comm_d_is_the_zero_commitment() {
        for size in SectorSize::ALL {
            let tree = zero_tree_d((size.bytes() / 32) as usize).unwrap();
            let expected = match size {
                SectorSize::Gib32 => {
                    "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e".to_owned()
                }
                SectorSize::Gib64 => {
                    "e64005a6bfe3777953b8ad6ef93f0fca1049b2041654f2a411f7702799cece02".to_owned()
                }
                _ => hex::encode(compute_comm_d(FilSectorSize(size.bytes()), &[]).unwrap()),
            };
            assert_eq!(
                hex::encode(<[u8; 32]>::from(tree.root())),
                expected,
                "{size:?}"
            );
        }
    }

    /// One changed label of a challenged node's parent, and the C1 output
    /// no longer verifies: the check can fail.
    #[test]
    fn a_changed_parent_label_is_rejected() {
        let out = make_and_check("changed-label", SectorSize::Kib2);
        let dir = FixtureDir::new(&out);
        let mut c1: Value = dir.read_json(C1).unwrap();
        // A label is 32 bytes, serialized as an array of numbers.
        let byte = &mut c1["vanilla_proofs"][0][0]["replica_column_proofs"]["drg_parents"][0]
            ["column"]["rows"][0][0];
        *byte = Value::from(byte.as_u64().unwrap() ^ 1);
        dir.write_json(C1, &c1).unwrap();
        let error = check_fixture(&out).unwrap_err();
        assert!(format!("{error:#}").contains("do not verify"), "{error:#}");
        std::fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn the_same_seed_gives_the_same_c1() {
        let config = kinds::porep_config(SectorSize::Kib2.kinds().seal).unwrap();
        let c1 = |seed| {
            let draws = Draws::new(seed);
            let made = cc_c1::<filecoin_proofs::SectorShape2KiB>(
                &config,
                kinds::prover_id(1000),
                &draws.seal(),
                &mut draws.unread_labels(),
            )
            .unwrap();
            serde_json::to_value(made.c1).unwrap()
        };
        assert_eq!(c1(3), c1(3));
        assert_ne!(c1(3)["comm_r"], c1(4)["comm_r"]);
    }
}
