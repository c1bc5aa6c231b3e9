//! The witness recorder: evaluations, assignments and densities of one
//! circuit, in the form the native prover takes.

use std::fmt;

use bellpepper_core::SynthesisError;

use crate::AnyCircuit;
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use supraseal_c2::{Assignment, Density, HostVec};

use super::evaluations::Evaluations;
use super::{foreign_variable, Var};

/// One synthesized circuit: for every constraint the evaluations of A, B and
/// C at the full assignment, the assignment itself, and which variables have
/// a non-zero coefficient in A (aux only: every input is in A through its
/// input constraint) and in B.
///
/// Build it with [`ProvingAssignment::synthesize`] (the evaluations grow in
/// `Vec`s) or [`CompiledShape::synthesize`](crate::CompiledShape::synthesize)
/// (they are computed into [`HostVec`]s, pinned when the CUDA backend can
/// use them; see [`evaluations`](Self::evaluations)). Like bellperson, sealing
/// appends one input constraint per public input (`input_i * 0 = 0`, the
/// input in A only), after the circuit's own constraints, so that A is dense
/// over the inputs. `ONE` is input 0, allocated at construction.
///
/// Recording anything into a sealed assignment (through the
/// `ConstraintSystem` trait) first removes the input constraints again; call
/// [`seal`](Self::seal) once more before proving. The prover refuses
/// unsealed assignments.
#[derive(Clone)]
pub struct ProvingAssignment {
    a: Evaluations,
    b: Evaluations,
    c: Evaluations,
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    sealed: bool,
    foreign: bool,
}

impl Default for ProvingAssignment {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ProvingAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProvingAssignment")
            .field("constraints", &self.a.len())
            .field("inputs", &self.input.len())
            .field("aux", &self.aux.len())
            .field("a_aux_density", &self.a_aux_density.count_ones())
            .field("b_input_density", &self.b_input_density.count_ones())
            .field("b_aux_density", &self.b_aux_density.count_ones())
            .field("sealed", &self.sealed)
            .finish()
    }
}

impl ProvingAssignment {
    /// An empty, unsealed system holding only `ONE` (input 0, value 1).
    pub fn new() -> Self {
        let mut cs = ProvingAssignment {
            a: Evaluations::default(),
            b: Evaluations::default(),
            c: Evaluations::default(),
            input: Vec::new(),
            aux: Vec::new(),
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
            sealed: false,
            foreign: false,
        };
        cs.push_input(Scalar::ONE);
        cs
    }

    /// Synthesizes `circuit` and seals the result.
    ///
    /// Fails with the circuit's own error, or with
    /// `SynthesisError::AssignmentMissing` when a constraint named a variable
    /// this system never allocated.
    pub fn synthesize<C: AnyCircuit>(circuit: C) -> Result<Self, SynthesisError> {
        let mut cs = Self::new();
        circuit.synthesize_into(&mut cs)?;
        if cs.foreign {
            return Err(foreign_variable());
        }
        cs.seal();
        Ok(cs)
    }

    /// Appends the input constraints (one per public input, `ONE`
    /// included). Does nothing when already sealed.
    pub fn seal(&mut self) {
        if self.sealed {
            return;
        }
        let (a, b, c) = (self.a.growable(), self.b.growable(), self.c.growable());
        for &x in &self.input {
            a.push(x);
            b.push(Scalar::ZERO);
            c.push(Scalar::ZERO);
        }
        self.sealed = true;
    }

