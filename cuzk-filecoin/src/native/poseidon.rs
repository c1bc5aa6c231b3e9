//! Mirror of neptune 11's legacy Poseidon circuit (`circuit::poseidon_hash`),
//! the one storage-proofs' trees and columns use.
//!
//! The circuit keeps each state element either allocated or as a linear
//! combination (`Elt::Allocated`, `Elt::Num`); an S-box allocates its input
//! first when that is a combination, then `l^2`, `l^4` and `l^5` (plus the
//! round key). The values are the same field arithmetic on the same
//! constants (the compressed round constants, the pre-sparse and sparse
//! matrices of the partial rounds).

use blstrs::Scalar;
use cuzk_pipeline::witness::NumSink;
use ff::Field;
use filecoin_hashers::PoseidonArity;
use neptune::poseidon::PoseidonConstants;

/// A state element: its value, and whether the circuit holds it allocated.
#[derive(Clone, Copy)]
struct Elt {
    value: Scalar,
    allocated: bool,
}

impl Elt {
    fn num(value: Scalar) -> Elt {
        Elt {
            value,
            allocated: false,
        }
    }

    /// `Elt::ensure_allocated`.
    fn ensure_allocated<S: NumSink + ?Sized>(self, sink: &mut S) -> Scalar {
        if !self.allocated {
            sink.push_num(self.value);
        }
        self.value
    }
}

/// `circuit::poseidon_hash` of `preimage` (arity `A`, its standard
/// constants): the hash, with every variable the circuit allocates written
/// to `sink`.
pub(crate) fn hash<S: NumSink + ?Sized, A: PoseidonArity>(
    sink: &mut S,
    preimage: &[Scalar],
) -> Scalar {
    hash_with(sink, preimage, A::PARAMETERS())
}

/// [`hash`] with `constants` (another hash type's domain tag).
pub(crate) fn hash_with<S: NumSink + ?Sized, A: PoseidonArity>(
    sink: &mut S,
    preimage: &[Scalar],
    constants: &PoseidonConstants<Scalar, A>,
) -> Scalar {
    assert_eq!(preimage.len(), A::to_usize(), "a preimage of the arity");
    let mut state = Vec::with_capacity(preimage.len() + 1);
    state.push(Elt::num(constants.domain_tag));
    state.extend(preimage.iter().map(|&value| Elt {
        value,
        allocated: true,
    }));
    let mut circuit = Circuit {
        constants,
        state,
        offset: 0,
        round: 0,
    };
    circuit.full_round(sink, true, false);
    for _ in 1..constants.full_rounds / 2 {
        circuit.full_round(sink, false, false);
    }
    for _ in 0..constants.partial_rounds {
        circuit.partial_round(sink);
    }
    for _ in 0..constants.full_rounds / 2 - 1 {
        circuit.full_round(sink, false, false);
    }
    circuit.full_round(sink, false, true);
    circuit.state[1].ensure_allocated(sink)
}

struct Circuit<'a, A: PoseidonArity> {
    constants: &'a PoseidonConstants<Scalar, A>,
    state: Vec<Elt>,
    /// Into the compressed round constants.
    offset: usize,
    round: usize,
}

impl<A: PoseidonArity> Circuit<'_, A> {
    fn keys(&mut self, n: usize) -> Vec<Scalar> {
        let keys = self.constants.compressed_round_constants[self.offset..self.offset + n].to_vec();
        self.offset += n;
        keys
    }

    /// `PoseidonCircuit::full_round`.
    fn full_round<S: NumSink + ?Sized>(&mut self, sink: &mut S, first: bool, last: bool) {
        let width = self.state.len();
        let pre = if first { self.keys(width) } else { Vec::new() };
        let post = if first || !last {
            self.keys(width)
        } else {
            Vec::new()
        };
        for i in 0..width {
            let post_key = post.get(i).copied();
            self.state[i] = if first && i == 0 {
                // The domain tag's S-box is a constant.
                let l = self.state[0].value + pre[0];
                Elt::num(quintic(l) + post[0])
            } else if first {
                let l = self.state[i].ensure_allocated(sink) + pre[i];
                s_box(sink, l, post_key)
            } else {
                let l = self.state[i].ensure_allocated(sink);
                s_box(sink, l, post_key)
            };
        }
        self.product_mds();
    }

    /// `PoseidonCircuit::partial_round`.
    fn partial_round<S: NumSink + ?Sized>(&mut self, sink: &mut S) {
        let key = self.keys(1)[0];
        let l = self.state[0].ensure_allocated(sink);
        self.state[0] = s_box(sink, l, Some(key));
        self.product_mds();
    }

    /// `PoseidonCircuit::product_mds`: the dense matrix of the full rounds,
    /// the pre-sparse matrix before the partial rounds, a sparse one in
    /// each.
    fn product_mds(&mut self) {
        let c = self.constants;
        let sparse_offset = c.half_full_rounds - 1;
        if self.round == sparse_offset {
            self.dense(&c.pre_sparse_matrix);
        } else if self.round > sparse_offset && self.round < c.half_full_rounds + c.partial_rounds {
            let sparse = &c.sparse_matrixes[self.round - sparse_offset - 1];
            let first: Scalar = dot(&self.state, &sparse.w_hat);
            let x0 = self.state[0].value;
            for (j, v) in sparse.v_rest.iter().enumerate() {
                self.state[j + 1] = Elt::num(self.state[j + 1].value + x0 * v);
            }
            self.state[0] = Elt::num(first);
        } else {
            self.dense(&c.mds_matrices.m);
        }
        self.round += 1;
    }

    fn dense(&mut self, m: &[Vec<Scalar>]) {
        let width = self.state.len();
        let next: Vec<Elt> = (0..width)
            .map(|j| {
                let column: Vec<Scalar> = (0..width).map(|i| m[i][j]).collect();
                Elt::num(dot(&self.state, &column))
            })
            .collect();
        self.state = next;
    }
}

fn dot(state: &[Elt], scalars: &[Scalar]) -> Scalar {
    state.iter().zip(scalars).map(|(e, s)| e.value * s).sum()
}

fn quintic(l: Scalar) -> Scalar {
    let l4 = l.square().square();
    l4 * l
}

/// The allocations of an S-box on the (allocated) input `l`: `l^2`, `l^4`,
/// then `l^5` plus the round key.
fn s_box<S: NumSink + ?Sized>(sink: &mut S, l: Scalar, post_key: Option<Scalar>) -> Elt {
    let l2 = sink.num(l.square());
    let l4 = sink.num(l2.square());
    let l5 = l4 * l + post_key.unwrap_or_default();
    Elt {
        value: sink.num(l5),
        allocated: true,
    }
}
