//! The casts between blstrs values and the `u64` limbs the bridge carries.

use std::mem::{align_of, size_of};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// Types whose memory is exactly `LIMBS` `u64`s.
///
/// # Safety
///
/// Implementors must be `#[repr(transparent)]` over a `#[repr(C)]` struct
/// made only of `u64`s (`LIMBS` of them, so no padding), for which every bit
/// pattern is a valid value of the type.
pub(crate) unsafe trait Limbs: Sized {
    /// Number of `u64` limbs in one value.
    const LIMBS: usize;
}

// SAFETY: blstrs::Scalar is #[repr(transparent)] over blst_fr, a #[repr(C)]
// struct of [u64; 4] (Montgomery form).
unsafe impl Limbs for Scalar {
    const LIMBS: usize = 4;
}
// SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, #[repr(C)]
// { x, y: blst_fp } with blst_fp a #[repr(C)] [u64; 6].
unsafe impl Limbs for G1Affine {
    const LIMBS: usize = 12;
}
// SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine, #[repr(C)]
// { x, y: blst_fp2 } with blst_fp2 a #[repr(C)] [blst_fp; 2].
unsafe impl Limbs for G2Affine {
    const LIMBS: usize = 24;
}
// SAFETY: G1Projective is #[repr(transparent)] over blst_p1, #[repr(C)]
// { x, y, z: blst_fp }.
unsafe impl Limbs for G1Projective {
    const LIMBS: usize = 18;
}
// SAFETY: G2Projective is #[repr(transparent)] over blst_p2, #[repr(C)]
// { x, y, z: blst_fp2 }.
unsafe impl Limbs for G2Projective {
    const LIMBS: usize = 36;
}

const fn is_limbs<T>(limbs: usize) -> bool {
    size_of::<T>() == limbs * 8 && align_of::<T>() == align_of::<u64>()
}

const _: () = assert!(is_limbs::<Scalar>(<Scalar as Limbs>::LIMBS));
const _: () = assert!(is_limbs::<G1Affine>(<G1Affine as Limbs>::LIMBS));
const _: () = assert!(is_limbs::<G2Affine>(<G2Affine as Limbs>::LIMBS));
const _: () = assert!(is_limbs::<G1Projective>(<G1Projective as Limbs>::LIMBS));
const _: () = assert!(is_limbs::<G2Projective>(<G2Projective as Limbs>::LIMBS));

/// `values` seen as their limbs.
pub(crate) fn limbs<T: Limbs>(values: &[T]) -> &[u64] {
    // SAFETY: by the Limbs contract (checked for size and alignment above)
    // the slice's memory is exactly len * LIMBS initialised, aligned u64s,
    // borrowed for as long as `values`.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len() * T::LIMBS) }
}

/// `values` seen as their limbs, for the native side to write.
pub(crate) fn limbs_mut<T: Limbs>(values: &mut [T]) -> &mut [u64] {
    // SAFETY: as in `limbs`, with the borrow exclusive; and whatever u64s
    // are written, every bit pattern is a valid T (Limbs contract).
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len() * T::LIMBS) }
}
