//! Which registered proofs a sector size stands for, and the ids derived
//! from them.

use anyhow::{ensure, Result};
use clap::ValueEnum;
use filecoin_proofs::{
    constants::{
        SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
        SECTOR_SIZE_8_MIB,
    },
    PoRepConfig, SectorShapeBase,
};
use filecoin_proofs_api::{
    ApiFeature, ApiVersion, ProverId, RegisteredPoStProof, RegisteredSealProof,
    RegisteredUpdateProof,
};

/// The merkle tree shape of every sector size this tool seals: 2 KiB, 8 MiB
/// and 512 MiB sectors all use filecoin-proofs' `SectorShapeBase` (one
/// oct-tree, no sub- or top-trees), so one type serves them all. The
/// production sizes, which `cc` makes without sealing, have shapes of their
/// own (filecoin-proofs' `with_shape!` picks them).
pub type Tree = SectorShapeBase;

/// The sector sizes this tool knows: the three it seals and the two
/// production sizes (32 GiB and 64 GiB), which it only makes CC C1 outputs
/// of (`cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SectorSize {
    #[value(name = "2KiB")]
    Kib2,
    #[value(name = "8MiB")]
    Mib8,
    #[value(name = "512MiB")]
    Mib512,
    #[value(name = "32GiB")]
    Gib32,
    #[value(name = "64GiB")]
    Gib64,
}

/// The registered proofs a sector of one size is sealed and proven with:
/// what lotus and Curio use on the network today.
#[derive(Clone, Copy, Debug)]
pub struct ProofKinds {
    /// The interactive PoRep, API version 1.1.0.
    pub seal: RegisteredSealProof,
    pub winning: RegisteredPoStProof,
    /// WindowPoSt at API version 1.2.0, the grindability fix; lotus calls it
    /// `StackedDrgWindow*V1_1`, filecoin-proofs-api `StackedDrgWindow*V1_2`.
    pub window: RegisteredPoStProof,
    pub update: RegisteredUpdateProof,
}

impl SectorSize {
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::Kib2 => SECTOR_SIZE_2_KIB,
            SectorSize::Mib8 => SECTOR_SIZE_8_MIB,
            SectorSize::Mib512 => SECTOR_SIZE_512_MIB,
            SectorSize::Gib32 => SECTOR_SIZE_32_GIB,
            SectorSize::Gib64 => SECTOR_SIZE_64_GIB,
        }
    }

    pub const ALL: [SectorSize; 5] = [
        SectorSize::Kib2,
        SectorSize::Mib8,
        SectorSize::Mib512,
        SectorSize::Gib32,
        SectorSize::Gib64,
    ];

    /// Whether this tool can seal a sector of this size (the production
    /// sizes need hundreds of GiB of disk and hours: `cc` makes their C1).
    pub fn sealable(self) -> bool {
        self.bytes() <= SECTOR_SIZE_512_MIB
    }

    pub fn from_bytes(bytes: u64) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|size| size.bytes() == bytes)
            .ok_or_else(|| anyhow::anyhow!("unsupported sector size {bytes} bytes"))
    }

    pub fn kinds(self) -> ProofKinds {
        use RegisteredPoStProof as PoSt;
        use RegisteredSealProof as Seal;
        use RegisteredUpdateProof as Update;
        let (seal, winning, window, update) = match self {
            SectorSize::Kib2 => (
                Seal::StackedDrg2KiBV1_1,
                PoSt::StackedDrgWinning2KiBV1,
                PoSt::StackedDrgWindow2KiBV1_2,
                Update::StackedDrg2KiBV1,
            ),
            SectorSize::Mib8 => (
                Seal::StackedDrg8MiBV1_1,
                PoSt::StackedDrgWinning8MiBV1,
                PoSt::StackedDrgWindow8MiBV1_2,
                Update::StackedDrg8MiBV1,
            ),
            SectorSize::Mib512 => (
                Seal::StackedDrg512MiBV1_1,
                PoSt::StackedDrgWinning512MiBV1,
                PoSt::StackedDrgWindow512MiBV1_2,
                Update::StackedDrg512MiBV1,
            ),
            SectorSize::Gib32 => (
                Seal::StackedDrg32GiBV1_1,
                PoSt::StackedDrgWinning32GiBV1,
                PoSt::StackedDrgWindow32GiBV1_2,
                Update::StackedDrg32GiBV1,
            ),
            SectorSize::Gib64 => (
                Seal::StackedDrg64GiBV1_1,
                PoSt::StackedDrgWinning64GiBV1,
                PoSt::StackedDrgWindow64GiBV1_2,
                Update::StackedDrg64GiBV1,
            ),
        };
        ProofKinds {
            seal,
            winning,
            window,
            update,
        }
    }
}

