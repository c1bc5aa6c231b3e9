//! The one place the `cuda` feature switches: an enabled implementation
//! over the CUDA bridge, and a disabled one that reports
//! [`CudaUnavailable::NotBuilt`]. Nothing outside this module looks at the
//! feature; the rest of the crate calls these functions either way.
//!
//! The kernel-level functions take the guard of the lock, which must be a
//! CUDA lock (only [`new_lock`] makes those): proof that it is held.

#[cfg(feature = "cuda")]
mod bridge;

pub(crate) use imp::{
    batch_add_g1, device_count, fixed_base_g1, fixed_base_g2, host_alloc_pinned, host_free_pinned,
    host_range_pinned, msm_g1, new_lock, ntt, probe_alloc, set_memory_limit, set_stream_srs,
};

#[cfg(feature = "cuda")]
mod imp {
    use cxx::UniquePtr;

    use super::bridge::ffi;
    use crate::backend::CudaUnavailable;
    use crate::bridge::ffi::NativeGpuLock;
    use crate::error::native;
    use crate::{Error, GpuLockGuard};

    pub(crate) fn device_count() -> u32 {
        ffi::cuda_device_count()
    }

    pub(crate) fn new_lock(device: u32) -> Result<UniquePtr<NativeGpuLock>, Error> {
        match device_count() {
            0 => Err(CudaUnavailable::NoDevice.into()),
            count if device >= count => Err(CudaUnavailable::OutOfRange { device, count }.into()),
            _ => native(|e| ffi::new_cuda_gpu_lock(device, e)),
        }
    }

    pub(crate) fn set_memory_limit(lock: &NativeGpuLock, bytes: u64) -> Result<(), Error> {
        native(|e| ffi::cuda_set_memory_limit(lock, bytes, e))
    }

    pub(crate) fn set_stream_srs(lock: &NativeGpuLock, on: bool) -> Result<(), Error> {
        native(|e| ffi::cuda_set_stream_srs(lock, on, e))
    }

    pub(crate) fn probe_alloc(held: &GpuLockGuard<'_>, bytes: u64) -> Result<(), Error> {
        native(|e| ffi::cuda_probe_alloc(held.lock().native(), bytes, e))
    }

    pub(crate) fn msm_g1(
        held: &GpuLockGuard<'_>,
        points: &[u64],
        scalars: &[u64],
        out: &mut [u64],
    ) -> Result<(), Error> {
        native(|e| ffi::cuda_msm_g1(held.lock().native(), points, scalars, out, e))
    }

    pub(crate) fn batch_add_g1(
        held: &GpuLockGuard<'_>,
        points: &[u64],
        indices: &[usize],
        out: &mut [u64],
    ) -> Result<(), Error> {
        native(|e| ffi::cuda_batch_add_g1(held.lock().native(), points, indices, out, e))
    }

    pub(crate) fn ntt(
        held: &GpuLockGuard<'_>,
        values: &mut [u64],
        inverse: bool,
        coset: bool,
    ) -> Result<(), Error> {
        native(|e| ffi::cuda_ntt(held.lock().native(), values, inverse, coset, e))
    }

    pub(crate) fn fixed_base_g1(
        held: &GpuLockGuard<'_>,
        base: &[u64],
        scalars: &[u64],
        out: &mut [u64],
    ) -> Result<(), Error> {
        native(|e| ffi::cuda_fixed_base_g1(held.lock().native(), base, scalars, out, e))
    }

    pub(crate) fn fixed_base_g2(
        held: &GpuLockGuard<'_>,
        base: &[u64],
        scalars: &[u64],
        out: &mut [u64],
    ) -> Result<(), Error> {
        native(|e| ffi::cuda_fixed_base_g2(held.lock().native(), base, scalars, out, e))
    }

    /// Page-locked host memory, or null (no device, or refused).
    pub(crate) fn host_alloc_pinned(bytes: usize) -> *mut u8 {
        ffi::cuda_host_alloc(bytes)
    }

    /// # Safety
    ///
    /// `data` came from [`host_alloc_pinned`] and is not used afterwards.
    pub(crate) unsafe fn host_free_pinned(data: *mut u8) {
        // SAFETY: by this function's contract.
        unsafe { ffi::cuda_host_free(data) }
    }

    pub(crate) fn host_range_pinned(data: *const u8, bytes: usize) -> bool {
        // SAFETY: CUDA only looks the two addresses up; nothing is read.
        unsafe { ffi::cuda_host_range_pinned(data, bytes) }
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use cxx::UniquePtr;

    use crate::backend::CudaUnavailable;
    use crate::bridge::ffi::NativeGpuLock;
    use crate::{Error, GpuLockGuard};

    fn not_built<T>() -> Result<T, Error> {
        Err(CudaUnavailable::NotBuilt.into())
    }

    pub(crate) fn device_count() -> u32 {
        0
    }

    pub(crate) fn new_lock(_device: u32) -> Result<UniquePtr<NativeGpuLock>, Error> {
        not_built()
    }

    pub(crate) fn set_memory_limit(_lock: &NativeGpuLock, _bytes: u64) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn set_stream_srs(_lock: &NativeGpuLock, _on: bool) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn probe_alloc(_held: &GpuLockGuard<'_>, _bytes: u64) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn msm_g1(
        _held: &GpuLockGuard<'_>,
        _points: &[u64],
        _scalars: &[u64],
        _out: &mut [u64],
    ) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn batch_add_g1(
        _held: &GpuLockGuard<'_>,
        _points: &[u64],
        _indices: &[usize],
        _out: &mut [u64],
    ) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn ntt(
        _held: &GpuLockGuard<'_>,
        _values: &mut [u64],
        _inverse: bool,
        _coset: bool,
    ) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn fixed_base_g1(
        _held: &GpuLockGuard<'_>,
        _base: &[u64],
        _scalars: &[u64],
        _out: &mut [u64],
    ) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn fixed_base_g2(
        _held: &GpuLockGuard<'_>,
        _base: &[u64],
        _scalars: &[u64],
        _out: &mut [u64],
    ) -> Result<(), Error> {
        not_built()
    }

    pub(crate) fn host_alloc_pinned(_bytes: usize) -> *mut u8 {
        std::ptr::null_mut()
    }

    /// # Safety
    ///
    /// Never called: [`host_alloc_pinned`] gives nothing to free.
    pub(crate) unsafe fn host_free_pinned(_data: *mut u8) {
        unreachable!("pinned host memory without the cuda feature")
    }

    pub(crate) fn host_range_pinned(_data: *const u8, _bytes: usize) -> bool {
        false
    }
}
