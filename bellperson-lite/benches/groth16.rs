//! Synthesis, parameter generation, proving and verification on a small
//! circuit (`MulChain`, 1000 steps: 1003 constraints plus 3 input ones).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Duration;

use bellperson_lite::{
    generate_random_parameters, prepare_verifying_key, prove_from_assignments,
    synthesize_circuits_batch, verify_proof, verify_proofs_batch, Proof, ProvingAssignment,
};
use blstrs::Scalar;
use common::{blinding, mul_chain_inputs, reference, rng, witness, MulChain};
use criterion::{criterion_group, criterion_main, Criterion};
use supraseal_c2::GpuLock;

const N: usize = 1000;

fn synthesis(c: &mut Criterion) {
    let mut g = c.benchmark_group("synthesis");
    g.bench_function("mul_chain_1000", |b| {
        b.iter(|| ProvingAssignment::synthesize(witness(N, 3)).unwrap())
    });
    g.bench_function("batch_4x_mul_chain_1000", |b| {
        b.iter(|| synthesize_circuits_batch((1..5).map(|x| witness(N, x)).collect()).unwrap())
    });
    g.finish();
}

fn generation(c: &mut Criterion) {
    let mut g = c.benchmark_group("generate_random_parameters");
    g.bench_function("mul_chain_1000", |b| {
        b.iter(|| generate_random_parameters(MulChain { n: N, x: None }, &mut rng(1)).unwrap())
    });
    g.finish();
}

fn proving(c: &mut Criterion) {
    let params = common::params(N, 2);
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let prover = ProvingAssignment::synthesize(witness(N, 3)).unwrap();
    let (r, s) = blinding(4);
    let provers = std::slice::from_ref(&prover);
    let mut g = c.benchmark_group("prove");
    g.bench_function("native_mul_chain_1000", |b| {
        b.iter(|| prove_from_assignments(provers, &srs, &lock, &[r], &[s]).unwrap())
    });
    g.bench_function("reference_mul_chain_1000", |b| {
        b.iter(|| reference::prove(&params, &prover, r, s))
    });
    g.finish();
}

fn verification(c: &mut Criterion) {
    let params = common::params(N, 5);
    let pvk = prepare_verifying_key(&params.vk);
    let proofs: Vec<Proof> = (1..9u64)
        .map(|x| {
            let p = ProvingAssignment::synthesize(witness(N, x)).unwrap();
            let (r, s) = blinding(x);
            reference::prove(&params, &p, r, s)
        })
        .collect();
    let inputs: Vec<Vec<Scalar>> = (1..9u64)
        .map(|x| mul_chain_inputs(N, Scalar::from(x)))
        .collect();
    let refs: Vec<&Proof> = proofs.iter().collect();
    let mut g = c.benchmark_group("verify");
    g.bench_function("single", |b| {
        b.iter(|| assert!(verify_proof(&pvk, &proofs[0], &inputs[0]).unwrap()))
    });
    g.bench_function("batch_8", |b| {
        let mut rng = rng(6);
        b.iter(|| assert!(verify_proofs_batch(&pvk, &mut rng, &refs, &inputs).unwrap()))
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = config();
    targets = synthesis, generation, proving, verification
}
criterion_main!(benches);
