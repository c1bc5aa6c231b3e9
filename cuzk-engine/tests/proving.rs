//! Request proofs verify, and the lock protocol holds in the recorded
//! instants: holds never overlap on a device, and with two workers one
//! worker's CPU phases run while the other holds the lock.

mod common;

use cuzk_engine::metrics::{LockHold, ProveSpan};
use cuzk_engine::{Engine, EngineConfig};
use cuzk_pipeline::verify_request;

use common::{engine, key, request, synthesized, wait, workload};

#[test]
fn request_proofs_verify() {
    let engine = Engine::new(EngineConfig {
        partition_workers: 2,
        verify: true,
        ..EngineConfig::default()
    })
    .unwrap();
    let handles: Vec<_> = (3..5).map(|r| engine.submit(request(r, 3))).collect();
    for (r, handle) in (3..5).zip(handles) {
        let proof = wait(handle).unwrap();
        assert!(proof.verified);
        assert_eq!((proof.request, proof.proofs.len()), (r, 3));
        let indices: Vec<usize> = proof.partitions.iter().map(|p| p.index).collect();
        assert_eq!(indices, [0, 1, 2]);
        assert!(proof
            .partitions
            .iter()
            .all(|p| p.partition_worker.is_some()));
        assert!(proof.submitted_ns <= proof.completed_ns);
        assert_eq!(proof.to_bytes().len(), 3 * 192);
        // An outside verifier agrees, and rejects the proofs out of order.
        verify_request(key().pvk(), workload(), r, &proof.proofs).unwrap();
        let mut swapped = proof.proofs.clone();
        swapped.swap(0, 1);
        assert!(verify_request(key().pvk(), workload(), r, &swapped).is_err());
    }
}

fn assert_no_overlap(holds: &mut [LockHold]) {
    holds.sort_by_key(|h| h.taken_ns);
    for pair in holds.windows(2) {
        assert!(pair[0].taken_ns < pair[0].released_ns);
        assert!(
            pair[1].taken_ns >= pair[0].released_ns,
            "holds overlap on device {}: {:?} and {:?}",
            pair[0].device,
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn lock_holds_never_overlap_on_a_device() {
    let engine = Engine::new(EngineConfig {
        partition_workers: 2,
        gpu_workers_per_device: 2,
        devices: vec![0, 1],
        ..EngineConfig::default()
    })
    .unwrap();
    let handles: Vec<_> = (0..2).map(|r| engine.submit(request(r, 4))).collect();
    handles.into_iter().for_each(|h| drop(wait(h).unwrap()));
    let holds = engine.metrics().lock_holds();
    assert_eq!(holds.len(), 8);
    for device in [0, 1] {
        let mut on_device: Vec<LockHold> = holds
            .iter()
            .copied()
            .filter(|h| h.device == device)
            .collect();
        assert_no_overlap(&mut on_device);
    }
    let stats = engine.lock_stats();
    let acquisitions: u64 = stats.iter().map(|(_, s)| s.acquisitions).sum();
    assert_eq!(
        acquisitions, 8,
        "every hold went through the engine's locks"
    );
}

/// True when `span`'s preamble or epilogue overlaps `hold`.
fn cpu_phase_overlaps(span: &ProveSpan, hold: &LockHold) -> bool {
    let overlaps = |(start, end): (u64, u64)| start < hold.released_ns && hold.taken_ns < end;
    overlaps(span.preamble_window()) || overlaps(span.epilogue_window())
}

#[test]
fn two_workers_interlock_around_the_lock() {
    let engine = engine(1, 2);
    let partitions = synthesized(9, 8);
    let proof = wait(engine.submit_synthesized(request(9, 8), partitions)).unwrap();
    verify_request(key().pvk(), workload(), 9, &proof.proofs).unwrap();

    let metrics = engine.metrics();
    let spans = &metrics.prove_spans;
    let workers: std::collections::BTreeSet<usize> = spans.iter().map(|s| s.worker).collect();
    assert_eq!(workers.len(), 2, "both GPU workers proved partitions");
    let interlocked = spans
        .iter()
        .filter(|span| {
            spans
                .iter()
                .any(|other| other.worker != span.worker && cpu_phase_overlaps(span, &other.hold()))
        })
        .count();
    assert!(
        interlocked > 0,
        "no preamble or epilogue overlapped the other worker's lock hold: {spans:#?}"
    );
    assert_no_overlap(&mut metrics.lock_holds());
}

#[test]
fn metrics_add_up() {
    let engine = engine(2, 2);
    drop(wait(engine.submit(request(1, 5))).unwrap());
    let metrics = engine.metrics();
    assert_eq!(metrics.partitions_proven, 5);
    assert_eq!(metrics.synth_spans.len(), 5);
    let device = &metrics.devices[0];
    assert_eq!(device.holds, 5);
    let gaps = device.gaps;
    assert_eq!(gaps.under_50ms + gaps.from_50_to_500ms + gaps.over_500ms, 4);
    assert!(device.lock_occupancy > 0.0 && device.lock_occupancy <= 1.0);
    assert!(device.held_ns <= device.busy_span_ns);
    let per_worker: usize = metrics.gpu_workers.iter().map(|w| w.partitions).sum();
    assert_eq!(per_worker, 5);
    let stages = metrics.stages;
    assert!(stages.synthesis_ns.is_some() && stages.kernel_ns.is_some());
    assert!(stages.preamble_ns.is_some() && stages.epilogue_ns.is_some());
}
