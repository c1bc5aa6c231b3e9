//! The three-phase prover.

use blstrs::{G1Affine, G2Affine, Scalar};
use group::prime::PrimeCurveAffine;

use crate::backend::{Backend, Residency};
use crate::bridge::ffi;
use crate::error::native;
use crate::raw::{limbs, limbs_mut};
use crate::srs::SrsShape;
use crate::{Assignment, Error, GpuLock, Srs};

/// One Groth16 proof's points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawProof {
    /// A, in G1.
    pub a: G1Affine,
    /// B, in G2.
    pub b: G2Affine,
    /// C, in G1.
    pub c: G1Affine,
}

/// Where one `prove` call spent its time, and where its kernel region ran;
/// instants on [`crate::monotonic_ns`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimings {
    /// Preamble (lock not held): scalar preparation, B_G2 MSM start, the
    /// backend's preparation (CUDA: bitmaps, tails and a, b, c in pinned
    /// staging).
    pub preamble_ns: u64,
    /// Waiting for the lock.
    pub lock_wait_ns: u64,
    /// Kernel region (lock held).
    pub kernel_ns: u64,
    /// Epilogue (lock not held): B_G2 join, proof assembly.
    pub epilogue_ns: u64,
    /// When the lock was taken.
    pub lock_taken_ns: u64,
    /// When the lock was released.
    pub lock_released_ns: u64,
    /// The lock's backend.
    pub backend: Backend,
    /// Where the kernel region read the key's G1 points from.
    pub residency: Residency,
    /// Setting the key up on the device in this call (its first use there:
    /// upload, or pinning for streaming); part of `kernel_ns`. 0 otherwise.
    pub srs_upload_ns: u64,
}

/// Proofs of a batch, with where the time went.
#[derive(Clone, Debug)]
pub struct ProveOutput {
    /// One proof per assignment, in order.
    pub proofs: Vec<RawProof>,
    /// Timings of the call.
    pub timings: PhaseTimings,
}

/// Proves a batch of circuits that share `srs`, with blinding `r[i]`, `s[i]`
/// for circuit `i`. The lock is held only in the kernel region, which runs
/// on the lock's backend (and device); B_G2 is always on the CPU.
///
/// Shapes are checked first: a batch that does not fit `srs` (or `r`, `s`
/// of the wrong length) fails with [`Error::Shape`] naming the quantity,
/// before any work. Native failures come back typed ([`Error::Cuda`] with
/// its code and [`crate::CudaErrorKind`], [`Error::DeviceMemory`],
/// [`Error::InvalidInput`]) or as [`Error::Native`]; the lock is released on
/// every path. A sticky CUDA error loses the lock's device
/// ([`GpuLock::is_lost`]). The lock's fault plan
/// ([`GpuLock::set_fault_plan`]) may make this call's kernel region fail, or
/// panic.
pub fn prove(
    lock: &GpuLock,
    srs: &Srs,
    assignments: &[Assignment<'_>],
    r: &[Scalar],
    s: &[Scalar],
) -> Result<ProveOutput, Error> {
    let n = assignments.len();
    Error::check_shape("r blinding factors vs batch", n, r.len())?;
    Error::check_shape("s blinding factors vs batch", n, s.len())?;
    for assignment in assignments {
        check_assignment(srs.shape(), assignment)?;
    }
    let circuits: Vec<ffi::CircuitView<'_>> = assignments.iter().map(circuit_view).collect();
    let mut a = vec![G1Affine::identity(); n];
    let mut b = vec![G2Affine::identity(); n];
    let mut c = vec![G1Affine::identity(); n];
    let fault = lock.next_fault().map_or(0, |kind| kind.native_code());
    let t = native(|e| {
        ffi::prove(
            lock.native(),
            srs.native(),
            &circuits,
            limbs(r),
            limbs(s),
            limbs_mut(&mut a),
            limbs_mut(&mut b),
            limbs_mut(&mut c),
            fault,
            e,
        )
    })?;
    let proofs = a
        .into_iter()
        .zip(b)
        .zip(c)
        .map(|((a, b), c)| RawProof { a, b, c })
        .collect();
    let timings = PhaseTimings {
        preamble_ns: t.preamble_ns,
        lock_wait_ns: t.lock_wait_ns,
        kernel_ns: t.kernel_ns,
        epilogue_ns: t.epilogue_ns,
        lock_taken_ns: t.lock_taken_ns,
        lock_released_ns: t.lock_released_ns,
        backend: Backend::from_native(t.backend),
        residency: Residency::from_native(t.residency),
        srs_upload_ns: t.srs_upload_ns,
    };
    log_call(lock.device(), n, &timings, &t);
    Ok(ProveOutput { proofs, timings })
}

/// Logs one call: the key's set-up on its first use of a device (`info`),
/// the kernel region (`debug`), and the preamble's steps
/// ([`trace_preamble`]).
fn log_call(device: u32, circuits: usize, timings: &PhaseTimings, t: &ffi::PhaseTimes) {
    if timings.srs_upload_ns > 0 {
        tracing::info!(
            device,
            backend = %timings.backend,
            residency = %timings.residency,
            upload_ms = ms(timings.srs_upload_ns),
            "proving key set up on the device"
        );
    }
    tracing::debug!(
        device,
        circuits,
        backend = %timings.backend,
        residency = %timings.residency,
        kernel_ms = ms(timings.kernel_ns),
        "kernel region"
    );
    trace_preamble(device, t);
}

/// The target of the native layer's trace events: the preamble's step
/// times, which the native prover measures on every call and returns with
/// its phase times. `RUST_LOG=cuzk::native=debug` shows them.
pub const NATIVE_TRACE_TARGET: &str = "cuzk::native";

/// One `debug` event per preamble step, with fields `device`, `step`
/// (`classify`, `backend`, `b_g2`: the B_G2 MSMs on a background thread,
/// beside the kernel region) and `ms`. The events cost a filter check when
/// the target is off.
fn trace_preamble(device: u32, t: &ffi::PhaseTimes) {
    let steps = [
        ("classify", t.classify_ns),
        ("backend", t.backend_prepare_ns),
        ("b_g2", t.b_g2_ns),
    ];
    for (step, ns) in steps {
        tracing::debug!(target: NATIVE_TRACE_TARGET, device, step, ms = ms(ns), "preamble step");
    }
}

/// `ns` in milliseconds, to 10 µs: a log field.
fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e4).round() / 100.0
}