    /// Whether the input constraints are in place (the prover needs them).
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// Borrows everything the native prover needs.
    pub fn as_assignment(&self) -> Assignment<'_> {
        Assignment {
            a: &self.a,
            b: &self.b,
            c: &self.c,
            input: &self.input,
            aux: &self.aux,
            a_aux_density: &self.a_aux_density,
            b_input_density: &self.b_input_density,
            b_aux_density: &self.b_aux_density,
        }
    }

    /// The A, B and C evaluations: growable `Vec`s from full synthesis,
    /// fixed [`HostVec`]s from the compiled path.
    pub fn evaluations(&self) -> [&Evaluations; 3] {
        [&self.a, &self.b, &self.c]
    }

    /// Constraints recorded so far (the input constraints included once
    /// sealed).
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }

    /// Constraints of the sealed system: the circuit's own plus one per
    /// public input, whether or not sealing has happened yet.
    pub fn num_sealed_constraints(&self) -> usize {
        if self.sealed {
            self.a.len()
        } else {
            self.a.len() + self.input.len()
        }
    }

    /// Public inputs, `ONE` included.
    pub fn num_inputs(&self) -> usize {
        self.input.len()
    }

    /// Private (auxiliary) variables.
    pub fn num_aux(&self) -> usize {
        self.aux.len()
    }

    /// Bytes of memory held: the evaluations, the assignment and the
    /// density maps (the per-partition working set).
    pub fn heap_bytes(&self) -> usize {
        let evaluations = self.a.heap_bytes() + self.b.heap_bytes() + self.c.heap_bytes();
        let scalars = self.input.capacity() + self.aux.capacity();
        let words = self.a_aux_density.words().len()
            + self.b_input_density.words().len()
            + self.b_aux_density.words().len();
        evaluations + scalars * std::mem::size_of::<Scalar>() + words * 8
    }

    /// The public inputs without `ONE`, as a verifier takes them.
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input[1..]
    }

    /// The full input assignment, `ONE` first.
    pub fn input_assignment(&self) -> &[Scalar] {
        &self.input
    }

    /// The private assignment.
    pub fn aux_assignment(&self) -> &[Scalar] {
        &self.aux
    }

    /// Records a new public input and returns its index.
    pub(crate) fn push_input(&mut self, value: Scalar) -> usize {
        self.unseal();
        self.input.push(value);
        self.b_input_density.push(false);
        self.input.len() - 1
    }

    /// Records a new private variable and returns its index.
    pub(crate) fn push_aux(&mut self, value: Scalar) -> usize {
        self.unseal();
        self.aux.push(value);
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        self.aux.len() - 1
    }

    /// Records the constraint `a * b = c`, each side given by its terms.
    pub(crate) fn push_constraint<'t, A, B, C>(&mut self, a: A, b: B, c: C)
    where
        A: IntoIterator<Item = (Var, &'t Scalar)>,
        B: IntoIterator<Item = (Var, &'t Scalar)>,
        C: IntoIterator<Item = (Var, &'t Scalar)>,
    {
        self.unseal();
        let (input, aux) = (&self.input, &self.aux);
        let mut ok = true;
        let va = eval(a, input, aux, None, Some(&mut self.a_aux_density), &mut ok);
        let vb = eval(
            b,
            input,
            aux,
            Some(&mut self.b_input_density),
            Some(&mut self.b_aux_density),
            &mut ok,
        );
        let vc = eval(c, input, aux, None, None, &mut ok);
        self.foreign |= !ok;
        self.a.growable().push(va);
        self.b.growable().push(vb);
        self.c.growable().push(vc);
    }

    /// A sealed assignment from parts computed elsewhere (the compiled
    /// path): `[a, b, c]` with the input constraints already appended, and
    /// the `[a_aux, b_input, b_aux]` density maps.
    pub(crate) fn from_sealed_parts(
        [a, b, c]: [HostVec<Scalar>; 3],
        input: Vec<Scalar>,
        aux: Vec<Scalar>,
        [a_aux_density, b_input_density, b_aux_density]: [Density; 3],
    ) -> Self {
        ProvingAssignment {
            a: Evaluations::Fixed(a),
            b: Evaluations::Fixed(b),
            c: Evaluations::Fixed(c),
            input,
            aux,
            a_aux_density,
            b_input_density,
            b_aux_density,
            sealed: true,
            foreign: false,
        }
    }

    /// The first field in which `self` and `other` differ (`"b[17]"`,
    /// `"aux_count"`, `"a_aux_density"`...), or `None` when they are equal.
    pub fn first_difference(&self, other: &Self) -> Option<String> {
        let vectors: [(_, &[Scalar], &[Scalar]); 5] = [
            ("a", &self.a, &other.a),
            ("b", &self.b, &other.b),
            ("c", &self.c, &other.c),
            ("input", &self.input, &other.input),
            ("aux", &self.aux, &other.aux),
        ];
        for (name, x, y) in vectors {
            if x.len() != y.len() {
                return Some(format!("{name}_count ({} vs {})", x.len(), y.len()));
            }
            if let Some(i) = x.iter().zip(y.iter()).position(|(u, v)| u != v) {
                return Some(format!("{name}[{i}]"));
            }
        }
        let densities = [
            ("a_aux_density", &self.a_aux_density, &other.a_aux_density),
            (
                "b_input_density",
                &self.b_input_density,
                &other.b_input_density,
            ),
            ("b_aux_density", &self.b_aux_density, &other.b_aux_density),
        ];
        let differs = |(name, x, y): (&str, &Density, &Density)| (x != y).then(|| name.to_owned());
        densities
            .into_iter()
            .find_map(differs)
            .or_else(|| (self.sealed != other.sealed).then(|| "sealed".to_owned()))
    }

    /// Removes the input constraints, if present, before more recording.
    fn unseal(&mut self) {
        if self.sealed {
            let len = self.a.len() - self.input.len();
            self.a.growable().truncate(len);
            self.b.growable().truncate(len);
            self.c.growable().truncate(len);
            self.sealed = false;
        }
    }
}

/// Evaluates a linear combination at the assignment, marking in the density
/// maps every variable with a non-zero coefficient. Clears `ok` on a
/// variable outside the assignment.
fn eval<'t>(
    terms: impl IntoIterator<Item = (Var, &'t Scalar)>,
    input: &[Scalar],
    aux: &[Scalar],
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    ok: &mut bool,
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (var, coeff) in terms {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        let (value, density, i) = match var {
            Var::Input(i) => (input.get(i), input_density.as_deref_mut(), i),
            Var::Aux(i) => (aux.get(i), aux_density.as_deref_mut(), i),
        };
        let Some(value) = value else {
            *ok = false;
            continue;
        };
        if let Some(d) = density {
            d.set(i);
        }
        if *coeff == Scalar::ONE {
            acc += value;
        } else {
            acc += *value * coeff;
        }
    }
    acc
}

/// Synthesizes and seals `circuits` in parallel (rayon), in order.
///
/// Fails with the error of the first failing circuit, in circuit order.
pub fn synthesize_circuits_batch<C>(
    circuits: Vec<C>,
) -> Result<Vec<ProvingAssignment>, SynthesisError>
where
    C: AnyCircuit + Send,
{
    let results: Vec<_> = circuits
        .into_par_iter()
        .map(ProvingAssignment::synthesize)
        .collect();
    results.into_iter().collect()
}
