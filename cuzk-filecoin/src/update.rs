//! SnapDeals (empty sector update) from its partition proofs, each
//! `PartitionProof` in bincode as filecoin-proofs-api hands them over.

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{DefaultPieceDomain, SectorUpdateConfig, TreeRHasher};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof,
    PublicInputs, PublicParams,
};

use crate::circuits::{Blank, BlankCircuit, Compound};
use crate::error::{bad, unless_panics};
use crate::registry::with_tree;
use crate::request::{FilecoinRequest, Verifier};
use crate::{commitment, CommitmentKind, FilecoinError, ProofKind, SectorSize};

type Scheme<Tree> = EmptySectorUpdate<Tree>;
type Circuit<Tree> = EmptySectorUpdateCircuit<Tree>;
type Comp<Tree> = EmptySectorUpdateCompound<Tree>;

/// The three commitments a SnapDeals proof binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdateCommitments {
    /// The sector key's replica commitment (before the update).
    pub comm_r_old: [u8; 32],
    /// The updated replica's commitment.
    pub comm_r_new: [u8; 32],
    /// The new data's commitment.
    pub comm_d_new: [u8; 32],
}

impl UpdateCommitments {
    /// The commitments as a caller sends them, each 32 raw bytes or a
    /// commitment CID's bytes (comm_r_old and comm_r_new sealed, comm_d_new
    /// unsealed; see [`commitment`]).
    pub fn from_bytes(
        comm_r_old: &[u8],
        comm_r_new: &[u8],
        comm_d_new: &[u8],
    ) -> Result<Self, FilecoinError> {
        Ok(UpdateCommitments {
            comm_r_old: commitment("comm_r_old", comm_r_old, CommitmentKind::Sealed)?,
            comm_r_new: commitment("comm_r_new", comm_r_new, CommitmentKind::Sealed)?,
            comm_d_new: commitment("comm_d_new", comm_d_new, CommitmentKind::Unsealed)?,
        })
    }
}

/// The blank update circuit at `size`.
pub(crate) fn blank(size: SectorSize) -> Result<Box<dyn BlankCircuit>, FilecoinError> {
    with_tree!(size, Tree => {
        let pp = PublicParams::from_sector_size(size.bytes());
        Ok(Box::new(Blank::<Circuit<Tree>>::of::<Scheme<Tree>, Comp<Tree>>(&pp)))
    })
}

/// How many partitions a SnapDeals proof has at `size`.
pub(crate) fn partition_count(size: SectorSize) -> usize {
    usize::from(SectorUpdateConfig::from_porep_config(&size.porep_config()).update_partitions)
}

/// The SnapDeals request at `size` for its partition proofs.
pub(crate) fn request(
    size: SectorSize,
    comms: UpdateCommitments,
    partition_proofs: &[Vec<u8>],
) -> Result<FilecoinRequest, FilecoinError> {
    with_tree!(size, Tree => request_for::<Tree>(size, comms, partition_proofs))
}

fn request_for<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: SectorSize,
    comms: UpdateCommitments,
    partition_proofs: &[Vec<u8>],
) -> Result<FilecoinRequest, FilecoinError> {
    let porep_config = size.porep_config();
    let config = SectorUpdateConfig::from_porep_config(&porep_config);
    let partitions = usize::from(config.update_partitions);
    if partition_proofs.len() != partitions {
        return Err(bad(
            "partition proofs",
            format!(
                "{} given, a {size} update has {partitions}",
                partition_proofs.len()
            ),
        ));
    }
    let proofs = partition_proofs
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            bincode::deserialize::<PartitionProof<Tree>>(bytes)
                .map_err(|e| bad(format!("partition proof {i}"), e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let commitment = |bytes: &[u8; 32], name: &str| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(bytes).map_err(|e| bad(name, e))
    };
    let pub_inputs = PublicInputs {
        k: partitions,
        comm_r_old: commitment(&comms.comm_r_old, "comm_r_old")?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&comms.comm_d_new)
            .map_err(|e| bad("comm_d_new", e))?,
        comm_r_new: commitment(&comms.comm_r_new, "comm_r_new")?,
        h: config.h,
    };
    let pp = PublicParams::from_sector_size(size.bytes());
    let valid = unless_panics("partition proofs", || {
        Scheme::<Tree>::verify_all_partitions(&pp, &pub_inputs, &proofs)
    })?
    .unwrap_or(false);
    if !valid {
        return Err(FilecoinError::InvalidVanilla {
            what: "partition proofs".to_owned(),
            kind: ProofKind::SnapDeals,
            size,
        });
    }
    let verifier: Verifier = Box::new(move |proof: &[u8]| {
        filecoin_proofs::verify_empty_sector_update_proof::<Tree>(
            &porep_config,
            proof,
            comms.comm_r_old,
            comms.comm_r_new,
            comms.comm_d_new,
        )
    });
    let partitions =
        Compound::<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>::new(pp, pub_inputs, proofs)
            .with_native(native_witness::<Tree>);
    Ok(FilecoinRequest::new(
        ProofKind::SnapDeals,
        size,
        Box::new(partitions),
        verifier,
    ))
}

/// Partition `k`'s aux assignment from the SnapDeals witness program (its
/// values taken from the partition's circuit).
fn native_witness<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    partitions: &Compound<Scheme<Tree>, Circuit<Tree>, Comp<Tree>>,
    k: usize,
    num_aux: usize,
) -> Result<Vec<blstrs::Scalar>, crate::NativeError> {
    let circuit = partitions
        .circuit(k)
        .map_err(|e| crate::NativeError::Unsupported(e.to_string()))?;
    crate::native::update_partition(&circuit, num_aux)
}
