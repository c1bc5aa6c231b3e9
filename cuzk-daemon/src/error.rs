//! The daemon's errors, typed, and how each crosses into gRPC.

use std::path::PathBuf;

use tonic::{Code, Status};

use crate::journal::JournalError;
use crate::keys::KeyError;
use crate::kinds::KindError;

/// What can stop the daemon from starting or running.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// A configuration value that cannot work.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The config file is not valid TOML for the schema.
    #[error("config file {} is invalid", path.display())]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// What toml says, with line and column.
        #[source]
        source: toml::de::Error,
    },
    /// A file or socket operation failed.
    #[error("{what}")]
    Io {
        /// What was being done, naming the file or address.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The job journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The engine could not start.
    #[error("the proving engine could not start")]
    Engine(#[from] cuzk_engine::EngineError),
    /// A key listed in `preload` could not be loaded.
    #[error("preloading {circuit}")]
    Preload {
        /// The circuit id.
        circuit: String,
        /// Why.
        #[source]
        source: Box<KeyError>,
    },
    /// A listed circuit id is not one the daemon knows.
    #[error(transparent)]
    Kind(#[from] KindError),
    /// The gRPC server failed.
    #[error("the gRPC server failed")]
    Transport(#[from] tonic::transport::Error),
}

/// An error and its sources on one line: `outer: inner: innermost`.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut line = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        // Some errors print their source in their own message already.
        let text = s.to_string();
        if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = s.source();
    }
    line
}

/// A gRPC status with `code` whose message is `err` and its causes.
pub(crate) fn status(code: Code, err: &dyn std::error::Error) -> Status {
    Status::new(code, error_chain(err))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the journal")]
    struct Bare(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the journal: {0}")]
    struct Telling(#[source] std::io::Error);

    #[test]
    fn a_cause_is_named_once() {
        let gone = || std::io::Error::other("disk gone");
        let line = "cannot read the journal: disk gone";
        assert_eq!(super::error_chain(&Bare(gone())), line);
        assert_eq!(super::error_chain(&Telling(gone())), line);
    }
}
