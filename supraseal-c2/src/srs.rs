//! The proving key's points, held by native code.

use std::fmt;
use std::slice;

use blstrs::{G1Affine, G2Affine};
use cxx::UniquePtr;

use crate::bridge::ffi;
use crate::error::native;
use crate::raw::limbs;
use crate::Error;

/// Borrowed parts of a proving key, in bellperson's compacted form
/// (`a`, `b_g1`, `b_g2` hold only the points of variables with density).
#[derive(Clone, Copy, Debug)]
pub struct SrsParts<'a> {
    /// `alpha` in G1.
    pub alpha_g1: &'a G1Affine,
    /// `beta` in G1.
    pub beta_g1: &'a G1Affine,
    /// `beta` in G2.
    pub beta_g2: &'a G2Affine,
    /// `delta` in G1.
    pub delta_g1: &'a G1Affine,
    /// `delta` in G2.
    pub delta_g2: &'a G2Affine,
    /// H query: `tau^i * Z(tau) / delta`, `domain - 1` points.
    pub h: &'a [G1Affine],
    /// L query, one point per aux variable.
    pub l: &'a [G1Affine],
    /// A query: every input, then the aux variables with A density.
    pub a: &'a [G1Affine],
    /// B query in G1: inputs with B density, then aux with B density.
    pub b_g1: &'a [G1Affine],
    /// B query in G2, the same variables as `b_g1`.
    pub b_g2: &'a [G2Affine],
}

/// The lengths of an [`Srs`]'s point vectors, for shape checks in Rust.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SrsShape {
    pub(crate) h: usize,
    pub(crate) l: usize,
    pub(crate) a: usize,
    pub(crate) b_g1: usize,
    pub(crate) b_g2: usize,
}

/// A proving key's points, copied into native memory once.
pub struct Srs {
    native: UniquePtr<ffi::NativeSrs>,
    shape: SrsShape,
}

// SAFETY: the native srs_t is plain vectors of points, never written after
// construction; the prover only reads it, from any thread.
unsafe impl Send for Srs {}
// SAFETY: as for Send: shared reads only.
unsafe impl Sync for Srs {}

impl Srs {
    /// Copies `parts` into native memory.
    ///
    /// Fails with [`Error::Shape`] when `b_g2` and `b_g1` differ in length or
    /// `h.len() + 1` is not a power of two.
    pub fn new(parts: SrsParts<'_>) -> Result<Self, Error> {
        Error::check_shape("SRS b_g2 vs b_g1", parts.b_g1.len(), parts.b_g2.len())?;
        let domain = parts.h.len() + 1;
        Error::check_shape(
            "SRS h + 1 (a power of two)",
            domain.next_power_of_two(),
            domain,
        )?;
        let view = ffi::SrsView {
            alpha_g1: limbs(slice::from_ref(parts.alpha_g1)),
            beta_g1: limbs(slice::from_ref(parts.beta_g1)),
            beta_g2: limbs(slice::from_ref(parts.beta_g2)),
            delta_g1: limbs(slice::from_ref(parts.delta_g1)),
            delta_g2: limbs(slice::from_ref(parts.delta_g2)),
            h: limbs(parts.h),
            l: limbs(parts.l),
            a: limbs(parts.a),
            b_g1: limbs(parts.b_g1),
            b_g2: limbs(parts.b_g2),
        };
        let native = native(|e| ffi::new_srs(&view, e))?;
        let shape = SrsShape {
            h: parts.h.len(),
            l: parts.l.len(),
            a: parts.a.len(),
            b_g1: parts.b_g1.len(),
            b_g2: parts.b_g2.len(),
        };
        Ok(Self { native, shape })
    }

    /// The evaluation domain the key was made for: `h.len() + 1`.
    pub fn domain_size(&self) -> usize {
        self.shape.h + 1
    }

    pub(crate) fn native(&self) -> &ffi::NativeSrs {
        &self.native
    }

    pub(crate) fn shape(&self) -> SrsShape {
        self.shape
    }
}

impl fmt::Debug for Srs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Srs").field("shape", &self.shape).finish()
    }
}
