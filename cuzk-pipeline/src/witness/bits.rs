//! Mirrors of `Boolean` and `UInt32` and of the operations on them that
//! allocate.

use std::ops::Not;

use super::BitSink;

/// Mirror of `Boolean`: a constant, or an allocated variable taken as is or
/// negated. `Is` and `Not` carry the value of the underlying variable, not
/// of the `Boolean`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    /// `Boolean::Constant`.
    Const(bool),
    /// `Boolean::Is`, with the variable's value.
    Is(bool),
    /// `Boolean::Not`, with the variable's value.
    Not(bool),
}

impl Bit {
    /// The value of the `Boolean`.
    pub fn value(self) -> bool {
        match self {
            Bit::Const(b) | Bit::Is(b) => b,
            Bit::Not(v) => !v,
        }
    }

    /// `Boolean::is_constant`.
    pub fn is_const(self) -> bool {
        matches!(self, Bit::Const(_))
    }
}

impl std::ops::Not for Bit {
    type Output = Bit;

    /// `Boolean::not`.
    fn not(self) -> Bit {
        match self {
            Bit::Const(b) => Bit::Const(!b),
            Bit::Is(v) => Bit::Not(v),
            Bit::Not(v) => Bit::Is(v),
        }
    }
}

/// Mirror of `UInt32`: 32 bits, least significant first.
#[derive(Clone, Copy, Debug)]
pub struct Word(pub [Bit; 32]);

impl Word {
    /// `UInt32::constant`.
    pub fn constant(value: u32) -> Word {
        Word(std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)))
    }

    /// `UInt32::from_bits_be`: from 32 bits, most significant first.
    pub fn from_bits_be(bits: &[Bit]) -> Word {
        Word(std::array::from_fn(|i| bits[31 - i]))
    }

    /// `UInt32::into_bits_be`.
    pub fn bits_be(&self) -> impl Iterator<Item = Bit> + '_ {
        self.0.iter().rev().copied()
    }

    /// The integer the bits' values spell.
    pub fn value(&self) -> u32 {
        self.0
            .iter()
            .enumerate()
            .fold(0, |acc, (i, b)| acc | (u32::from(b.value()) << i))
    }

    /// `UInt32::rotr`.
    pub fn rotr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| self.0[(i + by) % 32]))
    }

    /// `UInt32::shr`.
    pub fn shr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| {
            self.0.get(i + by).copied().unwrap_or(Bit::Const(false))
        }))
    }
}

/// The operations on bits and words that allocate, for every sink.
pub trait Gadgets: BitSink {
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
}

impl<S: BitSink + ?Sized> Gadgets for S {}
