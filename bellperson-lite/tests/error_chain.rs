//! An error prints its own words and leaves its causes to `source()`, so
//! that a chain printer (`outer: cause: cause`) shows each cause once.

use std::error::Error;
use std::io;

use bellpepper_core::SynthesisError;
use bellperson_lite::{ParamsError, ProofError, ProverError};
use supraseal_c2::CudaUnavailable;

/// `error: cause: cause`, as the `cuzk` binary prints it.
fn chain(error: &dyn Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line = format!("{line}: {cause}");
        source = cause.source();
    }
    line
}

fn assert_each_cause_once(error: &dyn Error) {
    let mut current = error;
    while let Some(cause) = current.source() {
        let (outer, inner) = (current.to_string(), cause.to_string());
        assert!(
            !outer.contains(&inner),
            "'{outer}' repeats its cause '{inner}'"
        );
        current = cause;
    }
}

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no such file")
}

#[test]
fn no_error_repeats_its_cause() {
    let file = ParamsError::File {
        path: "x.params".into(),
        source: Box::new(ParamsError::Io(not_found())),
    };
    assert_each_cause_once(&file);
    assert_eq!(chain(&file), "parameters file x.params: no such file");

    let proof = ProofError::Io(not_found());
    assert_each_cause_once(&proof);
    assert_eq!(chain(&proof), "no such file");

    let native = ProverError::Native(supraseal_c2::Error::CudaUnavailable(
        CudaUnavailable::NotBuilt,
    ));
    assert_each_cause_once(&native);
    assert_eq!(
        chain(&native),
        "CUDA backend unavailable: supraseal-c2 was built without the `cuda` feature"
    );

    let synthesis = ProverError::Synthesis(SynthesisError::Unsatisfiable);
    assert_each_cause_once(&synthesis);
    let circuit = ParamsError::Circuit(SynthesisError::PolynomialDegreeTooLarge);
    assert_each_cause_once(&circuit);
}
