//! The memory behind [`HostVec`](crate::HostVec): blocks of host memory,
//! page-locked when they can be, and the process-wide pool that keeps
//! dropped blocks for the next vector of the same byte size.
//!
//! Page-locking is slow (cudaHostAlloc of 256 MiB takes tens of
//! milliseconds) and every partition of a workload has the same a, b, c
//! sizes, so a dropped block is kept, not freed. The pool keeps at most
//! `CUZK_HOST_POOL_BYTES` bytes (default 16 GiB), or what
//! [`set_host_pool_limit`] says; to keep a returned block it frees the
//! oldest kept ones, and a block larger than the limit is freed at once.
//! Where neither set it, [`raise_host_pool_limit`] lets a caller that knows
//! how much it keeps in flight (the engine) raise the default.

use std::alloc::{handle_alloc_error, Layout};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::bridge::ffi;
use crate::cuda;

/// The pool limit when `CUZK_HOST_POOL_BYTES` is not set: 16 GiB.
pub const DEFAULT_HOST_POOL_BYTES: u64 = 16 << 30;

/// The alignment of every block (pinned blocks are page-aligned).
pub(crate) const HOST_ALIGNMENT: usize = 64;

/// One allocation of host memory, freed with the call that matches how it
/// was made.
pub(crate) struct HostBlock {
    ptr: NonNull<u8>,
    bytes: usize,
    pinned: bool,
}

// SAFETY: a HostBlock owns its allocation alone, like a Box<[u8]>, and both
// native allocators may be freed from any thread.
unsafe impl Send for HostBlock {}
// SAFETY: &HostBlock gives access to nothing but its address and size.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// `bytes` (> 0) of fresh, uninitialised memory: page-locked when the
    /// `cuda` feature is built, a device is present and CUDA grants it,
    /// else ordinary. `None` when neither can be had.
    fn allocate(bytes: usize) -> Option<Self> {
        if let Some(ptr) = NonNull::new(cuda::host_alloc_pinned(bytes)) {
            return Some(HostBlock {
                ptr,
                bytes,
                pinned: true,
            });
        }
        NonNull::new(ffi::host_alloc(bytes)).map(|ptr| HostBlock {
            ptr,
            bytes,
            pinned: false,
        })
    }

    /// The first byte, aligned to [`HOST_ALIGNMENT`].
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: the pointer came from the allocator `pinned` names and is
        // freed once, here.
        unsafe {
            if self.pinned {
                cuda::host_free_pinned(self.ptr.as_ptr());
            } else {
                ffi::host_free(self.ptr.as_ptr());
            }
        }
    }
}

/// What the host pool holds, and what it has done since the process
/// started ([`host_pool_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostPoolStats {
    /// The most bytes the pool keeps.
    pub limit_bytes: u64,
    /// Bytes of dropped blocks kept for reuse.
    pub cached_bytes: u64,
    /// Dropped blocks kept for reuse.
    pub cached_blocks: u64,
    /// Vectors that got a kept block.
    pub reused: u64,
    /// Vectors that got a fresh allocation.
    pub allocated: u64,
    /// Of those, page-locked ones.
    pub allocated_pinned: u64,
    /// Blocks really freed: over the limit, evicted or trimmed.
    pub freed: u64,
}

/// A pool of dropped blocks by byte size; the process has one
/// ([`HostPool::global`]).
pub(crate) struct HostPool {
    state: Mutex<PoolState>,
}

struct PoolState {
    /// Kept blocks by byte size, each list oldest first, with its age.
    by_size: HashMap<usize, VecDeque<(u64, HostBlock)>>,
    /// The byte size of every kept block by age: the eviction order.
    by_age: BTreeMap<u64, usize>,
    next_age: u64,
    stats: HostPoolStats,
    /// The limit was set by `CUZK_HOST_POOL_BYTES` or
    /// [`set_host_pool_limit`]: [`raise_host_pool_limit`] leaves it.
    fixed: bool,
}

impl HostPool {
    pub(crate) fn new(limit_bytes: u64) -> Self {
        Self::with_limit(limit_bytes, false)
    }

    fn with_limit(limit_bytes: u64, fixed: bool) -> Self {
        HostPool {
            state: Mutex::new(PoolState {
                by_size: HashMap::new(),
                by_age: BTreeMap::new(),
                next_age: 0,
                stats: HostPoolStats {
                    limit_bytes,
                    ..HostPoolStats::default()
                },
                fixed,
            }),
        }
    }

