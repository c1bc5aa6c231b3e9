//! Point encodings (the zcash / bellperson BLS12-381 formats) with checks
//! that say why a point is refused.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::prime::PrimeCurveAffine;
use group::Curve;

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

    /// A sum of points, in projective form (for the batched subgroup test).
    type Sum: Copy + Send + Sync;
    /// The empty sum.
    fn zero() -> Self::Sum;
    /// `sum += self`.
    fn add_to(&self, sum: &mut Self::Sum);
    /// `sum += other`.
    fn add_sum(sum: &mut Self::Sum, other: &Self::Sum);
    /// Whether a sum is in the prime-order subgroup.
    fn sum_in_subgroup(sum: &Self::Sum) -> bool;
}

macro_rules! impl_encoded {
    ($point:ty, $sum:ty, $u:expr, $c:expr) => {
        impl Encoded for $point {
            const UNCOMPRESSED: usize = $u;
            type Sum = $sum;

            fn put_uncompressed(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_uncompressed());
            }

            fn put_compressed(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_compressed());
            }

            fn uncompressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)> {
                let bytes: &[u8; $u] = bytes.try_into().ok()?;
                let p = Option::<Self>::from(Self::from_uncompressed_unchecked(bytes))?;
                // With the three flag bits clear, blst decoded both
                // coordinates as field elements below the modulus, so the
                // bytes are the point's own encoding; only flagged bytes
                // (say, a compressed point in an uncompressed slot) need
                // the re-encoding to tell.
                let canonical = bytes[0] & FLAG_BITS == 0 || p.to_uncompressed() == *bytes;
                Some((p, canonical))
            }

            fn compressed_on_curve(bytes: &[u8]) -> Option<(Self, bool)> {
                let bytes: &[u8; $c] = bytes.try_into().ok()?;
                let p = Option::<Self>::from(Self::from_compressed_unchecked(bytes))?;
                Some((p, p.to_compressed() == *bytes))
            }

            fn in_subgroup(&self) -> bool {
                bool::from(self.is_torsion_free())
            }

            fn zero() -> $sum {
                <$sum as group::Group>::identity()
            }

            fn add_to(&self, sum: &mut $sum) {
                *sum += self;
            }

            fn add_sum(sum: &mut $sum, other: &$sum) {
                *sum += other;
            }

            fn sum_in_subgroup(sum: &$sum) -> bool {
                bool::from(sum.to_affine().is_torsion_free())
            }
        }
    };
}

/// The compression, infinity and sort flags of an encoding's first byte.
const FLAG_BITS: u8 = 0xe0;

impl_encoded!(G1Affine, G1Projective, 96, 48);
impl_encoded!(G2Affine, G2Projective, 192, 96);

/// The checks shared by both encodings but the subgroup's, after decoding
/// to a point on the curve (`canonical`: whether it re-encodes to the same
/// bytes).
fn check_on_curve<P: Encoded>(decoded: Option<(P, bool)>) -> Result<P, PointFault> {
    let (p, canonical) = decoded.ok_or(PointFault::NotOnCurve)?;
    if !canonical {
        return Err(PointFault::NonCanonical);
    }
    if bool::from(p.is_identity()) {
        return Err(PointFault::Identity);
    }
    Ok(p)
}

/// Every check: [`check_on_curve`]'s, then the subgroup.
fn check<P: Encoded>(decoded: Option<(P, bool)>) -> Result<P, PointFault> {
    let p = check_on_curve(decoded)?;
    if !p.in_subgroup() {
        return Err(PointFault::NotInSubgroup);
    }
    Ok(p)
}

/// Decodes an uncompressed point: on the curve, canonical, not the
/// identity. The subgroup check is the caller's (parameter files check it
/// in batches, `params::subgroup`).
pub(crate) fn decode_on_curve<P: Encoded>(bytes: &[u8]) -> Result<P, PointFault> {
    check_on_curve(P::uncompressed_on_curve(bytes))
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
