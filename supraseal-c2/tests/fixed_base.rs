//! Fixed-base multiplication on the CPU backend: `k * base` for random and
//! edge scalars (0, 1, 2, r - 1, 2^64 - 1, a high bit set) in G1 and G2,
//! checked against independent arithmetic. The CUDA backend's comparison
//! with these is in cuda_kernels.rs.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::rngs::StdRng;
use rand::SeedableRng;
use supraseal_c2::{kernels, GpuLock};

fn edge_and_random(rng: &mut StdRng, random: usize) -> Vec<Scalar> {
    let mut ks = vec![
        Scalar::ZERO,
        Scalar::ONE,
        Scalar::from(2u64),
        -Scalar::ONE,
        Scalar::from(u64::MAX),
        Scalar::ROOT_OF_UNITY,
        Scalar::from(1u64 << 63).pow_vartime([3u64]),
    ];
    ks.extend((0..random).map(|_| Scalar::random(&mut *rng)));
    ks
}

#[test]
fn g1_products_match_scalar_multiplication() {
    let rng = &mut StdRng::seed_from_u64(1);
    let base = G1Projective::random(&mut *rng).to_affine();
    let ks = edge_and_random(rng, 40);
    let lock = GpuLock::cpu(0);
    let got = kernels::fixed_base_g1_on(&lock.lock(), &base, &ks).unwrap();
    assert_eq!(got, kernels::fixed_base_g1(&base, &ks));
    assert_eq!(got.len(), ks.len());
    assert!(bool::from(got[0].is_identity()));
    assert_eq!(got[1], base);
    assert_eq!(got[2], (G1Projective::from(base) + base).to_affine());
    assert_eq!(got[3], -base);
    for (k, p) in ks.iter().zip(&got) {
        assert_eq!(*p, (G1Projective::from(base) * k).to_affine());
    }
    // Linearity: (a + b) G = aG + bG.
    let sum = kernels::fixed_base_g1(&base, &[ks[7] + ks[8]]);
    assert_eq!(sum[0], (G1Projective::from(got[7]) + got[8]).to_affine());
}

#[test]
fn g2_products_match_scalar_multiplication() {
    let rng = &mut StdRng::seed_from_u64(2);
    let base = G2Projective::random(&mut *rng).to_affine();
    let ks = edge_and_random(rng, 20);
    let lock = GpuLock::cpu(0);
    let got = kernels::fixed_base_g2_on(&lock.lock(), &base, &ks).unwrap();
    assert_eq!(got, kernels::fixed_base_g2(&base, &ks));
    assert!(bool::from(got[0].is_identity()));
    assert_eq!(got[1], base);
    assert_eq!(got[3], -base);
    for (k, p) in ks.iter().zip(&got) {
        assert_eq!(*p, (G2Projective::from(base) * k).to_affine());
    }
    let sum = kernels::fixed_base_g2(&base, &[ks[7] + ks[8]]);
    assert_eq!(sum[0], (G2Projective::from(got[7]) + got[8]).to_affine());
}

#[test]
fn empty_input_gives_no_points() {
    let lock = GpuLock::cpu(0);
    let held = lock.lock();
    assert!(
        kernels::fixed_base_g1_on(&held, &G1Affine::generator(), &[])
            .unwrap()
            .is_empty()
    );
    assert!(
        kernels::fixed_base_g2_on(&held, &G2Affine::generator(), &[])
            .unwrap()
            .is_empty()
    );
}
