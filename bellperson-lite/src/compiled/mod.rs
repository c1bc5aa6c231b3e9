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

use bellpepper_core::SynthesisError;

use crate::AnyCircuit;
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;
use supraseal_c2::{Density, HostVec};

use crate::ProvingAssignment;
use matrix::{Assignment, AuxKinds, Coefficients, SparseMatrix};
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
    /// Two recordings that must agree do not: the compiled and the full
    /// synthesis (checking mode), or the prefixes of a circuit's pieces.
    #[error("recordings that must agree differ in {what}")]
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
    /// The three sparse matrix products (with sorting the aux values into
    /// 0, 1 and other, or expanding a bit witness, before them).
    pub matrix_ns: u64,
}

/// The length of the prefix that every one of `pieces` (two or more)
/// records before its blocks, from one count (`of`): the pieces hold the
/// prefix once each and the whole circuit (`total` of that count) once.
fn prefix_len(
    pieces: &[WitnessRecorder],
    total: usize,
    what: &'static str,
    of: impl Fn(&WitnessRecorder) -> usize,
) -> Result<usize, CompiledError> {
    let sum: usize = pieces.iter().map(&of).sum();
    let copies = pieces.len() - 1;
    let extra = sum.checked_sub(total).filter(|extra| extra % copies == 0);
    let prefix = extra.map(|extra| extra / copies);
    match prefix {
        Some(prefix) if pieces.iter().all(|w| of(w) >= prefix) => Ok(prefix),
        _ => Err(CompiledError::ShapeMismatch {
            what,
            expected: total,
            got: sum,
        }),
    }
}

/// A circuit shape's constraints, compiled once.
#[derive(Clone, Debug)]
pub struct CompiledShape {
    num_inputs: usize,
    num_aux: usize,
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    coeffs: Coefficients,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
}

impl CompiledShape {
    /// Records `shape` (a circuit whose witness may be absent: values are
    /// never asked for) into sparse matrices.
    pub fn compile<C: AnyCircuit>(shape: C) -> Result<Self, CompiledError> {
        Ok(Self::record(shape)?)
    }

    /// [`CompiledShape::compile`] with the circuit's own error.
    pub(crate) fn record<C: AnyCircuit>(shape: C) -> Result<Self, SynthesisError> {
        let mut cs = ShapeRecorder::new();
        shape.synthesize_into(&mut cs)?;
        if cs.foreign {
            return Err(crate::cs::foreign_variable());
        }
        Ok(CompiledShape {
            num_inputs: cs.num_inputs,
            num_aux: cs.num_aux,
            a: cs.a,
            b: cs.b,
            c: cs.c,
            coeffs: Coefficients::new(cs.table.values().to_vec()),
            a_aux_density: cs.a_aux_density,
            b_input_density: cs.b_input_density,
            b_aux_density: cs.b_aux_density,
        })
    }

