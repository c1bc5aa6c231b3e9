//! The two recorders of the compiled path: one records a circuit's shape as
//! sparse matrices, once; the other records only a partition's witness.

use blstrs::Scalar;
use ff::Field;
use supraseal_c2::Density;

use super::matrix::{CoeffTable, SparseMatrix, INPUT_TAG};
use crate::cs::Var;

/// Records the R1CS matrices by rows and the density maps. Allocation
/// closures are not called.
#[derive(Clone, Debug)]
pub(crate) struct ShapeRecorder {
    pub(crate) num_inputs: usize,
    pub(crate) num_aux: usize,
    pub(crate) a: SparseMatrix,
    pub(crate) b: SparseMatrix,
    pub(crate) c: SparseMatrix,
    pub(crate) table: CoeffTable,
    pub(crate) a_aux_density: Density,
    pub(crate) b_input_density: Density,
    pub(crate) b_aux_density: Density,
    /// Set when a constraint named a variable this system never allocated,
    /// or a variable index does not fit a column.
    pub(crate) foreign: bool,
}

impl ShapeRecorder {
    /// An empty shape holding only `ONE`.
    pub(crate) fn new() -> Self {
        let mut cs = ShapeRecorder {
            num_inputs: 0,
            num_aux: 0,
            a: SparseMatrix::new(),
            b: SparseMatrix::new(),
            c: SparseMatrix::new(),
            table: CoeffTable::new(),
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
            foreign: false,
        };
        cs.push_input();
        cs
    }

    pub(crate) fn push_input(&mut self) -> usize {
        self.b_input_density.push(false);
        self.num_inputs += 1;
        self.num_inputs - 1
    }

    pub(crate) fn push_aux(&mut self) -> usize {
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        self.num_aux += 1;
        self.num_aux - 1
    }

    /// Records `a * b = c`; zero coefficients are dropped, exactly as the
    /// full recorder skips them, so densities agree.
    pub(crate) fn push_constraint<'t, A, B, C>(&mut self, a: A, b: B, c: C)
    where
        A: IntoIterator<Item = (Var, &'t Scalar)>,
        B: IntoIterator<Item = (Var, &'t Scalar)>,
        C: IntoIterator<Item = (Var, &'t Scalar)>,
    {
        let limits = (self.num_inputs, self.num_aux);
        let mut ok = true;
        let t = &mut self.table;
        record(
            a,
            limits,
            t,
            &mut self.a,
            None,
            Some(&mut self.a_aux_density),
            &mut ok,
        );
        let (bi, ba) = (&mut self.b_input_density, &mut self.b_aux_density);
        record(b, limits, t, &mut self.b, Some(bi), Some(ba), &mut ok);
        record(c, limits, t, &mut self.c, None, None, &mut ok);
        self.foreign |= !ok;
    }
}

fn record<'t>(
    terms: impl IntoIterator<Item = (Var, &'t Scalar)>,
    (num_inputs, num_aux): (usize, usize),
    table: &mut CoeffTable,
    matrix: &mut SparseMatrix,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    ok: &mut bool,
) {
    for (var, coeff) in terms {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        let (i, limit, density, tag) = match var {
            Var::Input(i) => (i, num_inputs, input_density.as_deref_mut(), INPUT_TAG),
            Var::Aux(i) => (i, num_aux, aux_density.as_deref_mut(), 0),
        };
        if i >= limit || i >= INPUT_TAG as usize {
            *ok = false;
            continue;
        }
        if let Some(d) = density {
            d.set(i);
        }
        matrix.push_term(i as u32 | tag, table.intern(coeff));
    }
    matrix.end_row();
}

/// Records only the values a partition allocates, and counts constraints;
/// the circuit's `enforce` closures are never called.
#[derive(Clone, Debug)]
pub(crate) struct WitnessRecorder {
    pub(crate) input: Vec<Scalar>,
    pub(crate) aux: Vec<Scalar>,
    pub(crate) constraints: usize,
}

impl WitnessRecorder {
    /// Holds only `ONE`, with room for a shape's variables.
    pub(crate) fn with_capacity(inputs: usize, aux: usize) -> Self {
        let mut input = Vec::with_capacity(inputs);
        input.push(Scalar::ONE);
        WitnessRecorder {
            input,
            aux: Vec::with_capacity(aux),
            constraints: 0,
        }
    }
}
