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
        coeffs: &Coefficients,
        len: usize,
        tail: F,
    ) -> HostVec<Scalar>
    where
        F: Fn(usize) -> Scalar + Sync,
    {
        let rows = self.rows();
        debug_assert!(len >= rows);
        // Input 0 is `ONE` in every assignment the prover makes; a test's
        // may differ, and then it is multiplied like the others.
        let one = match z.input.first() == Some(&Scalar::ONE) {
            true => INPUT_TAG,
            false => u32::MAX,
        };
        HostVec::from_par_fn(len, |i| match i.checked_sub(rows) {
            None => self.row_dot(i, z, coeffs, one),
            Some(k) => tail(k),
        })
    }

    /// Row `row` of `self · z`. The aux values that are 1 (the kind
    /// bitmaps say which) are summed without a branch on the value when
    /// their coefficient is `±2^e`, as an integer (a bit-valued circuit's
    /// packing and sums: almost every term of SHA-256); a 0 adds nothing;
    /// only inputs and other aux values are multiplied.
    ///
    /// `one` is the column of an input known to be `ONE` (or `u32::MAX`),
    /// added like an aux value of 1.
    fn row_dot(&self, row: usize, z: &Assignment<'_>, coeffs: &Coefficients, one: u32) -> Scalar {
        let span = self.row_starts[row] as usize..self.row_starts[row + 1] as usize;
        let table = &coeffs.values[..];
        let mut acc = Scalar::ZERO;
        let mut powers = Powers::default();
        let times = |v: &Scalar, coeff: u32, acc: &mut Scalar| match coeff {
            COEFF_ONE => *acc += v,
            COEFF_MINUS_ONE => *acc -= v,
            k => *acc += *v * table[k as usize],
        };
        // The proving hot path: the slices zipped by reference (not through
        // `row_terms`), and no branch on whether a bit is 0 or 1, which is
        // as good as random in SHA-256.
        let mut multiplied = false;
        for (&col, &coeff) in self.cols[span.clone()].iter().zip(&self.coeffs[span]) {
            let class = coeffs.classes[coeff as usize];
            if col & INPUT_TAG != 0 {
                if col == one && class & GENERAL == 0 {
                    powers.add(class, 1);
                } else {
                    times(&z.input[(col & !INPUT_TAG) as usize], coeff, &mut acc);
                    multiplied = true;
                }
                continue;
            }
            let (word, shift) = (col as usize / 64, col % 64);
            let one = (z.kinds.ones[word] >> shift) & 1;
            if class & GENERAL == 0 {
                powers.add(class, one);
            } else if one != 0 {
                acc += table[coeff as usize];
                multiplied = true;
            }
            if (z.kinds.other[word] >> shift) & 1 != 0 {
                times(&z.aux[col as usize], coeff, &mut acc);
                multiplied = true;
            }
        }
        match multiplied {
            true => acc + powers.sum(),
            false => powers.sum(),
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

/// Class of a coefficient `±2^e`: `e`, with [`NEG`] for the negative.
const NEG: u16 = 1 << 8;
/// Class of any other coefficient.
const GENERAL: u16 = 1 << 15;

/// A shape's distinct coefficients with the class of each (`±2^e` or
/// general), as the products read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Coefficients {
    values: Vec<Scalar>,
    classes: Vec<u16>,
}

impl Coefficients {
    pub(crate) fn new(values: Vec<Scalar>) -> Self {
        static POWERS: OnceLock<FxHashMap<[u64; 4], u16>> = OnceLock::new();
        let powers = POWERS.get_or_init(|| {
            let mut map = FxHashMap::default();
            let mut p = Scalar::ONE;
            for e in 0..256u16 {
                map.entry(raw(&p)).or_insert(e);
                map.entry(raw(&-p)).or_insert(NEG | e);
                p = p.double();
            }
            map
        });
        let classes = values
            .iter()
            .map(|v| powers.get(&raw(v)).copied().unwrap_or(GENERAL))
            .collect();
        Coefficients { values, classes }
    }

    pub(crate) fn values(&self) -> &[Scalar] {
        &self.values
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
}

/// `Σ ±2^e` over a row's terms, as integers: 64-bit limbs of the positive
/// and the negative parts, each kept in a `u128` so that no addition
/// carries (a row has far fewer than 2^64 terms).
#[derive(Default)]
struct Powers {
    /// Limb `l` of the positive part at `l`, of the negative at `4 + l`.
    limbs: [u128; 8],
}

impl Powers {
    /// Adds `bit · (±2^e)` for the class `±2^e`.
    #[inline(always)]
    fn add(&mut self, class: u16, bit: u64) {
        // class >> 6 is 4 · negative + e / 64.
        self.limbs[usize::from(class >> 6) & 7] += u128::from(bit << (class & 63));
    }

    /// The sum, in the field.
    fn sum(&self) -> Scalar {
        let [p0, p1, p2, p3, n0, n1, n2, n3] = self.limbs;
        if (p1 | p2 | p3 | n1 | n2 | n3) == 0 && (p0 | n0) >> 64 == 0 {
            // Short rows: a count or a small multiple.
            let (p, n) = (p0 as u64, n0 as u64);
            return match p.checked_sub(n) {
                Some(d) => small_multiple(d),
                None => -small_multiple(n - p),
            };
        }
        integer([p0, p1, p2, p3]) - integer([n0, n1, n2, n3])
    }
}

/// The scalar modulus, little-endian limbs.
const MODULUS: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// `Σ limbs[l] · 2^(64 l)` in the field.
fn integer(limbs: [u128; 4]) -> Scalar {
    static TWO_256: OnceLock<Scalar> = OnceLock::new();
    let mut lo = [0u64; 4];
    let mut carry = 0u128;
    for (out, limb) in lo.iter_mut().zip(limbs) {
        let t = limb + carry;
        *out = t as u64;
        carry = t >> 64;
    }
    // 2^256 < 3 · r: at most two subtractions reduce the low 256 bits.
    while !less_than_modulus(&lo) {
        let mut borrow = false;
        for (x, m) in lo.iter_mut().zip(MODULUS) {
            let (d, b1) = x.overflowing_sub(m);
            let (d, b2) = d.overflowing_sub(u64::from(borrow));
            *x = d;
            borrow = b1 | b2;
        }
    }
    let mut value = Scalar::from_u64s_le(&lo).expect("reduced below the modulus");
    if carry != 0 {
        let two_256 = TWO_256.get_or_init(|| (0..256).fold(Scalar::ONE, |v, _| v.double()));
        let high = Scalar::from_u64s_le(&[carry as u64, (carry >> 64) as u64, 0, 0])
            .expect("far below the modulus");
        value += high * two_256;
    }
    value
}

fn less_than_modulus(x: &[u64; 4]) -> bool {
    for (a, m) in x.iter().zip(MODULUS).rev() {
        if *a != m {
            return *a < m;
        }
    }
    false
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

    /// `mul_vec` against the products taken term by term: bit-valued and
    /// other aux values, inputs, coefficients `±2^e` for every `e` below
    /// 256 (rows long enough that their limbs carry and exceed the modulus)
    /// and general ones, and the tail after the rows.
    #[test]
    fn products_match_a_term_by_term_sum() {
        let rng = &mut StdRng::seed_from_u64(11);
        let (num_inputs, num_aux, rows) = (3, 3_000, 600);
        let input: Vec<Scalar> = (0..num_inputs)
            .map(|i| match i {
                0 => Scalar::ONE,
                _ => Scalar::random(&mut *rng),
            })
            .collect();
        // Aux values: bits below 2,000, then field elements (some 0 or 1).
        let aux: Vec<Scalar> = (0..num_aux)
            .map(|j| match (j < 2_000, rng.gen_range(0..4)) {
                (true, k) => Scalar::from(u64::from(k % 2 == 0)),
                (false, 0) => Scalar::ZERO,
                (false, 1) => Scalar::ONE,
                _ => Scalar::random(&mut *rng),
            })
            .collect();
        let power = |e: u32| (0..e).fold(Scalar::ONE, |v, _| v.double());
        let general: Vec<Scalar> = (0..4).map(|_| Scalar::random(&mut *rng)).collect();
        let mut table = CoeffTable::new();
        let mut m = SparseMatrix::new();
        let mut expected = Vec::with_capacity(rows);
        for row in 0..rows {
            // Every fifth row long, mostly high powers of two.
            let len = match row % 5 {
                0 => rng.gen_range(200..3_000),
                _ => rng.gen_range(0..8),
            };
            let mut sum = Scalar::ZERO;
            for _ in 0..len {
                let magnitude = match rng.gen_range(0..8) {
                    0 => general[rng.gen_range(0..general.len())],
                    1 => Scalar::ONE,
                    2..=4 => power(rng.gen_range(200..256)),
                    _ => power(rng.gen_range(0..256)),
                };
                let coeff = match rng.gen_bool(0.3) {
                    true => -magnitude,
                    false => magnitude,
                };
                let value = match rng.gen_bool(0.1) {
                    true => {
                        let i = rng.gen_range(0..num_inputs);
                        m.push_term(i as u32 | INPUT_TAG, table.intern(&coeff));
                        input[i]
                    }
                    false => {
                        let j = rng.gen_range(0..num_aux);
                        m.push_term(j as u32, table.intern(&coeff));
                        aux[j]
                    }
                };
                sum += coeff * value;
            }
            m.end_row();
            expected.push(sum);
        }
        let coeffs = Coefficients::new(table.values().to_vec());
        assert!(coeffs.classes.iter().filter(|c| **c == GENERAL).count() >= 4);
        let kinds = AuxKinds::of_values(&aux);
        let z = Assignment {
            input: &input,
            aux: &aux,
            kinds: &kinds,
        };
        let got = m.mul_vec(&z, &coeffs, rows + 2, |k| Scalar::from(k as u64 + 7));
        assert_eq!(got[..rows], expected[..]);
        assert_eq!(got[rows..], [Scalar::from(7), Scalar::from(8)]);

        // With input 0 not ONE, it is multiplied.
        let other_input: Vec<Scalar> = input.iter().map(|v| v.double()).collect();
        let z = Assignment {
            input: &other_input,
            aux: &aux,
            kinds: &kinds,
        };
        let twice_inputs = m.mul_vec(&z, &coeffs, rows, |_| Scalar::ZERO);
        for (row, (got, want)) in twice_inputs.iter().zip(&expected).enumerate() {
            let inputs = m
                .row_terms(row)
                .filter(|(col, _)| col & INPUT_TAG != 0)
                .fold(Scalar::ZERO, |acc, (col, k)| {
                    acc + input[(col & !INPUT_TAG) as usize] * table.values()[k as usize]
                });
            assert_eq!(*got, *want + inputs, "row {row}");
        }
    }

    #[test]
    fn integers_reduce_past_the_modulus() {
        let r_minus_one = [MODULUS[0] - 1, MODULUS[1], MODULUS[2], MODULUS[3]];
        assert_eq!(integer(r_minus_one.map(u128::from)), -Scalar::ONE);
        assert_eq!(integer(MODULUS.map(u128::from)), Scalar::ZERO);
        // 2^256 - 1 + 2^64 · (2^64 - 1) carries into a fifth limb.
        let all = [
            u64::MAX as u128,
            (u64::MAX as u128) << 1,
            u64::MAX as u128,
            u64::MAX as u128,
        ];
        let two_64 = Scalar::from(u64::MAX) + Scalar::ONE;
        let expected = (0..4).fold(Scalar::ZERO, |acc, l| {
            let limb = Scalar::from_u64s_le(&[all[l] as u64, (all[l] >> 64) as u64, 0, 0]).unwrap();
            acc + limb * (0..l).fold(Scalar::ONE, |v, _| v * two_64)
        });
        assert_eq!(integer(all), expected);
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
