//! The proving key's points, shared with native code.

use std::fmt;
use std::slice;
use std::sync::Arc;

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

/// A proving key's points, owned: what [`Srs::share`] hands to native code
/// without copying (each vector is behind an `Arc`, so a
/// `bellperson_lite::Parameters` and the `Srs` made from it hold one copy).
#[derive(Clone, Debug)]
pub struct SrsPoints {
    /// `alpha` in G1.
    pub alpha_g1: G1Affine,
    /// `beta` in G1.
    pub beta_g1: G1Affine,
    /// `beta` in G2.
    pub beta_g2: G2Affine,
    /// `delta` in G1.
    pub delta_g1: G1Affine,
    /// `delta` in G2.
    pub delta_g2: G2Affine,
    /// H query, `domain - 1` points.
    pub h: Arc<Vec<G1Affine>>,
    /// L query.
    pub l: Arc<Vec<G1Affine>>,
    /// A query.
    pub a: Arc<Vec<G1Affine>>,
    /// B query in G1.
    pub b_g1: Arc<Vec<G1Affine>>,
    /// B query in G2.
    pub b_g2: Arc<Vec<G2Affine>>,
}

impl SrsPoints {
    /// Borrows the points in the form [`Srs::new`] takes.
    pub fn parts(&self) -> SrsParts<'_> {
        SrsParts {
            alpha_g1: &self.alpha_g1,
            beta_g1: &self.beta_g1,
            beta_g2: &self.beta_g2,
            delta_g1: &self.delta_g1,
            delta_g2: &self.delta_g2,
            h: &self.h,
            l: &self.l,
            a: &self.a,
            b_g1: &self.b_g1,
            b_g2: &self.b_g2,
        }
    }
}

/// A proving key for the native prover. Native code views the point
/// vectors of its [`SrsPoints`] in place; the `Srs` keeps them alive.
pub struct Srs {
    // Declared first, so dropped before the points it views.
    native: UniquePtr<ffi::NativeSrs>,
    shape: SrsShape,
    points: SrsPoints,
}

// SAFETY: the native srs_t is plain vectors of points, never written after
// construction; the prover only reads it, from any thread.
unsafe impl Send for Srs {}
// SAFETY: as for Send: shared reads only.
unsafe impl Sync for Srs {}

impl Srs {
    /// Copies `parts` (see [`Srs::share`] for a key without a copy).
    ///
    /// Fails with [`Error::Shape`] when `b_g2` and `b_g1` differ in length or
    /// `h.len() + 1` is not a power of two.
    pub fn new(parts: SrsParts<'_>) -> Result<Self, Error> {
        Self::share(SrsPoints {
            alpha_g1: *parts.alpha_g1,
            beta_g1: *parts.beta_g1,
            beta_g2: *parts.beta_g2,
            delta_g1: *parts.delta_g1,
            delta_g2: *parts.delta_g2,
            h: Arc::new(parts.h.to_vec()),
            l: Arc::new(parts.l.to_vec()),
            a: Arc::new(parts.a.to_vec()),
            b_g1: Arc::new(parts.b_g1.to_vec()),
            b_g2: Arc::new(parts.b_g2.to_vec()),
        })
    }

    /// Hands `points` to native code without copying them: the native key
    /// views the vectors, which this `Srs` keeps (they are never written
    /// while an `Arc` is shared). Same checks as [`Srs::new`].
    pub fn share(points: SrsPoints) -> Result<Self, Error> {
        let parts = points.parts();
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
        Ok(Self {
            native,
            shape,
            points,
        })
    }

    /// The points this key holds (shared with native code).
    pub fn points(&self) -> &SrsPoints {
        &self.points
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

#[cfg(test)]
mod tests {
    use super::*;
    use group::prime::PrimeCurveAffine;

    fn points(h: usize, b: usize) -> SrsPoints {
        let g1 = G1Affine::generator();
        let g2 = G2Affine::generator();
        SrsPoints {
            alpha_g1: g1,
            beta_g1: g1,
            beta_g2: g2,
            delta_g1: g1,
            delta_g2: g2,
            h: Arc::new(vec![g1; h]),
            l: Arc::new(vec![g1; 2]),
            a: Arc::new(vec![g1; 3]),
            b_g1: Arc::new(vec![g1; b]),
            b_g2: Arc::new(vec![g2; b]),
        }
    }

    #[test]
    fn share_keeps_the_callers_vectors_in_place() {
        let mine = points(7, 2);
        let srs = Srs::share(mine.clone()).unwrap();
        let held = srs.points();
        assert!(Arc::ptr_eq(&held.h, &mine.h) && Arc::ptr_eq(&held.b_g2, &mine.b_g2));
        // This test's copy and the key's: no third vector was made.
        assert_eq!(Arc::strong_count(&mine.h), 2);
        assert_eq!(srs.domain_size(), 8);
        drop(srs);
        assert_eq!(Arc::strong_count(&mine.h), 1);
    }

    #[test]
    fn new_copies_and_both_check_the_shape() {
        let mine = points(7, 2);
        let copied = Srs::new(mine.parts()).unwrap();
        assert_ne!(copied.points().h.as_ptr(), mine.h.as_ptr());
        assert_eq!(*copied.points().h, *mine.h);
        assert!(matches!(Srs::share(points(6, 2)), Err(Error::Shape { .. })));
        let mut uneven = points(7, 2);
        uneven.b_g2 = Arc::new(vec![G2Affine::generator(); 1]);
        assert!(matches!(Srs::share(uneven), Err(Error::Shape { .. })));
    }
}
