//! The CUDA half of the cxx bridge, and nothing else; built only with the
//! `cuda` feature (`native/include/cuzk/cuda/bridge.hpp`,
//! `native/cuda/backend/bridge.cpp`).

#[cxx::bridge(namespace = "cuzk::ffi")]
pub(crate) mod ffi {
    unsafe extern "C++" {
        include!("cuzk/cuda/bridge.hpp");

        /// The lock type of the main bridge.
        #[namespace = "cuzk"]
        #[cxx_name = "gpu_lock_t"]
        type NativeGpuLock = crate::bridge::ffi::NativeGpuLock;
        /// The failure report of the main bridge.
        type NativeError = crate::bridge::ffi::NativeError;

        fn cuda_device_count() -> u32;
        fn new_cuda_gpu_lock(device: u32, error: &mut NativeError) -> UniquePtr<NativeGpuLock>;
        fn cuda_set_memory_limit(lock: &NativeGpuLock, bytes: u64, error: &mut NativeError);
        fn cuda_set_stream_srs(lock: &NativeGpuLock, on: bool, error: &mut NativeError);

        // These need the lock held by the calling thread.
        fn cuda_probe_alloc(lock: &NativeGpuLock, bytes: u64, error: &mut NativeError);
        fn cuda_msm_g1(
            lock: &NativeGpuLock,
            points: &[u64],
            scalars: &[u64],
            out: &mut [u64],
            error: &mut NativeError,
        );
        fn cuda_batch_add_g1(
            lock: &NativeGpuLock,
            points: &[u64],
            indices: &[usize],
            out: &mut [u64],
            error: &mut NativeError,
        );
        fn cuda_ntt(
            lock: &NativeGpuLock,
            values: &mut [u64],
            inverse: bool,
            coset: bool,
            error: &mut NativeError,
        );
        /// `out[i] = scalars[i] * base`: Montgomery scalars, affine out.
        fn cuda_fixed_base_g1(
            lock: &NativeGpuLock,
            base: &[u64],
            scalars: &[u64],
            out: &mut [u64],
            error: &mut NativeError,
        );
        fn cuda_fixed_base_g2(
            lock: &NativeGpuLock,
            base: &[u64],
            scalars: &[u64],
            out: &mut [u64],
            error: &mut NativeError,
        );

        /// Page-locked host memory, portable to every device; null when
        /// there is no device or the allocation fails.
        fn cuda_host_alloc(bytes: usize) -> *mut u8;
        /// Frees what `cuda_host_alloc` gave.
        unsafe fn cuda_host_free(data: *mut u8);
        /// Whether the first and last byte of the range are page-locked.
        unsafe fn cuda_host_range_pinned(data: *const u8, bytes: usize) -> bool;
    }
}
