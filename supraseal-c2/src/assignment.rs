//! What one circuit hands the prover: evaluations, assignments, densities.

use blstrs::Scalar;

/// A bitmap over variables: bit `i` is set when variable `i` has a non-zero
/// coefficient somewhere in the matrix it tracks (A or B).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
}

impl Density {
    /// An empty bitmap.
    pub fn new() -> Self {
        Self::default()
    }

    /// A bitmap of `len` bits, all set.
    pub fn all_ones(len: usize) -> Self {
        let mut d = Self::new();
        for _ in 0..len {
            d.push(true);
        }
        d
    }

    /// Appends one bit (a new variable).
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        if bit {
            self.words[self.len / 64] |= 1 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Sets bit `i`. Panics if `i >= len()` (a programming error, not input).
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "density index {i} out of range {}", self.len);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Bit `i`.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The backing words, little-endian bit order within each word.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// One circuit's input to the prover, borrowed from its synthesized form.
///
/// `a`, `b`, `c` are the evaluations of the A, B, C matrices at the full
/// assignment, one per constraint (input constraints included); the prover
/// pads them with zeros to the evaluation domain.
#[derive(Clone, Copy, Debug)]
pub struct Assignment<'a> {
    /// A·z, one value per constraint.
    pub a: &'a [Scalar],
    /// B·z, one value per constraint.
    pub b: &'a [Scalar],
    /// C·z, one value per constraint.
    pub c: &'a [Scalar],
    /// Public inputs, `ONE` first.
    pub input: &'a [Scalar],
    /// Private (auxiliary) variables.
    pub aux: &'a [Scalar],
    /// Which aux variables appear in A (inputs always do).
    pub a_aux_density: &'a Density,
    /// Which inputs appear in B.
    pub b_input_density: &'a Density,
    /// Which aux variables appear in B.
    pub b_aux_density: &'a Density,
}
