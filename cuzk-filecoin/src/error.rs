//! Why a Filecoin proof could not be made or checked.

use std::path::PathBuf;

/// What went wrong with a Filecoin proof request.
#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    /// The input (C1 output, vanilla proof, proof bytes) is malformed.
    #[error("bad {what}: {reason}")]
    BadInput {
        /// Which input ("C1 output", "vanilla proof 2", ...).
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The inputs parse but do not prove what they claim (a tampered
    /// vanilla proof, a C1 output for another sector size).
    #[error("{what} does not verify for {kind} at {size}")]
    InvalidVanilla {
        /// Which input.
        what: String,
        /// The proof kind.
        kind: crate::ProofKind,
        /// The sector size the request names.
        size: crate::SectorSize,
    },
    /// A name that is not one of the supported ones.
    #[error("unknown {what} '{name}' (expected one of {expected})")]
    Unknown {
        /// "proof kind", "sector size", "registered proof".
        what: &'static str,
        /// The name given.
        name: String,
        /// The accepted names.
        expected: String,
    },
    /// A registered proof that cuzk does not prove (a synthetic or
    /// non-interactive PoRep, a V1 seal proof, a V1 WindowPoSt).
    #[error("{proof} is not supported: cuzk proves {instead}")]
    Unsupported {
        /// The registered proof asked for (name and number).
        proof: String,
        /// The one cuzk proves for that kind and size.
        instead: String,
    },
    /// A parameter file that should be there is not. The message names the
    /// command that makes test parameters for the circuit.
    #[error(
        "missing parameter file {} (the production file of that name, or test parameters \
         from `cuzk setup --kind {} --sector-size {} --param-dir {}`)",
        path.display(),
        circuit.kind,
        circuit.size,
        path.parent().unwrap_or(path).display()
    )]
    MissingParams {
        /// The path looked for.
        path: PathBuf,
        /// The circuit it is for.
        circuit: crate::CircuitId,
    },
    /// The SnarkPack SRS (`v28-fil-inner-product-v1.srs`), which NI-PoRep
    /// and [`crate::aggregate`] aggregate with, is not in the directory
    /// filecoin-proofs reads.
    #[error(
        "missing SnarkPack SRS file {} (SnarkPack aggregation reads it: NI-PoRep's proofs and \
         aggregates of several sectors' seal proofs; the production file of that name, fetched \
         with the parameters, or a test one from \
         `cuzk setup --kind porep --sector-size ... --param-dir {}`)",
        path.display(),
        path.parent().unwrap_or(path).display()
    )]
    MissingSrs {
        /// The path looked for.
        path: PathBuf,
    },
    /// A setup's files would not fit in the parameter directory (checked
    /// before the long work).
    #[error(
        "not enough room in {} for the parameters of {circuit}: its files take {} and {} \
         is free (free some space, or give another --param-dir)",
        dir.display(),
        bytesize::ByteSize(*need),
        bytesize::ByteSize(*available)
    )]
    NoRoom {
        /// The parameter directory.
        dir: PathBuf,
        /// The circuit being set up.
        circuit: crate::CircuitId,
        /// Bytes the files take.
        need: u64,
        /// Bytes free there.
        available: u64,
    },
    /// Reading or writing a parameter file failed (the error names the
    /// file).
    #[error(transparent)]
    Params(#[from] bellperson_lite::ParamsError),
    /// An I/O error on a named file.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// storage-proofs / filecoin-proofs refused (circuit construction,
    /// public inputs, verification).
    #[error("filecoin-proofs: {0:#}")]
    Upstream(anyhow::Error),
    /// Synthesis of a partition failed.
    #[error("synthesis of partition {partition} failed")]
    Synthesis {
        /// The partition.
        partition: usize,
        /// The cause.
        #[source]
        source: bellperson_lite::CompiledError,
    },
    /// A partition's native witness program failed (inputs it cannot
    /// prove, or a witness that does not fit the circuit's shape).
    #[error("native witness of partition {partition} failed")]
    NativeWitness {
        /// The partition.
        partition: usize,
        /// The cause.
        #[source]
        source: crate::native::NativeError,
    },
    /// Parameter generation failed.
    #[error("parameter generation failed")]
    Setup(#[source] Box<bellperson_lite::SetupError>),
    /// The prover failed.
    #[error("proving failed")]
    Prover(#[from] bellperson_lite::ProverError),
}

impl From<anyhow::Error> for FilecoinError {
    fn from(e: anyhow::Error) -> Self {
        FilecoinError::Upstream(e)
    }
}

/// A `BadInput` error.
pub(crate) fn bad(what: impl Into<String>, reason: impl ToString) -> FilecoinError {
    FilecoinError::BadInput {
        what: what.into(),
        reason: reason.to_string(),
    }
}

/// Runs storage-proofs' (and filecoin-proofs') check of `what`, an input
/// from outside, turning a panic in it into a `BadInput` error. Those
/// checks panic on some malformed inputs instead of rejecting them (found
/// by fuzzing, docs/fuzzing.md): a Merkle path element whose index is past
/// its hashes, a Poseidon domain element that is not a canonical field
/// element, a WindowPoSt sector proof with no challenges.
pub(crate) fn unless_panics<T>(what: &str, check: impl FnOnce() -> T) -> Result<T, FilecoinError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).map_err(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        bad(
            what,
            format!("malformed: storage-proofs' check failed with {message}"),
        )
    })
}
