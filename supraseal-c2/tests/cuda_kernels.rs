//! The kernels on the CUDA backend against the CPU backend (G1 MSM with
//! random, all-0, 0/1 and mixed scalars at sizes that are not powers of two;
//! batch addition; NTTs; fixed-base multiplication in G1 and G2), and the
//! backend choice itself.
//!
//! The comparisons need a CUDA device and `--features cuda`; run them with
//! `--ignored` on the GPU machine. The choice tests run everywhere.

mod common;

use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use supraseal_c2::{
    cuda_device_count, kernels, Backend, BackendChoice, CudaErrorKind, CudaUnavailable, Error,
    GpuLock,
};

const SIZES: [usize; 8] = [0, 1, 2, 7, 100, 1000, 4097, 70001];

fn cuda_lock() -> Arc<GpuLock> {
    GpuLock::with_backend(0, BackendChoice::Cuda).expect("a CUDA lock on device 0")
}

fn scalar(rng: &mut StdRng, dist: usize) -> Scalar {
    match dist {
        0 => Scalar::random(&mut *rng),
        1 => Scalar::ZERO,
        2 => Scalar::from(rng.gen_range(0..2u64)),
        _ => match rng.gen_range(0..20) {
            0..=7 => Scalar::ZERO,
            8..=15 => Scalar::ONE,
            16 => Scalar::from(rng.gen::<u64>()),
            17 => -Scalar::from(rng.gen_range(1..4u64)),
            _ => Scalar::random(&mut *rng),
        },
    }
}

/// Random points with an identity, a repeat and a negation among them.
fn points(rng: &mut StdRng, n: usize) -> Vec<G1Affine> {
    let mut p: Vec<G1Projective> = (0..n).map(|_| G1Projective::random(&mut *rng)).collect();
    if n >= 7 {
        p[3] = G1Projective::identity();
        p[5] = p[4];
        p[6] = -p[4];
    }
    p.iter().map(Curve::to_affine).collect()
}

