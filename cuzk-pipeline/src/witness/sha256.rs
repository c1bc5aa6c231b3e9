//! Mirror of `gadgets::sha256`: the padded message's blocks through the
//! compression function, with the compression function's deferred
//! additions.

use super::bits::Gadgets;
use super::{Bit, BitSink, Word};

/// `sha256::sha256` of `input` (a whole number of bytes, most significant
/// bit of each byte first): the digest's 256 bits, most significant first,
/// each word's bits as the gadget returns them.
pub fn sha256<S: BitSink + ?Sized>(sink: &mut S, input: &[Bit]) -> Vec<Bit> {
    assert!(input.len().is_multiple_of(8), "SHA-256 of whole bytes");
    let mut padded = input.to_vec();
    pad(&mut padded);
    let mut state = IV.map(Word::constant);
    for block in padded.chunks_exact(512) {
        state = compress(sink, block, &state);
    }
    state.iter().flat_map(Word::bits_be).collect()
}

/// The digest bytes that `bits` (as [`sha256`] returns them) spell.
pub fn digest_bytes(bits: &[Bit]) -> [u8; 32] {
    std::array::from_fn(|i| {
        bits[8 * i..8 * i + 8]
            .iter()
            .fold(0u8, |acc, b| (acc << 1) | u8::from(b.value()))
    })
}

/// An upper bound on the bits one compression allocates (its exact count is
/// lower when constants are involved): 48 schedule words (two 32-bit xors
/// and a 34-bit sum each), 64 rounds (four xors, `ch`, two `maj` bits and
/// two 35-bit sums each), and the final eight additions.
pub const MAX_ALLOCS_PER_BLOCK: usize =
    48 * (64 + 34) + 64 * (64 + 32 + 64 + 64 + 35 + 35) + 8 * 35;

/// Appends SHA-256 padding to the message bits, all as constants, as
/// `sha256::sha256` does.
pub fn pad(bits: &mut Vec<Bit>) {
    let len = bits.len() as u64;
    bits.push(Bit::Const(true));
    while !(bits.len() + 64).is_multiple_of(512) {
        bits.push(Bit::Const(false));
    }
    bits.extend((0..64).rev().map(|i| Bit::Const((len >> i) & 1 == 1)));
}

/// Mirror of the compression function's `Maybe`: a word, or the operands of
/// an addition not performed yet.
enum Maybe {
    Concrete(Word),
    Deferred(Vec<Word>),
}

impl Maybe {
    /// `Maybe::compute`.
    fn compute<S: BitSink + ?Sized>(self, sink: &mut S, others: &[Word]) -> Word {
        match self {
            Maybe::Concrete(w) => w,
            Maybe::Deferred(mut operands) => {
                operands.extend_from_slice(others);
                sink.addmany(&operands)
            }
        }
    }
}

/// `sha256_compression_function` on one 512-bit block.
pub fn compress<S: BitSink + ?Sized>(sink: &mut S, block: &[Bit], cv: &[Word; 8]) -> [Word; 8] {
    let mut w: Vec<Word> = block.chunks_exact(32).map(Word::from_bits_be).collect();
    for i in 16..64 {
        let s0 = w[i - 15].rotr(7);
        let s0 = sink.xor_words(&s0, &w[i - 15].rotr(18));
        let s0 = sink.xor_words(&s0, &w[i - 15].shr(3));
        let s1 = w[i - 2].rotr(17);
        let s1 = sink.xor_words(&s1, &w[i - 2].rotr(19));
        let s1 = sink.xor_words(&s1, &w[i - 2].shr(10));
        let wi = sink.addmany(&[w[i - 16], s0, w[i - 7], s1]);
        w.push(wi);
    }

    let mut a = Maybe::Concrete(cv[0]);
    let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *cv;
    let mut e = Maybe::Concrete(cv[4]);
    for (&k, &wi) in ROUND_CONSTANTS.iter().zip(&w) {
        let new_e = e.compute(sink, &[]);
        let s1 = new_e.rotr(6);
        let s1 = sink.xor_words(&s1, &new_e.rotr(11));
        let s1 = sink.xor_words(&s1, &new_e.rotr(25));
        let ch = sink.ch_words(&new_e, &f, &g);
        let temp1 = [h, s1, ch, Word::constant(k), wi];

        let new_a = a.compute(sink, &[]);
        let s0 = new_a.rotr(2);
        let s0 = sink.xor_words(&s0, &new_a.rotr(13));
        let s0 = sink.xor_words(&s0, &new_a.rotr(22));
        let maj = sink.maj_words(&new_a, &b, &c);

        h = g;
        g = f;
        f = new_e;
        e = Maybe::Deferred(temp1.iter().copied().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Maybe::Deferred(temp1.iter().copied().chain([s0, maj]).collect());
    }

    let h0 = a.compute(sink, &[cv[0]]);
    let h1 = sink.addmany(&[cv[1], b]);
    let h2 = sink.addmany(&[cv[2], c]);
    let h3 = sink.addmany(&[cv[3], d]);
    let h4 = e.compute(sink, &[cv[4]]);
    let h5 = sink.addmany(&[cv[5], f]);
    let h6 = sink.addmany(&[cv[6], g]);
    let h7 = sink.addmany(&[cv[7], h]);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}

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
