//! Measured GPU utilization over a run, beside the lock occupancy the
//! engine computes.
//!
//! [`cuzk_daemon::gpu`] reads NVML; here it is sampled every 100 ms in a
//! background thread during a measured run, and a device's figure is the
//! mean of its samples of NVML's "percent of time a kernel was running over
//! the last sample period". Without NVML (a CPU machine, no driver) or for
//! a device on the CPU backend the figure is `None`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use cuzk_daemon::gpu;

/// How often the sampler reads each device.
const PERIOD: Duration = Duration::from_millis(100);

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
        let thread = if gpu::load().is_ok() && ordinals.iter().any(Option::is_some) {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("cuzk-nvml".into())
                .spawn(move || sample(&ordinals, &stop))
                .ok()
        } else {
            None
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
fn sample(ordinals: &[Option<u32>], stop: &AtomicBool) -> Vec<Option<f64>> {
    let mut sums = vec![(0u64, 0u64); ordinals.len()];
    loop {
        for (ordinal, (sum, count)) in ordinals.iter().zip(&mut sums) {
            if let Some(percent) = ordinal.and_then(|o| gpu::read(o).utilization_percent) {
                *sum += u64::from(percent);
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
