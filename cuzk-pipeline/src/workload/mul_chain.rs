//! `mul-chain`: `x_{i+1} = x_i^2 + (i + 1)`, dense full-width witnesses, the
//! worst case for MSM.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;

/// `x_0` for `seed`.
pub fn start(seed: u64) -> Scalar {
    Scalar::from(seed.wrapping_add(2))
}

/// `x_n` from `x_0`, natively.
pub fn end(n: usize, x0: Scalar) -> Scalar {
    (0..n as u64).fold(x0, |x, i| x.square() + Scalar::from(i + 1))
}

/// The public inputs (without ONE): `x_0` and `y = x_n`.
pub fn public_inputs(n: usize, seed: u64) -> Vec<Scalar> {
    let x0 = start(seed);
    vec![x0, end(n, x0)]
}

/// The `mul-chain` circuit. With `x0: None` it describes the shape only.
#[derive(Clone, Debug)]
pub struct MulChainCircuit {
    /// Number of squarings.
    pub n: usize,
    /// `x_0`, when proving.
    pub x0: Option<Scalar>,
}

impl Circuit<Scalar> for MulChainCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut value = self.x0;
        let mut x = cs.alloc_input(|| "x0", || value.ok_or(SynthesisError::AssignmentMissing))?;
        for i in 0..self.n {
            let k = Scalar::from(i as u64 + 1);
            let next_value = value.map(|v| v.square() + k);
            let next = cs.alloc(
                || format!("x{}", i + 1),
                || next_value.ok_or(SynthesisError::AssignmentMissing),
            )?;
            cs.enforce(
                || format!("square {i}"),
                |lc| lc + x,
                |lc| lc + x,
                |lc| lc + next - (k, CS::one()),
            );
            x = next;
            value = next_value;
        }
        let y = cs.alloc_input(|| "y", || value.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "output", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + y);
        Ok(())
    }
}
