//! Fixed-base windowed scalar multiplication, multi-threaded, and batch
//! conversion of Jacobian points to affine (supraseal-c2's).
//!
//! The table holds, for every `c`-bit window `w` of a scalar, the multiples
//! `d * 2^(c*w) * base` for `d` in `1..2^c`, in affine form. A scalar
//! multiplication is then one mixed addition per non-zero window digit.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::prime::PrimeCurve;
use rayon::prelude::*;

/// Bits of a scalar (the field modulus is below 2^255).
const SCALAR_BITS: usize = 255;
/// Largest window: the G2 table then holds about 19 * 2^14 points (60 MB).
const MAX_WINDOW: usize = 14;

/// Curves whose projective points convert to affine in batches.
pub(crate) trait BatchAffine: PrimeCurve<Scalar = Scalar> + Send + Sync
where
    Self::Affine: Send + Sync,
{
    /// The affine forms of `points`, one field inversion per batch.
    fn batch_to_affine(points: &[Self]) -> Vec<Self::Affine>;
}

// supraseal-c2's batch conversion (blst's), which the device path of
// parameter generation uses too.
impl BatchAffine for G1Projective {
    fn batch_to_affine(points: &[Self]) -> Vec<G1Affine> {
        supraseal_c2::kernels::g1_to_affine(points)
    }
}

impl BatchAffine for G2Projective {
    fn batch_to_affine(points: &[Self]) -> Vec<G2Affine> {
        supraseal_c2::kernels::g2_to_affine(points)
    }
}

/// The window width that minimises table building plus lookups for
/// `num_scalars` multiplications.
pub(crate) fn window_for(num_scalars: usize) -> usize {
    let cost = |c: usize| SCALAR_BITS.div_ceil(c) * (num_scalars + 2 * (1 << c));
    (2..=MAX_WINDOW).min_by_key(|&c| cost(c)).unwrap_or(2)
}

/// Window `w` (width `c`) of a little-endian 255-bit scalar.
fn digit(limbs: &[u64; 4], start: usize, c: usize) -> usize {
    let (limb, shift) = (start / 64, start % 64);
    let mut bits = limbs[limb] >> shift;
    if shift + c > 64 && limb + 1 < 4 {
        bits |= limbs[limb + 1] << (64 - shift);
    }
    (bits & ((1u64 << c) - 1)) as usize
}

fn limbs(k: &Scalar) -> [u64; 4] {
    let bytes = k.to_bytes_le();
    std::array::from_fn(|i| {
        u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]))
    })
}

/// Precomputed multiples of one base point.
pub(crate) struct FixedBase<G: BatchAffine>
where
    G::Affine: Send + Sync,
{
    window: usize,
    rows: Vec<Vec<G::Affine>>,
}

impl<G: BatchAffine> FixedBase<G>
where
    G::Affine: Send + Sync,
{
    /// Builds the table for `base` with `window`-bit windows (rows in
    /// parallel).
    pub(crate) fn new(base: G, window: usize) -> Self {
        let window = window.clamp(1, MAX_WINDOW);
        let mut starts = Vec::with_capacity(SCALAR_BITS.div_ceil(window));
        let mut start = base;
        for _ in 0..SCALAR_BITS.div_ceil(window) {
            starts.push(start);
            for _ in 0..window {
                start = start.double();
            }
        }
        let rows = starts
            .into_par_iter()
            .map(|b| {
                let mut multiples = Vec::with_capacity((1 << window) - 1);
                let mut acc = b;
                for _ in 1..(1usize << window) {
                    multiples.push(acc);
                    acc += b;
                }
                G::batch_to_affine(&multiples)
            })
            .collect();
        FixedBase { window, rows }
    }

    /// `k * base`.
    pub(crate) fn mul(&self, k: &Scalar) -> G {
        let limbs = limbs(k);
        let mut acc = G::identity();
        for (w, row) in self.rows.iter().enumerate() {
            let d = digit(&limbs, w * self.window, self.window);
            if d != 0 {
                acc += &row[d - 1];
            }
        }
        acc
    }

    /// `k * base` for every `k`, in parallel, in affine form.
    pub(crate) fn mul_many(&self, scalars: &[Scalar]) -> Vec<G::Affine> {
        let points: Vec<G> = scalars.par_iter().map(|k| self.mul(k)).collect();
        G::batch_to_affine(&points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::{Field, PrimeField};
    use group::{Curve, Group};

    #[test]
    fn batch_affine_matches_one_by_one() {
        let g = G1Projective::generator();
        let mut points: Vec<G1Projective> = (1..50u64).map(|k| g * Scalar::from(k * k)).collect();
        points.push(G1Projective::identity());
        let expected: Vec<G1Affine> = points.iter().map(|p| p.to_affine()).collect();
        assert_eq!(G1Projective::batch_to_affine(&points), expected);
        let h = G2Projective::generator();
        let points: Vec<G2Projective> = (1..9u64).map(|k| h * Scalar::from(k + 7)).collect();
        let expected: Vec<G2Affine> = points.iter().map(|p| p.to_affine()).collect();
        assert_eq!(G2Projective::batch_to_affine(&points), expected);
    }

    #[test]
    fn table_multiplication_matches_plain_multiplication() {
        let scalars = [
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(u64::MAX),
            Scalar::ROOT_OF_UNITY,
        ];
        for window in [1, 3, 8, 13] {
            let table = FixedBase::new(G1Projective::generator(), window);
            let got = table.mul_many(&scalars);
            for (k, p) in scalars.iter().zip(got) {
                assert_eq!(
                    p,
                    (G1Projective::generator() * k).to_affine(),
                    "window {window}"
                );
            }
        }
        let table = FixedBase::new(G2Projective::generator(), window_for(5));
        for k in &scalars {
            assert_eq!(table.mul(k), G2Projective::generator() * k);
        }
    }
}
