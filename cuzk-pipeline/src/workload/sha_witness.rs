//! A native generator of the private witness of `sha-chain`.
//!
//! Synthesizing [`ShaChainCircuit`](super::sha_chain::ShaChainCircuit)
//! through the gadgets allocates one aux variable per message bit, then
//! whatever `bellpepper::gadgets::sha256::sha256` allocates; packing the
//! digest allocates only public inputs. Every one of those aux values is 0
//! or 1. This module reproduces that aux assignment bit for bit, in the same
//! order, without a constraint system: it mirrors the allocation logic of
//! bellpepper 0.4.1 (`gadgets::{sha256, uint32, multieq}`) and
//! bellpepper-core 0.4.0 (`gadgets::boolean`), including every constant
//! special case of `Boolean::{xor, and, sha256_ch, sha256_maj}` and
//! `UInt32::addmany`, and the deferred additions of the compression
//! function.
//!
//! The emulation is only as right as that mirroring: the tests below compare
//! it value for value with the gadget path and guard it against drift (an
//! upgrade of either crate must be checked against them).

use bellperson_lite::BitWitness;

use super::sha_chain;

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
    let mut al = Allocator::with_capacity(message.len() * 8 + blocks * MAX_ALLOCS_PER_BLOCK);

    // The circuit allocates the message bits first, most significant bit of
    // each byte first.
    let mut input = Vec::with_capacity(blocks * 512);
    for &byte in &message {
        for k in (0..8).rev() {
            input.push(al.alloc((byte >> k) & 1 == 1));
        }
    }
    pad(&mut input);

    let mut state = IV.map(Word::constant);
    for block in input.chunks_exact(512) {
        state = al.compress(block, &state);
    }

    let mut digest = [0u8; 32];
    for (out, word) in digest.chunks_exact_mut(4).zip(&state) {
        out.copy_from_slice(&word.value().to_be_bytes());
    }
    (al.finish(), digest)
}

/// An upper bound on the bits one compression allocates (its exact count is
/// lower when constants are involved): 48 schedule words (two 32-bit xors
/// and a 34-bit sum each), 64 rounds (four xors, `ch`, two `maj` bits and
/// two 35-bit sums each), and the final eight additions.
const MAX_ALLOCS_PER_BLOCK: usize = 48 * (64 + 34) + 64 * (64 + 32 + 64 + 64 + 35 + 35) + 8 * 35;

#[rustfmt::skip]
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// Appends SHA-256 padding to the message bits, all as constants, as
/// `sha256::sha256` does.
fn pad(bits: &mut Vec<Bit>) {
    let len = bits.len() as u64;
    bits.push(Bit::Const(true));
    while !(bits.len() + 64).is_multiple_of(512) {
        bits.push(Bit::Const(false));
    }
    bits.extend((0..64).rev().map(|i| Bit::Const((len >> i) & 1 == 1)));
}

/// Mirror of `Boolean`: a constant, or an allocated variable taken as is or
/// negated. `Is` and `Not` carry the value of the underlying variable, not
/// of the `Boolean`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bit {
    Const(bool),
    Is(bool),
    Not(bool),
}

impl Bit {
    /// The value of the `Boolean`.
    fn value(self) -> bool {
        match self {
            Bit::Const(b) | Bit::Is(b) => b,
            Bit::Not(v) => !v,
        }
    }

    fn not(self) -> Bit {
        match self {
            Bit::Const(b) => Bit::Const(!b),
            Bit::Is(v) => Bit::Not(v),
            Bit::Not(v) => Bit::Is(v),
        }
    }

    fn is_const(self) -> bool {
        matches!(self, Bit::Const(_))
    }
}

/// Mirror of `UInt32`: 32 bits, least significant first.
#[derive(Clone, Copy, Debug)]
struct Word([Bit; 32]);