    /// The process's pool, its limit read from `CUZK_HOST_POOL_BYTES` on
    /// first use.
    pub(crate) fn global() -> &'static HostPool {
        static POOL: OnceLock<HostPool> = OnceLock::new();
        POOL.get_or_init(|| match limit_from_env() {
            Some(limit) => HostPool::with_limit(limit, true),
            None => HostPool::new(DEFAULT_HOST_POOL_BYTES),
        })
    }

    /// A block of exactly `bytes` (> 0): the most recently kept one of that
    /// size, else a fresh one. When memory is short it frees the kept
    /// blocks and tries again; it aborts like `Vec` when that fails too.
    pub(crate) fn take(&self, bytes: usize) -> HostBlock {
        if let Some(block) = self.lock().take_kept(bytes) {
            return block;
        }
        self.allocate(bytes)
            .or_else(|| {
                self.trim();
                self.allocate(bytes)
            })
            .unwrap_or_else(|| {
                let layout = Layout::from_size_align(bytes, HOST_ALIGNMENT);
                handle_alloc_error(layout.unwrap_or(Layout::new::<u8>()))
            })
    }

    /// A fresh block, counted in the stats.
    fn allocate(&self, bytes: usize) -> Option<HostBlock> {
        let block = HostBlock::allocate(bytes)?;
        let mut state = self.lock();
        state.stats.allocated += 1;
        state.stats.allocated_pinned += u64::from(block.pinned);
        Some(block)
    }

    /// Keeps `block` for reuse, or frees it (or older blocks) to stay
    /// within the limit. Freeing happens after the pool is unlocked.
    pub(crate) fn give(&self, block: HostBlock) {
        let freed = self.lock().keep(block);
        drop(freed);
    }

    /// Sets the limit, freeing the oldest kept blocks above it; later
    /// raises leave it.
    pub(crate) fn set_limit(&self, bytes: u64) {
        let freed = {
            let mut state = self.lock();
            state.stats.limit_bytes = bytes;
            state.fixed = true;
            state.evict_to(bytes)
        };
        drop(freed);
    }

    /// Raises the limit to `bytes` unless it is higher or was set; returns
    /// the limit then.
    pub(crate) fn raise_limit(&self, bytes: u64) -> u64 {
        let mut state = self.lock();
        if !state.fixed && state.stats.limit_bytes < bytes {
            state.stats.limit_bytes = bytes;
        }
        state.stats.limit_bytes
    }

    /// Frees every kept block.
    pub(crate) fn trim(&self) {
        let freed = self.lock().evict_to(0);
        drop(freed);
    }

    /// Allocates blocks of `bytes` until `count` are kept, or until the
    /// limit or memory runs out; returns how many are kept then.
    pub(crate) fn reserve(&self, bytes: usize, count: usize) -> usize {
        let missing = {
            let state = self.lock();
            let kept = state.by_size.get(&bytes).map_or(0, VecDeque::len);
            let room = (state
                .stats
                .limit_bytes
                .saturating_sub(state.stats.cached_bytes)
                / bytes.max(1) as u64) as usize;
            count.saturating_sub(kept).min(room)
        };
        for _ in 0..missing {
            let Some(block) = self.allocate(bytes) else {
                break;
            };
            self.give(block);
        }
        self.kept_blocks(bytes)
    }

    pub(crate) fn stats(&self) -> HostPoolStats {
        self.lock().stats
    }

    /// Kept blocks of exactly `bytes`.
    pub(crate) fn kept_blocks(&self, bytes: usize) -> usize {
        self.lock().by_size.get(&bytes).map_or(0, VecDeque::len)
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // The state stays consistent across a panic: no method panics
        // half-way through an update.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl PoolState {
    fn take_kept(&mut self, bytes: usize) -> Option<HostBlock> {
        let kept = self.by_size.get_mut(&bytes)?;
        let (age, block) = kept.pop_back()?;
        if kept.is_empty() {
            self.by_size.remove(&bytes);
        }
        self.by_age.remove(&age);
        self.stats.cached_bytes -= bytes as u64;
        self.stats.cached_blocks -= 1;
        self.stats.reused += 1;
        Some(block)
    }

    /// Keeps `block` if it fits under the limit, evicting the oldest kept
    /// blocks to make room; returns what is to be freed.
    fn keep(&mut self, block: HostBlock) -> Vec<HostBlock> {
        let bytes = block.bytes as u64;
        if bytes > self.stats.limit_bytes {
            self.stats.freed += 1;
            return vec![block];
        }
        let evicted = self.evict_to(self.stats.limit_bytes - bytes);
        let age = self.next_age;
        self.next_age += 1;
        self.by_age.insert(age, block.bytes);
        self.by_size
            .entry(block.bytes)
            .or_default()
            .push_back((age, block));
        self.stats.cached_bytes += bytes;
        self.stats.cached_blocks += 1;
        evicted
    }

    /// Removes the oldest kept blocks until at most `bytes` are kept.
    fn evict_to(&mut self, bytes: u64) -> Vec<HostBlock> {
        let mut evicted = Vec::new();
        while self.stats.cached_bytes > bytes {
            let Some((_, size)) = self.by_age.pop_first() else {
                break;
            };
            let kept = self.by_size.get_mut(&size).expect("aged block is kept");
            let (_, block) = kept.pop_front().expect("aged block is kept");
            if kept.is_empty() {
                self.by_size.remove(&size);
            }
            self.stats.cached_bytes -= size as u64;
            self.stats.cached_blocks -= 1;
            self.stats.freed += 1;
            evicted.push(block);
        }
        evicted
    }
}

