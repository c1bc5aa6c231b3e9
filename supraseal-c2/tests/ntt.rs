//! The native NTT against naive evaluation, and its round trips.

mod common;

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rand::rngs::StdRng;
use supraseal_c2::{kernels, Error};

/// The 2^k-th root of unity ff and bellperson use.
fn omega(log_n: u32) -> Scalar {
    (log_n..Scalar::S).fold(Scalar::ROOT_OF_UNITY, |w, _| w.square())
}

/// sum_j coeffs[j] * x^j.
fn evaluate(coeffs: &[Scalar], x: Scalar) -> Scalar {
    coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
}

fn random(rng: &mut StdRng, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// Evaluations at shift * w^i, i < n: O(n^2).
fn naive(coeffs: &[Scalar], shift: Scalar) -> Vec<Scalar> {
    let w = omega(coeffs.len().trailing_zeros());
    let mut x = shift;
    (0..coeffs.len())
        .map(|_| {
            let y = evaluate(coeffs, x);
            x *= w;
            y
        })
        .collect()
}

#[test]
fn root_of_unity_has_the_right_order() {
    for log_n in [1u32, 5, 16, 32] {
        let w = omega(log_n);
        let half = (1..log_n).fold(w, |x, _| x.square());
        assert_eq!(half, -Scalar::ONE, "w^(n/2) = -1 for n = 2^{log_n}");
    }
}

#[test]
fn ntt_matches_naive_evaluation() {
    let mut rng = common::rng("ntt_matches_naive_evaluation");
    for log_n in 0..=7 {
        let coeffs = random(&mut rng, 1 << log_n);
        let mut values = coeffs.clone();
        kernels::ntt(&mut values, false).unwrap();
        assert_eq!(
            values,
            naive(&coeffs, Scalar::ONE),
            "forward, n = 2^{log_n}"
        );
        kernels::ntt(&mut values, true).unwrap();
        assert_eq!(values, coeffs, "inverse, n = 2^{log_n}");
    }
}

#[test]
fn coset_ntt_matches_naive_evaluation() {
    let mut rng = common::rng("coset_ntt_matches_naive_evaluation");
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    assert_eq!(g, Scalar::from(7));
    for log_n in 0..=7 {
        let coeffs = random(&mut rng, 1 << log_n);
        let mut values = coeffs.clone();
        kernels::coset_ntt(&mut values, false).unwrap();
        assert_eq!(values, naive(&coeffs, g), "coset forward, n = 2^{log_n}");
        kernels::coset_ntt(&mut values, true).unwrap();
        assert_eq!(values, coeffs, "coset inverse, n = 2^{log_n}");
    }
}

#[test]
fn ntt_round_trips_at_large_sizes() {
    let mut rng = common::rng("ntt_round_trips_at_large_sizes");
    for log_n in [12, 16] {
        let coeffs = random(&mut rng, 1 << log_n);
        let mut values = coeffs.clone();
        kernels::ntt(&mut values, false).unwrap();
        // Spot-check a few evaluations against Horner.
        let w = omega(log_n);
        for i in [0usize, 1, 12345 % (1 << log_n), (1 << log_n) - 1] {
            assert_eq!(
                values[i],
                evaluate(&coeffs, w.pow_vartime([i as u64])),
                "eval {i}"
            );
        }
        kernels::ntt(&mut values, true).unwrap();
        assert_eq!(values, coeffs, "ntt round trip, n = 2^{log_n}");
        kernels::coset_ntt(&mut values, false).unwrap();
        kernels::coset_ntt(&mut values, true).unwrap();
        assert_eq!(values, coeffs, "coset round trip, n = 2^{log_n}");
    }
}

#[test]
fn ntt_rejects_other_lengths() {
    for n in [0usize, 3, 6, 100] {
        let mut values = vec![Scalar::ONE; n];
        match kernels::ntt(&mut values, false) {
            Err(Error::Shape { got, .. }) => assert_eq!(got, n),
            other => panic!("n = {n}: expected a shape error, got {other:?}"),
        }
        assert!(matches!(
            kernels::coset_ntt(&mut values, true),
            Err(Error::Shape { .. })
        ));
    }
}
