//! A sparse R1CS matrix in compressed-row form, and its product with the
//! full assignment.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
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
        // The proving hot path: the slices zipped by reference, as measured
        // on the H200 (not through `row_terms`).
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

    /// `Σ_row M[row][col] · weights[row]` for every column: the inputs'
    /// sums and the aux variables' sums. With Lagrange weights at tau these
    /// are the QAP polynomials at tau, the scalars of a setup.
    ///
    /// All in parallel: the inputs (a few columns, `ONE` in most rows) are
    /// summed by rows; the aux columns are gathered first (counted, then
    /// each term's `(row, coefficient)` placed in its column's span) and
    /// summed by columns. Field addition is exact, so the order in which
    /// terms land in a span does not change a sum.
    pub(crate) fn column_sums(
        &self,
        weights: &[Scalar],
        table: &[Scalar],
        num_inputs: usize,
        num_aux: usize,
    ) -> (Vec<Scalar>, Vec<Scalar>) {
        let term = |row: usize, coeff: u32| match coeff {
            COEFF_ONE => weights[row],
            COEFF_MINUS_ONE => -weights[row],
            k => weights[row] * table[k as usize],
        };
        let inputs = (0..self.rows())
            .into_par_iter()
            .fold(
                || vec![Scalar::ZERO; num_inputs],
                |mut acc, row| {
                    for (col, coeff) in self.row_terms(row) {
                        if col & INPUT_TAG != 0 {
                            acc[(col & !INPUT_TAG) as usize] += term(row, coeff);
                        }
                    }
                    acc
                },
            )
            .reduce(
                || vec![Scalar::ZERO; num_inputs],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );

        // Count each aux column's terms, then turn the counts into where
        // each column's span starts; placing a term advances its column's
        // cursor, which ends at the start of the next span.
        let mut cursor: Vec<AtomicU64> = (0..num_aux)
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        self.cols.par_iter().for_each(|&col| {
            if col & INPUT_TAG == 0 {
                cursor[col as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut total = 0u64;
        for c in cursor.iter_mut() {
            let count = *c.get_mut();
            *c.get_mut() = total;
            total += count;
        }
        let spans: Vec<AtomicU64> = (0..total)
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        (0..self.rows()).into_par_iter().for_each(|row| {
            for (col, coeff) in self.row_terms(row) {
                if col & INPUT_TAG == 0 {
                    let at = cursor[col as usize].fetch_add(1, Ordering::Relaxed);
                    spans[at as usize]
                        .store((row as u64) << 32 | u64::from(coeff), Ordering::Relaxed);
                }
            }
        });
        let aux = (0..num_aux)
            .into_par_iter()
            .map(|j| {
                let end = cursor[j].load(Ordering::Relaxed) as usize;
                let start = match j {
                    0 => 0,
                    _ => cursor[j - 1].load(Ordering::Relaxed) as usize,
                };
                spans[start..end].iter().fold(Scalar::ZERO, |acc, e| {
                    let e = e.load(Ordering::Relaxed);
                    acc + term((e >> 32) as usize, e as u32)
                })
            })
            .collect();
        (inputs, aux)
    }

    /// Row `row`'s `(column, coefficient index)` terms.
    fn row_terms(&self, row: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let span = self.row_starts[row] as usize..self.row_starts[row + 1] as usize;
        self.cols[span.clone()]
            .iter()
            .copied()
            .zip(self.coeffs[span].iter().copied())
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
///
/// Every term of a shape passes through [`CoeffTable::intern`], so it keys
/// on the Montgomery limbs as they are (unique for a reduced value) with a
/// fast non-cryptographic hash, and answers `±ONE` without hashing: with
/// `to_bytes_le` and the default hasher it was a third of a shape's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CoeffTable {
    values: Vec<Scalar>,
    index: FxHashMap<[u64; 4], u32>,
}

/// The Montgomery limbs of `c`, as stored.
fn raw(c: &Scalar) -> [u64; 4] {
    blst::blst_fr::from(*c).l
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
        let key = raw(c);
        // ±ONE: the first two values, compared without hashing.
        if let Some(k) = self.values.iter().take(2).position(|v| raw(v) == key) {
            return k as u32;
        }
        let next = self.values.len() as u32;
        let idx = *self.index.entry(key).or_insert(next);
        if idx == next {
            self.values.push(*c);
        }
        idx
    }

    pub(crate) fn values(&self) -> &[Scalar] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// `column_sums` against the sums taken term by term, on a random
    /// matrix with `±ONE` and other coefficients, repeated columns in a row,
    /// empty rows and columns that appear nowhere.
    #[test]
    fn column_sums_match_a_term_by_term_sum() {
        let rng = &mut StdRng::seed_from_u64(7);
        let (num_inputs, num_aux, rows) = (3, 500, 2_000);
        let mut table = CoeffTable::new();
        let mut m = SparseMatrix::new();
        let mut expected_inputs = vec![Scalar::ZERO; num_inputs];
        let mut expected_aux = vec![Scalar::ZERO; num_aux];
        let weights: Vec<Scalar> = (0..rows).map(|_| Scalar::random(&mut *rng)).collect();
        let others: Vec<Scalar> = (0..5).map(|_| Scalar::random(&mut *rng)).collect();
        for (row, w) in weights.iter().enumerate() {
            for _ in 0..rng.gen_range(0..6) {
                let coeff = match rng.gen_range(0..3) {
                    0 => Scalar::ONE,
                    1 => -Scalar::ONE,
                    _ => others[rng.gen_range(0..others.len())],
                };
                if rng.gen_bool(0.2) {
                    let i = rng.gen_range(0..num_inputs);
                    m.push_term(i as u32 | INPUT_TAG, table.intern(&coeff));
                    expected_inputs[i] += coeff * w;
                } else {
                    // Columns 400.. never appear.
                    let j = rng.gen_range(0..400);
                    m.push_term(j as u32, table.intern(&coeff));
                    expected_aux[j] += coeff * w;
                }
            }
            m.end_row();
            assert_eq!(m.rows(), row + 1);
        }
        let (inputs, aux) = m.column_sums(&weights, table.values(), num_inputs, num_aux);
        assert_eq!(inputs, expected_inputs);
        assert_eq!(aux, expected_aux);
        assert!(aux[400..].iter().all(|v| bool::from(v.is_zero())));
    }

    #[test]
    fn coefficient_table_keeps_one_index_per_value() {
        let mut t = CoeffTable::new();
        let two = Scalar::ONE + Scalar::ONE;
        assert_eq!(t.intern(&Scalar::ONE), COEFF_ONE);
        assert_eq!(t.intern(&-Scalar::ONE), COEFF_MINUS_ONE);
        let k = t.intern(&two);
        assert_eq!(t.intern(&(Scalar::ONE + Scalar::ONE)), k);
        assert_eq!(t.intern(&-two), k + 1);
        assert_eq!(t.values(), &[Scalar::ONE, -Scalar::ONE, two, -two]);
    }
}
