//! One partition of a proof request, end to end: the benchmark workloads of
//! `shared/workloads.md`, their synthesis, and `gpu_prove` under a
//! [`supraseal_c2::GpuLock`].
//!
//! ```no_run
//! use cuzk_pipeline::{gpu_prove, setup, synthesize_partition, Workload};
//! use supraseal_c2::GpuLock;
//!
//! let workload = Workload::new("mul-chain", 1000)?;
//! let params = setup(workload)?;
//! let srs = params.srs().expect("srs");
//! let lock = GpuLock::cpu(0);
//! let partition = synthesize_partition(workload, 7)?;
//! let proof = gpu_prove(&partition, &srs, &lock)?;
//! let pvk = bellperson_lite::prepare_verifying_key(&params.vk);
//! let inputs = workload.public_inputs(7);
//! assert!(bellperson_lite::verify_proof(&pvk, &proof.proof, &inputs)?);
//! # Ok::<(), cuzk_pipeline::PipelineError>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod partition;
mod source;
mod synthesis;
mod verify;
pub mod witness;
pub mod workload;

pub use error::PipelineError;
pub use partition::{
    check_params, gpu_prove, gpu_prove_with, setup, setup_on, synthesize_partition, Partition,
    PartitionProof,
};
pub use source::{synthesize_source, CircuitSource, SharedSource, SourceError};
pub use synthesis::{synthesize_compiled, synthesize_with, ShapeCache, SynthesisMode, Witness};
pub use verify::{
    decode_request_proof, encode_request_proof, verify_request, verify_source_request,
};
pub use workload::{partition_seed, NativeWitness, Workload, WorkloadCircuit};
