//! Synthesis of one partition, full vs compiled (witness from the gadgets
//! and, for sha-chain, from the native witness program), at the tiny and S
//! sizes.

use bellperson_lite::CompiledShape;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use cuzk_pipeline::{synthesize_compiled, synthesize_partition, Witness, Workload};

fn synthesis(c: &mut Criterion) {
    let mut group = c.benchmark_group("synthesis");
    group.sample_size(10);
    for workload in [
        Workload::new("sha-chain", 1).unwrap(),
        Workload::new("sha-chain", 4).unwrap(),
        Workload::new("mul-chain", 1 << 17).unwrap(),
    ] {
        let shape = CompiledShape::compile(workload.shape()).unwrap();
        group.bench_with_input(BenchmarkId::new("full", workload), &workload, |b, &w| {
            b.iter(|| synthesize_partition(w, 1).unwrap())
        });
        for (name, witness) in [
            ("compiled-gadgets", Witness::Gadgets),
            ("compiled-native", Witness::Native),
        ] {
            if witness == Witness::Native && !workload.has_native_witness() {
                continue;
            }
            group.bench_with_input(BenchmarkId::new(name, workload), &workload, |b, &w| {
                b.iter(|| synthesize_compiled(&shape, w, 1, witness, None).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, synthesis);
criterion_main!(benches);
