//! Unit tests of the parallel decoding and the batched subgroup test, with
//! units of 1 KiB (`cfg(test)`), so that small files have many units.

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

use super::decode::{scan, unit_points};
use super::layout::Layout;
use super::mapped::InMemory;
use super::{subgroup, Parameters, VerifyingKey};
use crate::encoding::Encoded;
use crate::error::{ParamsError, PointFault, Section};

fn g1s(n: usize, step: u64) -> Vec<G1Affine> {
    let step = G1Projective::generator() * Scalar::from(step);
    let mut at = step;
    let points: Vec<G1Projective> = (0..n)
        .map(|_| {
            at += step;
            at
        })
        .collect();
    let mut out = vec![G1Affine::identity(); n];
    G1Projective::batch_normalize(&points, &mut out);
    out
}

fn g2s(n: usize) -> Vec<G2Affine> {
    let step = G2Projective::generator() * Scalar::from(3u64);
    (1..=n as u64)
        .map(|k| (step * Scalar::from(k)).to_affine())
        .collect()
}

/// Parameters with many units in every section (not a real setup).
fn params() -> Parameters {
    let g1 = g1s(6, 11);
    let g2 = g2s(3);
    Parameters {
        vk: VerifyingKey {
            alpha_g1: g1[0],
            beta_g1: g1[1],
            beta_g2: g2[0],
            gamma_g2: g2[1],
            delta_g1: g1[2],
            delta_g2: g2[2],
            ic: g1s(3, 5),
        },
        h: Arc::new(g1s(63, 2)),
        l: Arc::new(g1s(45, 3)),
        a: Arc::new(Vec::new()),
        b_g1: Arc::new(g1s(21, 7)),
        b_g2: Arc::new(g2s(21)),
    }
}

fn decoded(bytes: &[u8]) -> Result<(Parameters, [u8; 32]), ParamsError> {
    let layout = Layout::of(bytes)?;
    let scanned = scan(bytes, &layout, &InMemory)?;
    subgroup::check(&scanned.params, &layout.queries)?;
    Ok((scanned.params, scanned.digest))
}

/// A point on the curve outside the subgroup: the first found from the
/// generator's x upwards (b = y^2 - x^3, read off the generator).
fn off_subgroup() -> G1Affine {
    let g = G1Affine::generator();
    let (mut x, b) = (g.x(), g.y().square() - g.x().square() * g.x());
    loop {
        x += b;
        if let Some(y) = Option::from((x.square() * x + b).sqrt()) {
            let p = G1Affine::from_raw_unchecked(x, y, false);
            if !bool::from(p.is_torsion_free()) {
                return p;
            }
        }
    }
}

#[test]
fn many_units_decode_to_the_same_parameters() {
    let p = params();
    let bytes = p.to_bytes().unwrap();
    let layout = Layout::of(&bytes).unwrap();
    assert!(layout
        .queries
        .iter()
        .all(|s| s.count <= 1 || s.count > unit_points(s)));
    let (back, digest) = decoded(&bytes).unwrap();
    assert_eq!(back, p);
    assert_eq!(decoded(&bytes).unwrap().1, digest);
    // A point changed in the head unit, or in the last unit: another digest.
    let mut ic = p.clone();
    ic.vk.ic[2] = p.vk.ic[0];
    let mut last = p.clone();
    let mut b_g2 = p.b_g2.to_vec();
    b_g2.swap(0, 20);
    last.b_g2 = Arc::new(b_g2);
    for other in [ic, last] {
        let (back, other_digest) = decoded(&other.to_bytes().unwrap()).unwrap();
        assert_eq!(back, other);
        assert_ne!(other_digest, digest);
    }
}

#[test]
fn the_first_point_outside_the_subgroup_is_named_across_units() {
    let p = params();
    let per = unit_points(&Layout::of(&p.to_bytes().unwrap()).unwrap().queries[1]);
    let mut bad = p.clone();
    let mut l = p.l.to_vec();
    l[per + 3] = off_subgroup();
    l[3 * per + 1] = off_subgroup();
    bad.l = Arc::new(l);
    match decoded(&bad.to_bytes().unwrap()).unwrap_err() {
        ParamsError::Point {
            section,
            index,
            fault,
        } => assert_eq!(
            (section, index, fault),
            (Section::L, per + 3, PointFault::NotInSubgroup)
        ),
        e => panic!("{e:?}"),
    }
}

#[test]
fn the_batched_test_finds_any_single_bad_point() {
    let mut points = g1s(40, 13);
    let seed = [7u8; 32];
    let mut masks = blake3::Hasher::new_keyed(&seed).finalize_xof();
    assert_eq!(subgroup::first_bad(&points, &mut masks), None);
    for i in [0, 17, 39] {
        let saved = points[i];
        points[i] = off_subgroup();
        let mut masks = blake3::Hasher::new_keyed(&seed).finalize_xof();
        assert_eq!(subgroup::first_bad(&points, &mut masks), Some(i));
        points[i] = saved;
    }
}

#[test]
fn bit_sums_add_the_buckets_of_each_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let buckets: Vec<G1Projective> = (0..256).map(|_| G1Projective::random(&mut rng)).collect();
    let sums = subgroup::bit_sums::<G1Affine>(&mut buckets.clone());
    for (bit, sum) in sums.iter().enumerate() {
        let expected: G1Projective = (0..256)
            .filter(|k| k >> bit & 1 == 1)
            .map(|k| buckets[k])
            .sum();
        assert_eq!(*sum, expected, "bit {bit}");
    }
    assert!(<G1Affine as Encoded>::sum_in_subgroup(&sums[0]));
}
