//! Native kernels on the CPU: G1/G2 MSM and NTT.
//!
//! `cargo bench -p supraseal-c2 --bench kernels`; `CUZK_NATIVE_THREADS`
//! sets the native thread count.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ff::Field;
use group::{Curve, Group};
use rand::rngs::StdRng;
use rand::SeedableRng;
use supraseal_c2::kernels;

/// n distinct points: a random base and its running sums (cheap to make).
fn points<P: Group + Curve>(rng: &mut StdRng, n: usize) -> Vec<P::AffineRepr> {
    let base = P::random(&mut *rng);
    let mut acc = base;
    (0..n)
        .map(|_| {
            acc += base;
            acc.to_affine()
        })
        .collect()
}

fn scalars(rng: &mut StdRng, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

fn msm(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(1);
    let mut group = c.benchmark_group("msm");
    group.sample_size(10);
    for log_n in [14, 16] {
        let (p, s) = (
            points::<G1Projective>(&mut rng, 1 << log_n),
            scalars(&mut rng, 1 << log_n),
        );
        let p: Vec<G1Affine> = p;
        group.bench_with_input(BenchmarkId::new("g1", format!("2^{log_n}")), &(), |b, _| {
            b.iter(|| kernels::msm_g1(&p, &s).unwrap())
        });
    }
    // Baseline: blstrs's own (blst, multi-threaded) MSM at the larger size.
    let (p, s) = (
        points::<G1Projective>(&mut rng, 1 << 16),
        scalars(&mut rng, 1 << 16),
    );
    let p: Vec<G1Projective> = p.iter().map(G1Projective::from).collect();
    group.bench_with_input(
        BenchmarkId::new("g1_blstrs_baseline", "2^16"),
        &(),
        |b, _| b.iter(|| G1Projective::multi_exp(&p, &s)),
    );
    let n = 1 << 14;
    let (p, s): (Vec<G2Affine>, _) = (points::<G2Projective>(&mut rng, n), scalars(&mut rng, n));
    group.bench_with_input(BenchmarkId::new("g2", "2^14"), &(), |b, _| {
        b.iter(|| kernels::msm_g2(&p, &s).unwrap())
    });
    group.finish();
}

fn ntt(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(2);
    let mut group = c.benchmark_group("ntt");
    group.sample_size(10);
    for log_n in [16, 18] {
        let mut values = scalars(&mut rng, 1 << log_n);
        group.bench_with_input(
            BenchmarkId::new("forward", format!("2^{log_n}")),
            &(),
            |b, _| b.iter(|| kernels::ntt(&mut values, false).unwrap()),
        );
    }
    group.finish();
}

criterion_group!(benches, msm, ntt);
criterion_main!(benches);
