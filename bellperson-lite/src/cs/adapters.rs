//! Adapters: the `ConstraintSystem` traits of bellpepper-core 0.4 and of
//! bellpepper-core 0.2 (the version bellperson 0.27, and so
//! storage-proofs 19.1, implement) over the recorders.
//!
//! Only translation happens here (variables to [`Var`], linear
//! combinations to term iterators); the recording itself is in
//! [`super::proving`] and the compiled path's recorders. The two trait
//! versions have the same methods and the same field type
//! (`blstrs::Scalar` through ff 0.13), so one macro writes both
//! implementations for every recorder; only the crate path differs.

use blstrs::Scalar;

use super::proving::ProvingAssignment;
use super::Var;
use crate::compiled::{ShapeRecorder, WitnessRecorder};
use bellpepper_core::SynthesisError;

/// A linear combination of either trait version, read term by term.
trait Terms {
    fn terms(&self) -> impl Iterator<Item = (Var, &Scalar)>;
}

/// `Terms` and the variable translation for one bellpepper-core version.
macro_rules! lc_terms {
    ($bp:ident) => {
        impl Terms for $bp::LinearCombination<Scalar> {
            fn terms(&self) -> impl Iterator<Item = (Var, &Scalar)> {
                self.iter().map(|(v, c)| {
                    let var = match v.get_unchecked() {
                        $bp::Index::Input(i) => Var::Input(i),
                        $bp::Index::Aux(i) => Var::Aux(i),
                    };
                    (var, c)
                })
            }
        }
    };
}

lc_terms!(bellpepper_core);
lc_terms!(bellpepper_core_02);

