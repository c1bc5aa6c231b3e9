//! Device faults, injected into the kernel regions (`EngineConfig::
//! inject_faults`, the plan `CUZK_FAULT` also gives), on the CPU backend
//! with one or two devices: a sticky fault retires its device and its
//! partitions move to the other; with no device left jobs fail with the
//! typed error and the engine keeps answering; a transient fault or a
//! failed allocation is retried; a worker panic fails its job clearly.
//!
//! `cuda_device_faults_are_survived` runs the same paths on CUDA device 0
//! (real faults: an illegal address, a bad launch, a failed cudaMalloc);
//! it needs a GPU and the `cuda` feature: `--ignored` on the GPU machine.

mod common;

use cuzk_engine::{BackendChoice, Engine, EngineConfig, EngineError, FaultPlan, RequestProof};
use cuzk_pipeline::PipelineError;
use supraseal_c2::{CudaErrorKind, Error};

use common::{request, synthesized, wait};

fn faulty_engine(backend: BackendChoice, devices: Vec<u32>, faults: &str) -> Engine {
    Engine::new(EngineConfig {
        partition_workers: 2,
        gpu_workers_per_device: 2,
        devices,
        backend,
        inject_faults: faults.parse().expect("a fault plan"),
        ..EngineConfig::default()
    })
    .unwrap()
}

/// The native error under a job's failure: the partition's own, or the
/// retirement's behind `NoDevice`.
fn native_cause(error: &EngineError) -> Option<&Error> {
    match error {
        EngineError::Partition {
            source: PipelineError::Prover(bellperson_lite::ProverError::Native(native)),
            ..
        } => Some(native),
        EngineError::NoDevice { source, .. } => Some(source),
        _ => None,
    }
}

fn assert_verified(proof: &RequestProof) {
    assert!(proof.verified, "request {} not verified", proof.request);
}

#[test]
fn a_sticky_fault_retires_one_of_two_devices_and_its_partitions_move_to_the_other() {
    let engine = faulty_engine(BackendChoice::Cpu, vec![0, 1], "sticky@1:dev1");
    let jobs: Vec<_> = (0..3)
        .map(|r| engine.submit_synthesized(request(r, 4), synthesized(r, 4)))
        .collect();
    let proofs: Vec<RequestProof> = jobs.into_iter().map(|j| wait(j).unwrap()).collect();
    proofs.iter().for_each(assert_verified);

    let devices = engine.devices();
    assert_eq!(devices[0].retired, None, "device 0 still serves");
    let retired = devices[1].retired.clone().expect("device 1 was retired");
    assert!(retired.error.is_sticky(), "{}", retired.error);
    assert!(matches!(retired.error, Error::Cuda { code: 700, .. }));
    // Nothing was proven on device 1 after it was retired.
    let late = proofs
        .iter()
        .flat_map(|p| &p.partitions)
        .filter(|r| r.device == 1 && r.prove.lock_released_ns > retired.at_ns)
        .count();
    assert_eq!(late, 0);
    // It stays out: later work goes to device 0 alone.
    let later = wait(engine.submit(request(7, 3))).unwrap();
    assert_verified(&later);
    assert!(later.partitions.iter().all(|r| r.device == 0));
    assert_eq!(engine.devices()[1].retired, Some(retired));
}

#[test]
fn a_sticky_fault_on_the_only_device_fails_jobs_with_the_typed_error_and_the_engine_answers() {
    let engine = faulty_engine(BackendChoice::Cpu, vec![0], "sticky@2");
    let first = engine.submit(request(1, 3));
    let second = engine.submit(request(2, 3));
    for handle in [first, second] {
        let error = wait(handle).unwrap_err();
        let native = native_cause(&error).unwrap_or_else(|| panic!("untyped: {error:?}"));
        assert_eq!(native.cuda_kind(), Some(CudaErrorKind::Sticky), "{error:?}");
    }
    let status = engine.devices();
    assert!(status[0]
        .retired
        .as_ref()
        .is_some_and(|r| r.error.is_sticky()));
    // New work is refused at once, naming the device and the error.
    match wait(engine.submit(request(3, 2))) {
        Err(EngineError::NoDevice { device: 0, source }) => assert!(source.is_sticky()),
        other => panic!("expected NoDevice, got {other:?}"),
    }
    match wait(engine.submit_synthesized(request(4, 1), synthesized(4, 1))) {
        Err(EngineError::NoDevice { .. }) => {}
        other => panic!("expected NoDevice, got {other:?}"),
    }
    // The engine still answers, and nothing is left waiting.
    assert_eq!(engine.queued_partitions(), (0, 0));
    assert_eq!(engine.lock_stats().len(), 1);
}