impl Word {
    fn constant(value: u32) -> Word {
        Word(std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)))
    }

    /// From 32 bits, most significant first.
    fn from_bits_be(bits: &[Bit]) -> Word {
        Word(std::array::from_fn(|i| bits[31 - i]))
    }

    /// The integer the bits' values spell.
    fn value(&self) -> u32 {
        self.0
            .iter()
            .enumerate()
            .fold(0, |acc, (i, b)| acc | (u32::from(b.value()) << i))
    }

    fn rotr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| self.0[(i + by) % 32]))
    }

    fn shr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| {
            self.0.get(i + by).copied().unwrap_or(Bit::Const(false))
        }))
    }
}

/// Mirror of the compression function's `Maybe`: a word, or the operands of
/// an addition not performed yet.
enum Maybe {
    Concrete(Word),
    Deferred(Vec<Word>),
}

/// Collects the aux variables in allocation order, and performs the gadget
/// operations that allocate them.
struct Allocator {
    words: Vec<u64>,
    current: u64,
    len: usize,
}

impl Allocator {
    fn with_capacity(bits: usize) -> Allocator {
        Allocator {
            words: Vec::with_capacity(bits.div_ceil(64)),
            current: 0,
            len: 0,
        }
    }

    /// Allocates a variable with value `v`.
    fn alloc(&mut self, v: bool) -> Bit {
        self.current |= u64::from(v) << (self.len % 64);
        self.len += 1;
        if self.len.is_multiple_of(64) {
            self.words.push(self.current);
            self.current = 0;
        }
        Bit::Is(v)
    }

    fn finish(mut self) -> BitWitness {
        if !self.len.is_multiple_of(64) {
            self.words.push(self.current);
        }
        BitWitness {
            words: self.words,
            len: self.len,
        }
    }

