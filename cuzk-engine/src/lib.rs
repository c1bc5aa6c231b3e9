//! The multi-worker proving engine of cuzk.
//!
//! An [`Engine`] proves [`ProofRequest`]s: each request has `P` partitions,
//! each partition is synthesized on the CPU and then proven by the native
//! prover under its device's [`supraseal_c2::GpuLock`]. Two pools of threads
//! do the work:
//!
//! - **partition workers** pop partitions in order of (priority, job age,
//!   partition index), synthesize them (the witness on their own thread,
//!   the matrix products on the engine's synthesis pool, all at nice
//!   `synthesis_nice`) and push them into a bounded queue of synthesized
//!   partitions (so memory stays bounded when synthesis runs ahead of the
//!   GPU);
//! - **GPU workers**, `gpu_workers_per_device` per device, pop from that
//!   queue in the same order and call `gpu_prove` with their device's lock.
//!
//! [`Engine::submit`] returns a [`JobHandle`] to [`JobHandle::wait`] on or
//! [`JobHandle::cancel`]; [`Engine::metrics`] derives lock occupancy, lock
//! gaps and stage medians from every recorded lock hold.
//!
//! ```
//! use std::sync::Arc;
//! use cuzk_engine::{Engine, EngineConfig, ProofRequest, ProvingKey};
//! use cuzk_pipeline::{setup, Workload};
//!
//! let workload = Workload::new("mul-chain", 64)?;
//! let key = Arc::new(ProvingKey::new(&setup(workload)?)?);
//! let config = EngineConfig { partition_workers: 2, ..EngineConfig::default() };
//! let engine = Engine::new(config)?;
//! engine.prepare(workload)?; // optional: compile the shape, pin memory now
//!
//! let proof = engine.submit(ProofRequest::new(workload, key, 7, 3)).wait()?;
//! assert_eq!(proof.proofs.len(), 3);
//! assert!(proof.verified);
//! assert_eq!(engine.metrics().lock_holds().len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The lock protocol
//!
//! The engine owns one lock per device and lends it, by reference, to that
//! device's GPU workers; nothing else takes it. A GPU worker proves one
//! partition at a time in three phases: the preamble (CPU work, lock not
//! held), the kernel region (lock held) and the epilogue (CPU work, lock not
//! held). The prover takes the lock only around the kernel region, so with
//! two workers on a device one worker's preamble or epilogue runs while the
//! other holds the lock, and the device never waits for CPU work that could
//! have been done beforehand. The engine's own mutexes (queues, jobs, the
//! metrics log) are never held while a device lock is taken or held, and at
//! most one of them is held at a time, so no lock order can deadlock. The
//! prover reports when it took and released the lock; the engine records
//! every hold, which is what [`metrics`] computes occupancy and gaps from.
//! A panic while the lock is held unwinds through its guard, which releases
//! it.
//!
//! # The shutdown protocol
//!
//! Dropping the engine fails fast rather than draining: it closes both
//! queues, fails every job that still had a partition waiting in either of
//! them with [`EngineError::Shutdown`] (dropping those partitions), and then
//! joins every thread. A worker in the middle of a step finishes that step
//! (native code cannot be interrupted): a partition worker then finds the
//! queue closed and fails its job with `Shutdown`; a GPU worker stores its
//! proof, which may complete its job. Either way every job submitted has an
//! outcome when `drop` returns, so no [`JobHandle::wait`] hangs. To have all
//! submitted work finished instead, wait on the handles before dropping the
//! engine.
//!
//! # Failures
//!
//! A partition that fails (parameters of the wrong shape, a native error, a
//! panic in a worker) fails its job with that error and drops the job's
//! other queued partitions; the worker, the other jobs and the lock carry on.
//!
//! Device faults are the exception. A sticky CUDA error retires its device
//! (its workers take no more partitions; [`Engine::devices`] says why) and
//! the partition is retried on the devices left; with none left, its job
//! fails with the error and later jobs with [`EngineError::NoDevice`], and
//! the engine keeps answering. A transient CUDA error, or device memory
//! running out, sends the partition back to the queue up to
//! [`EngineConfig::partition_retries`] times. [`EngineConfig::inject_faults`]
//! (or `CUZK_FAULT`) makes chosen kernel regions fail, to test all this.
//!
//! # Verification
//!
//! By default ([`EngineConfig::verify`]) [`JobHandle::wait`] batch-verifies
//! the request proof against the public inputs its verifier derives (a
//! workload's from its seeds, a circuit source's from the source) before
//! returning it, as filecoin-proofs does after C2; a proof that fails fails
//! the job with [`EngineError::Verify`] naming the first partition that
//! does not verify. [`RequestProof::verified`] says whether it was checked.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod devices;
mod engine;
mod error;
pub mod host;
mod job;
pub mod metrics;
mod queue;
mod request;
mod worker;

#[doc(hidden)]
pub use config::Fault;
pub use config::{
    BackendChoice, ConfigError, EngineConfig, EngineSettings, FaultPlan, SynthesisMode,
    DEFAULT_PARTITION_RETRIES, DEFAULT_SYNTHESIS_NICE,
};
pub use cuzk_pipeline::{Partition, Workload};
pub use devices::{DeviceStatus, Retirement};
pub use engine::Engine;
pub use error::EngineError;
pub use job::{Canceller, JobHandle};
pub use metrics::MetricsSnapshot;
pub use request::{PartitionRecord, ProofRequest, ProvingKey, RequestCircuits, RequestProof};
