//! One small request through the engine, end to end (synthesis, proving
//! with two GPU workers, self-verification), and the GPU side alone.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_engine::{Engine, EngineConfig, ProofRequest, ProvingKey};
use cuzk_pipeline::{partition_seed, setup, synthesize_partition, Workload};

const PARTITIONS: usize = 4;

fn engine(c: &mut Criterion) {
    let workload = Workload::new("mul-chain", 1000).expect("workload");
    let key = Arc::new(ProvingKey::new(&setup(workload).expect("setup")).expect("key"));
    let engine = Engine::new(EngineConfig {
        verify: true,
        ..EngineConfig::default()
    })
    .expect("engine");
    let request = ProofRequest::new(workload, key, 0, PARTITIONS);
    let partitions: Vec<_> = (0..PARTITIONS)
        .map(|j| {
            Arc::new(
                synthesize_partition(workload, partition_seed(0, PARTITIONS, j))
                    .expect("synthesis"),
            )
        })
        .collect();

    let mut group = c.benchmark_group("engine/mul-chain-1000");
    group.sample_size(10);
    group.bench_function("request of 4 partitions", |b| {
        b.iter(|| engine.submit(request.clone()).wait().expect("proof"))
    });
    group.bench_function("request of 4 pre-synthesized partitions", |b| {
        b.iter(|| {
            engine
                .submit_synthesized(request.clone(), partitions.clone())
                .wait()
                .expect("proof")
        })
    });
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
