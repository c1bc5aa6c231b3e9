//! Errors of the native prover, typed.
//!
//! A native failure crosses the bridge as a value (`ffi::NativeError`: its
//! kind, the CUDA error code, the call, ...), never as a message to parse;
//! [`native`] maps it into [`Error`].

use std::fmt;

use crate::backend::CudaUnavailable;
use crate::bridge::ffi;

/// What a failed CUDA call says about its device, decided by the native
/// layer from the `cudaError_t` (`native/include/cuzk/cuda/error.hpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CudaErrorKind {
    /// The call failed and the device's context is fine: the work may be
    /// retried, there or elsewhere.
    Transient,
    /// Device memory ran out (`cudaErrorMemoryAllocation`); the context is
    /// fine.
    OutOfMemory,
    /// The device's context is unusable for the rest of the process: an
    /// illegal or misaligned address, a failed launch, a hardware stack
    /// error, an uncorrectable ECC or NVLink error, a device-side assert, a
    /// launch timeout, an unknown error. Every later kernel region on the
    /// device's lock fails with the same error ([`crate::GpuLock::is_lost`]).
    Sticky,
}

impl fmt::Display for CudaErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CudaErrorKind::Transient => "transient",
            CudaErrorKind::OutOfMemory => "out of device memory",
            CudaErrorKind::Sticky => "sticky: the device is unusable",
        })
    }
}

/// What can go wrong in the native layer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The inputs do not fit each other or the SRS (a length or count that
    /// disagrees). `what` names the quantity.
    #[error("{what}: expected {expected}, got {got}")]
    Shape {
        /// The quantity that disagrees, e.g. "aux assignment vs SRS l".
        what: &'static str,
        /// What the SRS or the other inputs imply.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The CUDA backend was asked for and cannot be had (never a silent
    /// fall-back to the CPU).
    #[error("CUDA backend unavailable")]
    CudaUnavailable(#[from] CudaUnavailable),
    /// A CUDA call failed. The lock was released; whether the device is
    /// still usable is `kind`'s to say.
    #[error("CUDA call `{call}` failed ({kind}): {detail} (at {location})")]
    Cuda {
        /// The `cudaError_t` value, e.g. 700 for `cudaErrorIllegalAddress`.
        code: i32,
        /// What the code means for the device.
        kind: CudaErrorKind,
        /// The call as written in the native source, e.g. `cudaMalloc(&ptr, bytes)`.
        call: String,
        /// The runtime's error name and description.
        detail: String,
        /// `file:line` of the call.
        location: String,
    },
    /// The proving key does not fit the device, not even streamed from host
    /// memory (the H workspace and two point windows must fit).
    #[error("device {device} needs {needed} bytes of device memory, {available} available")]
    DeviceMemory {
        /// The device ordinal.
        device: u32,
        /// Bytes the smallest streaming plan needs.
        needed: u64,
        /// Free bytes on the device (or the lock's limit, if lower).
        available: u64,
    },
    /// The native layer refused its input (a precondition, named with the
    /// native file and line).
    #[error("invalid input to the native prover: {0}")]
    InvalidInput(String),
    /// Any other native failure (named by its message).
    #[error("native prover: {0}")]
    Native(String),
}

impl Error {
    /// `Ok` when `expected == got`, else [`Error::Shape`] naming `what`.
    pub(crate) fn check_shape(
        what: &'static str,
        expected: usize,
        got: usize,
    ) -> Result<(), Error> {
        if expected == got {
            Ok(())
        } else {
            Err(Error::Shape {
                what,
                expected,
                got,
            })
        }
    }

    /// The kind of a failed CUDA call; `None` for every other error.
    pub fn cuda_kind(&self) -> Option<CudaErrorKind> {
        match self {
            Error::Cuda { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// Whether this error left its device unusable
    /// ([`CudaErrorKind::Sticky`]).
    pub fn is_sticky(&self) -> bool {
        self.cuda_kind() == Some(CudaErrorKind::Sticky)
    }
}

/// A report with nothing in it, for a native call to fill.
fn empty_report() -> ffi::NativeError {
    ffi::NativeError {
        kind: ffi::ErrorKind::None,
        code: 0,
        call: String::new(),
        detail: String::new(),
        location: String::new(),
        device: 0,
        needed: 0,
        available: 0,
        message: String::new(),
    }
}

/// Runs a native call that reports failure in the `NativeError` it is
/// handed, and returns its value or the typed error.
pub(crate) fn native<T>(call: impl FnOnce(&mut ffi::NativeError) -> T) -> Result<T, Error> {
    let mut report = empty_report();
    let value = call(&mut report);
    match Error::from_report(report) {
        None => Ok(value),
        Some(error) => Err(error),
    }
}

impl Error {
    fn from_report(r: ffi::NativeError) -> Option<Error> {
        let cuda = |kind| Error::Cuda {
            code: r.code,
            kind,
            call: r.call.clone(),
            detail: r.detail.clone(),
            location: r.location.clone(),
        };
        Some(match r.kind {
            ffi::ErrorKind::None => return None,
            ffi::ErrorKind::Transient => cuda(CudaErrorKind::Transient),
            ffi::ErrorKind::OutOfMemory => cuda(CudaErrorKind::OutOfMemory),
            ffi::ErrorKind::Sticky => cuda(CudaErrorKind::Sticky),
            ffi::ErrorKind::KeyTooLarge => Error::DeviceMemory {
                device: r.device,
                needed: r.needed,
                available: r.available,
            },
            ffi::ErrorKind::InvalidInput => Error::InvalidInput(r.message),
            _ => Error::Native(r.message),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_map_to_typed_errors() {
        assert_eq!(native(|_| 7), Ok(7));
        let sticky = native(|r| {
            r.kind = ffi::ErrorKind::Sticky;
            r.code = 700;
            r.call = "cudaDeviceSynchronize()".into();
            r.detail = "cudaErrorIllegalAddress: an illegal memory access was encountered".into();
            r.location = "device.cu:60".into();
        })
        .unwrap_err();
        assert!(sticky.is_sticky());
        assert_eq!(
            sticky.to_string(),
            "CUDA call `cudaDeviceSynchronize()` failed (sticky: the device is unusable): \
             cudaErrorIllegalAddress: an illegal memory access was encountered (at device.cu:60)"
        );
        let too_large = native(|r| {
            r.kind = ffi::ErrorKind::KeyTooLarge;
            (r.device, r.needed, r.available) = (1, 4096, 1024);
        });
        assert_eq!(
            too_large,
            Err(Error::DeviceMemory {
                device: 1,
                needed: 4096,
                available: 1024
            })
        );
        let refused = native(|r| {
            r.kind = ffi::ErrorKind::InvalidInput;
            r.message = "msm: 2 points but 3 scalars".into();
        });
        assert_eq!(
            refused,
            Err(Error::InvalidInput("msm: 2 points but 3 scalars".into()))
        );
        assert_eq!(refused.unwrap_err().cuda_kind(), None);
    }
}
