//! Proof kinds, sector sizes and the registered proofs of
//! filecoin-proofs-api, with the configurations filecoin-proofs builds
//! from them.

use std::fmt;
use std::str::FromStr;

use filecoin_proofs::constants::{
    WINDOW_POST_CHALLENGE_COUNT, WINDOW_POST_SECTOR_COUNT, WINNING_POST_CHALLENGE_COUNT,
    WINNING_POST_SECTOR_COUNT,
};
use filecoin_proofs::{PoRepConfig, PoStConfig, PoStType};
use storage_proofs_core::api_version::{ApiFeature, ApiVersion};

use crate::FilecoinError;

/// The four proofs a storage provider's prover makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofKind {
    /// PoRep C2: seal commit phase 2, from the C1 output.
    PoRep,
    /// WinningPoSt, from the sector's vanilla proof.
    WinningPoSt,
    /// One partition of WindowPoSt, from its sectors' vanilla proofs.
    WindowPoSt,
    /// SnapDeals (empty sector update), from its partition proofs.
    SnapDeals,
}

impl ProofKind {
    /// Every kind, in the order above.
    pub const ALL: [ProofKind; 4] = [
        ProofKind::PoRep,
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
        ProofKind::SnapDeals,
    ];

    /// The CLI name: `porep`, `winning-post`, `window-post`, `snap-deals`.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PoRep => "porep",
            ProofKind::WinningPoSt => "winning-post",
            ProofKind::WindowPoSt => "window-post",
            ProofKind::SnapDeals => "snap-deals",
        }
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProofKind {
    type Err = FilecoinError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.to_ascii_lowercase();
        let found = match s.as_str() {
            "porep" | "porep-c2" | "seal" => Some(ProofKind::PoRep),
            "winning-post" | "winning" => Some(ProofKind::WinningPoSt),
            "window-post" | "window" => Some(ProofKind::WindowPoSt),
            "snap-deals" | "snap" | "update" => Some(ProofKind::SnapDeals),
            _ => None,
        };
        found.ok_or_else(|| FilecoinError::Unknown {
            what: "proof kind",
            name: s,
            expected: "porep, winning-post, window-post, snap-deals".to_owned(),
        })
    }
}

/// The sector sizes of the registered proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectorSize {
    /// 2 KiB (test networks).
    S2KiB,
    /// 8 MiB (test networks).
    S8MiB,
    /// 512 MiB (test networks).
    S512MiB,
    /// 32 GiB.
    S32GiB,
    /// 64 GiB.
    S64GiB,
}

impl SectorSize {
    /// Every size, smallest first.
    pub const ALL: [SectorSize; 5] = [
        SectorSize::S2KiB,
        SectorSize::S8MiB,
        SectorSize::S512MiB,
        SectorSize::S32GiB,
        SectorSize::S64GiB,
    ];

    /// Bytes.
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::S2KiB => 2 << 10,
            SectorSize::S8MiB => 8 << 20,
            SectorSize::S512MiB => 512 << 20,
            SectorSize::S32GiB => 32 << 30,
            SectorSize::S64GiB => 64 << 30,
        }
    }

    /// The size of `bytes`, if it is a registered one.
    pub fn from_bytes(bytes: u64) -> Result<Self, FilecoinError> {
        Self::ALL
            .into_iter()
            .find(|s| s.bytes() == bytes)
            .ok_or_else(|| unknown_size(bytes.to_string()))
    }

    /// The name filecoin-proofs-api uses inside registered proof names
    /// (`2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB`).
    pub fn name(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2KiB",
            SectorSize::S8MiB => "8MiB",
            SectorSize::S512MiB => "512MiB",
            SectorSize::S32GiB => "32GiB",
            SectorSize::S64GiB => "64GiB",
        }
    }

    /// Position among the registered sizes (the offset of its registered
    /// proof numbers).
    fn index(self) -> u64 {
        Self::ALL.iter().position(|&s| s == self).expect("listed") as u64
    }

    /// The V1_1 registered seal proof's number (2 KiB = 5 ... 64 GiB = 9).
    pub fn seal_proof_v1_1(self) -> u64 {
        5 + self.index()
    }

    /// PoRep's porep_id for the V1_1 registered seal proof.
    pub fn porep_id(self) -> [u8; 32] {
        porep_id(self.seal_proof_v1_1())
    }

    /// filecoin-proofs' PoRep configuration for the V1_1 registered seal
    /// proof (API version 1.1.0).
    pub fn porep_config(self) -> PoRepConfig {
        PoRepConfig::new_groth16(self.bytes(), self.porep_id(), ApiVersion::V1_1_0)
    }

    /// filecoin-proofs' PoSt configuration of `typ` at this size, as
    /// filecoin-proofs-api builds it for the proofs the network uses:
    /// WinningPoSt `StackedDrgWinning*V1` (API 1.0.0) and WindowPoSt
    /// `StackedDrgWindow*V1_2` (API 1.2.0, the grindability fix, which
    /// changes how sectors' challenges are drawn).
    pub fn post_config(self, typ: PoStType) -> PoStConfig {
        let (challenge_count, sector_count, api_version) = match typ {
            PoStType::Winning => (
                WINNING_POST_CHALLENGE_COUNT,
                WINNING_POST_SECTOR_COUNT,
                ApiVersion::V1_0_0,
            ),
            PoStType::Window => (
                WINDOW_POST_CHALLENGE_COUNT,
                *WINDOW_POST_SECTOR_COUNT
                    .read()
                    .expect("WINDOW_POST_SECTOR_COUNT poisoned")
                    .get(&self.bytes())
                    .expect("every registered size has a window sector count"),
                ApiVersion::V1_2_0,
            ),
        };
        PoStConfig {
            sector_size: self.bytes().into(),
            challenge_count,
            sector_count,
            typ,
            priority: false,
            api_version,
        }
    }
}

