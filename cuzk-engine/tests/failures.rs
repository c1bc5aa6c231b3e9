//! Failures stay with their job: bad parameters, panics in either worker
//! role, and shutdown with work still queued.

mod common;

use std::sync::Arc;

use cuzk_engine::{
    ConfigError, Engine, EngineConfig, EngineError, Fault, ProofRequest, ProvingKey,
};
use cuzk_pipeline::{partition_seed, setup, PipelineError, Workload};

use common::{engine, request, synthesized, wait, workload};

fn engine_with_fault(fault: Fault) -> Engine {
    Engine::new(EngineConfig {
        partition_workers: 2,
        gpu_workers_per_device: 2,
        verify: true,
        fault: Some(fault),
        ..EngineConfig::default()
    })
    .unwrap()
}

#[test]
fn a_job_with_another_workloads_key_fails_while_its_neighbour_completes() {
    let other = Workload::new("mul-chain", 500).unwrap();
    let wrong_key = Arc::new(ProvingKey::new(&setup(other).unwrap()).unwrap());
    let engine = Engine::new(EngineConfig {
        verify: true,
        ..EngineConfig::default()
    })
    .unwrap();
    let bad = engine.submit(ProofRequest::new(workload(), wrong_key, 0, 3));
    let good = engine.submit(request(1, 3));
    match wait(bad) {
        Err(EngineError::Partition {
            source: PipelineError::Prover(_),
            ..
        }) => {}
        other => panic!("expected the prover's shape error, got {other:?}"),
    }
    assert!(wait(good).unwrap().verified);
}

#[test]
fn a_panic_in_synthesis_fails_only_its_job() {
    let seed = partition_seed(5, 3, 1);
    let engine = engine_with_fault(Fault::PanicInSynthesis { seed });
    let doomed = engine.submit(request(5, 3));
    let fine = engine.submit(request(6, 3));
    match wait(doomed) {
        Err(EngineError::Panicked { partition, message }) => {
            assert_eq!(partition, 1);
            assert!(message.contains("injected panic"), "{message}");
        }
        other => panic!("expected a panic error, got {other:?}"),
    }
    assert!(wait(fine).unwrap().verified);
    // The worker that panicked is still there to serve later jobs.
    assert!(wait(engine.submit(request(7, 4))).unwrap().verified);
}

#[test]
fn a_panic_under_the_lock_releases_it() {
    let seed = partition_seed(2, 2, 0);
    let engine = engine_with_fault(Fault::PanicUnderLock { seed });
    let doomed = engine.submit_synthesized(request(2, 2), synthesized(2, 2));
    assert!(matches!(
        wait(doomed),
        Err(EngineError::Panicked { partition: 0, .. })
    ));
    // Were the lock still held, this would hang (and `wait` would fail).
    assert!(wait(engine.submit(request(3, 2))).unwrap().verified);
    let (_, stats) = engine.lock_stats()[0];
    assert!(stats.acquisitions >= 3, "{stats:?}");
}

#[test]
fn verification_is_on_by_default_and_a_wrong_proof_fails_its_job_naming_the_partition() {
    assert!(EngineConfig::default().verify);
    let seed = partition_seed(4, 3, 1);
    let engine = Engine::new(EngineConfig {
        partition_workers: 2,
        fault: Some(Fault::CorruptProof { seed }),
        ..EngineConfig::default()
    })
    .unwrap();
    let doomed = engine.submit(request(4, 3));
    let fine = engine.submit(request(5, 3));
    let error = wait(doomed).unwrap_err();
    match &error {
        EngineError::Verify(PipelineError::Rejected { partition, seed: s }) => {
            assert_eq!((*partition, *s), (1, seed));
        }
        other => panic!("expected a rejected partition 1, got {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "the request proof failed self-verification"
    );
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert_eq!(cause, format!("partition 1 (seed {seed}) does not verify"));
    assert!(wait(fine).unwrap().verified);
}

#[test]
fn with_verification_off_the_proof_says_it_was_not_checked() {
    let seed = partition_seed(6, 2, 0);
    let engine = Engine::new(EngineConfig {
        partition_workers: 2,
        verify: false,
        fault: Some(Fault::CorruptProof { seed }),
        ..EngineConfig::default()
    })
    .unwrap();
    let proof = wait(engine.submit(request(6, 2))).unwrap();
    assert!(!proof.verified);
    let pvk = common::key();
    assert!(cuzk_pipeline::verify_request(pvk.pvk(), workload(), 6, &proof.proofs).is_err());
}

#[test]
fn shutdown_fails_queued_jobs_instead_of_hanging() {
    let engine = engine(1, 1);
    let handles: Vec<_> = (0..5).map(|r| engine.submit(request(r, 4))).collect();
    drop(engine);
    let mut shut_down = 0;
    for handle in handles {
        assert!(handle.is_finished(), "drop returned with a job unresolved");
        match wait(handle) {
            Ok(proof) => assert_eq!(proof.proofs.len(), 4),
            Err(EngineError::Shutdown) => shut_down += 1,
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    assert!(
        shut_down >= 4,
        "only {shut_down} of 5 queued jobs failed with Shutdown"
    );
}

#[test]
fn bad_submissions_fail_at_once() {
    let engine = engine(1, 1);
    assert!(matches!(
        wait(engine.submit(request(0, 0))),
        Err(EngineError::EmptyRequest)
    ));
    let parts = synthesized(0, 2);
    let too_few = engine.submit_synthesized(request(0, 3), parts.clone());
    assert!(matches!(
        wait(too_few),
        Err(EngineError::SynthesizedCount {
            expected: 3,
            got: 2
        })
    ));
    let swapped = vec![parts[1].clone(), parts[0].clone()];
    let mismatch = engine.submit_synthesized(request(0, 2), swapped);
    assert!(matches!(
        wait(mismatch),
        Err(EngineError::SynthesizedMismatch { partition: 0 })
    ));
}

#[test]
fn invalid_configurations_are_refused() {
    let zero = EngineConfig {
        gpu_workers_per_device: 0,
        ..EngineConfig::default()
    };
    match Engine::new(zero) {
        Err(EngineError::Config(ConfigError::NoWorkers { role })) => {
            assert_eq!(role, "gpu_workers_per_device")
        }
        other => panic!("expected a config error, got {other:?}"),
    }
    let nice = EngineConfig {
        synthesis_nice: 20,
        ..EngineConfig::default()
    };
    assert!(matches!(
        Engine::new(nice),
        Err(EngineError::Config(ConfigError::BadNice(20)))
    ));
}
