//! Filecoin's proof kinds on the cuzk prover: PoRep C2, WinningPoSt,
//! WindowPoSt (one partition) and SnapDeals, built on filecoin-proofs /
//! storage-proofs 19.1 and proven by `bellperson_lite` (any backend of
//! `supraseal_c2`), with proofs that filecoin-proofs' own verifiers accept.
//!
//! - [`FilecoinRequest`] builds a request's partition circuits from the
//!   inputs lotus and Curio hand over (a C1 output in any of its JSON
//!   forms, PoSt vanilla proofs, SnapDeals partition proofs), after
//!   verifying those vanilla proofs as filecoin-proofs does.
//! - [`CircuitId`] (a kind at a sector size) gives the blank circuit: the
//!   compiled shape and test parameters come from it, and the parameter
//!   files' names (`v28-<id>.params` / `.vk`) are filecoin-proofs' own.
//! - [`params`] finds, loads and writes parameter files.
//! - [`aggregate`] folds several sectors' seal proofs into one SnarkPack
//!   aggregate, as a miner sends them on chain.
//! - [`RegisteredProof`] maps go-state-types' registered proof numbers to
//!   a kind, version and size (and says which cuzk proves); [`commitment`]
//!   reads a commitment sent as 32 bytes or as a commitment CID.
//!
//! storage-proofs' circuits implement bellperson 0.27's traits
//! (bellpepper-core 0.2); `bellperson_lite::CircuitV02` adapts them.
//!
//! ```no_run
//! use cuzk_filecoin::{params, CircuitId, FilecoinRequest, ProofKind, SealIds, SectorSize};
//! use supraseal_c2::GpuLock;
//!
//! let dir = params::parameter_dir(None);
//! let id = CircuitId::new(ProofKind::PoRep, SectorSize::S2KiB);
//! let params = params::load(id, &dir)?;
//! let c1 = std::fs::read("c1.json")?;
//! let ids = SealIds { prover_id: [0; 32], sector_id: 1 };
//! let request = FilecoinRequest::porep(&c1, Some(SectorSize::S2KiB), ids)?;
//! let proof = request.prove(&params.srs()?, &GpuLock::cpu(0), None)?;
//! assert!(request.verify_with_filecoin_proofs(&proof)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod aggregate;
mod circuits;
mod commitment;
mod error;
mod native;
pub mod params;
mod porep;
mod post;
mod registry;
mod request;
mod update;

pub use circuits::Partitions;
pub use commitment::{commitment, commitment_cid, CommitmentKind};
pub use error::FilecoinError;
pub use native::NativeError;
pub use porep::SealIds;
pub use post::PostInputs;
pub use registry::{size_of_seal_proof_name, ProofKind, ProofVersion, RegisteredProof, SectorSize};
pub use request::{CircuitId, FilecoinRequest};
pub use update::UpdateCommitments;

/// The prover id lotus and Curio derive from a miner id: the id's unsigned
/// LEB128 encoding, left-aligned in 32 bytes.
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let (mut value, mut i) = (miner_id, 0);
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out[i] = byte;
            return out;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
}
