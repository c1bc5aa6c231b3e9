//! Measured GPU utilization, beside the lock occupancy the engine computes.
//!
//! NVML (through nvml-wrapper, which loads libnvidia-ml at run time) is
//! sampled every 100 ms in a background thread during a measured run; a
//! device's figure is the mean of its samples of NVML's "percent of time a
//! kernel was running over the last sample period". Without NVML (a CPU
//! machine, no driver) or for a device on the CPU backend the figure is
//! `None`, and the build needs nothing of NVML.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use nvml_wrapper::{Device, Nvml};

/// How often the sampler reads each device.
const PERIOD: Duration = Duration::from_millis(100);

/// NVML, loaded once; `None` when the library or driver is not there.
fn nvml() -> Option<&'static Nvml> {
    static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().ok()).as_ref()
}

/// Every GPU's name, in NVML's order (empty without NVML).
pub fn gpu_names() -> Vec<String> {
    let Some(nvml) = nvml() else {
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

/// Samples GPU utilization until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Option<f64>>>>,
    devices: usize,
}

impl Sampler {
    /// Starts sampling: one entry per engine device, its CUDA ordinal, or
    /// `None` for a device that is not on the GPU.
    pub fn start(ordinals: Vec<Option<u32>>) -> Self {
        let devices = ordinals.len();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = match nvml() {
            Some(nvml) if ordinals.iter().any(Option::is_some) => {
                let stop = Arc::clone(&stop);
                std::thread::Builder::new()
                    .name("cuzk-nvml".into())
                    .spawn(move || sample(nvml, &ordinals, &stop))
                    .ok()
            }
            _ => None,
        };
        Self {
            stop,
            thread,
            devices,
        }
    }

    /// Stops sampling; each device's mean utilization (0 to 1), `None`
    /// where it was not measured.
    pub fn finish(mut self) -> Vec<Option<f64>> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(|| vec![None; self.devices])
    }
}

/// The sampling loop: at least one sample per device, then one per period
/// until `stop`.
fn sample(nvml: &Nvml, ordinals: &[Option<u32>], stop: &AtomicBool) -> Vec<Option<f64>> {
    let devices: Vec<Option<Device<'_>>> = ordinals
        .iter()
        .map(|o| o.and_then(|ordinal| device(nvml, ordinal)))
        .collect();
    let mut sums = vec![(0u64, 0u64); devices.len()];
    loop {
        for (device, (sum, count)) in devices.iter().zip(&mut sums) {
            if let Some(rates) = device.as_ref().and_then(|d| d.utilization_rates().ok()) {
                *sum += u64::from(rates.gpu);
                *count += 1;
            }
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(PERIOD);
    }
    sums.iter()
        .map(|&(sum, count)| (count > 0).then(|| sum as f64 / count as f64 / 100.0))
        .collect()
}

/// A utilization for the report: `87.5 %`, or `n/a`.
pub fn percent(value: Option<f64>) -> String {
    value.map_or("n/a".to_owned(), |v| format!("{:.1} %", 100.0 * v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_device_nothing_is_measured() {
        let figures = Sampler::start(vec![None, None]).finish();
        assert_eq!(figures, vec![None, None]);
        assert_eq!(percent(None), "n/a");
        assert_eq!(percent(Some(0.875)), "87.5 %");
    }

    #[test]
    fn sampling_works_with_or_without_nvml() {
        // On a machine without NVML this is `None`; with it, a fraction.
        let figures = Sampler::start(vec![Some(0)]).finish();
        assert_eq!(figures.len(), 1);
        if let Some(u) = figures[0] {
            assert!((0.0..=1.0).contains(&u), "{u}");
        }
    }
}
