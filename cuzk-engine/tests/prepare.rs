//! `Engine::prepare` compiles the workload's shape into the engine's cache
//! and keeps evaluation memory for every partition the engine can hold.

use std::sync::Arc;

use cuzk_engine::{Engine, EngineConfig, SynthesisMode};
use cuzk_pipeline::{ShapeCache, Workload};

#[test]
fn prepare_compiles_the_shape_and_reserves_host_memory() {
    let shapes = Arc::new(ShapeCache::new());
    let config = EngineConfig {
        partition_workers: 3,
        gpu_workers_per_device: 2,
        queue_depth: Some(5),
        ..EngineConfig::default()
    };
    let engine = Engine::with_shapes(config, Arc::clone(&shapes)).unwrap();
    let workload = Workload::new("sha-chain", 1).unwrap();
    assert_eq!(engine.prepare(workload).unwrap(), 3 + 5 + 2);
    assert_eq!(
        shapes.len(),
        1,
        "the shape was compiled into the shared cache"
    );
    let after = supraseal_c2::host_pool_stats();
    assert_eq!(after.cached_blocks, 30, "a, b and c for 10 partitions");
    // Again: nothing missing, nothing allocated.
    assert_eq!(engine.prepare(workload).unwrap(), 10);
    assert_eq!(supraseal_c2::host_pool_stats().allocated, after.allocated);

    let full = Engine::new(EngineConfig {
        synthesis: SynthesisMode::Full,
        ..EngineConfig::default()
    })
    .unwrap();
    assert_eq!(
        full.prepare(workload).unwrap(),
        0,
        "full synthesis uses no pool"
    );
}

/// `Engine::compile_circuit` compiles a non-workload circuit's shape once,
/// under its key, and page-locks nothing; a failing compilation is named.
#[test]
fn compile_circuit_compiles_once_under_its_key() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let shapes = Arc::new(ShapeCache::new());
    let engine = Engine::with_shapes(EngineConfig::default(), Arc::clone(&shapes)).unwrap();
    let calls = AtomicUsize::new(0);
    let compile = || {
        calls.fetch_add(1, Ordering::Relaxed);
        let shape = Workload::new("mul-chain", 8).unwrap().shape();
        Ok(bellperson_lite::CompiledShape::compile(shape)?)
    };
    engine.compile_circuit("porep-2KiB", compile).unwrap();
    engine.compile_circuit("porep-2KiB", compile).unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(shapes.len(), 1);
    let error = engine
        .compile_circuit("snap-deals-2KiB", || Err("no blank circuit".into()))
        .unwrap_err();
    let chain = format!("{error}: {}", std::error::Error::source(&error).unwrap());
    assert!(chain.contains("snap-deals-2KiB"), "{chain}");

    let full = Engine::new(EngineConfig {
        synthesis: SynthesisMode::Full,
        ..EngineConfig::default()
    })
    .unwrap();
    full.compile_circuit("window-post-2KiB", || {
        panic!("full synthesis compiles nothing")
    })
    .unwrap();
}