/// Which of a size's interactive seal proofs' twins a seal proof is: they
/// share the circuit and the parameter files, not the challenges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SealVariant {
    /// `V1_1` (API 1.1.0): challenges from the interactive seed.
    Interactive,
    /// `V1_1_Feat_SyntheticPoRep` (API 1.2.0): challenges drawn from a
    /// synthetic set made after PreCommit 2.
    Synthetic,
    /// `V1_2_Feat_NonInteractivePoRep` (API 1.2.0): challenges from
    /// replica_id and comm_r, no seed, in many more partitions (13 at test sizes, 126 at
    /// 32 GiB), aggregated with SnarkPack by Commit 2.
    NonInteractive,
}

impl SealVariant {
    /// The API feature it enables, if any.
    fn feature(self) -> Option<ApiFeature> {
        match self {
            SealVariant::Interactive => None,
            SealVariant::Synthetic => Some(ApiFeature::SyntheticPoRep),
            SealVariant::NonInteractive => Some(ApiFeature::NonInteractivePoRep),
        }
    }
}

/// The seal proofs this tool makes, by size (2 KiB first), then variant in
/// [`VARIANTS`]' order: registered numbers go up by one a size and by five
/// a variant, from 5.
const SEAL_PROOFS: [[RegisteredSealProof; 3]; 5] = {
    use RegisteredSealProof::*;
    [
        [
            StackedDrg2KiBV1_1,
            StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
            StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        ],
        [
            StackedDrg8MiBV1_1,
            StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
            StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        ],
        [
            StackedDrg512MiBV1_1,
            StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
            StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        ],
        [
            StackedDrg32GiBV1_1,
            StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
            StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        ],
        [
            StackedDrg64GiBV1_1,
            StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
            StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
        ],
    ]
};

const VARIANTS: [SealVariant; 3] = [
    SealVariant::Interactive,
    SealVariant::Synthetic,
    SealVariant::NonInteractive,
];

/// `variant`'s column in [`SEAL_PROOFS`].
fn column(variant: SealVariant) -> usize {
    VARIANTS.iter().position(|&v| v == variant).expect("listed")
}

/// Where `seal` is in [`SEAL_PROOFS`]: its size's row and its variant.
fn position(seal: RegisteredSealProof) -> Result<(usize, SealVariant)> {
    SEAL_PROOFS
        .iter()
        .enumerate()
        .find_map(|(row, proofs)| {
            let col = proofs.iter().position(|&p| p == seal)?;
            Some((row, VARIANTS[col]))
        })
        .ok_or_else(|| anyhow::anyhow!("{seal:?} is not a seal proof this tool makes"))
}

/// The number filecoin-proofs-api registers a seal proof under: 5-9 for
/// `V1_1`, 10-14 for Synthetic PoRep, 15-19 for NI-PoRep.
pub fn seal_proof_number(seal: RegisteredSealProof) -> Result<u64> {
    let (row, variant) = position(seal)?;
    Ok(5 + row as u64 + 5 * column(variant) as u64)
}

