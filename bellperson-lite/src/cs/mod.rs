//! Constraint systems: what synthesis records, for the prover and for the
//! parameter generator.
//!
//! The recording logic lives in [`proving`] (the witness side: evaluations,
//! assignments, densities) and in the compiled path's recorders
//! (`crate::compiled`: the shape as sparse matrices, which the parameter
//! generator also reads, and the witness alone). None depends on a
//! particular version of the circuit trait: they take variables as [`Var`]
//! and linear combinations as iterators of `(Var, &Scalar)` terms.
//!
//! The trait implementations are thin adapters ([`adapters`]): every
//! recorder implements both bellpepper-core 0.4's `ConstraintSystem` and
//! bellpepper-core 0.2's (bellperson 0.27's, which storage-proofs' circuits
//! are written against). [`AnyCircuit`] lets every entry point take a
//! circuit of either version.

pub(crate) mod adapters;
pub(crate) mod evaluations;
pub(crate) mod proving;

use bellpepper_core::SynthesisError;
use blstrs::Scalar;
use ff::PrimeField;

/// A circuit that synthesizes into cuzk's recorders: every
/// `bellpepper_core` 0.4 [`Circuit`](bellpepper_core::Circuit), and every
/// bellpepper-core 0.2 circuit (bellperson 0.27's trait, e.g.
/// storage-proofs' Filecoin circuits) wrapped in [`CircuitV02`].
pub trait AnyCircuit {
    /// Synthesizes the circuit into `cs`.
    fn synthesize_into<CS: Recorder>(self, cs: &mut CS) -> Result<(), SynthesisError>;
}

/// A cuzk recorder: a constraint system of both trait versions. Sealed.
pub trait Recorder:
    bellpepper_core::ConstraintSystem<Scalar>
    + bellpepper_core_02::ConstraintSystem<Scalar>
    + sealed::Sealed
{
}

mod sealed {
    pub trait Sealed {}
}

impl<T> Recorder for T where
    T: bellpepper_core::ConstraintSystem<Scalar>
        + bellpepper_core_02::ConstraintSystem<Scalar>
        + sealed::Sealed
{
}

impl sealed::Sealed for proving::ProvingAssignment {}
impl sealed::Sealed for crate::compiled::ShapeRecorder {}
impl sealed::Sealed for crate::compiled::WitnessRecorder {}

impl<C: bellpepper_core::Circuit<Scalar>> AnyCircuit for C {
    fn synthesize_into<CS: Recorder>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        bellpepper_core::Circuit::synthesize(self, cs)
    }
}

/// A bellpepper-core 0.2 circuit (bellperson 0.27's `Circuit`), for the
/// entry points that take an [`AnyCircuit`].
#[derive(Clone, Debug)]
pub struct CircuitV02<C>(pub C);

impl<C: bellpepper_core_02::Circuit<Scalar>> AnyCircuit for CircuitV02<C> {
    fn synthesize_into<CS: Recorder>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        bellpepper_core_02::Circuit::synthesize(self.0, cs).map_err(adapters::error_from_v02)
    }
}

/// A variable of a constraint system, independent of the trait version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Var {
    /// Public input `i` (`ONE` is input 0).
    Input(usize),
    /// Private (auxiliary) variable `i`.
    Aux(usize),
}

/// The error a recorder reports once synthesis is over when a constraint
/// named a variable it never allocated (a variable of another system).
pub(crate) fn foreign_variable() -> SynthesisError {
    SynthesisError::AssignmentMissing
}

/// The evaluation domain for `num_constraints` constraints (input
/// constraints included): the least power of two at least that large.
///
/// Fails like bellperson when the domain would need 2^32 points or more.
pub fn domain_size(num_constraints: usize) -> Result<usize, SynthesisError> {
    match num_constraints.max(1).checked_next_power_of_two() {
        Some(n) if n.trailing_zeros() < Scalar::S => Ok(n),
        _ => Err(SynthesisError::PolynomialDegreeTooLarge),
    }
}
