//! HostVec: filling, copying, pinning, and the process-wide pool (reuse by
//! byte size, the limit, a panicking fill). The pool is global, so these
//! tests take turns.

use std::panic;
use std::sync::{Mutex, MutexGuard};

use blstrs::Scalar;
use supraseal_c2::{
    cuda_device_count, host_pool_stats, is_host_range_pinned, set_host_pool_limit, trim_host_pool,
    HostVec, DEFAULT_HOST_POOL_BYTES,
};

static POOL: Mutex<()> = Mutex::new(());

/// The pool to this test alone, empty, with a large limit.
fn exclusive_pool() -> MutexGuard<'static, ()> {
    let guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    set_host_pool_limit(DEFAULT_HOST_POOL_BYTES);
    trim_host_pool();
    guard
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn fills_copies_and_zeroes() {
    let _pool = exclusive_pool();
    assert_send_sync::<HostVec<Scalar>>();
    for len in [0, 1, 4095, 4096, 4097, 100_000] {
        let v = HostVec::from_par_fn(len, |i| i as u64 * 3 + 1);
        assert_eq!(v.len(), len);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3 + 1));
        let scalars = HostVec::from_par_fn(len, |i| Scalar::from(i as u64));
        assert_eq!(
            scalars.last().copied(),
            len.checked_sub(1).map(|i| Scalar::from(i as u64))
        );
        let copy = HostVec::from_slice(&scalars);
        assert!(copy == scalars.clone() && copy[..] == scalars[..]);
        drop((v, copy));
        // The zeroed vector reuses the dropped block of the same size,
        // which holds the old values: they must all be overwritten.
        let zeros = HostVec::<u64>::zeroed(len);
        assert!(zeros.iter().all(|&x| x == 0), "len {len}");
    }
    let mut v = HostVec::<u32>::zeroed(10);
    v[3] = 7;
    v.iter_mut().skip(5).for_each(|x| *x = 1);
    assert_eq!(v[..], [0, 0, 0, 7, 0, 1, 1, 1, 1, 1]);
}

#[test]
fn pinned_exactly_when_a_device_is_present() {
    let _pool = exclusive_pool();
    let v = HostVec::<Scalar>::zeroed(1 << 16);
    // Without the cuda feature the device count is 0: never pinned.
    assert_eq!(v.is_pinned(), cuda_device_count() > 0);
    assert_eq!(is_host_range_pinned(&v), v.is_pinned());
    assert_eq!(is_host_range_pinned(&v[100..200]), v.is_pinned());
    assert!(!is_host_range_pinned(&vec![0u64; 1 << 16]));
    assert!(!HostVec::<u64>::zeroed(0).is_pinned());
    assert!(!is_host_range_pinned::<u64>(&[]));
    let stats = host_pool_stats();
    assert_eq!(
        stats.allocated_pinned,
        stats.allocated * u64::from(v.is_pinned())
    );
}

#[test]
fn a_dropped_vector_is_reused_for_the_same_byte_size() {
    let _pool = exclusive_pool();
    let before = host_pool_stats();
    let v = HostVec::<u64>::zeroed(12_345);
    let address = v.as_ptr() as usize;
    drop(v);
    let kept = host_pool_stats();
    assert_eq!(kept.allocated, before.allocated + 1);
    assert_eq!((kept.cached_blocks, kept.cached_bytes), (1, 12_345 * 8));

    // Same byte size, another element type: the same memory, no allocation.
    let again = HostVec::from_par_fn(12_345 * 2, |i| i as u32);
    assert_eq!(again.as_ptr() as usize, address);
    let after = host_pool_stats();
    assert_eq!(after.allocated, kept.allocated);
    assert_eq!(after.reused, kept.reused + 1);
    assert_eq!(after.cached_blocks, 0);

    // Another size is a fresh allocation.
    let other = HostVec::<u64>::zeroed(12_346);
    assert_eq!(host_pool_stats().allocated, kept.allocated + 1);
    drop((again, other));
    assert_eq!(host_pool_stats().cached_blocks, 2);
}

#[test]
fn the_pool_keeps_no_more_than_its_limit() {
    let _pool = exclusive_pool();
    let block = 1 << 20;
    set_host_pool_limit(3 * block as u64);
    let vs: Vec<_> = (0..5).map(|_| HostVec::<u8>::zeroed(block)).collect();
    let before = host_pool_stats();
    drop(vs);
    let stats = host_pool_stats();
    assert_eq!(stats.limit_bytes, 3 * block as u64);
    assert_eq!(
        (stats.cached_blocks, stats.cached_bytes),
        (3, 3 * block as u64)
    );
    assert_eq!(stats.freed, before.freed + 2);

    // Larger than the limit: freed at once, the kept blocks stay.
    drop(HostVec::<u8>::zeroed(4 * block));
    let big = host_pool_stats();
    assert_eq!((big.cached_blocks, big.freed), (3, stats.freed + 1));

    // Lowering the limit frees the oldest kept blocks.
    set_host_pool_limit(block as u64);
    let lowered = host_pool_stats();
    assert_eq!((lowered.cached_blocks, lowered.freed), (1, big.freed + 2));
    set_host_pool_limit(0);
    drop(HostVec::<u8>::zeroed(block));
    assert_eq!(host_pool_stats().cached_bytes, 0);
}

#[test]
fn a_panicking_fill_returns_its_memory_to_the_pool() {
    let _pool = exclusive_pool();
    let result = panic::catch_unwind(|| {
        HostVec::from_par_fn(50_000, |i| {
            assert!(i != 44_444, "fill fails at {i}");
            i as u64
        })
    });
    assert!(result.is_err());
    let stats = host_pool_stats();
    assert_eq!((stats.cached_blocks, stats.cached_bytes), (1, 50_000 * 8));
    let reused = HostVec::from_par_fn(50_000, |i| i as u64);
    assert_eq!(host_pool_stats().reused, stats.reused + 1);
    assert_eq!(reused[44_444], 44_444);
}
