//! The engine's errors, typed.

use cuzk_pipeline::PipelineError;

use crate::ConfigError;

/// What can go wrong building the engine or proving a request.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The [`crate::EngineConfig`] cannot work.
    #[error("invalid engine configuration")]
    Config(#[from] ConfigError),
    /// A worker thread could not be started.
    #[error("could not start worker thread {name}")]
    Spawn {
        /// The thread's name.
        name: String,
        /// Why the OS refused.
        #[source]
        source: std::io::Error,
    },
    /// The parameters' points could not be loaded into the prover.
    #[error("could not load the proving key into the prover")]
    Key(#[from] supraseal_c2::Error),
    /// A device's lock could not be made for the configured backend (an
    /// explicit CUDA choice on a build or machine without it).
    #[error("device {device}")]
    Device {
        /// The device ordinal.
        device: u32,
        /// Why.
        #[source]
        source: supraseal_c2::Error,
    },
    /// A request with no partitions was submitted.
    #[error("a proof request needs at least one partition")]
    EmptyRequest,
    /// Pre-synthesized partitions were submitted, but not as many as the
    /// request has.
    #[error("{got} pre-synthesized partitions given for a request of {expected}")]
    SynthesizedCount {
        /// The request's partition count.
        expected: usize,
        /// Partitions given.
        got: usize,
    },
    /// A pre-synthesized partition is not the request's partition at its
    /// position (another workload, or another seed).
    #[error("pre-synthesized partition {partition} does not belong to this request")]
    SynthesizedMismatch {
        /// Its position.
        partition: usize,
    },
    /// Synthesizing or proving a partition failed; the job failed with it.
    #[error("partition {partition} failed")]
    Partition {
        /// The partition's index in its request.
        partition: usize,
        /// What failed.
        #[source]
        source: PipelineError,
    },
    /// [`crate::Engine::prepare`] could not compile the workload's shape.
    #[error("preparing for {workload} failed")]
    Prepare {
        /// The workload.
        workload: String,
        /// What failed.
        #[source]
        source: PipelineError,
    },
    /// A worker panicked on a partition; the job failed, the worker lives.
    #[error("a worker panicked on partition {partition}: {message}")]
    Panicked {
        /// The partition's index in its request.
        partition: usize,
        /// The panic's message.
        message: String,
    },
    /// Self-verification rejected the request proof (its source,
    /// [`PipelineError::Rejected`], names the first partition that does not
    /// verify) or could not run.
    #[error("the request proof failed self-verification")]
    Verify(#[source] PipelineError),
    /// Every device was retired after a sticky CUDA error, so no partition
    /// can be proven; the error is the last retirement's.
    #[error("no device left to prove on: device {device} was retired")]
    NoDevice {
        /// The device retired last.
        device: u32,
        /// The sticky error that retired it.
        #[source]
        source: supraseal_c2::Error,
    },
    /// [`crate::JobHandle::cancel`] was called before the job finished.
    #[error("the job was cancelled")]
    Cancelled,
    /// The engine was dropped before the job finished.
    #[error("the engine shut down before the job finished")]
    Shutdown,
}