#[test]
fn transient_faults_and_failed_allocations_are_retried_and_the_job_succeeds() {
    let engine = faulty_engine(BackendChoice::Cpu, vec![0], "transient@1,alloc@3");
    let proof = wait(engine.submit(request(5, 3))).unwrap();
    assert_verified(&proof);
    assert_eq!(engine.devices()[0].retired, None);
    // Three partitions and two failed kernel regions, each under the lock.
    assert_eq!(engine.lock_stats()[0].1.acquisitions, 5);
}

#[test]
fn a_partition_out_of_retries_fails_its_job_with_the_error() {
    let engine = Engine::new(EngineConfig {
        partition_workers: 1,
        gpu_workers_per_device: 1,
        backend: BackendChoice::Cpu,
        partition_retries: 1,
        inject_faults: "transient@1,alloc@2".parse().unwrap(),
        ..EngineConfig::default()
    })
    .unwrap();
    let error = wait(engine.submit(request(6, 1))).unwrap_err();
    let native = native_cause(&error).unwrap_or_else(|| panic!("untyped: {error:?}"));
    assert_eq!(native.cuda_kind(), Some(CudaErrorKind::OutOfMemory));
    assert!(matches!(error, EngineError::Partition { partition: 0, .. }));
    // The device was not retired: the next job is proven.
    assert_verified(&wait(engine.submit(request(7, 2))).unwrap());
}

#[test]
fn a_worker_panic_fails_its_job_clearly_and_the_engine_keeps_serving() {
    let engine = faulty_engine(BackendChoice::Cpu, vec![0], "panic@1");
    match wait(engine.submit_synthesized(request(8, 2), synthesized(8, 2))) {
        Err(EngineError::Panicked { message, .. }) => {
            assert!(message.contains("injected fault"), "{message}")
        }
        other => panic!("expected a panic error, got {other:?}"),
    }
    assert_verified(&wait(engine.submit(request(9, 3))).unwrap());
    assert_eq!(engine.devices()[0].retired, None);
}

#[test]
fn a_bad_plan_is_refused() {
    assert!("sticky@0".parse::<FaultPlan>().is_err());
}

/// Each kind of fault on CUDA device 0, the sticky one last: it loses the
/// device's context for the rest of this process.
#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn cuda_device_faults_are_survived() {
    for faults in ["transient@1", "alloc@2", "transient@1,alloc@2"] {
        let engine = faulty_engine(BackendChoice::Cuda, vec![0], faults);
        assert_verified(&wait(engine.submit(request(10, 3))).unwrap());
        assert_eq!(engine.devices()[0].retired, None, "{faults}");
        eprintln!("cuda {faults}: retried, verified");
    }
    let engine = faulty_engine(BackendChoice::Cuda, vec![0], "panic@1");
    assert!(matches!(
        wait(engine.submit(request(11, 2))),
        Err(EngineError::Panicked { .. })
    ));
    assert_verified(&wait(engine.submit(request(12, 2))).unwrap());
    drop(engine);
    eprintln!("cuda panic@1: failed its job, next job verified");

    let lost = faulty_engine(BackendChoice::Cuda, vec![0], "sticky@2");
    let doomed = wait(lost.submit(request(13, 3))).unwrap_err();
    let native = native_cause(&doomed).unwrap_or_else(|| panic!("untyped: {doomed:?}"));
    eprintln!("cuda sticky@2: {native}");
    assert!(matches!(native, Error::Cuda { code: 700, .. }), "{native}");
    let retired = lost.devices()[0].retired.clone().expect("retired");
    assert!(retired.error.is_sticky());
    assert!(matches!(
        wait(lost.submit(request(14, 2))),
        Err(EngineError::NoDevice { device: 0, .. })
    ));
    // The registry hands out the same, lost lock: the device stays out.
    let lock = supraseal_c2::GpuLock::with_backend(0, BackendChoice::Cuda).unwrap();
    assert!(lock.is_lost());
}
