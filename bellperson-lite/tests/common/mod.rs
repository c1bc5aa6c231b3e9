//! Shared test circuits, fixtures and the pure-Rust reference prover.
#![allow(dead_code)]

pub mod reference;

use std::sync::OnceLock;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError, Variable};
use bellperson_lite::{generate_random_parameters, Parameters};
use blstrs::Scalar;
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// A deterministic RNG for tests.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// `x` public; `a_0 = x`; `a_{k+1} = a_k (a_k + k + 1)` for `k < n`;
/// `sq = a_0^2` (a variable only in C); `out = a_n` public.
#[derive(Clone, Debug)]
pub struct MulChain {
    /// Steps.
    pub n: usize,
    /// The start, `None` for the shape only.
    pub x: Option<Scalar>,
}

fn value(v: Option<Scalar>) -> Result<Scalar, SynthesisError> {
    v.ok_or(SynthesisError::AssignmentMissing)
}

/// The public inputs of `MulChain { n, x }`: `[x, a_n]`.
pub fn mul_chain_inputs(n: usize, x: Scalar) -> Vec<Scalar> {
    let mut a = x;
    for k in 0..n {
        a *= a + Scalar::from(k as u64 + 1);
    }
    vec![x, a]
}

impl Circuit<Scalar> for MulChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x_in = cs.alloc_input(|| "x", || value(self.x))?;
        let mut cur_val = self.x;
        let a0 = cs.alloc(|| "a0", || value(cur_val))?;
        cs.enforce(
            || "a0 = x",
            |lc| lc + a0,
            |lc| lc + CS::one(),
            |lc| lc + x_in,
        );
        let mut cur: Variable = a0;
        for k in 0..self.n {
            let ks = Scalar::from(k as u64 + 1);
            let next_val = cur_val.map(|v| v * (v + ks));
            let next = cs.alloc(|| format!("a{}", k + 1), || value(next_val))?;
            cs.enforce(
                || format!("step {k}"),
                |lc| lc + cur,
                |lc| lc + cur + (ks, CS::one()),
                |lc| lc + next,
            );
            cur = next;
            cur_val = next_val;
        }
        let sq = cs.alloc(|| "sq", || value(self.x.map(|v| v.square())))?;
        cs.enforce(|| "sq", |lc| lc + a0, |lc| lc + a0, |lc| lc + sq);
        let out = cs.alloc_input(|| "out", || value(cur_val))?;
        cs.enforce(|| "out", |lc| lc + cur, |lc| lc + CS::one(), |lc| lc + out);
        Ok(())
    }
}

/// Parameters for `MulChain { n, .. }` from a seeded RNG.
pub fn params(n: usize, seed: u64) -> Parameters {
    generate_random_parameters(MulChain { n, x: None }, &mut rng(seed)).expect("setup")
}

/// `params(40, 3)` and its `.params` bytes, made once per test binary.
pub fn params_fixture() -> &'static (Parameters, Vec<u8>) {
    static F: OnceLock<(Parameters, Vec<u8>)> = OnceLock::new();
    F.get_or_init(|| {
        let p = params(40, 3);
        let bytes = p.to_bytes().expect("encode");
        (p, bytes)
    })
}

/// A witness for `MulChain` with start `x`.
pub fn witness(n: usize, x: u64) -> MulChain {
    MulChain {
        n,
        x: Some(Scalar::from(x)),
    }
}

/// A random non-zero blinding pair.
pub fn blinding(seed: u64) -> (Scalar, Scalar) {
    let mut r = rng(seed);
    (Scalar::random(&mut r), Scalar::random(&mut r))
}

/// A circuit whose values and densities are irregular: each of `vars` aux
/// variables is 0, 1 or another value, and sits in A only, B only, both or
/// neither, both chosen by a hash of its index; three inputs (another value,
/// 1 and 0) of which only the second is in B. It exercises every branch of
/// the prover's term sorting, across its chunks and bitmap words.
#[derive(Clone, Debug)]
pub struct Mixed {
    /// Aux variables.
    pub vars: usize,
    /// Chooses the values and the shape.
    pub seed: u64,
}

impl Mixed {
    fn hash(&self, k: usize) -> u64 {
        let mut x = (k as u64 ^ self.seed.rotate_left(17)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 31;
        x.wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 29)
    }

    /// The value of aux variable k: 0, 1 or a larger one, about a third each.
    pub fn value(&self, k: usize) -> Scalar {
        match self.hash(k) % 3 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => Scalar::from(self.hash(k) >> 8),
        }
    }

    /// The public inputs.
    pub fn inputs(&self) -> Vec<Scalar> {
        vec![Scalar::from(self.seed + 5), Scalar::ONE, Scalar::ZERO]
    }
}

impl Circuit<Scalar> for Mixed {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let inputs = self.inputs();
        let p: Vec<Variable> = (0..3)
            .map(|i| cs.alloc_input(|| format!("p{i}"), || Ok(inputs[i])))
            .collect::<Result<_, _>>()?;
        cs.enforce(|| "p0", |lc| lc + p[0], |lc| lc + CS::one(), |lc| lc + p[0]);
        cs.enforce(|| "p1", |lc| lc + CS::one(), |lc| lc + p[1], |lc| lc + p[1]);
        cs.enforce(|| "p2", |lc| lc + p[2], |lc| lc + CS::one(), |lc| lc + p[2]);
        for k in 0..self.vars {
            let v = self.value(k);
            let x = cs.alloc(|| format!("x{k}"), || Ok(v))?;
            match (self.hash(k) >> 4) % 4 {
                0 => cs.enforce(
                    || k.to_string(),
                    |lc| lc + x,
                    |lc| lc + CS::one(),
                    |lc| lc + x,
                ),
                1 => cs.enforce(
                    || k.to_string(),
                    |lc| lc + CS::one(),
                    |lc| lc + x,
                    |lc| lc + x,
                ),
                2 => cs.enforce(
                    || k.to_string(),
                    |lc| lc + x,
                    |lc| lc + x,
                    |lc| lc + (v.square(), CS::one()),
                ),
                _ => cs.enforce(
                    || k.to_string(),
                    |lc| lc + CS::one(),
                    |lc| lc + (v, CS::one()),
                    |lc| lc + x,
                ),
            }
        }
        Ok(())
    }
}
