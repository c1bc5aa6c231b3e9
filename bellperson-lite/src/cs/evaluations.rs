//! Where a [`ProvingAssignment`](crate::ProvingAssignment) keeps its A, B,
//! C evaluations.

use std::fmt;
use std::ops::{Deref, DerefMut};

use blstrs::Scalar;
use supraseal_c2::HostVec;

/// One of a circuit's evaluation vectors (A·z, B·z or C·z), one value per
/// constraint. Either way it derefs to `[Scalar]`.
#[derive(Clone)]
pub enum Evaluations {
    /// Grown constraint by constraint (full synthesis).
    Growable(Vec<Scalar>),
    /// Computed in one pass into host memory the GPU copies from, pinned
    /// when the CUDA backend can use it (the compiled path).
    Fixed(HostVec<Scalar>),
}

impl Evaluations {
    /// Whether the values are in page-locked memory, which the CUDA backend
    /// can copy to the device without staging.
    pub fn is_pinned(&self) -> bool {
        match self {
            Evaluations::Growable(_) => false,
            Evaluations::Fixed(v) => v.is_pinned(),
        }
    }

    /// Bytes of memory held.
    pub fn heap_bytes(&self) -> usize {
        let scalars = match self {
            Evaluations::Growable(v) => v.capacity(),
            Evaluations::Fixed(v) => v.len(),
        };
        scalars * std::mem::size_of::<Scalar>()
    }

    /// The values as a `Vec` to grow or shrink, copied out of a fixed
    /// vector first (recording into a compiled assignment).
    pub(crate) fn growable(&mut self) -> &mut Vec<Scalar> {
        if let Evaluations::Fixed(v) = self {
            *self = Evaluations::Growable(v.to_vec());
        }
        match self {
            Evaluations::Growable(v) => v,
            Evaluations::Fixed(_) => unreachable!("made growable above"),
        }
    }
}

impl Default for Evaluations {
    /// An empty growable vector.
    fn default() -> Self {
        Evaluations::Growable(Vec::new())
    }
}

impl Deref for Evaluations {
    type Target = [Scalar];

    fn deref(&self) -> &[Scalar] {
        match self {
            Evaluations::Growable(v) => v,
            Evaluations::Fixed(v) => v,
        }
    }
}

impl DerefMut for Evaluations {
    fn deref_mut(&mut self) -> &mut [Scalar] {
        match self {
            Evaluations::Growable(v) => v,
            Evaluations::Fixed(v) => v,
        }
    }
}

impl fmt::Debug for Evaluations {
    /// The kind and length, not the values (millions of them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Evaluations::Growable(_) => "Growable",
            Evaluations::Fixed(_) => "Fixed",
        };
        f.debug_struct(kind)
            .field("len", &self.len())
            .field("pinned", &self.is_pinned())
            .finish()
    }
}
