//! Order and cancellation: priorities first, then the oldest job; a
//! cancelled job stops and lets go of its partitions.

mod common;

use std::sync::Arc;

use cuzk_engine::{Engine, EngineConfig, EngineError};
use supraseal_c2::monotonic_ns;

use common::{engine, eventually, request, synthesized, wait};

/// `(job, partition)` pairs in the order their events started.
type Order = Vec<(u64, usize)>;

/// Splits `(start, job, partition)` events into those that started before
/// `since` and those that started at or after it, each in start order.
fn split_at(mut events: Vec<(u64, u64, usize)>, since: u64) -> (Order, Order) {
    events.sort();
    let (early, late): (Vec<_>, Vec<_>) = events.into_iter().partition(|e| e.0 < since);
    let strip = |v: Vec<(u64, u64, usize)>| v.into_iter().map(|(_, j, p)| (j, p)).collect();
    (strip(early), strip(late))
}

#[test]
fn higher_priority_job_submitted_later_is_synthesized_first() {
    let engine = engine(1, 1);
    let low = engine.submit(request(0, 12));
    let high = engine.submit(request(1, 4).with_priority(1));
    let submitted = monotonic_ns();
    let (low_id, high_id) = (low.id(), high.id());
    assert!(wait(low).is_ok() && wait(high).is_ok());

    let spans = engine.metrics().synth_spans;
    let last_high_start = spans
        .iter()
        .filter(|s| s.job == high_id)
        .map(|s| s.started_ns)
        .max();
    let events = spans
        .iter()
        .map(|s| (s.started_ns, s.job, s.partition))
        .collect();
    // The worker may have started low partitions before the high job was
    // in the queue; once it was, no low partition may go before it.
    let (_, late) = split_at(events, submitted);
    let late_low_first = spans
        .iter()
        .filter(|s| s.job == low_id && s.started_ns >= submitted)
        .any(|s| Some(s.started_ns) < last_high_start);
    assert!(
        !late_low_first,
        "synthesis order after submission: {late:?}"
    );
}

#[test]
fn gpu_workers_take_priority_then_age_then_index() {
    let engine = engine(1, 1);
    // Synthesize first, so that the three submissions follow each other
    // within microseconds.
    let (pa, pb, pc) = (synthesized(0, 3), synthesized(1, 3), synthesized(2, 3));
    let a = engine.submit_synthesized(request(0, 3), pa);
    let b = engine.submit_synthesized(request(1, 3), pb);
    let c = engine.submit_synthesized(request(2, 3).with_priority(5), pc);
    let submitted = monotonic_ns();
    let (a_id, b_id, c_id) = (a.id(), b.id(), c.id());
    for handle in [a, b, c] {
        wait(handle).unwrap();
    }
    let holds = engine.metrics().lock_holds();
    let events = holds
        .iter()
        .map(|h| (h.taken_ns, h.job, h.partition))
        .collect();
    // Partitions of A taken before B and C were queued are excused.
    let (early, late) = split_at(events, submitted);
    assert!(early.iter().all(|&(job, _)| job == a_id), "{early:?}");
    let expected: Vec<(u64, usize)> = [c_id, a_id, b_id]
        .iter()
        .flat_map(|&job| (0..3).map(move |p| (job, p)))
        .filter(|x| !early.contains(x))
        .collect();
    assert_eq!(late, expected);
}

#[test]
fn among_equal_priorities_the_older_job_finishes_first() {
    // One GPU worker: with two, the workers' preambles race to the lock
    // (first come, first served), so completion order would also depend on
    // preamble lengths, not only on the engine's queue order tested here.
    let engine = engine(2, 1);
    let handles: Vec<_> = (0..3).map(|r| engine.submit(request(r, 3))).collect();
    let finished: Vec<u64> = handles
        .into_iter()
        .map(|h| wait(h).unwrap().completed_ns)
        .collect();
    assert!(
        finished.windows(2).all(|w| w[0] < w[1]),
        "completion instants out of submission order: {finished:?}"
    );
}

#[test]
fn cancel_stops_the_job_and_frees_its_synthesized_partitions() {
    let engine = engine(1, 1);
    let partitions = synthesized(4, 6);
    let handle = engine.submit_synthesized(request(4, 6), partitions.clone());
    let id = handle.id();
    handle.cancel();
    assert!(handle.is_finished());
    assert!(matches!(wait(handle), Err(EngineError::Cancelled)));

    // Only the partition a worker was proving may still be referenced, and
    // only until its step ends.
    eventually("the engine lets go of every partition", || {
        partitions.iter().all(|p| Arc::strong_count(p) == 1)
    });
    assert_eq!(engine.queued_partitions(), (0, 0));
    let proven = engine
        .metrics()
        .lock_holds()
        .iter()
        .filter(|h| h.job == id)
        .count();
    assert!(
        proven <= 1,
        "{proven} partitions of the cancelled job were proven"
    );

    // The engine carries on.
    assert!(wait(engine.submit(request(5, 2))).is_ok());
}

