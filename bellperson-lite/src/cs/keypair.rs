//! The shape recorder used by the parameter generator: for every variable,
//! the constraints it appears in and with which coefficient, per matrix.

use bellpepper_core::SynthesisError;

use crate::AnyCircuit;
use blstrs::Scalar;
use ff::Field;

use super::{foreign_variable, Var};

/// `(coefficient, constraint)` pairs of one variable in one matrix.
pub(crate) type Column = Vec<(Scalar, usize)>;

/// The columns of A, B and C for one kind of variable (inputs or aux).
#[derive(Clone, Debug, Default)]
pub(crate) struct Columns {
    /// A's column per variable.
    pub(crate) a: Vec<Column>,
    /// B's column per variable.
    pub(crate) b: Vec<Column>,
    /// C's column per variable.
    pub(crate) c: Vec<Column>,
}

impl Columns {
    fn push(&mut self) -> usize {
        self.a.push(Vec::new());
        self.b.push(Vec::new());
        self.c.push(Vec::new());
        self.a.len() - 1
    }

    /// Variables recorded.
    pub(crate) fn len(&self) -> usize {
        self.a.len()
    }
}

/// The R1CS matrices of a circuit, stored by column. Values are never
/// computed: allocation closures are not called.
#[derive(Clone, Debug)]
pub(crate) struct KeypairAssembly {
    /// Columns of the public inputs (`ONE` is input 0).
    pub(crate) inputs: Columns,
    /// Columns of the private variables.
    pub(crate) aux: Columns,
    /// Constraints recorded (input constraints included once sealed).
    pub(crate) num_constraints: usize,
    foreign: bool,
}

impl KeypairAssembly {
    /// An empty system holding only `ONE`.
    pub(crate) fn new() -> Self {
        let mut cs = KeypairAssembly {
            inputs: Columns::default(),
            aux: Columns::default(),
            num_constraints: 0,
            foreign: false,
        };
        cs.push_input();
        cs
    }

    /// Synthesizes `circuit`'s shape and appends the input constraints
    /// (`input_i * 0 = 0`), exactly as the prover does.
    pub(crate) fn synthesize<C: AnyCircuit>(circuit: C) -> Result<Self, SynthesisError> {
        let mut cs = Self::new();
        circuit.synthesize_into(&mut cs)?;
        if cs.foreign {
            return Err(foreign_variable());
        }
        for i in 0..cs.inputs.len() {
            cs.inputs.a[i].push((Scalar::ONE, cs.num_constraints));
            cs.num_constraints += 1;
        }
        Ok(cs)
    }

    /// Records a new public input and returns its index.
    pub(crate) fn push_input(&mut self) -> usize {
        self.inputs.push()
    }

    /// Records a new private variable and returns its index.
    pub(crate) fn push_aux(&mut self) -> usize {
        self.aux.push()
    }

    /// Records the constraint `a * b = c`, each side given by its terms.
    pub(crate) fn push_constraint<'t, A, B, C>(&mut self, a: A, b: B, c: C)
    where
        A: IntoIterator<Item = (Var, &'t Scalar)>,
        B: IntoIterator<Item = (Var, &'t Scalar)>,
        C: IntoIterator<Item = (Var, &'t Scalar)>,
    {
        let row = self.num_constraints;
        let (inputs, aux) = (&mut self.inputs, &mut self.aux);
        let mut ok = true;
        record(a, row, &mut inputs.a, &mut aux.a, &mut ok);
        record(b, row, &mut inputs.b, &mut aux.b, &mut ok);
        record(c, row, &mut inputs.c, &mut aux.c, &mut ok);
        self.foreign |= !ok;
        self.num_constraints += 1;
    }
}

/// Appends `(coefficient, row)` to the column of every term's variable,
/// skipping zero coefficients. Clears `ok` on an unknown variable.
fn record<'t>(
    terms: impl IntoIterator<Item = (Var, &'t Scalar)>,
    row: usize,
    inputs: &mut [Column],
    aux: &mut [Column],
    ok: &mut bool,
) {
    for (var, coeff) in terms {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        let column = match var {
            Var::Input(i) => inputs.get_mut(i),
            Var::Aux(i) => aux.get_mut(i),
        };
        match column {
            Some(column) => column.push((*coeff, row)),
            None => *ok = false,
        }
    }
}
