//! A real gadget circuit (one SHA-256 block from bellpepper, digest packed
//! into public inputs): the setup's density filtering, the native prover
//! and the reference prover agree, and the proof verifies.

mod common;

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson_lite::{
    generate_random_parameters, prepare_verifying_key, prove_from_assignments, verify_proof,
    ProvingAssignment,
};
use blstrs::Scalar;
use common::{blinding, reference, rng};
use supraseal_c2::GpuLock;

/// 55 bytes: with SHA-256 padding, exactly one block.
const LEN: usize = 55;

struct Sha {
    preimage: Option<[u8; LEN]>,
}

impl Circuit<Scalar> for Sha {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut bits = Vec::with_capacity(LEN * 8);
        for i in 0..LEN * 8 {
            let bit = self.preimage.map(|p| (p[i / 8] >> (7 - i % 8)) & 1 == 1);
            let b = AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit)?;
            bits.push(Boolean::from(b));
        }
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

#[test]
fn sha256_block_proves_natively_like_the_reference_and_verifies() {
    let params = generate_random_parameters(Sha { preimage: None }, &mut rng(31)).unwrap();
    let mut preimage = [0u8; LEN];
    preimage
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = (i * 37 + 11) as u8);
    let prover = ProvingAssignment::synthesize(Sha {
        preimage: Some(preimage),
    })
    .unwrap();
    params.check_shape(&prover).unwrap();
    assert!(prover.num_constraints() > 20_000);
    assert_eq!(prover.public_inputs().len(), 2);

    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let (r, s) = blinding(32);
    let provers = std::slice::from_ref(&prover);
    let (proofs, _) = prove_from_assignments(provers, &srs, &lock, &[r], &[s]).unwrap();
    assert_eq!(proofs[0], reference::prove(&params, &prover, r, s));

    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proofs[0], prover.public_inputs()).unwrap());
    let mut wrong = prover.public_inputs().to_vec();
    wrong[0] += Scalar::from(1);
    assert!(!verify_proof(&pvk, &proofs[0], &wrong).unwrap());
}
