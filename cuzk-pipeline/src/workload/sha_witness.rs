//! A native generator of the private witness of `sha-chain`.
//!
//! Synthesizing [`ShaChainCircuit`](super::sha_chain::ShaChainCircuit)
//! through the gadgets allocates one aux variable per message bit, then
//! whatever `bellpepper::gadgets::sha256::sha256` allocates; packing the
//! digest allocates only public inputs. Every one of those aux values is 0
//! or 1. This module reproduces that aux assignment bit for bit, in the same
//! order, without a constraint system, through the gadget mirrors of
//! [`crate::witness`]; the tests below compare it value for value with the
//! gadget path.

use bellperson_lite::BitWitness;

use super::sha_chain;
use crate::witness::sha256::{self, MAX_ALLOCS_PER_BLOCK};
use crate::witness::{BitSink, Bits};

/// The aux assignment of `sha-chain` with `blocks` blocks for `seed`, and
/// the SHA-256 digest of the message as the emulated circuit computes it
/// (the public inputs are its packing).
///
/// # Panics
///
/// If `blocks` is 0.
pub fn witness(blocks: usize, seed: u64) -> (BitWitness, [u8; 32]) {
    assert!(blocks >= 1, "sha-chain needs at least one block");
    let message = sha_chain::message(blocks, seed);
    let mut sink = Bits::with_capacity(message.len() * 8 + blocks * MAX_ALLOCS_PER_BLOCK);

    // The circuit allocates the message bits first, most significant bit of
    // each byte first.
    let mut input = Vec::with_capacity(blocks * 512);
    for &byte in &message {
        for k in (0..8).rev() {
            input.push(sink.alloc((byte >> k) & 1 == 1));
        }
    }
    let digest = sha256::sha256(&mut sink, &input);
    (sink.finish(), sha256::digest_bytes(&digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workload;
    use bellperson_lite::ProvingAssignment;
    use blstrs::Scalar;
    use sha2::{Digest, Sha256};

    fn check(blocks: usize, seed: u64) {
        let (bits, digest) = witness(blocks, seed);
        assert_eq!(
            digest[..],
            Sha256::digest(sha_chain::message(blocks, seed))[..],
            "digest, blocks {blocks} seed {seed}"
        );
        assert_eq!(bits.words.len(), bits.len.div_ceil(64));
        if bits.len % 64 != 0 {
            assert_eq!(bits.words[bits.len / 64] >> (bits.len % 64), 0);
        }

        let cs = ProvingAssignment::synthesize(Workload::ShaChain { blocks }.circuit(seed))
            .expect("synthesis");
        let aux = cs.aux_assignment();
        assert_eq!(
            bits.len,
            aux.len(),
            "aux length, blocks {blocks} seed {seed}"
        );
        if let Some(i) = (0..aux.len()).find(|&i| aux[i] != Scalar::from(u64::from(bits.get(i)))) {
            panic!(
                "blocks {blocks} seed {seed}: first difference at aux {i} of {}: native {}",
                aux.len(),
                bits.get(i)
            );
        }
    }

    #[test]
    fn matches_gadgets_one_block() {
        for seed in [0, 1, 12345, u64::MAX] {
            check(1, seed);
        }
    }

    #[test]
    fn matches_gadgets_two_blocks() {
        for seed in [0, 1, 12345, u64::MAX] {
            check(2, seed);
        }
    }

    #[test]
    fn matches_gadgets_three_blocks() {
        for seed in [0, 12345] {
            check(3, seed);
        }
    }

    #[test]
    fn matches_gadgets_five_blocks() {
        for seed in [1, u64::MAX] {
            check(5, seed);
        }
    }

    #[test]
    fn the_witness_depends_on_the_seed_only() {
        assert_eq!(witness(2, 7), witness(2, 7));
        assert_ne!(witness(2, 7).0, witness(2, 8).0);
    }
}
