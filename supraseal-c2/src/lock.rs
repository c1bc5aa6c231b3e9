//! The per-device lock that guards the kernel region.

use std::fmt;
use std::marker::PhantomData;
use std::sync::MutexGuard;

use cxx::UniquePtr;

use crate::backend::{Backend, BackendChoice};
use crate::bridge::ffi;
use crate::{cuda, Error};

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

/// The mutex around one device's kernel region, owned by native code, and
/// the backend that runs the kernel region under it.
///
/// Make one per device and share it by reference among that device's
/// workers: the CUDA backend relies on this lock being the only one that
/// guards its device.
pub struct GpuLock {
    native: UniquePtr<ffi::NativeGpuLock>,
    backend: Backend,
}

// SAFETY: the native gpu_lock_t is a std::mutex plus atomic counters and a
// backend whose lock-free members (settings) are atomics; every bridge
// function reached through `&GpuLock` is safe to call from any thread
// concurrently (those that touch the device are called with the lock held),
// and the UniquePtr keeps the object at one address until drop.
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
    /// A new lock for device `device`, with the CPU backend.
    ///
    /// # Panics
    ///
    /// If the native allocation fails.
    pub fn new(device: u32) -> Self {
        let native = ffi::new_gpu_lock(device).unwrap_or_else(|e| panic!("GpuLock::new: {e}"));
        Self {
            native,
            backend: Backend::Cpu,
        }
    }

    /// A new lock for device `device` with the backend `choice` resolves to:
    /// [`BackendChoice::Auto`] takes CUDA when this build has it and device
    /// `device` exists (else the CPU, logged); [`BackendChoice::Cuda`] fails
    /// with [`Error::CudaUnavailable`] saying why it cannot (built without the
    /// `cuda` feature, no device, ordinal out of range), or with
    /// [`Error::Cuda`] when the device is unusable.
    pub fn with_backend(device: u32, choice: BackendChoice) -> Result<GpuLock, Error> {
        let cuda = |device| {
            Ok(Self {
                native: cuda::new_lock(device)?,
                backend: Backend::Cuda,
            })
        };
        match choice {
            BackendChoice::Cpu => Ok(Self::new(device)),
            BackendChoice::Cuda => cuda(device),
            BackendChoice::Auto => cuda(device).or_else(|e: Error| {
                log::info!("device {device}: kernel region on the CPU ({e})");
                Ok(Self::new(device))
            }),
        }
    }

    /// The device this lock guards.
    pub fn device(&self) -> u32 {
        ffi::lock_device(&self.native)
    }

    /// Where this lock's kernel region runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Caps the device memory the CUDA backend plans with on this device
    /// (`None`: whatever is free). A key that does not fit under the cap is
    /// streamed from pinned host memory; one that cannot even be streamed
    /// fails with [`Error::DeviceMemory`]. Applies to keys first used on
    /// this device after the call. No effect on the CPU backend.
    pub fn set_device_memory_limit(&self, bytes: Option<u64>) -> Result<(), Error> {
        match self.backend {
            Backend::Cpu => Ok(()),
            Backend::Cuda => cuda::set_memory_limit(&self.native, bytes.unwrap_or(0)),
        }
    }

    /// Streams keys from pinned host memory even when they would fit in
    /// device memory (leaving the memory to others). Applies to keys first
    /// used on this device after the call. No effect on the CPU backend.
    pub fn set_stream_srs(&self, on: bool) -> Result<(), Error> {
        match self.backend {
            Backend::Cpu => Ok(()),
            Backend::Cuda => cuda::set_stream_srs(&self.native, on),
        }
    }

    /// Allocates `bytes` of device memory on this lock's device and frees it
    /// again, holding the lock: whether the device can take that much now.
    /// Fails with [`Error::Cuda`] (naming `cudaMalloc`) when it cannot; the
    /// device stays usable. Always `Ok` on the CPU backend.
    pub fn probe_device_memory(&self, bytes: u64) -> Result<(), Error> {
        match self.backend {
            Backend::Cpu => Ok(()),
            Backend::Cuda => {
                let _held = self.lock();
                cuda::probe_alloc(&self.native, bytes)
            }
        }
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
            .field("backend", &self.backend)
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
