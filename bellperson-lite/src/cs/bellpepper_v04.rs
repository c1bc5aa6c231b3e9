//! Adapter: `bellpepper_core` 0.4's `ConstraintSystem` over the recorders.
//!
//! Only translation happens here (variables to [`Var`], linear
//! combinations to term iterators); the recording itself is in
//! [`super::proving`] and [`super::keypair`]. An adapter for another trait
//! version (bellpepper-core 0.2 / bellperson 0.27) belongs in a sibling
//! module of the same shape.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;

use super::keypair::KeypairAssembly;
use super::proving::ProvingAssignment;
use super::Var;
use crate::compiled::{ShapeRecorder, WitnessRecorder};

fn var(v: Variable) -> Var {
    match v.get_unchecked() {
        Index::Input(i) => Var::Input(i),
        Index::Aux(i) => Var::Aux(i),
    }
}

fn terms(lc: &LinearCombination<Scalar>) -> impl Iterator<Item = (Var, &Scalar)> + '_ {
    lc.iter().map(|(v, c)| (var(v), c))
}

/// Builds the three sides of a constraint from the circuit's closures.
fn sides<LA, LB, LC>(a: LA, b: LB, c: LC) -> [LinearCombination<Scalar>; 3]
where
    LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
{
    [
        a(LinearCombination::zero()),
        b(LinearCombination::zero()),
        c(LinearCombination::zero()),
    ]
}

/// What each recorder does with the three calls that differ between them;
/// [`constraint_system!`] turns it into bellpepper-core's trait.
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
    fn constraint(&mut self, sides: impl FnOnce() -> [LinearCombination<Scalar>; 3]);
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
    fn constraint(&mut self, sides: impl FnOnce() -> [LinearCombination<Scalar>; 3]) {
        let [a, b, c] = sides();
        self.push_constraint(terms(&a), terms(&b), terms(&c));
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
            fn constraint(&mut self, sides: impl FnOnce() -> [LinearCombination<Scalar>; 3]) {
                let [a, b, c] = sides();
                self.push_constraint(terms(&a), terms(&b), terms(&c));
            }
        }
    };
}

shape_record!(KeypairAssembly);
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
    fn constraint(&mut self, _: impl FnOnce() -> [LinearCombination<Scalar>; 3]) {
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

/// bellpepper-core 0.4's `ConstraintSystem` for a [`Record`]er (a blanket
/// impl over the trait would break the orphan rule, hence a macro).
macro_rules! constraint_system {
    ($recorder:ty) => {
        impl ConstraintSystem<Scalar> for $recorder {
            type Root = Self;

            fn new() -> Self {
                <$recorder as Record>::empty()
            }

            fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                Ok(Variable::new_unchecked(Index::Aux(Record::aux(self, f)?)))
            }

            fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                Ok(Variable::new_unchecked(Index::Input(Record::input(
                    self, f,
                )?)))
            }

            fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
            where
                A: FnOnce() -> AR,
                AR: Into<String>,
                LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
                LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
                LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            {
                Record::constraint(self, || sides(a, b, c));
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

constraint_system!(ProvingAssignment);
constraint_system!(KeypairAssembly);
constraint_system!(ShapeRecorder);
constraint_system!(WitnessRecorder);
