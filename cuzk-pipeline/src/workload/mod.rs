//! The benchmark workloads of `shared/workloads.md`, exactly as defined there.

pub mod mul_chain;
pub mod sha_chain;
pub mod sha_witness;

use std::fmt;
use std::str::FromStr;

use bellpepper::gadgets::multipack;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson_lite::BitWitness;
use blstrs::Scalar;
use ff::Field;

use crate::PipelineError;

/// A circuit family with its size parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// `sha-chain` with `blocks` SHA-256 blocks (about 27,000 constraints each).
    ShaChain {
        /// Number of 512-bit blocks, at least 1.
        blocks: usize,
    },
    /// `mul-chain` with `n` squarings (`n + 1` constraints).
    MulChain {
        /// Number of squarings, at least 1.
        n: usize,
    },
}

/// The names the CLI and config accept.
pub const WORKLOAD_NAMES: [&str; 2] = ["sha-chain", "mul-chain"];

impl Workload {
    /// The workload called `name` (`sha-chain` or `mul-chain`) at `size`
    /// (blocks, or squarings).
    pub fn new(name: &str, size: usize) -> Result<Self, PipelineError> {
        if size == 0 {
            return Err(PipelineError::BadWorkload(format!(
                "{name} needs a size of at least 1"
            )));
        }
        match name {
            "sha-chain" => Ok(Workload::ShaChain { blocks: size }),
            "mul-chain" => Ok(Workload::MulChain { n: size }),
            _ => Err(PipelineError::BadWorkload(format!(
                "unknown workload '{name}' (expected one of {})",
                WORKLOAD_NAMES.join(", ")
            ))),
        }
    }

    /// The family's name.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::ShaChain { .. } => "sha-chain",
            Workload::MulChain { .. } => "mul-chain",
        }
    }

    /// The size parameter (blocks or squarings).
    pub fn size(&self) -> usize {
        match *self {
            Workload::ShaChain { blocks } => blocks,
            Workload::MulChain { n } => n,
        }
    }

    /// The circuit with its witness for `seed`.
    pub fn circuit(&self, seed: u64) -> WorkloadCircuit {
        match *self {
            Workload::ShaChain { blocks } => WorkloadCircuit::Sha(sha_chain::ShaChainCircuit {
                blocks,
                message: Some(sha_chain::message(blocks, seed)),
            }),
            Workload::MulChain { n } => WorkloadCircuit::Mul(mul_chain::MulChainCircuit {
                n,
                x0: Some(mul_chain::start(seed)),
            }),
        }
    }

    /// The circuit without a witness: its shape, for parameter generation.
    pub fn shape(&self) -> WorkloadCircuit {
        match *self {
            Workload::ShaChain { blocks } => WorkloadCircuit::Sha(sha_chain::ShaChainCircuit {
                blocks,
                message: None,
            }),
            Workload::MulChain { n } => {
                WorkloadCircuit::Mul(mul_chain::MulChainCircuit { n, x0: None })
            }
        }
    }

    /// Whether the family has a native witness program
    /// ([`native_witness`](Self::native_witness) gives `Some`).
    pub fn has_native_witness(&self) -> bool {
        matches!(self, Workload::ShaChain { .. })
    }

    /// The witness for `seed` computed natively, without the circuit's
    /// gadgets, where the family has a witness program (`sha-chain`: see
    /// [`sha_witness`]); `None` for the others. Its aux values are bits in
    /// exactly the order the gadgets allocate them.
    pub fn native_witness(&self, seed: u64) -> Option<NativeWitness> {
        let Workload::ShaChain { blocks } = *self else {
            return None;
        };
        let (aux, digest) = sha_witness::witness(blocks, seed);
        let mut input = vec![Scalar::ONE];
        input.extend(multipack::compute_multipacking::<Scalar>(
            &multipack::bytes_to_bits(&digest),
        ));
        Some(NativeWitness { input, aux })
    }

    /// The public inputs (without ONE) for `seed`, computed natively, as a
    /// verifier derives them.
    pub fn public_inputs(&self, seed: u64) -> Vec<Scalar> {
        match *self {
            Workload::ShaChain { blocks } => sha_chain::public_inputs(blocks, seed),
            Workload::MulChain { n } => mul_chain::public_inputs(n, seed),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name(), self.size())
    }
}

impl FromStr for Workload {
    type Err = PipelineError;

    /// Parses `name/size`, e.g. `sha-chain/4`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, size) = s.split_once('/').ok_or_else(|| {
            PipelineError::BadWorkload(format!("'{s}' is not of the form NAME/SIZE"))
        })?;
        let size = size
            .parse()
            .map_err(|_| PipelineError::BadWorkload(format!("bad size in '{s}'")))?;
        Workload::new(name, size)
    }
}

/// Partition `index` of request `request` with `partitions` partitions uses
/// this seed.
pub fn partition_seed(request: u64, partitions: usize, index: usize) -> u64 {
    request
        .wrapping_mul(partitions as u64)
        .wrapping_add(index as u64)
}

/// A partition's witness from a native witness program.
#[derive(Clone, Debug)]
pub struct NativeWitness {
    /// The public inputs, `ONE` first.
    pub input: Vec<Scalar>,
    /// The private assignment, all bits.
    pub aux: BitWitness,
}

/// One instance of either family, as a `bellpepper_core::Circuit`.
#[derive(Clone, Debug)]
pub enum WorkloadCircuit {
    /// A `sha-chain` instance.
    Sha(sha_chain::ShaChainCircuit),
    /// A `mul-chain` instance.
    Mul(mul_chain::MulChainCircuit),
}

impl Circuit<Scalar> for WorkloadCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            WorkloadCircuit::Sha(c) => c.synthesize(cs),
            WorkloadCircuit::Mul(c) => c.synthesize(cs),
        }
    }
}