/// Allocates (page-locked when it can) blocks of `bytes` into the pool
/// until it keeps `count` of them, within its limit, so that the vectors
/// made later take them at once: page-locking hundreds of MiB takes tens of
/// milliseconds a block and holds the CUDA driver meanwhile, which stalls
/// the GPU work of other threads. Returns how many blocks of that size the
/// pool keeps afterwards (fewer than `count` when the limit or memory ran
/// out). [`HostVec::reserve_pool`](crate::HostVec::reserve_pool) counts in
/// elements.
pub fn reserve_host_blocks(bytes: usize, count: usize) -> usize {
    if bytes == 0 {
        return 0;
    }
    HostPool::global().reserve(bytes, count)
}

/// `CUZK_HOST_POOL_BYTES`, when set to a byte count.
fn limit_from_env() -> Option<u64> {
    let text = std::env::var("CUZK_HOST_POOL_BYTES").ok()?;
    let limit = text.trim().parse().ok();
    if limit.is_none() {
        tracing::warn!(
            "CUZK_HOST_POOL_BYTES={text:?} is not a byte count; \
             keeping up to {DEFAULT_HOST_POOL_BYTES} bytes"
        );
    }
    limit
}

/// The host pool's counters and contents.
pub fn host_pool_stats() -> HostPoolStats {
    HostPool::global().stats()
}

/// How many blocks of exactly `bytes` the host pool keeps: memory already
/// resident that the next vectors of that size take instead of allocating
/// (the engine's host-memory budget counts on them).
pub fn host_pool_kept_blocks(bytes: usize) -> usize {
    HostPool::global().kept_blocks(bytes)
}

/// Sets the most bytes the host pool keeps (overriding
/// `CUZK_HOST_POOL_BYTES`), freeing the oldest kept blocks above it.
pub fn set_host_pool_limit(bytes: u64) {
    HostPool::global().set_limit(bytes);
}

/// Raises the most bytes the host pool keeps to `bytes`, unless the limit
/// is already higher or was set (by `CUZK_HOST_POOL_BYTES` or
/// [`set_host_pool_limit`]); returns the limit in force. For a caller that
/// knows how many blocks it keeps in flight at once: a block dropped when
/// the pool is full is freed, and its replacement page-locked again, which
/// holds the CUDA driver (seconds for the 4 GiB vectors of a 2^27
/// partition) and stalls the other threads' GPU work.
pub fn raise_host_pool_limit(bytes: u64) -> u64 {
    HostPool::global().raise_limit(bytes)
}