fn unknown_size(name: String) -> FilecoinError {
    FilecoinError::Unknown {
        what: "sector size",
        name,
        expected: "2KiB, 8MiB, 512MiB, 32GiB, 64GiB (or their byte counts)".to_owned(),
    }
}

impl fmt::Display for SectorSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SectorSize {
    type Err = FilecoinError;

    /// `2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB` (any case), or bytes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(bytes) = s.parse::<u64>() {
            return Self::from_bytes(bytes);
        }
        Self::ALL
            .into_iter()
            .find(|size| size.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| unknown_size(s.to_owned()))
    }
}

/// The sector size of a registered seal proof's name as filecoin-proofs-api
/// writes it (`StackedDrg2KiBV1`, `StackedDrg32GiBV1_1`, ...), whichever
/// variant it names.
pub fn size_of_seal_proof_name(name: &str) -> Result<SectorSize, FilecoinError> {
    RegisteredProof::from_name(ProofKind::PoRep, name).map(|p| p.size)
}

/// Which version (or feature) of a proof kind a registered proof is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofVersion {
    /// Seal `StackedDrg*V1` (API 1.0.0), `StackedDrgWinning*V1`,
    /// `StackedDrgWindow*V1` (API 1.0.0), update `StackedDrg*V1`.
    V1,
    /// Seal `StackedDrg*V1_1` (API 1.1.0): the seal proof the network uses.
    V1_1,
    /// Seal `StackedDrg*V1_1_Feat_SyntheticPoRep` (API 1.2.0).
    SyntheticPoRep,
    /// Seal `StackedDrg*V1_2_Feat_NonInteractivePoRep` (API 1.2.0).
    NiPoRep,
    /// `StackedDrgWindow*V1_2` (API 1.2.0, the grindability fix), which
    /// go-state-types and lotus call `StackedDrgWindow*V1_1`.
    V1_2,
}

/// A registered proof: a proof kind, its version and its sector size, as
/// go-state-types numbers them (`abi.RegisteredSealProof` for PoRep,
/// `abi.RegisteredPoStProof` for both PoSts, `abi.RegisteredUpdateProof`
/// for SnapDeals) and filecoin-proofs-api names them.
///
/// | numbers | kind | proof |
/// | --- | --- | --- |
/// | 0-4 | PoRep | `StackedDrg<size>V1` |
/// | 5-9 | PoRep | `StackedDrg<size>V1_1` (proven) |
/// | 10-14 | PoRep | `StackedDrg<size>V1_1_Feat_SyntheticPoRep` (proven) |
/// | 15-19 | PoRep | `StackedDrg<size>V1_2_Feat_NonInteractivePoRep` (proven) |
/// | 0-4 | PoSt | `StackedDrgWinning<size>V1` (proven) |
/// | 5-9 | PoSt | `StackedDrgWindow<size>V1` |
/// | 10-14 | PoSt | `StackedDrgWindow<size>V1_2` (proven; go-state-types' `V1_1`) |
/// | 0-4 | SnapDeals | `StackedDrg<size>V1` (proven) |
///
/// Within each group of five the sizes go 2 KiB, 8 MiB, 512 MiB, 32 GiB,
/// 64 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegisteredProof {
    /// The proof kind (WinningPoSt and WindowPoSt share one numbering).
    pub kind: ProofKind,
    /// The version or feature.
    pub version: ProofVersion,
    /// The sector size.
    pub size: SectorSize,
}

