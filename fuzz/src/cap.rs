//! A global allocator with a ceiling, so that an input that makes a
//! parser allocate what the input does not pay for fails loudly (the
//! allocation fails and Rust aborts, naming its size) instead of passing
//! or taking the machine's memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation.
const MAX_ONE: usize = 256 << 20;
/// The most live at once.
const MAX_LIVE: usize = 1 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator under the two ceilings above.
pub struct Capped;

impl Capped {
    /// Counts `size` more bytes live, unless that passes the ceiling.
    fn admit(size: usize) -> bool {
        if LIVE.fetch_add(size, Ordering::Relaxed) + size <= MAX_LIVE {
            return true;
        }
        LIVE.fetch_sub(size, Ordering::Relaxed);
        false
    }

    /// Runs `alloc` for `size` bytes if the ceilings allow, counting them
    /// live while it succeeds.
    fn counted(size: usize, alloc: impl FnOnce() -> *mut u8) -> *mut u8 {
        if size > MAX_ONE || !Self::admit(size) {
            return std::ptr::null_mut();
        }
        let p = alloc();
        if p.is_null() {
            LIVE.fetch_sub(size, Ordering::Relaxed);
        }
        p
    }
}

// SAFETY: every call is forwarded to `System` with the caller's layout;
// only the accounting (and a null return past the ceilings, which the
// GlobalAlloc contract allows) is added.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::counted(layout.size(), || System.alloc(layout))
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::counted(layout.size(), || System.alloc_zeroed(layout))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > MAX_ONE || (new_size > old && !Self::admit(new_size - old)) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        match (p.is_null(), new_size > old) {
            (true, true) => LIVE.fetch_sub(new_size - old, Ordering::Relaxed),
            (false, false) => LIVE.fetch_sub(old - new_size, Ordering::Relaxed),
            _ => 0,
        };
        p
    }
}
