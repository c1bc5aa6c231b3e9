//! The cxx bridge to the native layer (`native/`), and nothing else.
//!
//! blstrs values cross as `u64` limbs of blst's C structs; the casts live in
//! [`crate::raw`]. Every native function that can throw returns `Result`.

#[cxx::bridge(namespace = "cuzk")]
pub(crate) mod ffi {
    // 1. Plain data shared by both sides.

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
        fn new_gpu_lock(device: u32) -> Result<UniquePtr<NativeGpuLock>>;
        #[namespace = "cuzk::ffi"]
        fn lock_device(lock: &NativeGpuLock) -> u32;
        #[namespace = "cuzk::ffi"]
        fn lock_acquire(lock: &NativeGpuLock) -> Result<u64>;
        #[namespace = "cuzk::ffi"]
        fn lock_try_acquire(lock: &NativeGpuLock) -> bool;
        #[namespace = "cuzk::ffi"]
        fn lock_release(lock: &NativeGpuLock) -> u64;
        #[namespace = "cuzk::ffi"]
        fn lock_counters(lock: &NativeGpuLock) -> LockCounters;

        #[namespace = "cuzk::ffi"]
        fn new_srs(parts: &SrsView) -> Result<UniquePtr<NativeSrs>>;

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
        fn msm_g1(points: &[u64], scalars: &[u64], out: &mut [u64]) -> Result<()>;
        fn msm_g2(points: &[u64], scalars: &[u64], out: &mut [u64]) -> Result<()>;
        fn batch_add_g1(points: &[u64], indices: &[usize], out: &mut [u64]) -> Result<()>;
        fn batch_add_g2(points: &[u64], indices: &[usize], out: &mut [u64]) -> Result<()>;
        fn ntt(values: &mut [u64], inverse: bool, coset: bool) -> Result<()>;

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
        ) -> Result<PhaseTimes>;
    }
}
