//! Fixed-base scalar multiplication: `k_i * base` for many scalars and one
//! base point, the bulk of parameter generation.
//!
//! On the CPU each product is blst's constant-time multiplication, on the
//! CUDA backend a window table of the base is uploaded, one thread per
//! scalar adds its rows and makes the sum affine (`native/cuda/fixed_base.cu`).
//! Either way the result is the unique affine form of each product, so the
//! two agree byte for byte.

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::raw::{limbs, limbs_mut, Limbs};
use crate::{cuda, Backend, Error, GpuLockGuard};

/// Points per batch conversion to affine (one field inversion each).
const AFFINE_CHUNK: usize = 1 << 12;

/// `k * base` for every `k` of `scalars`, in G1, on the CPU (all cores).
pub fn fixed_base_g1(base: &G1Affine, scalars: &[Scalar]) -> Vec<G1Affine> {
    let base = G1Projective::from(base);
    let points: Vec<G1Projective> = scalars.par_iter().map(|k| base * k).collect();
    g1_to_affine(&points)
}

/// `k * base` for every `k` of `scalars`, in G2, on the CPU (all cores).
pub fn fixed_base_g2(base: &G2Affine, scalars: &[Scalar]) -> Vec<G2Affine> {
    let base = G2Projective::from(base);
    let points: Vec<G2Projective> = scalars.par_iter().map(|k| base * k).collect();
    g2_to_affine(&points)
}

/// [`fixed_base_g1`] on the backend of the lock `held` holds.
pub fn fixed_base_g1_on(
    held: &GpuLockGuard<'_>,
    base: &G1Affine,
    scalars: &[Scalar],
) -> Result<Vec<G1Affine>, Error> {
    if held.lock().backend() == Backend::Cpu {
        return Ok(fixed_base_g1(base, scalars));
    }
    on_device("G1", base, scalars, |b, k, out| {
        cuda::fixed_base_g1(held, b, k, out)
    })
}

/// [`fixed_base_g2`] on the backend of the lock `held` holds.
pub fn fixed_base_g2_on(
    held: &GpuLockGuard<'_>,
    base: &G2Affine,
    scalars: &[Scalar],
) -> Result<Vec<G2Affine>, Error> {
    if held.lock().backend() == Backend::Cpu {
        return Ok(fixed_base_g2(base, scalars));
    }
    on_device("G2", base, scalars, |b, k, out| {
        cuda::fixed_base_g2(held, b, k, out)
    })
}

/// Runs `kernel(base, scalars, affine out)` as limbs, logging (`debug`)
/// the time of each step: where parameter generation on the device spends
/// its time. The device takes blstrs' Montgomery scalars as they are and
/// returns affine points, so the host only allocates the output.
fn on_device<A>(
    group: &'static str,
    base: &A,
    scalars: &[Scalar],
    kernel: impl FnOnce(&[u64], &[u64], &mut [u64]) -> Result<(), Error>,
) -> Result<Vec<A>, Error>
where
    A: Limbs + PrimeCurveAffine + Send + Sync,
{
    let started = Instant::now();
    let mut out = filled(scalars.len(), A::identity());
    let prepared = Instant::now();
    kernel(
        limbs(std::slice::from_ref(base)),
        limbs(scalars),
        limbs_mut(&mut out),
    )?;
    let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1e3;
    tracing::debug!(
        group,
        n = scalars.len(),
        allocate_ms = ms(started, prepared),
        device_ms = ms(prepared, Instant::now()),
        "fixed-base multiplication on the device"
    );
    Ok(out)
}

/// `n` copies of `value`, written on all cores (gigabytes at a setup's
/// sizes: one core alone takes a good part of a second).
fn filled<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    out.par_extend(rayon::iter::repeat_n(value, n));
    out
}

/// The affine forms of `points`, in batches on all cores (blst: one field
/// inversion per batch).
pub fn g1_to_affine(points: &[G1Projective]) -> Vec<G1Affine> {
    let mut out = filled(points.len(), G1Affine::identity());
    out.par_chunks_mut(AFFINE_CHUNK)
        .zip(points.par_chunks(AFFINE_CHUNK))
        .for_each(|(dst, src)| {
            let from = [src.as_ptr().cast::<blst::blst_p1>(), std::ptr::null()];
            // SAFETY: G1Projective / G1Affine are #[repr(transparent)] over
            // blst_p1 / blst_p1_affine (crate::raw); with the second pointer
            // null blst reads src.len() contiguous points from the first and
            // writes as many affine points into dst, which has that length.
            unsafe {
                blst::blst_p1s_to_affine(dst.as_mut_ptr().cast(), from.as_ptr(), src.len());
            }
        });
    out
}

/// [`g1_to_affine`] in G2.
pub fn g2_to_affine(points: &[G2Projective]) -> Vec<G2Affine> {
    let mut out = filled(points.len(), G2Affine::identity());
    out.par_chunks_mut(AFFINE_CHUNK)
        .zip(points.par_chunks(AFFINE_CHUNK))
        .for_each(|(dst, src)| {
            let from = [src.as_ptr().cast::<blst::blst_p2>(), std::ptr::null()];
            // SAFETY: as in g1_to_affine, for blst_p2 / blst_p2_affine.
            unsafe {
                blst::blst_p2s_to_affine(dst.as_mut_ptr().cast(), from.as_ptr(), src.len());
            }
        });
    out
}
