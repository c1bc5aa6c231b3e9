//! Which backend runs the kernel region, chosen at run time per lock.

use std::fmt;
use std::str::FromStr;

/// Where a [`crate::GpuLock`]'s kernel region runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// blst on the native thread pool.
    #[default]
    Cpu,
    /// The lock's CUDA device (needs the `cuda` feature).
    Cuda,
}

/// What a caller asks for when making a [`crate::GpuLock`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BackendChoice {
    /// CUDA when this build has it and the device exists, else the CPU.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
    /// The CUDA backend, or [`crate::Error::CudaUnavailable`] saying why not.
    Cuda,
}

/// Where the kernel region read the proving key's G1 points from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Residency {
    /// Host memory (the CPU backend).
    #[default]
    Host,
    /// Device memory: uploaded once per device, kept with the [`crate::Srs`].
    Device,
    /// Pinned host memory streamed through two device windows (a key too
    /// large for the device, or streaming asked for).
    Streamed,
}

/// Why [`BackendChoice::Cuda`] cannot be honoured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CudaUnavailable {
    /// supraseal-c2 was built without its `cuda` feature.
    #[error("supraseal-c2 was built without the `cuda` feature")]
    NotBuilt,
    /// No CUDA device is visible (no driver, or no GPU).
    #[error("no CUDA device is visible (no driver, or no GPU)")]
    NoDevice,
    /// The device ordinal is not below the device count.
    #[error("device {device} is out of range: {count} CUDA device(s)")]
    OutOfRange {
        /// The ordinal asked for.
        device: u32,
        /// The devices there are.
        count: u32,
    },
}

/// The error of parsing a [`BackendChoice`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {0:?}: expected auto, cpu or cuda")]
pub struct ParseBackendError(String);

impl FromStr for BackendChoice {
    type Err = ParseBackendError;

    /// `auto`, `cpu` or `cuda` (ASCII case ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(BackendChoice::Auto),
            "cpu" => Ok(BackendChoice::Cpu),
            "cuda" => Ok(BackendChoice::Cuda),
            _ => Err(ParseBackendError(s.to_owned())),
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Cpu => "cpu",
            BackendChoice::Cuda => "cuda",
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        })
    }
}

impl fmt::Display for Residency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Residency::Host => "host",
            Residency::Device => "device",
            Residency::Streamed => "streamed",
        })
    }
}

impl Backend {
    /// From `cuzk::backend_t` (native/include/cuzk/kernel_backend.hpp).
    pub(crate) fn from_native(kind: u8) -> Self {
        match kind {
            1 => Backend::Cuda,
            _ => Backend::Cpu,
        }
    }
}

impl Residency {
    /// From `cuzk::residency_t` (native/include/cuzk/kernel_backend.hpp).
    pub(crate) fn from_native(kind: u8) -> Self {
        match kind {
            1 => Residency::Device,
            2 => Residency::Streamed,
            _ => Residency::Host,
        }
    }
}

/// The number of CUDA devices this process can use: 0 when built without
/// the `cuda` feature, or with no driver or GPU.
pub fn cuda_device_count() -> u32 {
    crate::cuda::device_count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_print() {
        for (text, choice) in [
            ("auto", BackendChoice::Auto),
            ("cpu", BackendChoice::Cpu),
            ("CUDA", BackendChoice::Cuda),
        ] {
            assert_eq!(text.parse::<BackendChoice>(), Ok(choice));
            assert_eq!(choice.to_string(), text.to_ascii_lowercase());
        }
        let err = "gpu".parse::<BackendChoice>().unwrap_err();
        assert!(err.to_string().contains("auto, cpu or cuda"), "{err}");
        assert_eq!(BackendChoice::default(), BackendChoice::Auto);
        assert_eq!(Backend::Cuda.to_string(), "cuda");
        assert_eq!(Residency::Streamed.to_string(), "streamed");
    }
}