/// The `variant` twin of a size's seal proof.
pub fn with_variant(
    seal: RegisteredSealProof,
    variant: SealVariant,
) -> Result<RegisteredSealProof> {
    let (row, _) = position(seal)?;
    Ok(SEAL_PROOFS[row][column(variant)])
}

/// Which variant `seal` is.
pub fn variant(seal: RegisteredSealProof) -> Result<SealVariant> {
    Ok(position(seal)?.1)
}

/// The porep_id: the registered proof's number as a little-endian u64 in
/// bytes 0..8, a zero nonce in bytes 8..16, zeros after.
pub fn porep_id(seal: RegisteredSealProof) -> Result<[u8; 32]> {
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&seal_proof_number(seal)?.to_le_bytes());
    Ok(id)
}

/// The PoRep configuration, built the way filecoin-proofs' tests build it
/// and checked against filecoin-proofs-api's registry, so that a mismatch
/// in the porep_id or API version cannot pass unnoticed.
pub fn porep_config(seal: RegisteredSealProof) -> Result<PoRepConfig> {
    let size = u64::from(seal.sector_size());
    let config = match variant(seal)?.feature() {
        Some(feature) => PoRepConfig::new_groth16_with_features(
            size,
            porep_id(seal)?,
            ApiVersion::V1_2_0,
            vec![feature],
        )?,
        None => PoRepConfig::new_groth16(size, porep_id(seal)?, ApiVersion::V1_1_0),
    };
    let registry = seal.as_v1_config();
    ensure!(
        config.porep_id == registry.porep_id
            && config.api_version == registry.api_version
            && config.api_features == registry.api_features
            && config.partitions.0 == registry.partitions.0,
        "the PoRep config for {seal:?} differs from filecoin-proofs-api's registry"
    );
    Ok(config)
}

/// The prover id lotus and Curio derive from a miner id: the id's unsigned
/// LEB128 encoding (the payload of its `f0` address), left-aligned in 32
/// bytes.
pub fn prover_id(miner_id: u64) -> ProverId {
    let mut id = [0u8; 32];
    let mut rest = miner_id;
    for byte in id.iter_mut() {
        *byte = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            break;
        }
        *byte |= 0x80;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_id_is_leb128() {
        assert_eq!(prover_id(0)[..2], [0x00, 0x00]);
        assert_eq!(prover_id(1000)[..3], [0xe8, 0x07, 0x00]);
        assert_eq!(prover_id(127)[..2], [0x7f, 0x00]);
        assert_eq!(prover_id(128)[..3], [0x80, 0x01, 0x00]);
    }

    #[test]
    fn porep_ids_match_the_registry() {
        for size in SectorSize::ALL {
            let seal = size.kinds().seal;
            assert_eq!(porep_id(seal).unwrap(), seal.as_v1_config().porep_id);
            assert_eq!(u64::from(seal.sector_size()), size.bytes());
            assert_eq!(variant(seal).unwrap(), SealVariant::Interactive);
            // The twins: numbers 10-14 and 15-19, same size, their own
            // porep_id; porep_config checks features and version too.
            for (twin_of, feature, offset) in [
                (SealVariant::Synthetic, ApiFeature::SyntheticPoRep, 5),
                (
                    SealVariant::NonInteractive,
                    ApiFeature::NonInteractivePoRep,
                    10,
                ),
            ] {
                let twin = with_variant(seal, twin_of).unwrap();
                assert_eq!(variant(twin).unwrap(), twin_of);
                assert_eq!(
                    seal_proof_number(twin).unwrap(),
                    seal_proof_number(seal).unwrap() + offset
                );
                assert_eq!(twin.sector_size(), seal.sector_size());
                assert!(porep_config(twin).unwrap().feature_enabled(feature));
                assert!(!porep_config(seal).unwrap().feature_enabled(feature));
            }
        }
    }
}