/// Checks one assignment against itself and the SRS. `expected` is what the
/// SRS (or the assignment's own A evaluations) implies, `got` what was given.
fn check_assignment(srs: SrsShape, a: &Assignment<'_>) -> Result<(), Error> {
    let constraints = a.a.len();
    Error::check_shape("B evaluations vs A evaluations", constraints, a.b.len())?;
    Error::check_shape("C evaluations vs A evaluations", constraints, a.c.len())?;
    let domain = constraints.max(1).next_power_of_two();
    Error::check_shape("domain - 1 vs SRS h", srs.h, domain - 1)?;
    let (inputs, aux) = (a.input.len(), a.aux.len());
    Error::check_shape(
        "A aux density vs aux assignment",
        aux,
        a.a_aux_density.len(),
    )?;
    Error::check_shape("B input density vs inputs", inputs, a.b_input_density.len())?;
    Error::check_shape(
        "B aux density vs aux assignment",
        aux,
        a.b_aux_density.len(),
    )?;
    Error::check_shape("aux assignment vs SRS l", srs.l, aux)?;
    let a_vars = inputs + a.a_aux_density.count_ones();
    Error::check_shape("inputs + A aux density vs SRS a", srs.a, a_vars)?;
    let b_vars = a.b_input_density.count_ones() + a.b_aux_density.count_ones();
    Error::check_shape("B densities vs SRS b_g1", srs.b_g1, b_vars)?;
    Error::check_shape("B densities vs SRS b_g2", srs.b_g2, b_vars)
}

/// The bridge's borrowed view of one assignment.
fn circuit_view<'a>(a: &Assignment<'a>) -> ffi::CircuitView<'a> {
    ffi::CircuitView {
        a: limbs(a.a),
        b: limbs(a.b),
        c: limbs(a.c),
        input: limbs(a.input),
        aux: limbs(a.aux),
        a_aux_density: a.a_aux_density.words(),
        a_aux_bits: a.a_aux_density.len(),
        b_input_density: a.b_input_density.words(),
        b_input_bits: a.b_input_density.len(),
        b_aux_density: a.b_aux_density.words(),
        b_aux_bits: a.b_aux_density.len(),
    }
}
