//! Native mirrors of the gadgets' allocations: the building blocks of the
//! witness programs.
//!
//! A circuit's private witness is the list of values its gadgets allocate,
//! in allocation order. A witness program computes that list directly from
//! the circuit's inputs, without a constraint system: each mirror here does
//! what its gadget does to the allocation order (including every special
//! case where a constant operand means nothing is allocated) and computes
//! the values with native integer and field arithmetic.
//!
//! The mirrors follow bellpepper-core 0.2/0.4 `gadgets::boolean` and
//! bellpepper 0.4.1 / bellperson 0.27 `gadgets::{sha256, uint32, multieq}`
//! (the two versions allocate alike). A mirror is only as right as that
//! following: every witness program built on them is tested value for value
//! against the gadgets, and an upgrade of those crates must be checked
//! against those tests.
//!
//! Values go to a [`BitSink`] (bits only: a [`Bits`] packs them 64 to a
//! word) or a [`NumSink`] (bits and field elements, e.g. a
//! `Vec<Scalar>` or a [`SliceSink`] over part of a preallocated witness).

mod bits;
pub mod sha256;

use blstrs::Scalar;
use ff::Field;

use bellperson_lite::BitWitness;

pub use bits::{Bit, Word};

/// Where a witness program puts the bits it allocates, in order.
pub trait BitSink {
    /// Appends an allocated bit.
    fn push_bit(&mut self, v: bool);

    /// Allocates a bit of value `v` (`AllocatedBit::alloc`).
    fn alloc(&mut self, v: bool) -> Bit {
        self.push_bit(v);
        Bit::Is(v)
    }
}

/// A sink that also takes field elements (`AllocatedNum::alloc`).
pub trait NumSink: BitSink {
    /// Appends an allocated field element.
    fn push_num(&mut self, v: Scalar);

    /// Allocates a field element of value `v` and returns it.
    fn num(&mut self, v: Scalar) -> Scalar {
        self.push_num(v);
        v
    }
}

/// Scalar form of a bit, as the gadgets allocate it.
fn bit_scalar(v: bool) -> Scalar {
    if v {
        Scalar::ONE
    } else {
        Scalar::ZERO
    }
}

impl BitSink for Vec<Scalar> {
    fn push_bit(&mut self, v: bool) {
        self.push(bit_scalar(v));
    }
}

impl NumSink for Vec<Scalar> {
    fn push_num(&mut self, v: Scalar) {
        self.push(v);
    }
}

/// Writes values into a preallocated slice, front to back: one piece of a
/// witness whose pieces are computed in parallel.
#[derive(Debug)]
pub struct SliceSink<'a> {
    out: &'a mut [Scalar],
    written: usize,
}

impl<'a> SliceSink<'a> {
    /// A sink that fills `out`.
    pub fn new(out: &'a mut [Scalar]) -> Self {
        SliceSink { out, written: 0 }
    }

    /// How many values were pushed (more than the capacity when the
    /// program allocates more than the slice holds: those are dropped).
    pub fn written(&self) -> usize {
        self.written
    }

    /// How many values `out` had room for.
    pub fn capacity(&self) -> usize {
        self.out.len()
    }
}

impl BitSink for SliceSink<'_> {
    fn push_bit(&mut self, v: bool) {
        self.push_num(bit_scalar(v));
    }
}

impl NumSink for SliceSink<'_> {
    fn push_num(&mut self, v: Scalar) {
        if let Some(slot) = self.out.get_mut(self.written) {
            *slot = v;
        }
        self.written += 1;
    }
}

/// Counts what a program allocates without keeping it: sizes a witness's
/// pieces before they are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counter(pub usize);

impl BitSink for Counter {
    fn push_bit(&mut self, _: bool) {
        self.0 += 1;
    }
}

impl NumSink for Counter {
    fn push_num(&mut self, _: Scalar) {
        self.0 += 1;
    }
}

/// Bits packed 64 to a word, as a [`BitWitness`].
#[derive(Debug, Default)]
pub struct Bits {
    words: Vec<u64>,
    current: u64,
    len: usize,
}

impl Bits {
    /// Room for `bits` bits.
    pub fn with_capacity(bits: usize) -> Bits {
        Bits {
            words: Vec::with_capacity(bits.div_ceil(64)),
            current: 0,
            len: 0,
        }
    }

    /// The bits written, as a witness.
    pub fn finish(mut self) -> BitWitness {
        if !self.len.is_multiple_of(64) {
            self.words.push(self.current);
        }
        BitWitness {
            words: self.words,
            len: self.len,
        }
    }
}

impl BitSink for Bits {
    fn push_bit(&mut self, v: bool) {
        self.current |= u64::from(v) << (self.len % 64);
        self.len += 1;
        if self.len.is_multiple_of(64) {
            self.words.push(self.current);
            self.current = 0;
        }
    }
}
