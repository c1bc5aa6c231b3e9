//! The native kernels on their own, for tests and benchmarks.
//!
//! The plain functions run on the CPU. The `_on` functions run on a lock's
//! backend (its CUDA device, or the CPU) and take the lock's guard, proof
//! that the caller holds it; on the CUDA backend the points are uploaded for
//! the call, not kept, and a sticky error loses the device as a kernel
//! region would ([`crate::GpuLock::is_lost`]).

mod fixed_base;

use std::slice;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;

use crate::bridge::ffi;
use crate::error::native;
use crate::raw::{limbs, limbs_mut};
use crate::{cuda, Backend, Error, GpuLockGuard};

pub use fixed_base::{
    fixed_base_g1, fixed_base_g1_on, fixed_base_g2, fixed_base_g2_on, g1_to_affine, g2_to_affine,
};

/// `sum(scalars[i] * points[i])` in G1, multi-threaded Pippenger.
pub fn msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, Error> {
    Error::check_shape("MSM scalars vs points", points.len(), scalars.len())?;
    let mut out = G1Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    native(|e| ffi::msm_g1(limbs(points), limbs(scalars), result, e))?;
    Ok(out)
}

/// `sum(scalars[i] * points[i])` in G2, multi-threaded Pippenger.
pub fn msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective, Error> {
    Error::check_shape("MSM scalars vs points", points.len(), scalars.len())?;
    let mut out = G2Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    native(|e| ffi::msm_g2(limbs(points), limbs(scalars), result, e))?;
    Ok(out)
}

/// `sum(points[i] for i in indices)` in G1: the prover's batch addition for
/// variables whose scalar is exactly 1. Indices may repeat.
pub fn batch_add_g1(points: &[G1Affine], indices: &[usize]) -> Result<G1Projective, Error> {
    let mut out = G1Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    native(|e| ffi::batch_add_g1(limbs(points), indices, result, e))?;
    Ok(out)
}

/// `sum(points[i] for i in indices)` in G2.
pub fn batch_add_g2(points: &[G2Affine], indices: &[usize]) -> Result<G2Projective, Error> {
    let mut out = G2Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    native(|e| ffi::batch_add_g2(limbs(points), indices, result, e))?;
    Ok(out)
}

/// In-place NTT over the domain of size `values.len()` (a power of two):
/// evaluations from coefficients, or the inverse when `inverse`.
///
/// Evaluation `i` is at `w^i`, `w = ROOT_OF_UNITY^(2^(32 - k))` for
/// `len = 2^k`, as in `ff`/bellperson; the inverse includes the `1/len`.
pub fn ntt(values: &mut [Scalar], inverse: bool) -> Result<(), Error> {
    check_power_of_two(values.len())?;
    native(|e| ffi::ntt(limbs_mut(values), inverse, false, e))?;
    Ok(())
}

/// In-place NTT over the coset `g<w>`, `g` = 7 (`MULTIPLICATIVE_GENERATOR`):
/// evaluation `i` is at `g * w^i`; `inverse` interpolates back.
pub fn coset_ntt(values: &mut [Scalar], inverse: bool) -> Result<(), Error> {
    check_power_of_two(values.len())?;
    native(|e| ffi::ntt(limbs_mut(values), inverse, true, e))?;
    Ok(())
}

/// [`msm_g1`] on the backend of the lock `held` holds.
pub fn msm_g1_on(
    held: &GpuLockGuard<'_>,
    points: &[G1Affine],
    scalars: &[Scalar],
) -> Result<G1Projective, Error> {
    if held.lock().backend() == Backend::Cpu {
        return msm_g1(points, scalars);
    }
    Error::check_shape("MSM scalars vs points", points.len(), scalars.len())?;
    let mut out = G1Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    cuda::msm_g1(held, limbs(points), limbs(scalars), result)?;
    Ok(out)
}

/// [`batch_add_g1`] on the backend of the lock `held` holds.
pub fn batch_add_g1_on(
    held: &GpuLockGuard<'_>,
    points: &[G1Affine],
    indices: &[usize],
) -> Result<G1Projective, Error> {
    if held.lock().backend() == Backend::Cpu {
        return batch_add_g1(points, indices);
    }
    let mut out = G1Projective::identity();
    let result = limbs_mut(slice::from_mut(&mut out));
    cuda::batch_add_g1(held, limbs(points), indices, result)?;
    Ok(out)
}

/// [`ntt`] on the backend of the lock `held` holds.
pub fn ntt_on(held: &GpuLockGuard<'_>, values: &mut [Scalar], inverse: bool) -> Result<(), Error> {
    transform_on(held, values, inverse, false)
}

/// [`coset_ntt`] on the backend of the lock `held` holds.
pub fn coset_ntt_on(
    held: &GpuLockGuard<'_>,
    values: &mut [Scalar],
    inverse: bool,
) -> Result<(), Error> {
    transform_on(held, values, inverse, true)
}

fn transform_on(
    held: &GpuLockGuard<'_>,
    values: &mut [Scalar],
    inverse: bool,
    coset: bool,
) -> Result<(), Error> {
    check_power_of_two(values.len())?;
    match held.lock().backend() {
        Backend::Cpu => native(|e| ffi::ntt(limbs_mut(values), inverse, coset, e)),
        Backend::Cuda => cuda::ntt(held, limbs_mut(values), inverse, coset),
    }
}

fn check_power_of_two(len: usize) -> Result<(), Error> {
    if len.is_power_of_two() {
        return Ok(());
    }
    Err(Error::Shape {
        what: "NTT length (a power of two)",
        expected: len.next_power_of_two(),
        got: len,
    })
}
