//! Errors of one partition's pipeline.

use bellpepper_core::SynthesisError;

/// What can go wrong while synthesizing, proving or verifying a partition.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The workload name or size is not one of `shared/workloads.md`.
    #[error("bad workload: {0}")]
    BadWorkload(String),
    /// The circuit could not be synthesized.
    #[error("synthesis failed")]
    Synthesis(#[from] SynthesisError),
    /// A synthesis mode that is not `full`, `compiled`, `checked[:N]`.
    #[error(
        "bad synthesis mode '{0}' (expected full, compiled, checked or checked:N with N >= 1)"
    )]
    BadSynthesisMode(String),
    /// A workload's shape could not be compiled.
    #[error("cannot compile the shape of {workload}")]
    Compile {
        /// The workload.
        workload: String,
        /// Why; shared by every caller that waited for the compilation.
        #[source]
        source: std::sync::Arc<bellperson_lite::CompiledError>,
    },
    /// The compiled path refused the partition or disagreed with full
    /// synthesis.
    #[error("compiled synthesis")]
    Compiled(#[from] bellperson_lite::CompiledError),
    /// The parameters do not belong to this workload.
    #[error("parameters do not match workload {workload}")]
    ParamsMismatch {
        /// The workload the parameters were used for.
        workload: String,
        /// What disagrees.
        #[source]
        source: bellperson_lite::ParamsError,
    },
    /// Parameter generation failed (boxed: a native error is large, and
    /// every `Result` of this crate would carry its size).
    #[error("setup failed")]
    Setup(#[source] Box<bellperson_lite::SetupError>),
    /// The prover failed.
    #[error("proving failed")]
    Prover(#[from] bellperson_lite::ProverError),
    /// The verifier could not run (e.g. a wrong number of public inputs).
    #[error("verification failed to run")]
    Verifier(#[from] bellperson_lite::VerificationError),
    /// A request proof has the wrong length.
    #[error("proof is {got} bytes; {partitions} partitions need {expected}")]
    ProofLength {
        /// Bytes given.
        got: usize,
        /// Bytes expected.
        expected: usize,
        /// Partitions in the request.
        partitions: usize,
    },
    /// A partition's proof bytes do not decode.
    #[error("partition {partition}: malformed proof")]
    MalformedProof {
        /// The partition.
        partition: usize,
        /// Why it does not decode.
        #[source]
        source: bellperson_lite::ProofError,
    },
    /// A circuit source (e.g. a Filecoin request) failed.
    #[error("{circuit}")]
    Source {
        /// The source's circuit key.
        circuit: String,
        /// Its error.
        #[source]
        source: crate::SourceError,
    },
    /// A partition's proof does not verify.
    #[error("partition {partition} (seed {seed}) does not verify")]
    Rejected {
        /// The partition.
        partition: usize,
        /// Its seed.
        seed: u64,
    },
}

impl From<bellperson_lite::SetupError> for PipelineError {
    fn from(error: bellperson_lite::SetupError) -> Self {
        Self::Setup(Box::new(error))
    }
}
