//! The bridge between cuzk's Rust layers and its native (C++/CUDA) prover.
//!
//! This crate owns the only `unsafe` and the only `cxx` bridge in cuzk. It
//! exposes four things to the layers above:
//!
//! - [`GpuLock`]: the per-device mutex that guards the kernel region, with
//!   counters of acquisitions, wait time and hold time;
//! - [`Srs`]: the proving key's point vectors, held by native code;
//! - [`prove`]: the three-phase Groth16 prover (preamble outside the lock,
//!   kernel region under it, epilogue outside it) over a batch of
//!   [`Assignment`]s;
//! - [`kernels`]: the native MSM and NTT, for tests and benchmarks.
//!
//! ```no_run
//! use supraseal_c2::{GpuLock, monotonic_ns};
//! let lock = GpuLock::new(0);
//! let before = monotonic_ns();
//! {
//!     let _held = lock.lock();
//! }
//! assert_eq!(lock.stats().acquisitions, 1);
//! assert!(monotonic_ns() >= before);
//! ```

#![deny(missing_docs)]

mod assignment;
mod bridge;
mod clock;
mod error;
pub mod kernels;
mod lock;
mod prove;
mod raw;
mod srs;

pub use assignment::{Assignment, Density};
pub use clock::monotonic_ns;
pub use error::Error;
pub use lock::{GpuLock, GpuLockGuard, LockStats};
pub use prove::{prove, PhaseTimings, ProveOutput, RawProof};
pub use srs::{Srs, SrsParts};
