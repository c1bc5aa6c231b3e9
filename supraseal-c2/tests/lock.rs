//! GpuLock: counters, hand-over between threads, try_lock, monotonic_ns.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use supraseal_c2::{monotonic_ns, GpuLock, LockStats};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn lock_is_send_and_sync() {
    assert_send_sync::<GpuLock>();
    assert_send_sync::<supraseal_c2::Srs>();
}

#[test]
fn counts_acquisitions_and_hold_time() {
    let lock = GpuLock::cpu(3);
    assert_eq!(lock.device(), 3);
    assert_eq!(lock.stats(), LockStats::default());
    {
        let _held = lock.lock();
        thread::sleep(Duration::from_millis(5));
    }
    let stats = lock.stats();
    assert_eq!(stats.acquisitions, 1);
    assert!(stats.hold_ns >= 5_000_000, "{stats:?}");
    drop(lock.try_lock().expect("free lock"));
    assert_eq!(lock.stats().acquisitions, 2);
}

#[test]
fn second_thread_takes_it_after_release() {
    let lock = GpuLock::cpu(0);
    let (started_tx, started_rx) = mpsc::channel();
    thread::scope(|scope| {
        let held = lock.lock();
        let waiter = scope.spawn(|| {
            started_tx.send(()).unwrap();
            let before = monotonic_ns();
            let _held = lock.lock();
            monotonic_ns() - before
        });
        started_rx.recv().unwrap();
        thread::sleep(Duration::from_millis(20));
        assert_eq!(lock.stats().acquisitions, 1, "waiter must still be blocked");
        drop(held);
        let waited = waiter.join().unwrap();
        assert!(waited >= 10_000_000, "waited only {waited} ns");
    });
    let stats = lock.stats();
    assert_eq!(stats.acquisitions, 2);
    assert!(stats.wait_ns >= 10_000_000, "{stats:?}");
}

#[test]
fn try_lock_fails_while_held() {
    let lock = GpuLock::cpu(1);
    let held = lock.lock();
    assert!(lock.try_lock().is_none(), "same thread");
    thread::scope(|scope| {
        assert!(
            scope.spawn(|| lock.try_lock().is_none()).join().unwrap(),
            "other thread"
        );
    });
    drop(held);
    thread::scope(|scope| {
        assert!(scope.spawn(|| lock.try_lock().is_some()).join().unwrap());
    });
    assert_eq!(lock.stats().acquisitions, 2);
}

#[test]
#[should_panic(expected = "not re-entrant")]
fn relocking_on_the_same_thread_panics() {
    let lock = GpuLock::cpu(0);
    let _held = lock.lock();
    let _again = lock.lock();
}

#[test]
fn monotonic_ns_moves_forward() {
    let a = monotonic_ns();
    thread::sleep(Duration::from_millis(2));
    let b = monotonic_ns();
    assert!(b >= a + 2_000_000, "{a} -> {b}");
}

#[test]
fn waiters_take_the_lock_in_the_order_they_asked() {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let lock = Arc::new(supraseal_c2::GpuLock::cpu(0));
    let order = Arc::new(Mutex::new(Vec::new()));
    let held = lock.lock();
    let mut waiters = Vec::new();
    for i in 0..4 {
        let (lock, order) = (Arc::clone(&lock), Arc::clone(&order));
        waiters.push(std::thread::spawn(move || {
            let _g = lock.lock();
            order.lock().unwrap().push(i);
            // Hold briefly so that a late waiter could overtake an unfair lock.
            std::thread::sleep(Duration::from_millis(5));
        }));
        // Let waiter i block on the lock before waiter i + 1 asks.
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(held);
    for w in waiters {
        w.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
}
