//! Errors of the native prover, typed.

/// What can go wrong in the native layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The inputs do not fit each other or the SRS (a length or count that
    /// disagrees). `what` names the quantity.
    #[error("{what}: expected {expected}, got {got}")]
    Shape {
        /// The quantity that disagrees, e.g. "aux assignment vs SRS l".
        what: &'static str,
        /// What the SRS or the other inputs imply.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The native code raised an exception (named by its message).
    #[error("native prover: {0}")]
    Native(#[from] cxx::Exception),
}

impl Error {
    /// `Ok` when `expected == got`, else [`Error::Shape`] naming `what`.
    pub(crate) fn check_shape(
        what: &'static str,
        expected: usize,
        got: usize,
    ) -> Result<(), Error> {
        if expected == got {
            Ok(())
        } else {
            Err(Error::Shape {
                what,
                expected,
                got,
            })
        }
    }
}
