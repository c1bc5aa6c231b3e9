//! A Groth16 proof and its 192-byte encoding (bellperson's: compressed A,
//! B, C).

use std::io::{Read, Write};

use blstrs::{G1Affine, G2Affine};
use supraseal_c2::RawProof;

use crate::encoding::{decode_compressed, Encoded};
use crate::error::{ProofError, ProofPart};

/// Bytes of an encoded proof.
pub const PROOF_BYTES: usize = 192;

const A_END: usize = 48;
const B_END: usize = A_END + 96;

/// A Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A, in G1.
    pub a: G1Affine,
    /// B, in G2.
    pub b: G2Affine,
    /// C, in G1.
    pub c: G1Affine,
}

impl From<RawProof> for Proof {
    fn from(p: RawProof) -> Self {
        Proof {
            a: p.a,
            b: p.b,
            c: p.c,
        }
    }
}

impl Proof {
    /// The encoding: compressed A (48 bytes), B (96), C (48).
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        self.a.put_compressed(&mut out[..A_END]);
        self.b.put_compressed(&mut out[A_END..B_END]);
        self.c.put_compressed(&mut out[B_END..]);
        out
    }

    /// Decodes exactly one proof, checking each point (on the curve,
    /// canonical, not the identity, in the subgroup).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofError> {
        if bytes.len() != PROOF_BYTES {
            return Err(ProofError::Length {
                expected: PROOF_BYTES,
                got: bytes.len(),
            });
        }
        let point = |part| move |fault| ProofError::Point { part, fault };
        Ok(Proof {
            a: decode_compressed(&bytes[..A_END]).map_err(point(ProofPart::A))?,
            b: decode_compressed(&bytes[A_END..B_END]).map_err(point(ProofPart::B))?,
            c: decode_compressed(&bytes[B_END..]).map_err(point(ProofPart::C))?,
        })
    }

    /// Writes the 192-byte encoding.
    pub fn write<W: Write>(&self, mut writer: W) -> Result<(), ProofError> {
        writer.write_all(&self.to_bytes())?;
        Ok(())
    }

    /// Reads one 192-byte proof (an early end is an i/o error).
    pub fn read<R: Read>(mut reader: R) -> Result<Self, ProofError> {
        let mut bytes = [0u8; PROOF_BYTES];
        reader.read_exact(&mut bytes)?;
        Self::from_bytes(&bytes)
    }
}
