//! Constraint systems: what synthesis records, for the prover and for the
//! parameter generator.
//!
//! The recording logic lives in [`proving`] (the witness side: evaluations,
//! assignments, densities) and [`keypair`] (the shape side: which constraints
//! each variable appears in, with which coefficient). Neither depends on a
//! particular version of the circuit trait: they take variables as [`Var`]
//! and linear combinations as iterators of `(Var, &Scalar)` terms.
//!
//! The trait implementations are thin adapters in their own modules, one per
//! trait version: [`bellpepper_v04`] implements `bellpepper_core` 0.4's
//! `ConstraintSystem`. A second adapter, for bellpepper-core 0.2 /
//! bellperson 0.27's trait, can sit beside it without touching the
//! recorders.

pub(crate) mod bellpepper_v04;
pub(crate) mod evaluations;
pub(crate) mod keypair;
pub(crate) mod proving;

use bellpepper_core::SynthesisError;
use blstrs::Scalar;
use ff::PrimeField;

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