    /// `Boolean::xor`.
    fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
            (Bit::Const(true), x) | (x, Bit::Const(true)) => x.not(),
            // xor(is, not.not()).not(): the variable holds the xor of the
            // underlying values.
            (Bit::Is(i), Bit::Not(n)) | (Bit::Not(n), Bit::Is(i)) => self.alloc(i ^ n).not(),
            (Bit::Is(x), Bit::Is(y)) | (Bit::Not(x), Bit::Not(y)) => self.alloc(x ^ y),
        }
    }

    /// `Boolean::and`; its `and`, `and_not` and `nor` variants all allocate
    /// the AND of the two `Boolean` values.
    fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
            (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
            _ => self.alloc(a.value() & b.value()),
        }
    }

    /// `Boolean::sha256_ch`: `(a and b) xor ((not a) and c)`.
    fn ch(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        let value = (a.value() & b.value()) ^ (!a.value() & c.value());
        match (a, b, c) {
            (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
            (Bit::Const(false), _, c) => c,
            (a, Bit::Const(false), c) => self.and(a.not(), c),
            (a, b, Bit::Const(false)) => self.and(a, b),
            (a, b, Bit::Const(true)) => self.and(a, b.not()).not(),
            (a, Bit::Const(true), c) => self.and(a.not(), c.not()).not(),
            // Including a constant true `a`.
            _ => self.alloc(value),
        }
    }

    /// `Boolean::sha256_maj`: `(a and b) xor (a and c) xor (b and c)`.
    fn maj(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        let (av, bv, cv) = (a.value(), b.value(), c.value());
        let value = (av & bv) ^ (av & cv) ^ (bv & cv);
        match (a, b, c) {
            (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
            (Bit::Const(false), b, c) => self.and(b, c),
            (a, Bit::Const(false), c) => self.and(a, c),
            (a, b, Bit::Const(false)) => self.and(a, b),
            (a, b, Bit::Const(true)) => self.and(a.not(), b.not()).not(),
            (a, Bit::Const(true), c) => self.and(a.not(), c.not()).not(),
            (Bit::Const(true), b, c) => self.and(b.not(), c.not()).not(),
            _ => {
                // `maj` first, then the helper `b and c`.
                let maj = self.alloc(value);
                self.and(b, c);
                maj
            }
        }
    }

    /// `UInt32::xor`.
    fn xor_words(&mut self, a: &Word, b: &Word) -> Word {
        Word(std::array::from_fn(|i| self.xor(a.0[i], b.0[i])))
    }

    /// `UInt32::sha256_ch`.
    fn ch_words(&mut self, a: &Word, b: &Word, c: &Word) -> Word {
        Word(std::array::from_fn(|i| self.ch(a.0[i], b.0[i], c.0[i])))
    }

    /// `UInt32::sha256_maj`.
    fn maj_words(&mut self, a: &Word, b: &Word, c: &Word) -> Word {
        Word(std::array::from_fn(|i| self.maj(a.0[i], b.0[i], c.0[i])))
    }

    /// `UInt32::addmany`: a constant when every operand bit is constant,
    /// else as many bits of the sum as its largest possible value needs,
    /// of which the low 32 are the result.
    fn addmany(&mut self, operands: &[Word]) -> Word {
        let sum: u64 = operands.iter().map(|w| u64::from(w.value())).sum();
        if operands.iter().all(|w| w.0.iter().all(|b| b.is_const())) {
            return Word::constant(sum as u32);
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = u64::BITS - max.leading_zeros();
        let mut result = [Bit::Const(false); 32];
        for i in 0..width {
            let bit = self.alloc((sum >> i) & 1 == 1);
            if let Some(slot) = result.get_mut(i as usize) {
                *slot = bit;
            }
        }
        Word(result)
    }

    /// `Maybe::compute`.
    fn compute(&mut self, maybe: Maybe, others: &[Word]) -> Word {
        match maybe {
            Maybe::Concrete(w) => w,
            Maybe::Deferred(mut operands) => {
                operands.extend_from_slice(others);
                self.addmany(&operands)
            }
        }
    }

    /// `sha256_compression_function` on one 512-bit block.
    fn compress(&mut self, block: &[Bit], cv: &[Word; 8]) -> [Word; 8] {
        let mut w: Vec<Word> = block.chunks_exact(32).map(Word::from_bits_be).collect();
        for i in 16..64 {
            let s0 = w[i - 15].rotr(7);
            let s0 = self.xor_words(&s0, &w[i - 15].rotr(18));
            let s0 = self.xor_words(&s0, &w[i - 15].shr(3));
            let s1 = w[i - 2].rotr(17);
            let s1 = self.xor_words(&s1, &w[i - 2].rotr(19));
            let s1 = self.xor_words(&s1, &w[i - 2].shr(10));
            let wi = self.addmany(&[w[i - 16], s0, w[i - 7], s1]);
            w.push(wi);
        }

        let mut a = Maybe::Concrete(cv[0]);
        let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *cv;
        let mut e = Maybe::Concrete(cv[4]);
        for (&k, &wi) in ROUND_CONSTANTS.iter().zip(&w) {
            let new_e = self.compute(e, &[]);
            let s1 = new_e.rotr(6);
            let s1 = self.xor_words(&s1, &new_e.rotr(11));
            let s1 = self.xor_words(&s1, &new_e.rotr(25));
            let ch = self.ch_words(&new_e, &f, &g);
            let temp1 = [h, s1, ch, Word::constant(k), wi];

            let new_a = self.compute(a, &[]);
            let s0 = new_a.rotr(2);
            let s0 = self.xor_words(&s0, &new_a.rotr(13));
            let s0 = self.xor_words(&s0, &new_a.rotr(22));
            let maj = self.maj_words(&new_a, &b, &c);

            h = g;
            g = f;
            f = new_e;
            e = Maybe::Deferred(temp1.iter().copied().chain([d]).collect());
            d = c;
            c = b;
            b = new_a;
            a = Maybe::Deferred(temp1.iter().copied().chain([s0, maj]).collect());
        }

        let h0 = self.compute(a, &[cv[0]]);
        let h1 = self.addmany(&[cv[1], b]);
        let h2 = self.addmany(&[cv[2], c]);
        let h3 = self.addmany(&[cv[3], d]);
        let h4 = self.compute(e, &[cv[4]]);
        let h5 = self.addmany(&[cv[5], f]);
        let h6 = self.addmany(&[cv[6], g]);
        let h7 = self.addmany(&[cv[7], h]);
        [h0, h1, h2, h3, h4, h5, h6, h7]
    }
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
