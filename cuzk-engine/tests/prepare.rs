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