/// Frees every block the host pool keeps.
pub fn trim_host_pool() {
    HostPool::global().trim();
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: usize = 1024;

    #[test]
    fn reserving_allocates_only_the_missing_blocks_within_the_limit() {
        let pool = HostPool::new(10_000);
        assert_eq!(pool.reserve(3_000, 2), 2);
        assert_eq!(pool.stats().allocated, 2);
        assert_eq!(pool.reserve(3_000, 2), 2, "already there");
        assert_eq!(pool.stats().allocated, 2);
        assert_eq!(
            pool.reserve(3_000, 5),
            3,
            "the limit leaves room for one more"
        );
        assert_eq!((pool.kept_blocks(3_000), pool.kept_blocks(2_999)), (3, 0));
        let taken = pool.take(3_000);
        assert_eq!(pool.stats().reused, 1);
        assert_eq!(pool.kept_blocks(3_000), 2);
        assert_eq!(pool.stats().cached_blocks, 2);
        drop(taken);
    }

    #[test]
    fn a_kept_block_is_reused_for_its_size_only() {
        let pool = HostPool::new(1 << 20);
        let block = pool.take(4 * KIB);
        let address = block.as_ptr();
        pool.give(block);
        let other = pool.take(8 * KIB);
        let again = pool.take(4 * KIB);
        assert_eq!(again.as_ptr(), address);
        let stats = pool.stats();
        assert_eq!((stats.allocated, stats.reused), (2, 1));
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (0, 0));
        pool.give(other);
        pool.give(again);
        assert_eq!(pool.stats().cached_bytes, 12 * KIB as u64);
    }

    #[test]
    fn the_limit_evicts_the_oldest_and_refuses_what_cannot_fit() {
        let pool = HostPool::new(10 * KIB as u64);
        let blocks: Vec<_> = (0..3).map(|_| pool.take(4 * KIB)).collect();
        let oldest = blocks[0].as_ptr();
        for block in blocks {
            pool.give(block);
        }
        // 12 KiB given, 10 KiB allowed: the first one given is freed.
        let stats = pool.stats();
        assert_eq!(
            (stats.cached_blocks, stats.cached_bytes),
            (2, 8 * KIB as u64)
        );
        assert_eq!(stats.freed, 1);
        let kept: Vec<_> = (0..2).map(|_| pool.take(4 * KIB)).collect();
        assert!(kept.iter().all(|b| b.as_ptr() != oldest));

        pool.give(pool.take(11 * KIB));
        assert_eq!(pool.stats().cached_blocks, 0, "larger than the limit");
        assert_eq!(pool.stats().freed, 2);
        kept.into_iter().for_each(|b| pool.give(b));

        pool.set_limit(4 * KIB as u64);
        assert_eq!(pool.stats().cached_bytes, 4 * KIB as u64);
        pool.trim();
        let stats = pool.stats();
        assert_eq!((stats.cached_blocks, stats.cached_bytes), (0, 0));
        assert_eq!(stats.freed, 4);
    }

    #[test]
    fn a_raise_moves_only_a_default_limit_and_only_up() {
        let pool = HostPool::new(10 * KIB as u64);
        assert_eq!(
            pool.raise_limit(4 * KIB as u64),
            10 * KIB as u64,
            "never down"
        );
        assert_eq!(pool.raise_limit(40 * KIB as u64), 40 * KIB as u64);
        let blocks: Vec<_> = (0..3).map(|_| pool.take(12 * KIB)).collect();
        blocks.into_iter().for_each(|b| pool.give(b));
        assert_eq!(
            pool.stats().cached_blocks,
            3,
            "all kept under the raised limit"
        );
        pool.set_limit(12 * KIB as u64);
        assert_eq!(pool.stats().cached_blocks, 1);
        assert_eq!(
            pool.raise_limit(80 * KIB as u64),
            12 * KIB as u64,
            "a set limit stays"
        );
        let fixed = HostPool::with_limit(KIB as u64, true);
        assert_eq!(
            fixed.raise_limit(80 * KIB as u64),
            KIB as u64,
            "as does one from the environment"
        );
    }

    #[test]
    fn blocks_are_aligned_and_pinned_only_with_a_device() {
        let pool = HostPool::new(0);
        for bytes in [1, 63, 64, 4097, 3 << 20] {
            let block = pool.take(bytes);
            assert_eq!(block.as_ptr().as_ptr() as usize % HOST_ALIGNMENT, 0);
            assert_eq!(block.is_pinned(), cuda::device_count() > 0);
            // Every byte is writable.
            // SAFETY: the block owns `bytes` bytes from its pointer.
            unsafe { std::ptr::write_bytes(block.as_ptr().as_ptr(), 0xa5, bytes) };
            pool.give(block);
        }
        assert_eq!(pool.stats().freed, 5, "a zero limit keeps nothing");
    }
}
