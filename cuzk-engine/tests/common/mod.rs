//! Helpers shared by the engine's integration tests: one small workload,
//! its key (generated once per test binary), engines of a given shape.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cuzk_engine::{
    Engine, EngineConfig, EngineError, JobHandle, ProofRequest, ProvingKey, RequestProof,
};
use cuzk_pipeline::{partition_seed, setup, synthesize_partition, Partition, Workload};

/// The tests' workload: `mul-chain` with 1000 squarings.
pub fn workload() -> Workload {
    Workload::new("mul-chain", 1000).unwrap()
}

/// The key of [`workload`], made once.
pub fn key() -> Arc<ProvingKey> {
    static KEY: OnceLock<Arc<ProvingKey>> = OnceLock::new();
    KEY.get_or_init(|| Arc::new(ProvingKey::new(&setup(workload()).unwrap()).unwrap()))
        .clone()
}

/// An engine with these worker counts on device 0.
pub fn engine(partition_workers: usize, gpu_workers: usize) -> Engine {
    Engine::new(EngineConfig {
        partition_workers,
        gpu_workers_per_device: gpu_workers,
        devices: vec![0],
        queue_depth: None,
        verify: false,
        ..EngineConfig::default()
    })
    .unwrap()
}

/// Request `request` of [`workload`] with `partitions` partitions.
pub fn request(request: u64, partitions: usize) -> ProofRequest {
    ProofRequest::new(workload(), key(), request, partitions)
}

/// The partitions of `request`, synthesized here.
pub fn synthesized(request: u64, partitions: usize) -> Vec<Arc<Partition>> {
    (0..partitions)
        .map(|j| {
            let seed = partition_seed(request, partitions, j);
            Arc::new(synthesize_partition(workload(), seed).unwrap())
        })
        .collect()
}

/// `handle.wait()`, failing the test instead of hanging past a minute.
pub fn wait(handle: JobHandle) -> Result<RequestProof, EngineError> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || send.send(handle.wait()));
    receive
        .recv_timeout(Duration::from_secs(60))
        .expect("JobHandle::wait hung")
}

/// Polls `done` every 10 ms for up to a minute.
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..6000 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out waiting until {what}");
}