#[test]
fn cuda_choice_is_never_a_silent_fallback() {
    let count = cuda_device_count();
    match GpuLock::with_backend(0, BackendChoice::Cuda) {
        Ok(lock) => {
            assert!(count > 0);
            assert_eq!(lock.backend(), Backend::Cuda);
        }
        Err(Error::CudaUnavailable(why)) => {
            let expected = if cfg!(feature = "cuda") {
                CudaUnavailable::NoDevice
            } else {
                CudaUnavailable::NotBuilt
            };
            assert_eq!(why, expected);
            assert_eq!(count, 0);
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
    if cfg!(feature = "cuda") && count > 0 {
        match GpuLock::with_backend(count, BackendChoice::Cuda) {
            Err(Error::CudaUnavailable(CudaUnavailable::OutOfRange { device, count: c })) => {
                assert_eq!((device, c), (count, count))
            }
            other => panic!("expected OutOfRange, got {other:?}"),
        }
    }
    let auto = GpuLock::with_backend(0, BackendChoice::Auto).expect("auto never fails here");
    let expected = if count > 0 {
        Backend::Cuda
    } else {
        Backend::Cpu
    };
    assert_eq!(auto.backend(), expected);
    let cpu = GpuLock::with_backend(0, BackendChoice::Cpu).expect("cpu");
    assert_eq!(cpu.backend(), Backend::Cpu);
    assert_eq!(GpuLock::cpu(0).backend(), Backend::Cpu);
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn msm_g1_on_cuda_matches_cpu() {
    let mut rng = common::rng("msm_g1_on_cuda_matches_cpu");
    let (cuda, cpu) = (cuda_lock(), GpuLock::cpu(0));
    for n in SIZES {
        let pts = points(&mut rng, n);
        for dist in 0..4 {
            let s: Vec<Scalar> = (0..n).map(|_| scalar(&mut rng, dist)).collect();
            let expected = kernels::msm_g1_on(&cpu.lock(), &pts, &s).expect("cpu");
            let got = kernels::msm_g1_on(&cuda.lock(), &pts, &s).expect("cuda");
            assert_eq!(got, expected, "n = {n}, distribution {dist}");
        }
    }
    assert!(matches!(
        kernels::msm_g1_on(&cuda.lock(), &points(&mut rng, 3), &[Scalar::ONE]),
        Err(Error::Shape { .. })
    ));
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn batch_add_g1_on_cuda_matches_cpu() {
    let mut rng = common::rng("batch_add_g1_on_cuda_matches_cpu");
    let (cuda, cpu) = (cuda_lock(), GpuLock::cpu(0));
    for n in SIZES.into_iter().filter(|&n| n > 0) {
        let pts = points(&mut rng, n);
        let picks: Vec<usize> = (0..n / 2 + 3).map(|_| rng.gen_range(0..n)).collect();
        let expected = kernels::batch_add_g1_on(&cpu.lock(), &pts, &picks).expect("cpu");
        assert_eq!(
            kernels::batch_add_g1_on(&cuda.lock(), &pts, &picks).expect("cuda"),
            expected
        );
    }
    // An index out of range is refused, and the device works afterwards.
    let pts = points(&mut rng, 5);
    assert!(matches!(
        kernels::batch_add_g1_on(&cuda.lock(), &pts, &[0, 5]),
        Err(Error::InvalidInput(_))
    ));
    let expected = kernels::batch_add_g1_on(&cpu.lock(), &pts, &[0, 4]).expect("cpu");
    assert_eq!(
        kernels::batch_add_g1_on(&cuda.lock(), &pts, &[0, 4]).expect("cuda"),
        expected
    );
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn ntts_on_cuda_match_cpu() {
    let mut rng = common::rng("ntts_on_cuda_match_cpu");
    let (cuda, cpu) = (cuda_lock(), GpuLock::cpu(0));
    for log_n in [0, 1, 2, 5, 10, 13, 16] {
        let values: Vec<Scalar> = (0..1 << log_n).map(|_| Scalar::random(&mut rng)).collect();
        for inverse in [false, true] {
            let (mut on_cpu, mut on_cuda) = (values.clone(), values.clone());
            kernels::ntt_on(&cpu.lock(), &mut on_cpu, inverse).expect("cpu");
            kernels::ntt_on(&cuda.lock(), &mut on_cuda, inverse).expect("cuda");
            assert_eq!(on_cuda, on_cpu, "ntt 2^{log_n}, inverse {inverse}");
            let (mut on_cpu, mut on_cuda) = (values.clone(), values.clone());
            kernels::coset_ntt_on(&cpu.lock(), &mut on_cpu, inverse).expect("cpu");
            kernels::coset_ntt_on(&cuda.lock(), &mut on_cuda, inverse).expect("cuda");
            assert_eq!(on_cuda, on_cpu, "coset ntt 2^{log_n}, inverse {inverse}");
        }
    }
    let mut three = vec![Scalar::ONE; 3];
    assert!(matches!(
        kernels::ntt_on(&cuda.lock(), &mut three, false),
        Err(Error::Shape { .. })
    ));
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn failed_cuda_call_is_typed_and_the_device_stays_usable() {
    let lock = cuda_lock();
    match lock.probe_device_memory(1 << 60) {
        Err(Error::Cuda {
            code,
            kind,
            call,
            detail,
            ..
        }) => {
            assert_eq!((code, kind), (2, CudaErrorKind::OutOfMemory));
            assert!(call.contains("cudaMalloc"), "{call}");
            assert!(detail.contains("cudaErrorMemoryAllocation"), "{detail}");
        }
        other => panic!("expected Error::Cuda, got {other:?}"),
    }
    drop(lock.try_lock().expect("released"));
    let mut rng = common::rng("failed_cuda_call_is_typed_and_the_device_stays_usable");
    let pts = points(&mut rng, 1000);
    let s: Vec<Scalar> = (0..1000).map(|_| Scalar::random(&mut rng)).collect();
    assert_eq!(
        kernels::msm_g1_on(&lock.lock(), &pts, &s).expect("cuda"),
        kernels::msm_g1(&pts, &s).expect("cpu")
    );
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn each_cuda_device_has_one_lock() {
    let first = cuda_lock();
    let again = GpuLock::with_backend(0, BackendChoice::Auto).expect("auto");
    assert!(Arc::ptr_eq(&first, &again), "a second lock for device 0");
    let weak = Arc::downgrade(&first);
    drop((first, again));
    assert!(weak.upgrade().is_none(), "the registry keeps no lock alive");
    let fresh = cuda_lock();
    assert!(!fresh.is_lost());
    // CPU locks guard no device: each is its own.
    let (a, b) = (GpuLock::cpu(0), GpuLock::cpu(0));
    drop(a.lock());
    assert_eq!((a.stats().acquisitions, b.stats().acquisitions), (1, 0));
}

/// Scalars for fixed-base multiplication: the edges first (0, 1, 2, r - 1,
/// r - 2, 2^64 - 1, every byte 0xff below r's top), then random ones with
/// zeros and ones among them.
fn fixed_base_scalars(rng: &mut StdRng, n: usize) -> Vec<Scalar> {
    let edges = [
        Scalar::ZERO,
        Scalar::ONE,
        Scalar::from(2u64),
        -Scalar::ONE,
        -Scalar::from(2u64),
        Scalar::from(u64::MAX),
        Scalar::from(u64::MAX) * Scalar::from(u64::MAX),
    ];
    let mut ks: Vec<Scalar> = edges.into_iter().take(n).collect();
    let mut dist = 0;
    while ks.len() < n {
        ks.push(scalar(rng, dist % 4));
        dist += 1;
    }
    ks
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn fixed_base_on_cuda_matches_cpu() {
    let lock = cuda_lock();
    let rng = &mut StdRng::seed_from_u64(14);
    let g1 = G1Projective::random(&mut *rng).to_affine();
    let g2 = G2Projective::random(&mut *rng).to_affine();
    for n in [0, 1, 7, 1000, 100_000] {
        let ks = fixed_base_scalars(rng, n);
        let held = lock.lock();
        let got = kernels::fixed_base_g1_on(&held, &g1, &ks).unwrap();
        assert!(got == kernels::fixed_base_g1(&g1, &ks), "G1, {n} scalars");
        // G2 on the CPU is slow: the first 20,000 are enough.
        let ks = &ks[..n.min(20_000)];
        let got = kernels::fixed_base_g2_on(&held, &g2, ks).unwrap();
        assert!(
            got == kernels::fixed_base_g2(&g2, ks),
            "G2, {} scalars",
            ks.len()
        );
    }
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn fixed_base_on_cuda_timing_2_pow_20() {
    let lock = cuda_lock();
    let rng = &mut StdRng::seed_from_u64(15);
    let ks: Vec<Scalar> = (0..1 << 20).map(|_| Scalar::random(&mut *rng)).collect();
    let held = lock.lock();
    // The first call pays for the context; time the second.
    kernels::fixed_base_g1_on(&held, &G1Affine::generator(), &ks[..1024]).unwrap();
    let started = std::time::Instant::now();
    let g1 = kernels::fixed_base_g1_on(&held, &G1Affine::generator(), &ks).unwrap();
    let g1_s = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let g2 = kernels::fixed_base_g2_on(&held, &G2Affine::generator(), &ks).unwrap();
    let g2_s = started.elapsed().as_secs_f64();
    println!("fixed-base 2^20 scalars on CUDA (affine out): G1 {g1_s:.3} s, G2 {g2_s:.3} s");
    // Spot checks against the CPU.
    for i in [0, 1, 77_777, (1 << 20) - 1] {
        assert_eq!(g1[i], (G1Projective::generator() * ks[i]).to_affine());
        assert_eq!(g2[i], (G2Projective::generator() * ks[i]).to_affine());
    }
}
