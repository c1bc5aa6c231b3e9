//! The cxx bridge to the native layer (`native/`), and nothing else.
//!
//! blstrs values cross as `u64` limbs of blst's C structs; the casts live in
//! [`crate::raw`]. Every native function that can fail reports it in a
//! [`ffi::NativeError`] it is handed (`native/include/cuzk/bridge_error.hpp`
//! catches every exception into it); [`crate::error`] maps that into
//! [`crate::Error`].

#[cxx::bridge(namespace = "cuzk")]
pub(crate) mod ffi {
    // 1. Plain data shared by both sides.

    /// What kind of failure a [`NativeError`] reports.
    #[namespace = "cuzk::ffi"]
    #[repr(u8)]
    enum ErrorKind {
        /// No failure.
        None,
        /// A precondition on the caller's input (`std::invalid_argument`).
        InvalidInput,
        /// A CUDA call failed; the context is fine.
        Transient,
        /// A CUDA allocation failed (`cudaErrorMemoryAllocation`).
        OutOfMemory,
        /// A CUDA call failed and the device's context is unusable.
        Sticky,
        /// The proving key does not fit the device (`device_memory_error_t`).
        KeyTooLarge,
        /// Any other exception.
        Internal,
    }

    /// A native failure, as a value: its kind, and the fields of the
    /// exception it came from (those its kind does not use are left empty).
    #[namespace = "cuzk::ffi"]
    struct NativeError {
        kind: ErrorKind,
        /// The `cudaError_t` (CUDA kinds).
        code: i32,
        /// The CUDA call as written in the native source (CUDA kinds).
        call: String,
        /// The runtime's error name and description (CUDA kinds).
        detail: String,
        /// `file:line` of the call (CUDA kinds).
        location: String,
        /// `KeyTooLarge`: the device, bytes needed and available.
        device: u32,
        needed: u64,
        available: u64,
        /// The exception's `what()`.
        message: String,
    }

    /// Counters of a native `gpu_lock_t`.
    #[namespace = "cuzk::ffi"]
    struct LockCounters {
        acquisitions: u64,
        wait_ns: u64,
        hold_ns: u64,
    }

    /// A `prove` call's phase durations and lock instants.
    #[namespace = "cuzk::ffi"]
    struct PhaseTimes {
        preamble_ns: u64,
        lock_wait_ns: u64,
        kernel_ns: u64,
        epilogue_ns: u64,
        lock_taken_ns: u64,
        lock_released_ns: u64,
        /// `cuzk::backend_t`: 0 CPU, 1 CUDA.
        backend: u8,
        /// `cuzk::residency_t`: 0 host, 1 device, 2 streamed.
        residency: u8,
        srs_upload_ns: u64,
        /// The preamble's steps: sorting terms, the backend's preparation,
        /// and the background B_G2 MSMs (traced as `cuzk::native` events).
        classify_ns: u64,
        backend_prepare_ns: u64,
        b_g2_ns: u64,
    }

    /// A proving key's points as limbs: 12 per G1 point, 24 per G2 point.
    #[namespace = "cuzk::ffi"]
    struct SrsView<'a> {
        alpha_g1: &'a [u64],
        beta_g1: &'a [u64],
        beta_g2: &'a [u64],
        delta_g1: &'a [u64],
        delta_g2: &'a [u64],
        h: &'a [u64],
        l: &'a [u64],
        a: &'a [u64],
        b_g1: &'a [u64],
        b_g2: &'a [u64],
    }

    /// One circuit of a batch: scalars as 4 limbs each (Montgomery form),
    /// densities as bitmap words plus their length in bits.
    #[namespace = "cuzk::ffi"]
    struct CircuitView<'a> {
        a: &'a [u64],
        b: &'a [u64],
        c: &'a [u64],
        input: &'a [u64],
        aux: &'a [u64],
        a_aux_density: &'a [u64],
        a_aux_bits: usize,
        b_input_density: &'a [u64],
        b_input_bits: usize,
        b_aux_density: &'a [u64],
        b_aux_bits: usize,
    }

    // 2. Native objects, opaque to Rust, made by factories.
    unsafe extern "C++" {
        include!("cuzk/bridge.hpp");

        /// `cuzk::gpu_lock_t`: one device's mutex and counters.
        #[cxx_name = "gpu_lock_t"]
        type NativeGpuLock;
        /// `cuzk::srs_t`: the proving key's points.
        #[cxx_name = "srs_t"]
        type NativeSrs;

        fn monotonic_ns() -> u64;

        #[namespace = "cuzk::ffi"]
        fn new_gpu_lock(device: u32, error: &mut NativeError) -> UniquePtr<NativeGpuLock>;
        #[namespace = "cuzk::ffi"]
        fn lock_device(lock: &NativeGpuLock) -> u32;
        #[namespace = "cuzk::ffi"]
        fn lock_acquire(lock: &NativeGpuLock, error: &mut NativeError) -> u64;
        #[namespace = "cuzk::ffi"]
        fn lock_try_acquire(lock: &NativeGpuLock) -> bool;
        #[namespace = "cuzk::ffi"]
        fn lock_release(lock: &NativeGpuLock) -> u64;
        #[namespace = "cuzk::ffi"]
        fn lock_lost(lock: &NativeGpuLock) -> bool;
        #[namespace = "cuzk::ffi"]
        fn lock_counters(lock: &NativeGpuLock) -> LockCounters;

        #[namespace = "cuzk::ffi"]
        fn new_srs(parts: &SrsView, error: &mut NativeError) -> UniquePtr<NativeSrs>;

        /// Ordinary 64-byte-aligned host memory; null when refused.
        #[namespace = "cuzk::ffi"]
        fn host_alloc(bytes: usize) -> *mut u8;
        /// Frees what `host_alloc` gave.
        #[namespace = "cuzk::ffi"]
        unsafe fn host_free(data: *mut u8);
    }

    // 3. Kernels and the prover.
    #[namespace = "cuzk::ffi"]
    unsafe extern "C++" {
        fn msm_g1(points: &[u64], scalars: &[u64], out: &mut [u64], error: &mut NativeError);
        fn msm_g2(points: &[u64], scalars: &[u64], out: &mut [u64], error: &mut NativeError);
        fn batch_add_g1(
            points: &[u64],
            indices: &[usize],
            out: &mut [u64],
            error: &mut NativeError,
        );
        fn batch_add_g2(
            points: &[u64],
            indices: &[usize],
            out: &mut [u64],
            error: &mut NativeError,
        );
        fn ntt(values: &mut [u64], inverse: bool, coset: bool, error: &mut NativeError);

        #[allow(clippy::too_many_arguments)]
        fn prove(
            lock: &NativeGpuLock,
            srs: &NativeSrs,
            circuits: &[CircuitView],
            r: &[u64],
            s: &[u64],
            proof_a: &mut [u64],
            proof_b: &mut [u64],
            proof_c: &mut [u64],
            fault: u8,
            error: &mut NativeError,
        ) -> PhaseTimes;
    }
}