impl RegisteredProof {
    /// The proof cuzk makes for `kind` at `size`: seal `V1_1`, WinningPoSt
    /// `V1`, WindowPoSt `V1_2`, update `V1`.
    pub fn proven(kind: ProofKind, size: SectorSize) -> Self {
        let version = match kind {
            ProofKind::PoRep => ProofVersion::V1_1,
            ProofKind::WinningPoSt | ProofKind::SnapDeals => ProofVersion::V1,
            ProofKind::WindowPoSt => ProofVersion::V1_2,
        };
        RegisteredProof {
            kind,
            version,
            size,
        }
    }

    /// The registered proof numbered `number` among `kind`'s (PoRep: seal
    /// proofs; WinningPoSt and WindowPoSt: PoSt proofs, and it must be one
    /// of that PoSt; SnapDeals: update proofs). Any registered proof is
    /// returned, also one cuzk does not prove: see [`Self::check_proven`].
    pub fn from_number(kind: ProofKind, number: u64) -> Result<Self, FilecoinError> {
        use ProofVersion::*;
        let group = number / 5;
        let version = match (kind, group) {
            (ProofKind::PoRep, 0) => Some(V1),
            (ProofKind::PoRep, 1) => Some(V1_1),
            (ProofKind::PoRep, 2) => Some(SyntheticPoRep),
            (ProofKind::PoRep, 3) => Some(NiPoRep),
            (ProofKind::WinningPoSt, 0) | (ProofKind::SnapDeals, 0) => Some(V1),
            (ProofKind::WindowPoSt, 1) => Some(V1),
            (ProofKind::WindowPoSt, 2) => Some(V1_2),
            _ => None,
        };
        let Some(version) = version else {
            let why = match (kind, group) {
                (ProofKind::WinningPoSt, 1 | 2) => format!(
                    "{} is a WindowPoSt proof",
                    RegisteredProof::from_number(ProofKind::WindowPoSt, number)?.name()
                ),
                (ProofKind::WindowPoSt, 0) => format!(
                    "{} is a WinningPoSt proof",
                    RegisteredProof::from_number(ProofKind::WinningPoSt, number)?.name()
                ),
                _ => format!("no registered {} proof has that number", family(kind)),
            };
            return Err(crate::error::bad(
                format!("registered proof {number}"),
                format!("{why} ({kind} takes {})", numbers(kind)),
            ));
        };
        let size = SectorSize::ALL[(number % 5) as usize];
        Ok(RegisteredProof {
            kind,
            version,
            size,
        })
    }

