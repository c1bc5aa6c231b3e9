//! A sparse R1CS matrix in compressed-row form, and its product with the
//! full assignment.

use std::sync::OnceLock;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use supraseal_c2::HostVec;

/// Index of `ONE` in every coefficient table: added, never multiplied.
const COEFF_ONE: u32 = 0;
/// Index of `-ONE` in every coefficient table: subtracted, never multiplied.
const COEFF_MINUS_ONE: u32 = 1;

/// One matrix (A, B or C) by rows. A column is an aux index, or an input
/// index tagged with [`INPUT_TAG`] (`ONE` is input 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SparseMatrix {
    /// Row `i`'s terms are `row_starts[i]..row_starts[i + 1]`.
    row_starts: Vec<u64>,
    /// Column of each term.
    cols: Vec<u32>,
    /// Coefficient of each term, as an index into the shape's table.
    coeffs: Vec<u32>,
}

impl SparseMatrix {
    pub(crate) fn new() -> Self {
        SparseMatrix {
            row_starts: vec![0],
            cols: Vec::new(),
            coeffs: Vec::new(),
        }
    }

    /// Appends one term to the row being built.
    pub(crate) fn push_term(&mut self, col: u32, coeff: u32) {
        self.cols.push(col);
        self.coeffs.push(coeff);
    }

    /// Closes the row being built.
    pub(crate) fn end_row(&mut self) {
        self.row_starts.push(self.cols.len() as u64);
    }

    /// Rows closed so far.
    pub(crate) fn rows(&self) -> usize {
        self.row_starts.len() - 1
    }

    /// Terms stored.
    pub(crate) fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Bytes of heap memory held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.row_starts.capacity() * 8 + self.cols.capacity() * 4 + self.coeffs.capacity() * 4
    }

    /// `self · z` (one value per row) followed by `tail(k)` for the
    /// `len - rows` values after the rows, computed by rows in parallel
    /// straight into host memory the GPU copies from.
    pub(crate) fn mul_vec<F>(
        &self,
        z: &Assignment<'_>,
        table: &[Scalar],
        len: usize,
        tail: F,
    ) -> HostVec<Scalar>
    where
        F: Fn(usize) -> Scalar + Sync,
    {
        let rows = self.rows();
        debug_assert!(len >= rows);
        HostVec::from_par_fn(len, |i| match i.checked_sub(rows) {
            None => self.row_dot(i, z, table),
            Some(k) => tail(k),
        })
    }

    /// Row `row` of `self · z`. An aux value of 0 is skipped and one of 1
    /// adds its coefficient (or counts, for `±ONE`), both read from the
    /// kind bitmaps; only inputs and other aux values are multiplied.
    fn row_dot(&self, row: usize, z: &Assignment<'_>, table: &[Scalar]) -> Scalar {
        let span = self.row_starts[row] as usize..self.row_starts[row + 1] as usize;
        let mut acc = Scalar::ZERO;
        let mut units = 0i64;
        let times = |v: &Scalar, coeff: u32, acc: &mut Scalar| match coeff {
            COEFF_ONE => *acc += v,
            COEFF_MINUS_ONE => *acc -= v,
            k => *acc += *v * table[k as usize],
        };
        for (&col, &coeff) in self.cols[span.clone()].iter().zip(&self.coeffs[span]) {
            if col & INPUT_TAG != 0 {
                times(&z.input[(col & !INPUT_TAG) as usize], coeff, &mut acc);
                continue;
            }
            let (word, bit) = (col as usize / 64, 1u64 << (col % 64));
            if z.kinds.ones[word] & bit != 0 {
                match coeff {
                    COEFF_ONE => units += 1,
                    COEFF_MINUS_ONE => units -= 1,
                    k => acc += table[k as usize],
                }
            } else if z.kinds.other[word] & bit != 0 {
                times(&z.aux[col as usize], coeff, &mut acc);
            }
        }
        let sum = small_multiple(units.unsigned_abs());
        if units < 0 {
            acc - sum
        } else {
            acc + sum
        }
    }
}

/// `n · ONE`, from a table for the counts rows have (a conversion costs a
/// Montgomery multiplication and a range check, more than the rest of a
/// short row).
fn small_multiple(n: u64) -> Scalar {
    static TABLE: OnceLock<Vec<Scalar>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        std::iter::successors(Some(Scalar::ZERO), |v| Some(*v + Scalar::ONE))
            .take(1024)
            .collect()
    });
    match table.get(n as usize) {
        Some(v) => *v,
        None => Scalar::from(n),
    }
}

/// Column tag of a public input: inputs can be allocated after aux
/// variables, so a column names its kind rather than an offset.
pub(crate) const INPUT_TAG: u32 = 1 << 31;

/// The full assignment, addressed by tagged columns, with the kind of every
/// aux value.
pub(crate) struct Assignment<'a> {
    pub(crate) input: &'a [Scalar],
    pub(crate) aux: &'a [Scalar],
    pub(crate) kinds: &'a AuxKinds,
}

/// Which aux values are 1 and which are neither 0 nor 1, a bit per
/// variable: the products add a coefficient for a 1, skip a 0 and multiply
/// only the others (none in a bit-valued witness such as SHA-256's).
pub(crate) struct AuxKinds {
    pub(crate) ones: Vec<u64>,
    pub(crate) other: Vec<u64>,
}

impl AuxKinds {
    /// The kinds of a witness whose values are all bits, given as bits.
    pub(crate) fn of_bits(words: Vec<u64>) -> Self {
        let other = vec![0; words.len()];
        AuxKinds { ones: words, other }
    }

    /// The kinds of `aux`, classified in parallel.
    pub(crate) fn of_values(aux: &[Scalar]) -> Self {
        let (ones, other) = aux
            .par_chunks(64)
            .map(|chunk| {
                let (mut ones, mut other) = (0u64, 0u64);
                for (i, v) in chunk.iter().enumerate() {
                    if *v == Scalar::ONE {
                        ones |= 1 << i;
                    } else if !bool::from(v.is_zero()) {
                        other |= 1 << i;
                    }
                }
                (ones, other)
            })
            .unzip();
        AuxKinds { ones, other }
    }
}

/// The distinct coefficients of a shape, `ONE` and `-ONE` first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CoeffTable {
    values: Vec<Scalar>,
    index: std::collections::HashMap<[u8; 32], u32>,
}

impl CoeffTable {
    pub(crate) fn new() -> Self {
        let mut t = CoeffTable {
            values: Vec::new(),
            index: Default::default(),
        };
        assert_eq!(t.intern(&Scalar::ONE), COEFF_ONE);
        assert_eq!(t.intern(&-Scalar::ONE), COEFF_MINUS_ONE);
        t
    }

    /// The index of `c`, adding it when new.
    pub(crate) fn intern(&mut self, c: &Scalar) -> u32 {
        let next = self.values.len() as u32;
        let idx = *self.index.entry(c.to_bytes_le()).or_insert(next);
        if idx == next {
            self.values.push(*c);
        }
        idx
    }

    pub(crate) fn values(&self) -> &[Scalar] {
        &self.values
    }
}
