//! The bridge between cuzk's Rust layers and its native (C++/CUDA) prover.
//!
//! This crate owns the only `unsafe` and the only `cxx` bridge in cuzk. It
//! exposes five things to the layers above:
//!
//! - [`GpuLock`]: the per-device mutex that guards the kernel region, with
//!   counters of acquisitions, wait time and hold time, and the [`Backend`]
//!   that runs the kernel region under it: the CPU, or (with the `cuda`
//!   feature) the lock's CUDA device, chosen at run time
//!   ([`GpuLock::with_backend`], which hands out the one lock of each CUDA
//!   device); whether a sticky CUDA error lost its device
//!   ([`GpuLock::is_lost`]), and a [`FaultPlan`] to make its kernel regions
//!   fail on purpose;
//! - [`Srs`]: the proving key's point vectors, shared with native code;
//! - [`prove`]: the three-phase Groth16 prover (preamble outside the lock,
//!   kernel region under it, epilogue outside it) over a batch of
//!   [`Assignment`]s;
//! - [`HostVec`]: a fixed-length vector in host memory, page-locked when
//!   the CUDA backend can use it, for synthesis output the prover can copy
//!   to the device without staging; dropped ones go to a pool for reuse;
//! - [`kernels`]: the native MSM and NTT, for tests and benchmarks.
//!
//! Native failures cross the bridge as typed values and come back as
//! [`Error`]: a failed CUDA call with its `cudaError_t` code and its
//! [`CudaErrorKind`] (transient, out of memory, or sticky: the device's
//! context is unusable).
//!
//! ```no_run
//! use supraseal_c2::{monotonic_ns, BackendChoice, GpuLock};
//! // CUDA when built with it and device 0 exists, else the CPU.
//! let lock = GpuLock::with_backend(0, BackendChoice::Auto)?;
//! let before = monotonic_ns();
//! {
//!     let _held = lock.lock();
//! }
//! assert_eq!(lock.stats().acquisitions, 1);
//! assert!(monotonic_ns() >= before);
//! # Ok::<(), supraseal_c2::Error>(())
//! ```

#![deny(missing_docs)]

mod assignment;
mod backend;
mod bridge;
mod clock;
mod cuda;
mod error;
mod fault;
mod host_pool;
mod host_vec;
pub mod kernels;
mod lock;
mod prove;
mod raw;
mod srs;
mod thread;

pub use assignment::{Assignment, Density};
pub use backend::{
    cuda_device_count, Backend, BackendChoice, CudaUnavailable, ParseBackendError, Residency,
};
pub use clock::monotonic_ns;
pub use error::{CudaErrorKind, Error};
pub use fault::{FaultKind, FaultPlan, InjectedFault, ParseFaultError, FAULT_ENV};
pub use host_pool::{
    host_pool_kept_blocks, host_pool_stats, raise_host_pool_limit, reserve_host_blocks,
    set_host_pool_limit, trim_host_pool, HostPoolStats, DEFAULT_HOST_POOL_BYTES,
};
pub use host_vec::{is_host_range_pinned, HostPod, HostVec};
pub use lock::{GpuLock, GpuLockGuard, LockStats};
pub use prove::{prove, PhaseTimings, ProveOutput, RawProof, NATIVE_TRACE_TARGET};
pub use srs::{Srs, SrsParts, SrsPoints};
pub use thread::{current_thread_nice, set_current_thread_nice};
