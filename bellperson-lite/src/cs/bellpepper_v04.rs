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

impl ConstraintSystem<Scalar> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        ProvingAssignment::new()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.push_aux(f()?);
        Ok(Variable::new_unchecked(Index::Aux(i)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.push_input(f()?);
        Ok(Variable::new_unchecked(Index::Input(i)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let [a, b, c] = sides(a, b, c);
        self.push_constraint(terms(&a), terms(&b), terms(&c));
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

/// The shape recorders (for parameters, and for compiled synthesis) share
/// one adapter: allocation closures are never called, constraints recorded
/// term by term.
macro_rules! shape_constraint_system {
    ($recorder:ty) => {
        impl ConstraintSystem<Scalar> for $recorder {
            type Root = Self;

            fn new() -> Self {
                <$recorder>::new()
            }

            fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                Ok(Variable::new_unchecked(Index::Aux(self.push_aux())))
            }

            fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
            where
                F: FnOnce() -> Result<Scalar, SynthesisError>,
                A: FnOnce() -> AR,
                AR: Into<String>,
            {
                Ok(Variable::new_unchecked(Index::Input(self.push_input())))
            }

            fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
            where
                A: FnOnce() -> AR,
                AR: Into<String>,
                LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
                LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
                LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            {
                let [a, b, c] = sides(a, b, c);
                self.push_constraint(terms(&a), terms(&b), terms(&c));
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

shape_constraint_system!(KeypairAssembly);
shape_constraint_system!(ShapeRecorder);

/// The witness recorder never calls the `enforce` closures: building and
/// evaluating linear combinations is the work the compiled path saves.
impl ConstraintSystem<Scalar> for WitnessRecorder {
    type Root = Self;

    fn new() -> Self {
        WitnessRecorder::with_capacity(1, 0)
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
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
