//! Checking a request's proof: every partition against its native inputs.

use bellperson_lite::{PreparedVerifyingKey, Proof, PROOF_BYTES};
use blstrs::Scalar;

use crate::{partition_seed, PipelineError, Workload};

/// Splits a request proof (the partitions' 192-byte proofs, in order) into
/// proofs, checking its length and each proof's encoding.
pub fn decode_request_proof(bytes: &[u8], partitions: usize) -> Result<Vec<Proof>, PipelineError> {
    let expected = partitions * PROOF_BYTES;
    if bytes.len() != expected {
        return Err(PipelineError::ProofLength {
            got: bytes.len(),
            expected,
            partitions,
        });
    }
    bytes
        .chunks(PROOF_BYTES)
        .enumerate()
        .map(|(partition, chunk)| {
            Proof::from_bytes(chunk)
                .map_err(|source| PipelineError::MalformedProof { partition, source })
        })
        .collect()
}

/// Concatenates partition proofs into a request proof.
pub fn encode_request_proof(proofs: &[Proof]) -> Vec<u8> {
    proofs.iter().flat_map(|p| p.to_bytes()).collect()
}

/// Verifies every partition proof of request `request` against the public
/// inputs the verifier derives itself. Fails naming the first partition that
/// does not verify.
pub fn verify_request(
    pvk: &PreparedVerifyingKey,
    workload: Workload,
    request: u64,
    proofs: &[Proof],
) -> Result<(), PipelineError> {
    let partitions = proofs.len();
    let seeds: Vec<u64> = (0..partitions)
        .map(|j| partition_seed(request, partitions, j))
        .collect();
    let inputs: Vec<_> = seeds.iter().map(|&s| workload.public_inputs(s)).collect();
    verify_partitions(pvk, proofs, &inputs, &seeds)
}

/// Verifies every partition proof of a request of `source` against the
/// public inputs the source computes (as its verifier does). Fails naming
/// the first partition that does not verify.
pub fn verify_source_request(
    pvk: &PreparedVerifyingKey,
    source: &dyn crate::CircuitSource,
    proofs: &[Proof],
) -> Result<(), PipelineError> {
    let inputs = (0..proofs.len())
        .map(|j| source.public_inputs(j))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source_error| PipelineError::Source {
            circuit: source.circuit_key(),
            source: source_error,
        })?;
    let seeds: Vec<u64> = (0..proofs.len() as u64).collect();
    verify_partitions(pvk, proofs, &inputs, &seeds)
}

/// Batch-verifies `proofs` against `inputs`; on failure names the first
/// partition (and its seed) that does not verify.
fn verify_partitions(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    inputs: &[Vec<Scalar>],
    seeds: &[u64],
) -> Result<(), PipelineError> {
    let refs: Vec<&Proof> = proofs.iter().collect();
    let mut rng = rand::thread_rng();
    if bellperson_lite::verify_proofs_batch(pvk, &mut rng, &refs, inputs)? {
        return Ok(());
    }
    // The batch failed: find the first partition to blame.
    for (partition, (proof, input)) in proofs.iter().zip(inputs).enumerate() {
        if !bellperson_lite::verify_proof(pvk, proof, input)? {
            return Err(PipelineError::Rejected {
                partition,
                seed: seeds[partition],
            });
        }
    }
    Ok(())
}
