//! One circuit written against bellpepper-core 0.4 and against
//! bellpepper-core 0.2 (bellperson 0.27's traits, which storage-proofs'
//! Filecoin circuits use) gives identical shapes, parameters, assignments
//! and proofs through every recorder.

use bellperson_lite::{
    generate_random_parameters, prepare_verifying_key, prove_from_assignments, verify_proof,
    CircuitV02, CompiledShape, ProvingAssignment,
};
use blstrs::Scalar;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use supraseal_c2::GpuLock;

/// The same circuit source for both versions: `$bp` is the bellpepper-core
/// crate. It uses the crate's own gadgets (numbers, booleans, packing),
/// several inputs, and constraints with many terms, including ONE.
macro_rules! mixed_circuit {
    ($name:ident, $bp:ident) => {
        #[derive(Clone)]
        struct $name {
            x: Option<Scalar>,
            bits: Option<u64>,
        }

        impl $bp::Circuit<Scalar> for $name {
            fn synthesize<CS: $bp::ConstraintSystem<Scalar>>(
                self,
                cs: &mut CS,
            ) -> Result<(), $bp::SynthesisError> {
                use $bp::boolean::{AllocatedBit, Boolean};
                use $bp::num::AllocatedNum;
                let mut acc = AllocatedNum::alloc(cs.namespace(|| "x"), || {
                    self.x.ok_or($bp::SynthesisError::AssignmentMissing)
                })?;
                for i in 0..40 {
                    acc = acc.square(cs.namespace(|| format!("sq {i}")))?;
                }
                acc.inputize(cs.namespace(|| "acc"))?;
                let bits = (0..24)
                    .map(|i| {
                        let bit = self.bits.map(|b| (b >> i) & 1 == 1);
                        AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit)
                            .map(Boolean::from)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut folded = bits[0].clone();
                for (i, b) in bits[1..].iter().enumerate() {
                    let x = Boolean::xor(cs.namespace(|| format!("xor {i}")), &folded, b)?;
                    folded = Boolean::and(cs.namespace(|| format!("and {i}")), &x, &bits[i])?;
                }
                // A packed number: one constraint with 24 terms plus ONE.
                let packed = AllocatedNum::alloc(cs.namespace(|| "packed"), || {
                    let b = self.bits.ok_or($bp::SynthesisError::AssignmentMissing)?;
                    Ok(Scalar::from((b & 0xff_ffff) + 5))
                })?;
                let mut lc = $bp::LinearCombination::zero();
                let mut coeff = Scalar::ONE;
                for b in &bits {
                    lc = lc + &b.lc(CS::one(), coeff);
                    coeff = coeff.double();
                }
                cs.enforce(
                    || "pack",
                    |lc2| lc2 + CS::one(),
                    |_| lc + (Scalar::from(5), CS::one()),
                    |lc2| lc2 + packed.get_variable(),
                );
                packed.inputize(cs.namespace(|| "packed input"))?;
                let f = folded.get_value().map(|b| Scalar::from(b as u64));
                let out = cs.alloc_input(
                    || "folded",
                    || f.ok_or($bp::SynthesisError::AssignmentMissing),
                )?;
                cs.enforce(
                    || "folded is out",
                    |_| folded.lc(CS::one(), Scalar::ONE),
                    |lc2| lc2 + CS::one(),
                    |lc2| lc2 + out,
                );
                Ok(())
            }
        }
    };
}

mixed_circuit!(MixedV04, bellpepper_core);
mixed_circuit!(MixedV02, bellpepper_core_02);

fn v04(x: u64, bits: u64) -> MixedV04 {
    MixedV04 {
        x: Some(Scalar::from(x)),
        bits: Some(bits),
    }
}

fn v02(x: u64, bits: u64) -> CircuitV02<MixedV02> {
    CircuitV02(MixedV02 {
        x: Some(Scalar::from(x)),
        bits: Some(bits),
    })
}

#[test]
fn both_versions_give_the_same_parameters() {
    let shape04 = MixedV04 {
        x: None,
        bits: None,
    };
    let shape02 = CircuitV02(MixedV02 {
        x: None,
        bits: None,
    });
    let p04 = generate_random_parameters(shape04, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
    let p02 = generate_random_parameters(shape02, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
    assert_eq!(p04.vk.ic.len(), 4, "ONE and three inputs");
    assert!(p04 == p02, "parameters differ between trait versions");
    assert_eq!(p04.to_bytes().unwrap(), p02.to_bytes().unwrap());
}

#[test]
fn both_versions_give_the_same_assignments_and_shapes() {
    let (x, bits) = (7, 0xa5_c3_5a);
    let full04 = ProvingAssignment::synthesize(v04(x, bits)).unwrap();
    let full02 = ProvingAssignment::synthesize(v02(x, bits)).unwrap();
    assert_eq!(full04.first_difference(&full02), None);
    assert_eq!(full04.num_inputs(), 4);

    let shape04 = CompiledShape::compile(MixedV04 {
        x: None,
        bits: None,
    })
    .unwrap();
    let shape02 = CompiledShape::compile(CircuitV02(MixedV02 {
        x: None,
        bits: None,
    }))
    .unwrap();
    assert_eq!(shape04.num_constraints(), shape02.num_constraints());
    assert_eq!(shape04.nnz(), shape02.nnz());
    assert_eq!(shape04.num_coeffs(), shape02.num_coeffs());
    // Each version's witness on each version's compiled shape equals full
    // synthesis: the witness recorders and the matrices agree too.
    for shape in [&shape04, &shape02] {
        let (a, _) = shape.synthesize(v02(x, bits)).unwrap();
        assert_eq!(a.first_difference(&full04), None);
        let (b, _) = shape.synthesize(v04(x, bits)).unwrap();
        assert_eq!(b.first_difference(&full04), None);
    }
    shape02.check_against_full(v02(x, bits)).unwrap();
}

#[test]
fn both_versions_give_the_same_proof() {
    let rng = &mut ChaCha8Rng::seed_from_u64(3);
    let params = generate_random_parameters(
        MixedV04 {
            x: None,
            bits: None,
        },
        rng,
    )
    .unwrap();
    let srs = params.srs().unwrap();
    let lock = GpuLock::cpu(0);
    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let (x, bits) = (11, 0x3c_0f_f1);
    let provers = [
        ProvingAssignment::synthesize(v04(x, bits)).unwrap(),
        ProvingAssignment::synthesize(v02(x, bits)).unwrap(),
    ];
    let (proofs, _) = prove_from_assignments(&provers, &srs, &lock, &[r, r], &[s, s]).unwrap();
    assert_eq!(proofs[0].to_bytes(), proofs[1].to_bytes());

    let pvk = prepare_verifying_key(&params.vk);
    let inputs = &provers[1].public_inputs();
    assert!(verify_proof(&pvk, &proofs[1], inputs).unwrap());
    let mut wrong = inputs.to_vec();
    wrong[1] += Scalar::ONE;
    assert!(!verify_proof(&pvk, &proofs[1], &wrong).unwrap());
}

#[test]
fn errors_of_a_v02_circuit_keep_their_kind() {
    let missing = CircuitV02(MixedV02 {
        x: Some(Scalar::ONE),
        bits: None,
    });
    assert!(matches!(
        ProvingAssignment::synthesize(missing),
        Err(bellpepper_core::SynthesisError::AssignmentMissing)
    ));
}