/// What each recorder does with the three calls that differ between them;
/// [`constraint_system!`] turns it into each version's trait.
trait Record {
    fn empty() -> Self;
    fn aux(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError>;
    fn input(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError>;
    fn constraint<L: Terms>(&mut self, sides: impl FnOnce() -> [L; 3]);
}

/// The value recorder: values, and every constraint term by term.
impl Record for ProvingAssignment {
    fn empty() -> Self {
        ProvingAssignment::new()
    }
    fn aux(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError> {
        Ok(self.push_aux(value()?))
    }
    fn input(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError> {
        Ok(self.push_input(value()?))
    }
    fn constraint<L: Terms>(&mut self, sides: impl FnOnce() -> [L; 3]) {
        let [a, b, c] = sides();
        self.push_constraint(a.terms(), b.terms(), c.terms());
    }
}

/// The shape recorders (for parameters, and for compiled synthesis): the
/// allocation closures are never called, constraints recorded term by term.
macro_rules! shape_record {
    ($recorder:ty) => {
        impl Record for $recorder {
            fn empty() -> Self {
                <$recorder>::new()
            }
            fn aux(
                &mut self,
                _: impl FnOnce() -> Result<Scalar, SynthesisError>,
            ) -> Result<usize, SynthesisError> {
                Ok(self.push_aux())
            }
            fn input(
                &mut self,
                _: impl FnOnce() -> Result<Scalar, SynthesisError>,
            ) -> Result<usize, SynthesisError> {
                Ok(self.push_input())
            }
            fn constraint<L: Terms>(&mut self, sides: impl FnOnce() -> [L; 3]) {
                let [a, b, c] = sides();
                self.push_constraint(a.terms(), b.terms(), c.terms());
            }
        }
    };
}

shape_record!(ShapeRecorder);

/// The witness recorder never builds the linear combinations: building and
/// evaluating them is the work the compiled path saves.
impl Record for WitnessRecorder {
    fn empty() -> Self {
        WitnessRecorder::with_capacity(1, 0)
    }
    fn aux(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError> {
        push_value(&mut self.aux, value)
    }
    fn input(
        &mut self,
        value: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<usize, SynthesisError> {
        push_value(&mut self.input, value)
    }
    fn constraint<L: Terms>(&mut self, _: impl FnOnce() -> [L; 3]) {
        self.constraints += 1;
    }
}

/// Appends `value()` to `values` and returns its index.
fn push_value(
    values: &mut Vec<Scalar>,
    value: impl FnOnce() -> Result<Scalar, SynthesisError>,
) -> Result<usize, SynthesisError> {
    values.push(value()?);
    Ok(values.len() - 1)
}

/// The error of bellpepper-core 0.2 as bellpepper-core 0.4's (the two enums
/// have the same variants).
pub(crate) fn error_from_v02(e: bellpepper_core_02::SynthesisError) -> SynthesisError {
    use bellpepper_core_02::SynthesisError as E;
    match e {
        E::AssignmentMissing => SynthesisError::AssignmentMissing,
        E::DivisionByZero => SynthesisError::DivisionByZero,
        E::Unsatisfiable => SynthesisError::Unsatisfiable,
        E::PolynomialDegreeTooLarge => SynthesisError::PolynomialDegreeTooLarge,
        E::UnexpectedIdentity => SynthesisError::UnexpectedIdentity,
        E::IoError(e) => SynthesisError::IoError(e),
        E::MalformedVerifyingKey => SynthesisError::MalformedVerifyingKey,
        E::UnconstrainedVariable => SynthesisError::UnconstrainedVariable,
        E::MalformedProofs(s) => SynthesisError::MalformedProofs(s),
        E::MalformedSrs => SynthesisError::MalformedSrs,
        E::NonPowerOfTwo => SynthesisError::NonPowerOfTwo,
        E::IncompatibleLengthVector(s) => SynthesisError::IncompatibleLengthVector(s),
        E::InvalidPairing => SynthesisError::InvalidPairing,
    }
}

/// The opposite of [`error_from_v02`], for errors raised inside a
/// bellpepper-core 0.2 circuit's allocation closures.
fn error_to_v02(e: SynthesisError) -> bellpepper_core_02::SynthesisError {
    use bellpepper_core_02::SynthesisError as E;
    match e {
        SynthesisError::AssignmentMissing => E::AssignmentMissing,
        SynthesisError::DivisionByZero => E::DivisionByZero,
        SynthesisError::Unsatisfiable => E::Unsatisfiable,
        SynthesisError::PolynomialDegreeTooLarge => E::PolynomialDegreeTooLarge,
        SynthesisError::UnexpectedIdentity => E::UnexpectedIdentity,
        SynthesisError::IoError(e) => E::IoError(e),
        SynthesisError::MalformedVerifyingKey => E::MalformedVerifyingKey,
        SynthesisError::UnconstrainedVariable => E::UnconstrainedVariable,
        SynthesisError::MalformedProofs(s) => E::MalformedProofs(s),
        SynthesisError::MalformedSrs => E::MalformedSrs,
        SynthesisError::NonPowerOfTwo => E::NonPowerOfTwo,
        SynthesisError::IncompatibleLengthVector(s) => E::IncompatibleLengthVector(s),
        SynthesisError::InvalidPairing => E::InvalidPairing,
    }
}

/// One version's `ConstraintSystem` for a [`Record`]er (a blanket impl over
/// the trait would break the orphan rule, hence a macro). `$into` turns the
/// recorder's error into that version's; `$from` the other way.
macro_rules! constraint_system {
    ($bp:ident, $recorder:ty, $into:expr, $from:expr) => {
        impl $bp::ConstraintSystem<Scalar> for $recorder {
            type Root = Self;

            fn new() -> Self {
                <$recorder as Record>::empty()
            }

            fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<$bp::Variable, $bp::SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, $bp::SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                let index = Record::aux(self, || f().map_err($from)).map_err($into)?;
                Ok($bp::Variable::new_unchecked($bp::Index::Aux(index)))
            }

            fn alloc_input<F, A, AR>(
                &mut self,
                _: A,
                f: F,
            ) -> Result<$bp::Variable, $bp::SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, $bp::SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                let index = Record::input(self, || f().map_err($from)).map_err($into)?;
                Ok($bp::Variable::new_unchecked($bp::Index::Input(index)))
            }

            fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
            where
                A: FnOnce() -> AR,
                AR: Into<String>,
                LA: FnOnce($bp::LinearCombination<Scalar>) -> $bp::LinearCombination<Scalar>,
                LB: FnOnce($bp::LinearCombination<Scalar>) -> $bp::LinearCombination<Scalar>,
                LC: FnOnce($bp::LinearCombination<Scalar>) -> $bp::LinearCombination<Scalar>,
            {
                Record::constraint(self, || {
                    let zero = $bp::LinearCombination::zero;
                    [a(zero()), b(zero()), c(zero())]
                });
            }

            fn push_namespace<NR, N>(&mut self, _: N)
            where
                NR: Into<String>,
                N: FnOnce() -> NR,
            {
            }

            fn pop_namespace(&mut self) {}

            fn get_root(&mut self) -> &mut Self::Root {
                self
            }
        }
    };
}

/// Both versions' traits for one recorder. The recorders are not
/// extensible (bellpepper-core 0.2's default): circuits that synthesize in
/// parallel chunks when they may (storage-proofs' `FallbackPoStCircuit`)
/// then synthesize sequentially, in the same order, with no chunk inputs.
macro_rules! both_versions {
    ($($recorder:ty),*) => {$(
        constraint_system!(bellpepper_core, $recorder, |e| e, |e| e);
        constraint_system!(bellpepper_core_02, $recorder, error_to_v02, error_from_v02);
    )*};
}

both_versions!(ProvingAssignment, ShapeRecorder, WitnessRecorder);