#[test]
fn cancel_drops_partitions_not_yet_synthesized() {
    let engine = engine(1, 1);
    let doomed = engine.submit(request(6, 8));
    let id = doomed.id();
    doomed.cancel();
    assert!(matches!(wait(doomed), Err(EngineError::Cancelled)));
    eventually("the queues are empty", || {
        engine.queued_partitions() == (0, 0)
    });
    let after = engine.submit(request(7, 1));
    wait(after).unwrap();
    let synthesized = engine
        .metrics()
        .synth_spans
        .iter()
        .filter(|s| s.job == id)
        .count();
    assert!(
        synthesized <= 1,
        "{synthesized} partitions of the cancelled job were synthesized"
    );
}

#[test]
fn a_canceller_ends_a_wait_in_progress_on_another_thread() {
    let engine = engine(1, 1);
    // 64 partitions on one worker: far from done when the cancel comes.
    let handle = engine.submit(request(8, 64));
    let canceller = handle.canceller();
    let waiter = std::thread::spawn(move || wait(handle));
    canceller.cancel();
    assert!(matches!(
        waiter.join().unwrap(),
        Err(EngineError::Cancelled)
    ));
    // Cancelling again, after the end, changes nothing.
    canceller.cancel();
    assert!(wait(engine.submit(request(9, 1))).is_ok());
}

#[test]
fn a_host_memory_budget_below_one_partition_proves_them_one_at_a_time() {
    // Two partition workers would synthesize ahead; a budget of one byte
    // admits a partition only when none is in flight.
    let engine = cuzk_engine::Engine::new(cuzk_engine::EngineConfig {
        partition_workers: 2,
        gpu_workers_per_device: 1,
        host_memory_limit: Some(1),
        verify: false,
        ..cuzk_engine::EngineConfig::default()
    })
    .unwrap();
    let proof = wait(engine.submit(request(10, 4))).unwrap();
    let mut records = proof.partitions.clone();
    records.sort_by_key(|r| r.synth_started_ns);
    for pair in records.windows(2) {
        let (before, next) = (&pair[0], &pair[1]);
        let before_done = before.prove.lock_released_ns + before.prove.epilogue_ns;
        assert!(
            next.synth_started_ns >= before_done,
            "partition {} started synthesis before partition {} was proven",
            next.index,
            before.index
        );
    }
    let budget = engine.host_memory();
    assert_eq!(budget.limit, Some(1));
    assert!(budget.waits >= 1, "the second worker never waited");
}

/// The urgent lane: with every ordinary worker busy on a long job, a
/// request of the lane's priority is synthesized by the lane's partition
/// worker and proven by its GPU worker, and is done while the long job
/// still runs; its proof verifies.
#[test]
fn the_urgent_lane_proves_past_a_busy_engine() {
    let engine = Engine::new(EngineConfig {
        partition_workers: 1,
        gpu_workers_per_device: 1,
        devices: vec![0],
        queue_depth: Some(1),
        verify: true,
        urgent_priority: Some(3),
        ..EngineConfig::default()
    })
    .unwrap();
    let long = engine.submit(request(0, 60));
    eventually("the long job is under way", || {
        !engine.metrics().prove_spans.is_empty()
    });
    let urgent = engine.submit(request(1, 1).with_priority(3));
    let urgent_id = urgent.id();
    assert!(wait(urgent).is_ok());
    assert!(
        !long.is_finished(),
        "the long job ended first: no lane needed"
    );

    let metrics = engine.metrics();
    let synth = metrics
        .synth_spans
        .iter()
        .find(|s| s.job == urgent_id)
        .unwrap();
    assert_eq!(
        synth.worker, 1,
        "synthesized by the lane's partition worker"
    );
    let prove = metrics
        .prove_spans
        .iter()
        .find(|s| s.job == urgent_id)
        .unwrap();
    assert_eq!(prove.worker, 1, "proven by the lane's GPU worker");
    assert!(
        metrics
            .synth_spans
            .iter()
            .filter(|s| s.job != urgent_id)
            .all(|s| s.worker == 0),
        "the lane took only the urgent request"
    );
    let ordinary = metrics.prove_spans.iter().filter(|s| s.job != urgent_id);
    assert!(ordinary.clone().all(|s| s.worker == 0));
    drop(metrics);
    assert!(wait(long).is_ok());
}
