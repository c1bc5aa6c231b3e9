//! Native witness programs for Filecoin's circuits: a partition's private
//! witness computed straight from its vanilla proofs, in the order and
//! with the values storage-proofs' gadgets allocate, without a constraint
//! system, with SHA-256 and Poseidon computed once per hash and the
//! independent blocks of a partition (a PoRep challenge) in parallel.
//!
//! Each program mirrors its circuit's `synthesize` step by step, on the
//! gadget mirrors of [`cuzk_pipeline::witness`] (bits, SHA-256) and of
//! this module ([`num`]: bit decomposition, packing, insertion;
//! [`poseidon`]: neptune's legacy circuit; [`merkle`]: inclusion paths).
//! The gadgets stay the reference: `--synthesis checked:N` compares the
//! two for every N-th partition, and the tests compare them for every kind
//! and size they cover.
//!
//! A program also recomputes, natively, what the circuit enforces (each
//! path reaches its root, comm_r is the hash of comm_c and comm_r_last):
//! inputs that would not satisfy the circuit fail here, with a reason,
//! before any proving.

mod merkle;
mod num;
mod porep;
mod poseidon;
mod post;
mod update;

use bellperson_lite::CompiledError;
use cuzk_pipeline::witness::SliceSink;
use rayon::prelude::*;

pub(crate) use porep::partition as porep_partition;
pub(crate) use post::partition as post_partition;
pub(crate) use update::partition as update_partition;

/// Why a native witness could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// A value the circuit needs is absent from the vanilla proof.
    #[error("the vanilla proof has no {0}")]
    Missing(&'static str),
    /// A shape the witness programs do not cover.
    #[error("no native witness for {0}")]
    Unsupported(String),
    /// The inputs do not satisfy the circuit.
    #[error("{0}")]
    False(String),
    /// The witness does not have the compiled shape's layout.
    #[error("the native witness does not fit the compiled shape")]
    Shape(#[source] CompiledError),
}

/// The aux assignment of a circuit made of a prefix and `blocks.len()`
/// blocks of equal size, `num_aux` values in all: `prefix` is the prefix's
/// values, and `fill(i, sink)` writes block `i` into `sink`, the blocks on
/// every core of the current rayon pool. Each block must write exactly its
/// share.
pub(crate) fn blocks<T: Sync>(
    num_aux: usize,
    mut prefix: Vec<blstrs::Scalar>,
    blocks: &[T],
    fill: impl Fn(&T, &mut SliceSink<'_>) -> Result<(), NativeError> + Sync,
) -> Result<Vec<blstrs::Scalar>, NativeError> {
    let layout = || {
        NativeError::Shape(CompiledError::ShapeMismatch {
            what: "aux variables after the prefix, by block",
            expected: num_aux,
            got: prefix.len(),
        })
    };
    let rest = num_aux.checked_sub(prefix.len()).ok_or_else(layout)?;
    let block = match blocks.len() {
        0 if rest == 0 => return Ok(prefix),
        n if n > 0 && rest > 0 && rest.is_multiple_of(n) => rest / n,
        _ => return Err(layout()),
    };
    // Zeroed in parallel, written in parallel: one pass over the pages each.
    prefix.par_extend(rayon::iter::repeat_n(blstrs::Scalar::from(0u64), rest));
    let (_, tail) = prefix.split_at_mut(num_aux - rest);
    tail.par_chunks_mut(block)
        .zip(blocks)
        .try_for_each(|(out, item)| {
            let mut sink = SliceSink::new(out);
            fill(item, &mut sink)?;
            if sink.written() != sink.capacity() {
                return Err(NativeError::Shape(CompiledError::ShapeMismatch {
                    what: "aux variables of a block",
                    expected: sink.capacity(),
                    got: sink.written(),
                }));
            }
            Ok(())
        })?;
    Ok(prefix)
}

/// Fails with `what` unless `computed == expected`: a circuit equality the
/// inputs do not satisfy.
fn check_equal(
    computed: &blstrs::Scalar,
    expected: &blstrs::Scalar,
    what: impl FnOnce() -> String,
) -> Result<(), NativeError> {
    if computed == expected {
        Ok(())
    } else {
        Err(NativeError::False(what()))
    }
}

#[cfg(test)]
mod tests;
