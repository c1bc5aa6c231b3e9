//! [`HostVec`]: a fixed-length vector in host memory that the GPU copies
//! from directly, page-locked when it can be.

use std::fmt;
use std::mem::{align_of, size_of, MaybeUninit};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::slice;

use blstrs::Scalar;
use rayon::prelude::*;

use crate::cuda;
use crate::host_pool::{HostBlock, HostPool, HOST_ALIGNMENT};

/// Elements per parallel task when filling or copying.
const CHUNK: usize = 4096;

/// Plain data a [`HostVec`] can hold.
///
/// # Safety
///
/// Implementors must be `Copy` values without pointers, references or
/// interior mutability, aligned to at most 64 bytes, for which every bit
/// pattern of their size (all zeros included) is a valid value: a
/// `HostVec`'s memory comes from native allocators and from other dropped
/// vectors, and [`HostVec::zeroed`] writes zero bytes.
pub unsafe trait HostPod: Copy + Send + Sync + 'static {}

// SAFETY: integers: every bit pattern is a value.
unsafe impl HostPod for u8 {}
// SAFETY: as above.
unsafe impl HostPod for u32 {}
// SAFETY: as above.
unsafe impl HostPod for u64 {}
// SAFETY: blstrs::Scalar is #[repr(transparent)] over blst_fr, a #[repr(C)]
// [u64; 4] (Montgomery form). A pattern >= the modulus is not a reduced
// field element, but blst's arithmetic on it stays memory-safe; zero bytes
// are the scalar 0.
unsafe impl HostPod for Scalar {}

/// A fixed-length vector in host memory the GPU copies from directly.
///
/// With the `cuda` feature and a device present its memory is page-locked
/// (cudaHostAlloc, portable to every device), so the CUDA backend uploads it
/// by DMA with no staging copy; otherwise it is ordinary 64-byte-aligned
/// memory ([`is_pinned`](Self::is_pinned) says which). Dropping a
/// `HostVec` returns its memory to a process-wide pool
/// ([`host_pool_stats`](crate::host_pool_stats)), from which the next
/// vector of the same byte size is made without allocating.
///
/// It derefs to `[T]`; its length never changes.
///
/// ```
/// use supraseal_c2::HostVec;
///
/// let squares = HostVec::from_par_fn(1000, |i| (i * i) as u64);
/// assert_eq!(squares[31], 961);
/// assert_eq!(HostVec::<u64>::zeroed(4)[..], [0; 4]);
/// ```
pub struct HostVec<T: HostPod> {
    ptr: NonNull<T>,
    len: usize,
    /// `None` when the vector takes no bytes.
    block: Option<HostBlock>,
}

// SAFETY: a HostVec owns its elements like a Vec<T> (HostPod: Send + Sync).
unsafe impl<T: HostPod> Send for HostVec<T> {}
// SAFETY: as above; `&HostVec` gives only `&[T]`.
unsafe impl<T: HostPod> Sync for HostVec<T> {}

impl<T: HostPod> HostVec<T> {
    const ALIGNED: () = assert!(align_of::<T>() <= HOST_ALIGNMENT);

    /// `len` elements whose `i`-th is `f(i)`, computed in parallel (rayon)
    /// straight into the vector's memory.
    pub fn from_par_fn<F>(len: usize, f: F) -> Self
    where
        F: Fn(usize) -> T + Sync,
    {
        let mut v = Self::with_uninit_len(len);
        v.uninit_mut()
            .par_iter_mut()
            .enumerate()
            .with_min_len(CHUNK)
            .for_each(|(i, slot)| {
                slot.write(f(i));
            });
        v
    }

    /// Makes the host pool keep `count` blocks the size of a vector of
    /// `len` elements, allocating (and page-locking) the missing ones now,
    /// within the pool's limit; returns how many it keeps. See
    /// [`reserve_host_blocks`](crate::reserve_host_blocks).
    pub fn reserve_pool(len: usize, count: usize) -> usize {
        crate::reserve_host_blocks(len.saturating_mul(size_of::<T>()), count)
    }

    /// `len` elements of zero bytes.
    pub fn zeroed(len: usize) -> Self {
        // SAFETY: HostPod types take any bit pattern, zeros included.
        let zero: T = unsafe { std::mem::zeroed() };
        Self::from_par_fn(len, |_| zero)
    }

    /// A copy of `values`, copied in parallel.
    pub fn from_slice(values: &[T]) -> Self {
        let mut v = Self::with_uninit_len(values.len());
        v.uninit_mut()
            .par_chunks_mut(CHUNK)
            .zip(values.par_chunks(CHUNK))
            .for_each(|(dst, src)| {
                for (slot, value) in dst.iter_mut().zip(src) {
                    slot.write(*value);
                }
            });
        v
    }

    /// Whether the memory is page-locked (the CUDA backend then copies it
    /// to the device without staging). False for an empty vector.
    pub fn is_pinned(&self) -> bool {
        self.block.as_ref().is_some_and(HostBlock::is_pinned)
    }

    /// A vector of `len` elements none of which is written yet: every one
    /// must be written through [`uninit_mut`](Self::uninit_mut) before the
    /// vector is seen as `[T]`. Dropping it unfilled is fine.
    fn with_uninit_len(len: usize) -> Self {
        let () = Self::ALIGNED;
        let bytes = len
            .checked_mul(size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
            .unwrap_or_else(|| panic!("HostVec of {len} elements overflows the address space"));
        if bytes == 0 {
            return HostVec {
                ptr: NonNull::dangling(),
                len,
                block: None,
            };
        }
        let block = HostPool::global().take(bytes);
        HostVec {
            ptr: block.as_ptr().cast(),
            len,
            block: Some(block),
        }
    }

    fn uninit_mut(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: the block holds `len` elements' bytes from `ptr`, aligned
        // for T (64-byte blocks, ALIGNED); MaybeUninit needs no contents.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.len) }
    }
}

impl<T: HostPod> Deref for HostVec<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: every constructor writes all `len` elements before
        // returning the vector (with_uninit_len is private to them).
        unsafe { slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: HostPod> DerefMut for HostVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref; `&mut self` makes the borrow unique.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: HostPod> Drop for HostVec<T> {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            HostPool::global().give(block);
        }
    }
}

impl<T: HostPod> Clone for HostVec<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: HostPod> Default for HostVec<T> {
    /// The empty vector (no allocation).
    fn default() -> Self {
        Self::with_uninit_len(0)
    }
}

impl<T: HostPod + PartialEq> PartialEq for HostVec<T> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl<T: HostPod + Eq> Eq for HostVec<T> {}

impl<T: HostPod> fmt::Debug for HostVec<T> {
    /// The length and whether it is pinned, not the elements (millions).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostVec")
            .field("len", &self.len)
            .field("pinned", &self.is_pinned())
            .finish()
    }
}

/// Whether `values` lies in page-locked host memory known to CUDA (its
/// first and last byte), as the CUDA backend checks before it skips the
/// staging copy. False without the `cuda` feature, without a device, and
/// for an empty slice.
pub fn is_host_range_pinned<T>(values: &[T]) -> bool {
    cuda::host_range_pinned(values.as_ptr().cast(), std::mem::size_of_val(values))
}
