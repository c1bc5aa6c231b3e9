//! Groth16 over BLS12-381 for cuzk: the layer between circuits and the
//! native prover.
//!
//! - [`ProvingAssignment`] records a synthesized circuit (A/B/C evaluations,
//!   assignments, densities) in the form `supraseal_c2` proves from;
//!   [`synthesize_circuits_batch`] does many in parallel.
//! - [`generate_random_parameters`] runs a (test) trusted setup;
//!   [`Parameters`] reads and writes bellperson's `.params` format byte for
//!   byte, checking every point, and hands the proving key to the native
//!   [`supraseal_c2::Srs`].
//! - [`prove_from_assignments`] / [`create_random_proof_batch`] call the
//!   native prover; [`Proof`] is bellperson's 192-byte encoding.
//! - [`verify_proof`] and [`verify_proofs_batch`] check proofs.
//! - [`CompiledShape`] is the fast path of synthesis: a shape's constraints
//!   compiled once into sparse matrices, then per partition only the witness
//!   and three sparse matrix products.
//!
//! The circuit trait is `bellpepper_core` 0.4's, implemented by a thin
//! adapter; the recording logic does not depend on the trait version, so an
//! adapter for bellpepper-core 0.2 / bellperson 0.27 can sit beside it.
//!
//! ```
//! use bellpepper_core::{num::AllocatedNum, Circuit, ConstraintSystem, SynthesisError};
//! use bellperson_lite::{
//!     generate_random_parameters, prepare_verifying_key, prove_from_assignments, verify_proof,
//!     Parameters, Proof, ProvingAssignment,
//! };
//! use blstrs::Scalar;
//! use ff::Field;
//! use supraseal_c2::GpuLock;
//!
//! /// Knows `x` with `x^2 = y`, `y` public.
//! struct Square(Option<Scalar>);
//!
//! impl Circuit<Scalar> for Square {
//!     fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
//!         let x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
//!             self.0.ok_or(SynthesisError::AssignmentMissing)
//!         })?;
//!         let y = x.square(cs.namespace(|| "x^2"))?;
//!         y.inputize(cs.namespace(|| "y"))
//!     }
//! }
//!
//! let rng = &mut rand::thread_rng();
//! let params = generate_random_parameters(Square(None), rng)?;
//! // bellperson's file format, byte for byte; every point is checked on reading.
//! let params = Parameters::from_bytes(&params.to_bytes()?)?;
//!
//! let prover = ProvingAssignment::synthesize(Square(Some(Scalar::from(3))))?;
//! params.check_shape(&prover)?;
//! let (srs, lock) = (params.srs()?, GpuLock::cpu(0));
//! let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
//! let (proofs, _timings) = prove_from_assignments(&[prover], &srs, &lock, &[r], &[s])?;
//!
//! let proof = Proof::from_bytes(&proofs[0].to_bytes())?;
//! let pvk = prepare_verifying_key(&params.vk);
//! assert!(verify_proof(&pvk, &proof, &[Scalar::from(9)])?);
//! assert!(!verify_proof(&pvk, &proof, &[Scalar::from(10)])?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
// Only `params::mapped` (mapping a parameters file) allows unsafe code.
#![deny(unsafe_code)]

mod compiled;
mod cs;
mod encoding;
mod error;
pub mod files;
mod fixed_base;
mod generator;
mod params;
mod proof;
mod prover;
mod verifier;

pub use compiled::{BitWitness, CompiledError, CompiledShape, ShapedWitness, SynthesisTimings};
pub use cs::evaluations::Evaluations;
pub use cs::proving::{synthesize_circuits_batch, ProvingAssignment};
pub use cs::{domain_size, AnyCircuit, CircuitV02, Recorder};
pub use error::{
    ParamsError, Place, PointFault, ProofError, ProofPart, ProverError, Section, SetupError,
    VerificationError,
};
pub use generator::{
    generate_parameters_for_shape, generate_random_parameters, generate_random_parameters_on,
};
pub use params::{
    sidecar_path, FullChecksReason, LoadMode, LoadOptions, LoadReport, Parameters, SidecarOutcome,
    VerifyingKey, SIDECAR_SUFFIX,
};
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{create_random_proof_batch, prove_from_assignments};
pub use supraseal_c2::PhaseTimings;
pub use verifier::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};
