//! Errors of the native prover, typed.

use crate::backend::CudaUnavailable;

/// What can go wrong in the native layer.
#[derive(Debug, thiserror::Error)]
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
    /// A CUDA call failed (out of memory, a failed launch, ...). The lock was
    /// released and the device stays usable for the next call.
    #[error("CUDA call `{call}` failed: {detail}")]
    Cuda {
        /// The call as written in the native source, e.g. `cudaMalloc(&ptr, bytes)`.
        call: String,
        /// The runtime's error name and description, and where it was called.
        detail: String,
        /// The exception as it crossed the bridge. Not a cause: the
        /// message above is its text, read back.
        exception: cxx::Exception,
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
        /// The exception as it crossed the bridge. Not a cause: the
        /// message above is its text, read back.
        exception: cxx::Exception,
    },
    /// Any other native exception (named by its message).
    #[error("native prover")]
    Native(#[source] cxx::Exception),
}

impl From<cxx::Exception> for Error {
    /// Reads the typed native exceptions back from the message form that
    /// `native/include/cuzk/bridge_error.hpp` gives them.
    fn from(e: cxx::Exception) -> Self {
        if let Some((call, detail)) = parse_cuda(e.what()) {
            let (call, detail) = (call.to_owned(), detail.to_owned());
            return Error::Cuda {
                call,
                detail,
                exception: e,
            };
        }
        if let Some((device, needed, available)) = parse_device_memory(e.what()) {
            return Error::DeviceMemory {
                device,
                needed,
                available,
                exception: e,
            };
        }
        Error::Native(e)
    }
}

/// "CUDA call `<call>` failed: <detail>" -> (call, detail).
fn parse_cuda(message: &str) -> Option<(&str, &str)> {
    message
        .strip_prefix("CUDA call `")?
        .split_once("` failed: ")
}

/// "device memory: device <d> needs <n> bytes of device memory, <m> available".
fn parse_device_memory(message: &str) -> Option<(u32, u64, u64)> {
    let rest = message.strip_prefix("device memory: device ")?;
    let (device, rest) = rest.split_once(" needs ")?;
    let (needed, rest) = rest.split_once(" bytes of device memory, ")?;
    let available = rest.strip_suffix(" available")?;
    Some((
        device.parse().ok()?,
        needed.parse().ok()?,
        available.parse().ok()?,
    ))
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
}

#[cfg(test)]
mod tests {
    use super::{parse_cuda, parse_device_memory};

    #[test]
    fn reads_the_bridge_forms() {
        assert_eq!(
            parse_cuda(
                "CUDA call `cudaMalloc(&ptr, bytes)` failed: cudaErrorMemoryAllocation: \
                 out of memory (at device.cu:130)"
            ),
            Some((
                "cudaMalloc(&ptr, bytes)",
                "cudaErrorMemoryAllocation: out of memory (at device.cu:130)"
            ))
        );
        assert_eq!(parse_cuda("prove: circuit 0: bad"), None);
        assert_eq!(
            parse_device_memory(
                "device memory: device 1 needs 4096 bytes of device memory, 1024 available"
            ),
            Some((1, 4096, 1024))
        );
        assert_eq!(parse_device_memory("device memory: device x"), None);
    }
}
