//! The compiled path of synthesis: a circuit shape's constraints are
//! recorded once as sparse matrices A, B, C (with the density maps, which
//! depend only on the shape); each partition then records only its witness
//! and gets its evaluations as the products `A·z`, `B·z`, `C·z`.
//!
//! Full synthesis builds and evaluates a linear combination for every
//! constraint of every partition; the compiled path never calls a
//! circuit's `enforce` closures, and its matrix products run on every core.
//! The products are computed straight into [`supraseal_c2::HostVec`]s
//! (page-locked when the CUDA backend can use them), so the prover can
//! upload a, b, c without a staging copy. The result is bit-identical to
//! [`ProvingAssignment::synthesize`]: [`CompiledShape::check_against_full`]
//! verifies that on a sample.

mod matrix;
mod recorder;

use std::time::Instant;

use bellpepper_core::{Circuit, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use supraseal_c2::Density;

use crate::ProvingAssignment;
use matrix::{Assignment, SparseMatrix};
pub(crate) use recorder::{ShapeRecorder, WitnessRecorder};

/// Why the compiled path refused or failed a partition.
#[derive(Debug, thiserror::Error)]
pub enum CompiledError {
    /// The circuit failed during synthesis.
    #[error("synthesis failed")]
    Synthesis(#[from] SynthesisError),
    /// The partition's witness does not fit the compiled shape: it is not
    /// an instance of that shape.
    #[error("witness does not fit the compiled shape: {what}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// The count that differs ("public inputs", "aux variables", "constraints").
        what: &'static str,
        /// The shape's count.
        expected: usize,
        /// The partition's count.
        got: usize,
    },
    /// The compiled and the full synthesis disagree (checking mode).
    #[error("compiled synthesis differs from full synthesis in {what}")]
    Diverged {
        /// The first field that differs, e.g. "b[1234]" or "a_aux_density".
        what: String,
    },
}

/// Time spent synthesizing one partition on the compiled path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynthesisTimings {
    /// Recording the witness (the circuit's allocation closures).
    pub witness_ns: u64,
    /// The three sparse matrix products.
    pub matrix_ns: u64,
}

/// A circuit shape's constraints, compiled once.
#[derive(Clone, Debug)]
pub struct CompiledShape {
    num_inputs: usize,
    num_aux: usize,
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    coeffs: Vec<Scalar>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
}

impl CompiledShape {
    /// Records `shape` (a circuit whose witness may be absent: values are
    /// never asked for) into sparse matrices.
    pub fn compile<C: Circuit<Scalar>>(shape: C) -> Result<Self, CompiledError> {
        let mut cs = ShapeRecorder::new();
        shape.synthesize(&mut cs)?;
        if cs.foreign {
            return Err(crate::cs::foreign_variable().into());
        }
        Ok(CompiledShape {
            num_inputs: cs.num_inputs,
            num_aux: cs.num_aux,
            a: cs.a,
            b: cs.b,
            c: cs.c,
            coeffs: cs.table.values().to_vec(),
            a_aux_density: cs.a_aux_density,
            b_input_density: cs.b_input_density,
            b_aux_density: cs.b_aux_density,
        })
    }

    /// The circuit's own constraints (input constraints not counted).
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    /// Public inputs, `ONE` included.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Private variables.
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Non-zero terms of A, B and C together.
    pub fn nnz(&self) -> usize {
        self.a.nnz() + self.b.nnz() + self.c.nnz()
    }

    /// Distinct coefficients.
    pub fn num_coeffs(&self) -> usize {
        self.coeffs.len()
    }

    /// Bytes of memory the compiled form holds.
    pub fn heap_bytes(&self) -> usize {
        let density = |d: &Density| d.words().len() * 8;
        self.a.heap_bytes()
            + self.b.heap_bytes()
            + self.c.heap_bytes()
            + self.coeffs.len() * 32
            + density(&self.a_aux_density)
            + density(&self.b_input_density)
            + density(&self.b_aux_density)
    }

    /// Synthesizes one partition of this shape: records its witness, then
    /// computes the evaluations as matrix products (in parallel).
    pub fn synthesize<C: Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<(ProvingAssignment, SynthesisTimings), CompiledError> {
        let started = Instant::now();
        let mut w = WitnessRecorder::with_capacity(self.num_inputs, self.num_aux);
        circuit.synthesize(&mut w)?;
        self.check_witness(&w)?;
        let witness_ns = started.elapsed().as_nanos() as u64;
        let started = Instant::now();
        let assignment = self.evaluate(w.input, w.aux);
        let timings = SynthesisTimings {
            witness_ns,
            matrix_ns: started.elapsed().as_nanos() as u64,
        };
        Ok((assignment, timings))
    }

    fn check_witness(&self, w: &WitnessRecorder) -> Result<(), CompiledError> {
        let counts = [
            ("public inputs", self.num_inputs, w.input.len()),
            ("aux variables", self.num_aux, w.aux.len()),
            ("constraints", self.num_constraints(), w.constraints),
        ];
        for (what, expected, got) in counts {
            if expected != got {
                return Err(CompiledError::ShapeMismatch {
                    what,
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    /// A sealed assignment from a witness that fits this shape.
    fn evaluate(&self, input: Vec<Scalar>, aux: Vec<Scalar>) -> ProvingAssignment {
        let rows = self.num_constraints();
        let sealed = rows + input.len();
        let z = Assignment {
            input: &input,
            aux: &aux,
        };
        // After the rows, the input constraints: input_i * 0 = 0, the input
        // in A only.
        let product = |m: &SparseMatrix, inputs: bool| {
            m.mul_vec(&z, &self.coeffs, sealed, |k| {
                if inputs {
                    input[k]
                } else {
                    Scalar::ZERO
                }
            })
        };
        let (a, (b, c)) = rayon::join(
            || product(&self.a, true),
            || rayon::join(|| product(&self.b, false), || product(&self.c, false)),
        );
        ProvingAssignment::from_sealed_parts(
            [a, b, c],
            input,
            aux,
            [
                self.a_aux_density.clone(),
                self.b_input_density.clone(),
                self.b_aux_density.clone(),
            ],
        )
    }

    /// Synthesizes `circuit` both ways and fails naming the first field
    /// where they differ: the guard for a shape compiled from a circuit
    /// whose constraints depend on its witness.
    pub fn check_against_full<C: Circuit<Scalar> + Clone>(
        &self,
        circuit: C,
    ) -> Result<(), CompiledError> {
        let (compiled, _) = self.synthesize(circuit.clone())?;
        let full = ProvingAssignment::synthesize(circuit)?;
        match compiled.first_difference(&full) {
            None => Ok(()),
            Some(what) => Err(CompiledError::Diverged { what }),
        }
    }
}
