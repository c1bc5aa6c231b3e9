//! `sha-chain`: SHA-256 of a `c`-block message, the digest packed into two
//! public inputs. Bit-heavy, shaped like a PoRep partition.

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use sha2::{Digest, Sha256};

/// Length in bytes of the message whose padded form is exactly `blocks`
/// 512-bit blocks.
pub fn message_len(blocks: usize) -> usize {
    55 + 64 * (blocks - 1)
}

/// The message of `blocks` blocks for `seed`, byte by byte as the workload
/// definition gives it.
pub fn message(blocks: usize, seed: u64) -> Vec<u8> {
    let salt = seed.wrapping_mul(40503);
    (0..message_len(blocks) as u64)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(salt) >> 8) as u8)
        .collect()
}

/// The public inputs (without ONE), computed natively from the message.
pub fn public_inputs(blocks: usize, seed: u64) -> Vec<Scalar> {
    let digest = Sha256::digest(message(blocks, seed));
    multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
}

/// The `sha-chain` circuit. With `message: None` it describes the shape
/// only (for parameter generation).
#[derive(Clone, Debug)]
pub struct ShaChainCircuit {
    /// Number of SHA-256 blocks.
    pub blocks: usize,
    /// The message, when proving.
    pub message: Option<Vec<u8>>,
}

impl Circuit<Scalar> for ShaChainCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let len_bits = message_len(self.blocks) * 8;
        let values: Vec<Option<bool>> = match &self.message {
            Some(m) => multipack::bytes_to_bits(m).into_iter().map(Some).collect(),
            None => vec![None; len_bits],
        };
        let bits = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                AllocatedBit::alloc(cs.namespace(|| format!("message bit {i}")), v)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}
