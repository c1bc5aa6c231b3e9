//! Point encodings (the zcash / bellperson BLS12-381 formats) with checks
//! that say why a point is refused.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::error::PointFault;

/// A curve point with a fixed-size uncompressed and compressed encoding.
pub(crate) trait Encoded: PrimeCurveAffine + Send + Sync {
    /// Bytes of the uncompressed encoding.
    const UNCOMPRESSED: usize;

    /// Appends the uncompressed encoding to `out`.
    fn put_uncompressed(&self, out: &mut Vec<u8>);
    /// The compressed encoding, written into `out` (`COMPRESSED` bytes).
    fn put_compressed(&self, out: &mut [u8]);
    /// Decodes `bytes` (`UNCOMPRESSED` long) without the subgroup check.
    fn uncompressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)>;
    /// Decodes `bytes` (`COMPRESSED` long) without the subgroup check.
    fn compressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)>;
    /// Whether the point is in the prime-order subgroup.
    fn in_subgroup(&self) -> bool;
}

macro_rules! impl_encoded {
    ($point:ty, $u:expr, $c:expr) => {
        impl Encoded for $point {
            const UNCOMPRESSED: usize = $u;

            fn put_uncompressed(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_uncompressed());
            }

            fn put_compressed(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_compressed());
            }

            fn uncompressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)> {
                let bytes: &[u8; $u] = bytes.try_into().ok()?;
                let p = Option::<Self>::from(Self::from_uncompressed_unchecked(bytes))?;
                Some((p, p.to_uncompressed() == *bytes))
            }

            fn compressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)> {
                let bytes: &[u8; $c] = bytes.try_into().ok()?;
                let p = Option::<Self>::from(Self::from_compressed_unchecked(bytes))?;
                Some((p, p.to_compressed() == *bytes))
            }

            fn in_subgroup(&self) -> bool {
                bool::from(self.is_torsion_free())
            }
        }
    };
}

impl_encoded!(G1Affine, 96, 48);
impl_encoded!(G2Affine, 192, 96);

/// The checks shared by both encodings, after decoding to a point on the
/// curve (`canonical`: whether it re-encodes to the same bytes).
fn check<P: Encoded>(decoded: Option<(P, bool)>) -> Result<P, PointFault> {
    let (p, canonical) = decoded.ok_or(PointFault::NotOnCurve)?;
    if !canonical {
        return Err(PointFault::NonCanonical);
    }
    if bool::from(p.is_identity()) {
        return Err(PointFault::Identity);
    }
    if !p.in_subgroup() {
        return Err(PointFault::NotInSubgroup);
    }
    Ok(p)
}

/// Decodes an uncompressed point: on the curve, canonical, not the identity,
/// in the subgroup.
pub(crate) fn decode_uncompressed<P: Encoded>(bytes: &[u8]) -> Result<P, PointFault> {
    check(P::uncompressed_on_curve(bytes))
}

/// Decodes a compressed point with the same checks.
pub(crate) fn decode_compressed<P: Encoded>(bytes: &[u8]) -> Result<P, PointFault> {
    check(P::compressed_on_curve(bytes))
}
