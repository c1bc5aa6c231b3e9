//! The native G1/G2 MSM and batch addition against blstrs references.

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::rngs::StdRng;
use rand::Rng;
use supraseal_c2::{kernels, Error};

/// Not powers of two, small and large.
const SIZES: [usize; 7] = [0, 1, 2, 7, 100, 1000, 4097];

#[derive(Clone, Copy, Debug)]
enum Dist {
    Random,
    AllZero,
    ZeroOne,
    /// Mostly 0 and 1, some small, some full width, some near the modulus.
    Mixed,
}

const DISTS: [Dist; 4] = [Dist::Random, Dist::AllZero, Dist::ZeroOne, Dist::Mixed];

fn scalar(rng: &mut StdRng, dist: Dist) -> Scalar {
    match dist {
        Dist::Random => Scalar::random(&mut *rng),
        Dist::AllZero => Scalar::ZERO,
        Dist::ZeroOne => Scalar::from(rng.gen_range(0..2u64)),
        Dist::Mixed => match rng.gen_range(0..20) {
            0..=7 => Scalar::ZERO,
            8..=15 => Scalar::ONE,
            16 => Scalar::from(rng.gen::<u64>()),
            17 => -Scalar::from(rng.gen_range(1..4u64)),
            _ => Scalar::random(&mut *rng),
        },
    }
}

fn scalars(rng: &mut StdRng, n: usize, dist: Dist) -> Vec<Scalar> {
    (0..n).map(|_| scalar(rng, dist)).collect()
}

/// Random points, with an identity, a repeat and a negation among them.
fn with_specials<P: Group + Curve>(mut points: Vec<P>) -> Vec<P::AffineRepr> {
    if points.len() >= 7 {
        points[3] = P::identity();
        points[5] = points[4];
        points[6] = -points[4];
    }
    points.iter().map(Curve::to_affine).collect()
}

/// The reference: a plain sum of scalar multiplications (0 and 1 shortcut).
fn reference<A, P>(points: &[A], scalars: &[Scalar]) -> P
where
    A: Copy + Into<P>,
    P: Group<Scalar = Scalar>,
{
    let term = |(p, s): (&A, &Scalar)| match s {
        s if s.is_zero_vartime() => P::identity(),
        s if *s == Scalar::ONE => (*p).into(),
        s => (*p).into() * s,
    };
    points.iter().zip(scalars).map(term).sum()
}

fn g1_points(rng: &mut StdRng, n: usize) -> Vec<G1Affine> {
    with_specials((0..n).map(|_| G1Projective::random(&mut *rng)).collect())
}

fn g2_points(rng: &mut StdRng, n: usize) -> Vec<G2Affine> {
    with_specials((0..n).map(|_| G2Projective::random(&mut *rng)).collect())
}

#[test]
fn msm_g1_matches_blstrs() {
    let mut rng = common::rng("msm_g1_matches_blstrs");
    let all = g1_points(&mut rng, *SIZES.last().unwrap());
    for dist in DISTS {
        for n in SIZES {
            let (points, scalars) = (&all[..n], scalars(&mut rng, n, dist));
            let expected: G1Projective = reference(points, &scalars);
            let got = kernels::msm_g1(points, &scalars).unwrap();
            assert_eq!(got, expected, "G1 MSM, {dist:?}, n = {n}");
        }
    }
}

#[test]
fn msm_g2_matches_blstrs() {
    let mut rng = common::rng("msm_g2_matches_blstrs");
    let all = g2_points(&mut rng, *SIZES.last().unwrap());
    for dist in DISTS {
        for n in SIZES {
            let (points, scalars) = (&all[..n], scalars(&mut rng, n, dist));
            let expected: G2Projective = reference(points, &scalars);
            let got = kernels::msm_g2(points, &scalars).unwrap();
            assert_eq!(got, expected, "G2 MSM, {dist:?}, n = {n}");
        }
    }
}

#[test]
fn msm_g1_matches_multi_exp_at_larger_size() {
    let mut rng = common::rng("msm_g1_matches_multi_exp_at_larger_size");
    let n = 20_011;
    let projective: Vec<G1Projective> = (0..n).map(|_| G1Projective::random(&mut rng)).collect();
    let points = with_specials(projective.clone());
    let scalars = scalars(&mut rng, n, Dist::Random);
    let reference: Vec<G1Projective> = points.iter().map(G1Projective::from).collect();
    let expected = G1Projective::multi_exp(&reference, &scalars);
    assert_eq!(kernels::msm_g1(&points, &scalars).unwrap(), expected);
}

#[test]
fn batch_add_sums_the_chosen_points() {
    let mut rng = common::rng("batch_add_sums_the_chosen_points");
    let g1 = g1_points(&mut rng, 3000);
    let g2 = g2_points(&mut rng, 300);
    for n in SIZES {
        let indices: Vec<usize> = (0..n).map(|_| rng.gen_range(0..g2.len())).collect();
        let expected: G1Projective = indices.iter().map(|&i| G1Projective::from(g1[i])).sum();
        assert_eq!(
            kernels::batch_add_g1(&g1, &indices).unwrap(),
            expected,
            "G1, n = {n}"
        );
        let expected: G2Projective = indices.iter().map(|&i| G2Projective::from(g2[i])).sum();
        assert_eq!(
            kernels::batch_add_g2(&g2, &indices).unwrap(),
            expected,
            "G2, n = {n}"
        );
    }
    // Every point of a long list, with its repeats and cancellations.
    let all: Vec<usize> = (0..g1.len()).chain([5, 5, 6]).collect();
    let expected: G1Projective = all.iter().map(|&i| G1Projective::from(g1[i])).sum();
    assert_eq!(kernels::batch_add_g1(&g1, &all).unwrap(), expected);
}

#[test]
fn kernels_reject_mismatched_inputs() {
    let points = vec![G1Affine::generator(); 3];
    match kernels::msm_g1(&points, &[Scalar::ONE; 2]) {
        Err(Error::Shape {
            expected: 3,
            got: 2,
            ..
        }) => {}
        other => panic!("expected a shape error, got {other:?}"),
    }
    match kernels::batch_add_g1(&points, &[0, 3]) {
        Err(Error::InvalidInput(message)) => assert!(message.contains("out of range"), "{message}"),
        other => panic!("expected an invalid-input error, got {other:?}"),
    }
}