    /// For A, B and C, every column's sum weighted by `weights`, one
    /// weight per constraint: the shape's, then the input constraints the
    /// prover appends (`input_i * 0 = 0`, so inputs in A). Each matrix gives
    /// the inputs' sums and the aux variables' sums. With the Lagrange basis
    /// at tau as weights, these are the QAP polynomials at tau.
    pub(crate) fn column_sums(&self, weights: &[Scalar]) -> [(Vec<Scalar>, Vec<Scalar>); 3] {
        let rows = self.num_constraints();
        assert_eq!(
            weights.len(),
            rows + self.num_inputs,
            "one weight per constraint"
        );
        let sums = |m: &SparseMatrix| {
            m.column_sums(weights, self.coeffs.values(), self.num_inputs, self.num_aux)
        };
        let mut a = sums(&self.a);
        for (i, u) in a.0.iter_mut().enumerate() {
            *u += weights[rows + i];
        }
        [a, sums(&self.b), sums(&self.c)]
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

    /// Has the host pool keep page-locked memory for the evaluations of
    /// `partitions` partitions of this shape (three vectors each), allocated
    /// now rather than when they are synthesized; returns for how many
    /// partitions it keeps memory (fewer when the pool's limit is reached).
    pub fn reserve_evaluations(&self, partitions: usize) -> usize {
        HostVec::<Scalar>::reserve_pool(self.evaluation_len(), 3 * partitions) / 3
    }

    /// The bytes of this shape's parameter file (bellperson's format, as
    /// [`generate_parameters_for_shape`](crate::generate_parameters_for_shape)
    /// makes it): known before the setup's long work, to check the disk
    /// first. An identity left out where a column's terms cancel would make
    /// the file smaller, never larger.
    pub fn params_file_bytes(&self) -> Result<u64, SynthesisError> {
        let n = crate::domain_size(self.num_constraints() + self.num_inputs)?;
        let inputs = self.num_inputs;
        let a = inputs + self.a_aux_density.count_ones();
        let b = self.b_input_density.count_ones() + self.b_aux_density.count_ones();
        Ok(crate::params::file_bytes(inputs, n - 1, self.num_aux, a, b))
    }

    /// Bytes of one partition's evaluations (a, b and c together).
    pub fn evaluation_bytes(&self) -> u64 {
        3 * (self.evaluation_len() * std::mem::size_of::<Scalar>()) as u64
    }

    /// Elements of each evaluation vector: one per constraint and input.
    fn evaluation_len(&self) -> usize {
        self.num_constraints() + self.num_inputs
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
    pub fn synthesize<C: AnyCircuit>(
        &self,
        circuit: C,
    ) -> Result<(ProvingAssignment, SynthesisTimings), CompiledError> {
        let started = Instant::now();
        let witness = self.record_witness(circuit)?;
        let witness_ns = started.elapsed().as_nanos() as u64;
        let started = Instant::now();
        let assignment = self.evaluate(witness);
        let timings = SynthesisTimings {
            witness_ns,
            matrix_ns: started.elapsed().as_nanos() as u64,
        };
        Ok((assignment, timings))
    }

    /// The first, sequential half of [`synthesize`](Self::synthesize):
    /// records the circuit's witness and checks it fits this shape. Finish
    /// with [`evaluate`](Self::evaluate), e.g. on another thread pool.
    pub fn record_witness<C: AnyCircuit>(
        &self,
        circuit: C,
    ) -> Result<ShapedWitness, CompiledError> {
        let mut w = WitnessRecorder::with_capacity(self.num_inputs, self.num_aux);
        circuit.synthesize_into(&mut w)?;
        self.check_counts(w.input.len(), w.aux.len(), Some(w.constraints))?;
        Ok(ShapedWitness {
            input: w.input,
            aux: Aux::Values(w.aux),
        })
    }

    /// [`record_witness`](Self::record_witness) of a circuit that is a
    /// prefix followed by independent blocks (a PoRep partition: the
    /// commitments, then one block per challenge), recorded on every core
    /// of the current rayon pool.
    ///
    /// Each of `pieces` is a circuit that allocates the same prefix and
    /// then its own run of blocks; the pieces' runs, in order, are the
    /// whole circuit's blocks. The witness is one copy of the prefix
    /// followed by each piece's run. The prefix's size follows from the
    /// counts (the pieces together hold it `n` times, the circuit once);
    /// every piece must record the same prefix values, and the result
    /// must fit this shape. Whether the pieces really split the circuit
    /// is the caller's claim: tests compare the result with
    /// [`record_witness`](Self::record_witness) of the whole circuit.
    pub fn record_witness_pieces<C: AnyCircuit + Send>(
        &self,
        pieces: Vec<C>,
    ) -> Result<ShapedWitness, CompiledError> {
        if pieces.len() <= 1 {
            let piece = pieces
                .into_iter()
                .next()
                .ok_or(CompiledError::ShapeMismatch {
                    what: "pieces",
                    expected: 1,
                    got: 0,
                })?;
            return self.record_witness(piece);
        }
        // Room for an even share, so that a piece's values are not moved
        // as they grow.
        let (share_in, share_aux) = (
            self.num_inputs.div_ceil(pieces.len()) + 64,
            self.num_aux.div_ceil(pieces.len()) + 4096,
        );
        let recorded = pieces
            .into_par_iter()
            .map(|piece| {
                let mut w = WitnessRecorder::with_capacity(share_in, share_aux);
                piece.synthesize_into(&mut w)?;
                Ok(w)
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        let input = prefix_len(&recorded, self.num_inputs, "public inputs", |w| {
            w.input.len()
        })?;
        let aux = prefix_len(&recorded, self.num_aux, "aux variables", |w| w.aux.len())?;
        prefix_len(&recorded, self.num_constraints(), "constraints", |w| {
            w.constraints
        })?;
        let first = &recorded[0];
        for (j, w) in recorded.iter().enumerate().skip(1) {
            let what = if w.input[..input] != first.input[..input] {
                "inputs"
            } else if w.aux[..aux] != first.aux[..aux] {
                "aux values"
            } else {
                continue;
            };
            let what = format!("piece {j}'s prefix {what}");
            return Err(CompiledError::Diverged { what });
        }
        // Piece 0 gives the prefix and its blocks, the others their blocks,
        // appended in order and freed one by one: only the pages written
        // so far of the whole are touched, so the copy adds one piece to
        // the peak, not a second witness. (The prefix lengths were derived
        // from the shape's counts, so the whole has exactly those.)
        let mut pieces = recorded.into_iter();
        let first = pieces.next().expect("two pieces or more");
        let (mut whole_input, mut whole_aux) = (first.input, first.aux);
        whole_input.reserve_exact(self.num_inputs - whole_input.len());
        whole_aux.reserve_exact(self.num_aux - whole_aux.len());
        for w in pieces {
            whole_input.extend_from_slice(&w.input[input..]);
            whole_aux.extend_from_slice(&w.aux[aux..]);
        }
        Ok(ShapedWitness {
            input: whole_input,
            aux: Aux::Values(whole_aux),
        })
    }

    /// A witness computed natively rather than by the circuit's gadgets,
    /// checked to fit this shape: `input` (`ONE` first) and an aux
    /// assignment whose values are all bits. Finish with
    /// [`evaluate`](Self::evaluate).
    ///
    /// Only the counts can be checked here; that the bits are the ones the
    /// circuit would allocate is for the witness program's own tests and
    /// for [`check_against`](Self::check_against) on a sample.
    pub fn bit_witness(
        &self,
        input: Vec<Scalar>,
        aux: BitWitness,
    ) -> Result<ShapedWitness, CompiledError> {
        self.check_counts(input.len(), aux.len, None)?;
        let words = aux.len.div_ceil(64);
        if aux.words.len() != words {
            return Err(CompiledError::ShapeMismatch {
                what: "aux bit words",
                expected: words,
                got: aux.words.len(),
            });
        }
        Ok(ShapedWitness {
            input,
            aux: Aux::Bits(aux),
        })
    }

    /// A witness computed natively rather than by the circuit's gadgets,
    /// checked to fit this shape: `input` (`ONE` first) and the aux
    /// assignment. Finish with [`evaluate`](Self::evaluate).
    ///
    /// As with [`bit_witness`](Self::bit_witness), only the counts are
    /// checked here; [`ShapedWitness::first_difference`] against the
    /// gadgets' witness checks the values.
    pub fn value_witness(
        &self,
        input: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<ShapedWitness, CompiledError> {
        self.check_counts(input.len(), aux.len(), None)?;
        Ok(ShapedWitness {
            input,
            aux: Aux::Values(aux),
        })
    }

    /// The second, parallel half of synthesis: the sealed assignment of a
    /// witness that fits this shape, its evaluations computed as matrix
    /// products on the current rayon pool.
    pub fn evaluate(&self, witness: ShapedWitness) -> ProvingAssignment {
        let ShapedWitness { input, aux } = witness;
        let (aux, kinds) = match aux {
            Aux::Values(values) => {
                let kinds = AuxKinds::of_values(&values);
                (values, kinds)
            }
            Aux::Bits(bits) => {
                let values = (0..bits.len)
                    .into_par_iter()
                    .with_min_len(1 << 14)
                    .map(|i| {
                        if bits.get(i) {
                            Scalar::ONE
                        } else {
                            Scalar::ZERO
                        }
                    })
                    .collect();
                (values, AuxKinds::of_bits(bits.words))
            }
        };
        self.products(input, aux, &kinds)
    }

    /// Fails when a witness's counts differ from the shape's (`constraints`
    /// only when the witness was recorded from the circuit).
    fn check_counts(
        &self,
        inputs: usize,
        aux: usize,
        constraints: Option<usize>,
    ) -> Result<(), CompiledError> {
        let num_constraints = self.num_constraints();
        let counts = [
            ("public inputs", self.num_inputs, inputs),
            ("aux variables", self.num_aux, aux),
            (
                "constraints",
                num_constraints,
                constraints.unwrap_or(num_constraints),
            ),
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
    fn products(
        &self,
        input: Vec<Scalar>,
        aux: Vec<Scalar>,
        kinds: &AuxKinds,
    ) -> ProvingAssignment {
        let rows = self.num_constraints();
        let sealed = rows + input.len();
        let z = Assignment {
            input: &input,
            aux: &aux,
            kinds,
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
    pub fn check_against_full<C: AnyCircuit + Clone>(
        &self,
        circuit: C,
    ) -> Result<(), CompiledError> {
        let (compiled, _) = self.synthesize(circuit.clone())?;
        Self::check_against(&compiled, circuit)
    }

    /// Synthesizes `circuit` in full and fails naming the first field where
    /// `assignment` (made on the compiled path, from any witness source)
    /// differs from it.
    pub fn check_against<C: AnyCircuit>(
        assignment: &ProvingAssignment,
        circuit: C,
    ) -> Result<(), CompiledError> {
        let full = ProvingAssignment::synthesize(circuit)?;
        match assignment.first_difference(&full) {
            None => Ok(()),
            Some(what) => Err(CompiledError::Diverged { what }),
        }
    }
}

/// A partition's witness, checked against a [`CompiledShape`]
/// ([`CompiledShape::record_witness`], [`CompiledShape::bit_witness`]) and
/// ready for [`CompiledShape::evaluate`].
#[derive(Clone, Debug)]
pub struct ShapedWitness {
    input: Vec<Scalar>,
    aux: Aux,
}

impl ShapedWitness {
    /// The first place where this witness and `other` differ (`input[3]`,
    /// `aux[1234]`, or a length), or `None` when they are equal: a native
    /// witness checked against the gadgets'.
    pub fn first_difference(&self, other: &ShapedWitness) -> Option<String> {
        let first = |what: &str, a: &[Scalar], b: &[Scalar]| {
            if a.len() != b.len() {
                return Some(format!("{what} length ({} against {})", a.len(), b.len()));
            }
            (0..a.len())
                .into_par_iter()
                .with_min_len(1 << 16)
                .find_first(|&i| a[i] != b[i])
                .map(|i| format!("{what}[{i}] of {}", a.len()))
        };
        let (a, b) = (self.aux.values(), other.aux.values());
        first("input", &self.input, &other.input).or_else(|| first("aux", &a, &b))
    }
}

#[derive(Clone, Debug)]
enum Aux {
    Values(Vec<Scalar>),
    Bits(BitWitness),
}

impl Aux {
    /// The values, bits expanded.
    fn values(&self) -> std::borrow::Cow<'_, [Scalar]> {
        match self {
            Aux::Values(values) => std::borrow::Cow::Borrowed(values),
            Aux::Bits(bits) => (0..bits.len)
                .map(|i| Scalar::from(u64::from(bits.get(i))))
                .collect::<Vec<_>>()
                .into(),
        }
    }
}

/// A private witness of bits, computed natively (see
/// [`CompiledShape::bit_witness`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitWitness {
    /// The bits, 64 to a word, least significant first.
    pub words: Vec<u64>,
    /// How many bits.
    pub len: usize,
}

impl BitWitness {
    /// Bit `i`.
    ///
    /// # Panics
    ///
    /// If `i >= self.len`.
    pub fn get(&self, i: usize) -> bool {
        assert!(i < self.len, "bit {i} of {}", self.len);
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }
}