    /// The registered proof of `kind` named `name` as filecoin-proofs-api
    /// names it (`StackedDrg32GiBV1_1`, `StackedDrgWindow2KiBV1_2`, ...).
    pub fn from_name(kind: ProofKind, name: &str) -> Result<Self, FilecoinError> {
        (0..20)
            .filter_map(|n| RegisteredProof::from_number(kind, n).ok())
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                crate::error::bad(
                    "registered proof",
                    format!("'{name}' is not a registered {} proof", family(kind)),
                )
            })
    }

    /// Its go-state-types number.
    pub fn number(&self) -> u64 {
        use ProofVersion::*;
        let group = match (self.kind, self.version) {
            (ProofKind::PoRep, V1) => 0,
            (ProofKind::PoRep, V1_1) => 1,
            (_, SyntheticPoRep) => 2,
            (_, NiPoRep) => 3,
            (ProofKind::WindowPoSt, V1) => 1,
            (_, V1_2) => 2,
            (_, _) => 0,
        };
        group * 5 + self.size.index()
    }

    /// Its filecoin-proofs-api name (`StackedDrg32GiBV1_1`,
    /// `StackedDrgWinning2KiBV1`, `StackedDrgWindow32GiBV1_2`).
    pub fn name(&self) -> String {
        let post = match self.kind {
            ProofKind::WinningPoSt => "Winning",
            ProofKind::WindowPoSt => "Window",
            ProofKind::PoRep | ProofKind::SnapDeals => "",
        };
        let version = match self.version {
            ProofVersion::V1 => "V1",
            ProofVersion::V1_1 => "V1_1",
            ProofVersion::SyntheticPoRep => "V1_1_Feat_SyntheticPoRep",
            ProofVersion::NiPoRep => "V1_2_Feat_NonInteractivePoRep",
            ProofVersion::V1_2 => "V1_2",
        };
        format!("StackedDrg{post}{}{version}", self.size)
    }

    /// Whether cuzk proves it (see [`Self::proven`]).
    pub fn is_proven(&self) -> bool {
        *self == RegisteredProof::proven(self.kind, self.size)
            || (self.kind == ProofKind::PoRep
                && matches!(
                    self.version,
                    ProofVersion::SyntheticPoRep | ProofVersion::NiPoRep
                ))
    }

    /// filecoin-proofs' PoRep configuration of this seal proof: `V1_1`
    /// (API 1.1.0), or one of its twins of API 1.2.0, which have the same
    /// circuit and parameter file but their own porep_id and challenges:
    /// Synthetic PoRep (the `SyntheticPoRep` feature) and NI-PoRep (the
    /// `NonInteractivePoRep` feature: challenges drawn without the seed, in
    /// 13 partitions at the test sizes and 126 at 32 and 64 GiB). Other
    /// proofs are refused as [`Self::check_proven`] refuses them.
    pub fn porep_config(&self) -> Result<PoRepConfig, FilecoinError> {
        if self.kind != ProofKind::PoRep {
            return Err(crate::error::bad(
                "registered proof",
                format!("{self} is not a seal proof"),
            ));
        }
        let feature = match self.check_proven()?.version {
            ProofVersion::SyntheticPoRep => ApiFeature::SyntheticPoRep,
            ProofVersion::NiPoRep => ApiFeature::NonInteractivePoRep,
            // check_proven leaves V1_1 alone of the other seal proofs.
            _ => return Ok(self.size.porep_config()),
        };
        PoRepConfig::new_groth16_with_features(
            self.size.bytes(),
            porep_id(self.number()),
            ApiVersion::V1_2_0,
            vec![feature],
        )
        .map_err(FilecoinError::Upstream)
    }

    /// Itself, if cuzk proves it; otherwise an error saying which proof it
    /// is and which cuzk proves instead (a non-interactive PoRep, a V1 seal
    /// proof, a V1 WindowPoSt).
    pub fn check_proven(self) -> Result<Self, FilecoinError> {
        if self.is_proven() {
            return Ok(self);
        }
        let instead = RegisteredProof::proven(self.kind, self.size);
        Err(FilecoinError::Unsupported {
            proof: self.to_string(),
            instead: instead.to_string(),
        })
    }
}

impl fmt::Display for RegisteredProof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.number())
    }
}

/// A seal proof's porep_id: its registered number as a little-endian u64
/// in bytes 0..8, a zero nonce, zeros after.
fn porep_id(seal_proof: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&seal_proof.to_le_bytes());
    id
}

fn family(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "seal",
        ProofKind::WinningPoSt => "WinningPoSt",
        ProofKind::WindowPoSt => "WindowPoSt",
        ProofKind::SnapDeals => "update",
    }
}

fn numbers(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "abi.RegisteredSealProof 0-19, and proves 5-14",
        ProofKind::WinningPoSt => "abi.RegisteredPoStProof 0-4",
        ProofKind::WindowPoSt => "abi.RegisteredPoStProof 5-14, and proves 10-14",
        ProofKind::SnapDeals => "abi.RegisteredUpdateProof 0-4",
    }
}

/// Fixes the sector shape (the Merkle tree type) of `$size` as `$tree` and
/// evaluates `$body` with it, like filecoin-proofs' own `with_shape!`.
macro_rules! with_tree {
    ($size:expr, $tree:ident => $body:expr) => {{
        use filecoin_proofs::constants as shapes;
        match $size {
            $crate::SectorSize::S2KiB => {
                type $tree = shapes::SectorShape2KiB;
                $body
            }
            $crate::SectorSize::S8MiB => {
                type $tree = shapes::SectorShape8MiB;
                $body
            }
            $crate::SectorSize::S512MiB => {
                type $tree = shapes::SectorShape512MiB;
                $body
            }
            $crate::SectorSize::S32GiB => {
                type $tree = shapes::SectorShape32GiB;
                $body
            }
            $crate::SectorSize::S64GiB => {
                type $tree = shapes::SectorShape64GiB;
                $body
            }
        }
    }};
}
pub(crate) use with_tree;
