//! The per-device lock that guards the kernel region.

use std::fmt;
use std::marker::PhantomData;
use std::sync::MutexGuard;

use cxx::UniquePtr;

use crate::bridge::ffi;

/// Counters kept by a [`GpuLock`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Times the lock was taken.
    pub acquisitions: u64,
    /// Total nanoseconds spent waiting to take it.
    pub wait_ns: u64,
    /// Total nanoseconds it was held.
    pub hold_ns: u64,
}

/// The mutex around one device's kernel region, owned by native code.
pub struct GpuLock {
    native: UniquePtr<ffi::NativeGpuLock>,
}

// SAFETY: the native gpu_lock_t is a std::mutex plus atomic counters; every
// bridge function reached through `&GpuLock` is safe to call from any thread
// concurrently, and the UniquePtr keeps the object at one address until drop.
unsafe impl Send for GpuLock {}
// SAFETY: as for Send: shared use from many threads is what it is for.
unsafe impl Sync for GpuLock {}

/// Holds a [`GpuLock`] until dropped (on the thread that took it).
///
/// It cannot move to another thread:
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// let lock = supraseal_c2::GpuLock::new(0);
/// send(lock.lock());
/// ```
pub struct GpuLockGuard<'a> {
    _lock: &'a GpuLock,
    /// A std::mutex must be released by the thread that took it, so the
    /// guard is `!Send` (and `Sync`), like std's own guard.
    _thread_bound: PhantomData<MutexGuard<'static, ()>>,
}

impl GpuLock {
    /// A new lock for device `device`.
    ///
    /// # Panics
    ///
    /// If the native allocation fails.
    pub fn new(device: u32) -> Self {
        let native = ffi::new_gpu_lock(device).unwrap_or_else(|e| panic!("GpuLock::new: {e}"));
        Self { native }
    }

    /// The device this lock guards.
    pub fn device(&self) -> u32 {
        ffi::lock_device(&self.native)
    }

    /// The counters so far.
    pub fn stats(&self) -> LockStats {
        let c = ffi::lock_counters(&self.native);
        LockStats {
            acquisitions: c.acquisitions,
            wait_ns: c.wait_ns,
            hold_ns: c.hold_ns,
        }
    }

    /// Blocks until the lock is taken.
    ///
    /// # Panics
    ///
    /// If this thread already holds it: the lock is not re-entrant.
    pub fn lock(&self) -> GpuLockGuard<'_> {
        if let Err(e) = ffi::lock_acquire(&self.native) {
            panic!("GpuLock::lock: {e}");
        }
        self.guard()
    }

    /// Takes the lock if it is free (`None` also when this thread holds it).
    pub fn try_lock(&self) -> Option<GpuLockGuard<'_>> {
        ffi::lock_try_acquire(&self.native).then(|| self.guard())
    }

    /// The native object, for the prover.
    pub(crate) fn native(&self) -> &ffi::NativeGpuLock {
        &self.native
    }

    fn guard(&self) -> GpuLockGuard<'_> {
        GpuLockGuard {
            _lock: self,
            _thread_bound: PhantomData,
        }
    }
}

impl fmt::Debug for GpuLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuLock")
            .field("device", &self.device())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Drop for GpuLockGuard<'_> {
    fn drop(&mut self) {
        ffi::lock_release(&self._lock.native);
    }
}

impl fmt::Debug for GpuLockGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuLockGuard")
            .field("device", &self._lock.device())
            .finish()
    }
}
