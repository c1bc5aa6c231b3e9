//! GPU figures measured by NVML, beside the lock occupancy the engine
//! counts: how busy each device's kernels kept it and how much of its
//! memory is in use.
//!
//! Lock occupancy (the rate of `cuzk_gpu_lock_held_seconds_total`) says how
//! long provers held a device; NVML's utilization says what share of a
//! recent period (1/6 s to 1 s, by model) a kernel was running on it. A
//! device can be held and idle (host-to-device copies, waiting on the host)
//! or busy for another process, so the two are reported side by side.
//!
//! NVML is loaded once, on first use, through nvml-wrapper, which opens
//! libnvidia-ml at run time: without it (a CPU machine, no driver) every
//! figure is `None`, and the build needs nothing of NVML. Devices are named
//! by their CUDA ordinal, which [`read`] maps to NVML's through
//! `CUDA_VISIBLE_DEVICES`. Each call is a few NVML queries of microseconds,
//! cheap enough for a request path.

use std::sync::OnceLock;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

/// NVML, loaded once, or why it could not be.
fn nvml() -> Result<&'static Nvml, &'static NvmlError> {
    static NVML: OnceLock<Result<Nvml, NvmlError>> = OnceLock::new();
    NVML.get_or_init(Nvml::init).as_ref()
}

/// Loads NVML if it is not yet loaded; the error when it cannot be (then
/// every figure of this module is `None`).
pub fn load() -> Result<(), &'static NvmlError> {
    nvml().map(|_| ())
}

/// Every GPU's name, in NVML's order (empty without NVML).
pub fn gpu_names() -> Vec<String> {
    let Ok(nvml) = nvml() else {
        return Vec::new();
    };
    let count = nvml.device_count().unwrap_or(0);
    (0..count)
        .filter_map(|i| nvml.device_by_index(i).ok()?.name().ok())
        .collect()
}

/// The NVML device CUDA calls `ordinal`: through `CUDA_VISIBLE_DEVICES`
/// (indices or UUIDs) when it is set, else the same index (CUDA and NVML
/// agree on the order of identical GPUs).
fn device(nvml: &Nvml, ordinal: u32) -> Option<Device<'_>> {
    match std::env::var("CUDA_VISIBLE_DEVICES") {
        Err(_) => nvml.device_by_index(ordinal).ok(),
        Ok(list) => {
            let entry = list.split(',').nth(ordinal as usize)?.trim();
            match entry.parse::<u32>() {
                Ok(index) => nvml.device_by_index(index).ok(),
                Err(_) => nvml.device_by_uuid(entry).ok(),
            }
        }
    }
}

/// A device's memory, as NVML counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Allocated, by any process (the driver keeps a little for itself).
    pub used_bytes: u64,
    /// Not allocated.
    pub free_bytes: u64,
    /// Installed.
    pub total_bytes: u64,
}

/// One reading of a device; a figure NVML could not give is `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// NVML's `utilization.gpu`: the percent of its last sample period in
    /// which a kernel was running (0 to 100).
    pub utilization_percent: Option<u32>,
    /// Memory in use and installed.
    pub memory: Option<Memory>,
}

/// The CUDA device `ordinal` now; every figure `None` without NVML or
/// without that device.
pub fn read(ordinal: u32) -> Reading {
    let Some(device) = nvml().ok().and_then(|nvml| device(nvml, ordinal)) else {
        return Reading::default();
    };
    Reading {
        utilization_percent: device.utilization_rates().ok().map(|u| u.gpu),
        memory: device.memory_info().ok().map(|m| Memory {
            used_bytes: m.used,
            free_bytes: m.free,
            total_bytes: m.total,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_empty_without_nvml_and_consistent_with_it() {
        let reading = read(0);
        if load().is_err() {
            assert_eq!(reading, Reading::default());
            assert!(gpu_names().is_empty());
        }
        if let Some(percent) = reading.utilization_percent {
            assert!(percent <= 100, "{percent}");
        }
        if let Some(m) = reading.memory {
            assert!(m.used_bytes <= m.total_bytes, "{m:?}");
            assert!(m.free_bytes <= m.total_bytes, "{m:?}");
        }
    }

    #[test]
    fn a_device_cuda_cannot_see_has_no_reading() {
        // No machine has this many GPUs.
        assert_eq!(read(u32::MAX), Reading::default());
    }
}
