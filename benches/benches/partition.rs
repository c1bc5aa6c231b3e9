//! One `sha-chain` S partition (4 blocks, 2^17 domain) through every layer:
//! synthesis, the prover (the native kernel region and its phases), and
//! verification of a 10-partition request.

use bellperson_lite::{prepare_verifying_key, Proof};
use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_pipeline::{
    gpu_prove, partition_seed, setup, synthesize_partition, verify_request, Workload,
};
use supraseal_c2::{BackendChoice, GpuLock};

fn partition(c: &mut Criterion) {
    let workload = Workload::new("sha-chain", 4).unwrap();
    let params = setup(workload).unwrap();
    let srs = params.srs().unwrap();
    let lock = GpuLock::with_backend(0, BackendChoice::Auto).unwrap();
    let part = synthesize_partition(workload, 0).unwrap();

    let mut group = c.benchmark_group("partition_sha_chain_S");
    group.sample_size(10);
    group.bench_function("synthesize", |b| {
        b.iter(|| synthesize_partition(workload, 0).unwrap())
    });
    group.bench_function(format!("prove_{:?}", lock.backend()), |b| {
        b.iter(|| gpu_prove(&part, &srs, &lock).unwrap())
    });

    let pvk = prepare_verifying_key(&params.vk);
    let proofs: Vec<Proof> = (0..10)
        .map(|j| {
            let p = synthesize_partition(workload, partition_seed(0, 10, j)).unwrap();
            gpu_prove(&p, &srs, &lock).unwrap().proof
        })
        .collect();
    group.bench_function("verify_request_10", |b| {
        b.iter(|| verify_request(&pvk, workload, 0, &proofs).unwrap())
    });
    group.finish();
}

criterion_group!(benches, partition);
criterion_main!(benches);
