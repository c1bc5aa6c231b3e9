//! The per-device lock that guards the kernel region.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use cxx::UniquePtr;

use crate::backend::{Backend, BackendChoice};
use crate::bridge::ffi;
use crate::error::native;
use crate::fault::{FaultCounter, FaultKind, FaultPlan};
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
/// There is one per CUDA device in the process: [`GpuLock::with_backend`]
/// hands out the device's lock from a registry, making it only when no one
/// holds it, so every worker of a device shares the one lock the CUDA
/// backend relies on. A CPU-backend lock guards no device (the ordinal is a
/// label), so [`GpuLock::cpu`] makes a fresh one each time.
pub struct GpuLock {
    native: UniquePtr<ffi::NativeGpuLock>,
    backend: Backend,
    faults: FaultCounter,
}

/// The CUDA locks alive in this process, by device.
static CUDA_LOCKS: Mutex<Vec<(u32, Weak<GpuLock>)>> = Mutex::new(Vec::new());

// SAFETY: the native gpu_lock_t is a std::mutex plus atomic counters and a
// backend whose lock-free members (settings) are atomics; every bridge
// function reached through `&GpuLock` is safe to call from any thread
// concurrently (those that touch the device are called with the lock held),
// and the UniquePtr keeps the object at one address until drop.
unsafe impl Send for GpuLock {}
// SAFETY: as for Send: shared use from many threads is what it is for.
unsafe impl Sync for GpuLock {}

/// Holds a [`GpuLock`] until dropped (on the thread that took it): the proof
/// the kernel functions that need the lock held take ([`crate::kernels`]).
///
/// It cannot move to another thread:
///
/// ```compile_fail
/// fn send<T: Send>(_: T) {}
/// let lock = supraseal_c2::GpuLock::cpu(0);
/// send(lock.lock());
/// ```
pub struct GpuLockGuard<'a> {
    lock: &'a GpuLock,
    /// A std::mutex must be released by the thread that took it, so the
    /// guard is `!Send` (and `Sync`), like std's own guard.
    _thread_bound: PhantomData<MutexGuard<'static, ()>>,
}

impl GpuLock {
    /// A new lock with the CPU backend: the kernel region runs on the
    /// CPU's cores, and no GPU is behind it (nor is it in the registry).
    /// `device` only names it (in logs, fault plans and metrics), so that
    /// tests can stand in several devices.
    ///
    /// # Panics
    ///
    /// If the native allocation fails.
    pub fn cpu(device: u32) -> Self {
        let native = native(|e| ffi::new_gpu_lock(device, e))
            .unwrap_or_else(|e| panic!("GpuLock::cpu: {e}"));
        Self {
            native,
            backend: Backend::Cpu,
            faults: FaultCounter::default(),
        }
    }

    /// Device `device`'s lock, with the backend `choice` resolves to:
    /// [`BackendChoice::Auto`] takes CUDA when this build has it and device
    /// `device` exists (else the CPU, logged); [`BackendChoice::Cuda`] fails
    /// with [`Error::CudaUnavailable`] saying why it cannot (built without the
    /// `cuda` feature, no device, ordinal out of range), or with
    /// [`Error::Cuda`] when the device is unusable.
    ///
    /// A CUDA lock comes from the registry: while one for `device` is alive
    /// anywhere in the process, this returns it, so there is never a second.
    /// A CPU lock is a new one ([`GpuLock::cpu`]).
    pub fn with_backend(device: u32, choice: BackendChoice) -> Result<Arc<GpuLock>, Error> {
        match choice {
            BackendChoice::Cpu => Ok(Arc::new(Self::cpu(device))),
            BackendChoice::Cuda => Self::cuda(device),
            BackendChoice::Auto => Self::cuda(device).or_else(|e: Error| {
                tracing::info!(device, reason = %e, "kernel region on the CPU");
                Ok(Arc::new(Self::cpu(device)))
            }),
        }
    }

    /// The registry's lock for CUDA device `device`, made if none is alive.
    fn cuda(device: u32) -> Result<Arc<GpuLock>, Error> {
        let mut locks = CUDA_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
        locks.retain(|(_, lock)| lock.strong_count() > 0);
        if let Some(lock) = locks.iter().find(|(d, _)| *d == device) {
            if let Some(lock) = lock.1.upgrade() {
                return Ok(lock);
            }
        }
        let lock = Arc::new(Self {
            native: cuda::new_lock(device)?,
            backend: Backend::Cuda,
            faults: FaultCounter::default(),
        });
        locks.push((device, Arc::downgrade(&lock)));
        Ok(lock)
    }

    /// The device this lock guards.
    pub fn device(&self) -> u32 {
        ffi::lock_device(&self.native)
    }

    /// Where this lock's kernel region runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether a kernel region on this lock failed with a sticky CUDA error
    /// ([`crate::CudaErrorKind::Sticky`]), injected or real: the device is
    /// unusable for the rest of the process, and every later kernel region
    /// on this lock fails at once with that error.
    pub fn is_lost(&self) -> bool {
        ffi::lock_lost(&self.native)
    }

    /// Injects `plan`'s faults for this lock's device into its kernel
    /// regions, counting them from now ([`crate::FaultPlan`]; an empty plan
    /// turns injection off). For tests of what the layers above do when a
    /// device fails.
    pub fn set_fault_plan(&self, plan: &FaultPlan) {
        self.faults.set(plan, self.device());
    }

    /// Counts a kernel region: the fault it must suffer, if any. A panic is
    /// raised here, with the lock held (so that its release on unwinding is
    /// exercised too); the other kinds are raised by the native layer.
    pub(crate) fn next_fault(&self) -> Option<FaultKind> {
        let (call, kind) = self.faults.next()?;
        if kind == FaultKind::Panic {
            let _held = self.lock();
            panic!(
                "injected fault: a panic in kernel region {call} of device {}",
                self.device()
            );
        }
        Some(kind)
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
            Backend::Cuda => cuda::probe_alloc(&self.lock(), bytes),
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
        if let Err(e) = native(|e| ffi::lock_acquire(&self.native, e)) {
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
            lock: self,
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

impl<'a> GpuLockGuard<'a> {
    /// The lock held.
    pub fn lock(&self) -> &'a GpuLock {
        self.lock
    }
}

impl Drop for GpuLockGuard<'_> {
    fn drop(&mut self) {
        ffi::lock_release(&self.lock.native);
    }
}

impl fmt::Debug for GpuLockGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuLockGuard")
            .field("device", &self.lock.device())
            .finish()
    }
}
