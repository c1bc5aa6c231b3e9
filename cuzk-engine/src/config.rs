//! How an engine is built: worker counts, devices, queue depth.

pub use cuzk_pipeline::SynthesisMode;
pub use supraseal_c2::{BackendChoice, FaultPlan};

/// The shape of an [`crate::Engine`]: how many workers of each role, which
/// devices, how far synthesis may run ahead of the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Threads that synthesize partitions (CPU work, one partition each).
    pub partition_workers: usize,
    /// Threads per device that call the prover. With two, one worker's
    /// preamble and epilogue overlap the other's kernel region.
    pub gpu_workers_per_device: usize,
    /// Device ordinals, one [`supraseal_c2::GpuLock`] each. On the CPU
    /// backend an ordinal is a label: each is a lock of its own over the
    /// same cores (which tests of several devices use).
    pub devices: Vec<u32>,
    /// How many synthesized partitions may wait for a GPU worker; synthesis
    /// pauses when the queue is full, so memory stays bounded. `None` means
    /// twice the total number of GPU workers.
    pub queue_depth: Option<usize>,
    /// Verify each request proof (one batch verification) before
    /// [`crate::JobHandle::wait`] returns it. On by default; turn it off
    /// only for measurements that say so.
    pub verify: bool,
    /// Where each device's kernel region runs: `Auto` is CUDA when built in
    /// and the device exists, else the CPU.
    pub backend: BackendChoice,
    /// How partitions are synthesized. The default, compiled, compiles each
    /// workload's shape on first use and then records only witnesses.
    pub synthesis: SynthesisMode,
    /// The nice value (0 to 19) of the threads that synthesize: partition
    /// workers and their parallel matrix products. Above 0, synthesis that
    /// runs ahead of the GPU yields the cores to the GPU workers' host work
    /// (preamble, kernel region, epilogue), which keep their priority.
    pub synthesis_nice: i32,
    /// How many times a partition whose prove failed with a transient CUDA
    /// error or out of device memory goes back to the queue before its job
    /// fails with the error. (After a sticky error the partition moves to
    /// another device without counting: that device is retired.)
    pub partition_retries: u32,
    /// The host memory (bytes) the engine keeps its partitions within
    /// ([`crate::host`]): a partition's synthesis starts only when what the
    /// process holds plus the partitions in flight plus this one's need
    /// fit; otherwise its worker waits. `None`: no budget. Default: 85 % of
    /// the machine's memory.
    pub host_memory_limit: Option<u64>,
    /// The device memory (bytes) the CUDA backend plans each device's keys
    /// within ([`supraseal_c2::GpuLock::set_device_memory_limit`]): a key
    /// whose points, one partition's workspace and MSM scratch do not fit
    /// is streamed from pinned host memory, and the H points' precomputed
    /// tables get only what is left. For the 16 and 24 GB cards storage
    /// providers own, or to leave a shared GPU room. `None` (the default):
    /// whatever the device has free when a key is first used.
    pub device_memory_limit: Option<u64>,
    /// The urgent lane: requests of at least this priority (a WinningPoSt,
    /// whose proof has a deadline of seconds) get one partition worker of
    /// their own, at normal scheduling priority, and one GPU worker per
    /// device of their own, which take nothing else; their synthesized
    /// partitions skip the queue-depth bound. So they never wait for a
    /// long partition's synthesis or prove to end, only for the device's
    /// lock (one kernel region at most). `None` (the default): no lane.
    /// The daemon's priorities are Curio's: 3 is HIGH, 4 CRITICAL.
    pub urgent_priority: Option<i32>,
    /// Records of each kind (prove spans, synthesis spans) the engine's
    /// metrics keep, the oldest dropped beyond
    /// ([`crate::metrics::SPANS_KEPT`] by default); at least 1.
    pub records_kept: usize,
    /// Faults to inject into the devices' kernel regions
    /// ([`supraseal_c2::FaultPlan`]: `sticky@3:dev1` makes device 1's third
    /// kernel region fail with a sticky CUDA error), for tests of the
    /// engine's fault path; the `CUZK_FAULT` environment variable's plan is
    /// added to it. Empty by default.
    pub inject_faults: FaultPlan,
    /// Test hook: make a worker panic on one partition.
    #[doc(hidden)]
    pub fault: Option<Fault>,
}

/// Synthesis threads' default nice value: low enough a priority that the
/// GPU workers' host work preempts them (BENCHMARKS.md, "Synthesis with a native witness").
pub const DEFAULT_SYNTHESIS_NICE: i32 = 10;

/// Default of [`EngineConfig::partition_retries`].
pub const DEFAULT_PARTITION_RETRIES: u32 = 2;

impl Default for EngineConfig {
    /// As many partition workers as cores, two GPU workers on device 0, a
    /// queue of four synthesized partitions, every request proof verified,
    /// synthesis at nice 10.
    fn default() -> Self {
        Self {
            partition_workers: std::thread::available_parallelism().map_or(1, usize::from),
            gpu_workers_per_device: 2,
            devices: vec![0],
            queue_depth: None,
            verify: true,
            backend: BackendChoice::Auto,
            synthesis: SynthesisMode::default(),
            synthesis_nice: DEFAULT_SYNTHESIS_NICE,
            partition_retries: DEFAULT_PARTITION_RETRIES,
            host_memory_limit: crate::host::default_limit(),
            device_memory_limit: None,
            urgent_priority: None,
            records_kept: crate::metrics::SPANS_KEPT,
            inject_faults: FaultPlan::default(),
            fault: None,
        }
    }
}

impl EngineConfig {
    /// Total GPU workers over all devices.
    pub fn gpu_workers(&self) -> usize {
        self.gpu_workers_per_device * self.devices.len()
    }

    /// The synthesized-partition queue's capacity, default applied.
    pub fn effective_queue_depth(&self) -> usize {
        self.queue_depth.unwrap_or(2 * self.gpu_workers())
    }

    /// Checks that the configuration describes a working engine.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.partition_workers == 0 {
            return Err(ConfigError::NoWorkers {
                role: "partition_workers",
            });
        }
        if self.gpu_workers_per_device == 0 {
            return Err(ConfigError::NoWorkers {
                role: "gpu_workers_per_device",
            });
        }
        if self.devices.is_empty() {
            return Err(ConfigError::NoDevices);
        }
        let mut seen = self.devices.clone();
        seen.sort_unstable();
        if let Some(pair) = seen.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(ConfigError::DuplicateDevice(pair[0]));
        }
        if self.queue_depth == Some(0) {
            return Err(ConfigError::ZeroQueueDepth);
        }
        if self.synthesis == (SynthesisMode::Checked { every: 0 }) {
            return Err(ConfigError::ZeroCheckPeriod);
        }
        if !(0..=19).contains(&self.synthesis_nice) {
            return Err(ConfigError::BadNice(self.synthesis_nice));
        }
        Ok(())
    }
}

/// What is wrong with an [`EngineConfig`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A worker count is zero.
    #[error("{role} must be at least 1")]
    NoWorkers {
        /// The field that is zero.
        role: &'static str,
    },
    /// The device list is empty.
    #[error("at least one device is needed")]
    NoDevices,
    /// A device appears twice.
    #[error("device {0} is listed twice")]
    DuplicateDevice(u32),
    /// `queue_depth` is `Some(0)`: synthesis could never hand anything on.
    #[error("queue_depth must be at least 1")]
    ZeroQueueDepth,
    /// Checked synthesis with a sampling period of zero.
    #[error("the compiled-synthesis check period must be at least 1")]
    ZeroCheckPeriod,
    /// `synthesis_nice` outside 0 to 19.
    #[error("synthesis_nice must be between 0 and 19, not {0}")]
    BadNice(i32),
    /// The backend's name is not one of `auto`, `cpu`, `cuda`.
    #[error("{0}")]
    Backend(supraseal_c2::ParseBackendError),
    /// The synthesis mode cannot be read.
    #[error("{0}")]
    Synthesis(String),
    /// `host_memory_limit` is neither a size (`96GiB`, `100 GB`) nor `none`.
    #[error("host_memory_limit '{0}' is neither a size such as 96GiB nor none")]
    HostMemoryLimit(String),
    /// `device_memory_limit` is neither a size (`24GiB`) nor `none`.
    #[error("device_memory_limit '{0}' is neither a size such as 24GiB nor none")]
    DeviceMemoryLimit(String),
    /// The fault plan in `CUZK_FAULT` cannot be read.
    #[error("{} cannot be read", supraseal_c2::FAULT_ENV)]
    FaultPlan(#[source] supraseal_c2::ParseFaultError),
}

/// The engine's settings as a person gives them: the `[engine]` section of
/// a config file or a command's flags, every one optional. The one place
/// where flags meet the file and the engine's defaults, for `cuzk serve`,
/// `cuzk bench` and the daemon alike.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineSettings {
    /// Synthesis threads.
    pub partition_workers: Option<usize>,
    /// Prover threads per device.
    pub gpu_workers_per_device: Option<usize>,
    /// Device ordinals.
    pub devices: Option<Vec<u32>>,
    /// Capacity of the synthesized-partition queue.
    pub queue_depth: Option<usize>,
    /// Verify every proof before handing it out (default: true).
    pub verify: Option<bool>,
    /// `auto`, `cpu` or `cuda`.
    pub backend: Option<String>,
    /// `full`, `compiled`, `compiled-gadgets` or `checked[:N]`.
    pub synthesis: Option<String>,
    /// Nice value of the synthesis threads (0-19).
    pub synthesis_nice: Option<i32>,
    /// Host memory the partitions are kept within: a size (`96GiB`,
    /// `100 GB`) or `none`; default 85 % of the machine's.
    pub host_memory_limit: Option<String>,
    /// Device memory each device's keys are planned within: a size
    /// (`24GiB`) or `none` (the default: what is free).
    pub device_memory_limit: Option<String>,
    /// Requests of at least this priority get the urgent lane
    /// ([`EngineConfig::urgent_priority`]); default: no lane.
    pub urgent_priority: Option<i32>,
    /// Records of each kind the engine's metrics keep
    /// ([`EngineConfig::records_kept`]).
    pub records_kept: Option<usize>,
}

impl EngineSettings {
    /// These settings where given, `under`'s elsewhere: flags over a file.
    pub fn over(self, under: &EngineSettings) -> EngineSettings {
        let u = under.clone();
        EngineSettings {
            partition_workers: self.partition_workers.or(u.partition_workers),
            gpu_workers_per_device: self.gpu_workers_per_device.or(u.gpu_workers_per_device),
            devices: self.devices.or(u.devices),
            queue_depth: self.queue_depth.or(u.queue_depth),
            verify: self.verify.or(u.verify),
            backend: self.backend.or(u.backend),
            synthesis: self.synthesis.or(u.synthesis),
            synthesis_nice: self.synthesis_nice.or(u.synthesis_nice),
            host_memory_limit: self.host_memory_limit.or(u.host_memory_limit),
            device_memory_limit: self.device_memory_limit.or(u.device_memory_limit),
            urgent_priority: self.urgent_priority.or(u.urgent_priority),
            records_kept: self.records_kept.or(u.records_kept),
        }
    }

    /// The host-memory limit named, if one is: `Some(None)` for `none`.
    pub fn host_memory_limit(&self) -> Result<Option<Option<u64>>, ConfigError> {
        limit(
            self.host_memory_limit.as_deref(),
            ConfigError::HostMemoryLimit,
        )
    }

    /// The device-memory limit named, if one is: `Some(None)` for `none`.
    pub fn device_memory_limit(&self) -> Result<Option<Option<u64>>, ConfigError> {
        limit(
            self.device_memory_limit.as_deref(),
            ConfigError::DeviceMemoryLimit,
        )
    }

    /// The backend named, if one is.
    pub fn backend(&self) -> Result<Option<BackendChoice>, ConfigError> {
        self.backend
            .as_deref()
            .map(|text| text.parse().map_err(ConfigError::Backend))
            .transpose()
    }

    /// The engine's configuration: `defaults` where a setting is absent,
    /// checked with [`EngineConfig::validate`].
    pub fn resolve(&self, defaults: EngineConfig) -> Result<EngineConfig, ConfigError> {
        let synthesis = match &self.synthesis {
            Some(text) => text
                .parse()
                .map_err(|e: cuzk_pipeline::PipelineError| ConfigError::Synthesis(e.to_string()))?,
            None => defaults.synthesis,
        };
        let config = EngineConfig {
            partition_workers: self.partition_workers.unwrap_or(defaults.partition_workers),
            gpu_workers_per_device: self
                .gpu_workers_per_device
                .unwrap_or(defaults.gpu_workers_per_device),
            devices: self.devices.clone().unwrap_or(defaults.devices.clone()),
            queue_depth: self.queue_depth.or(defaults.queue_depth),
            verify: self.verify.unwrap_or(defaults.verify),
            backend: self.backend()?.unwrap_or(defaults.backend),
            synthesis,
            synthesis_nice: self.synthesis_nice.unwrap_or(defaults.synthesis_nice),
            host_memory_limit: self
                .host_memory_limit()?
                .unwrap_or(defaults.host_memory_limit),
            device_memory_limit: self
                .device_memory_limit()?
                .unwrap_or(defaults.device_memory_limit),
            urgent_priority: self.urgent_priority.or(defaults.urgent_priority),
            records_kept: self.records_kept.unwrap_or(defaults.records_kept),
            ..defaults
        };
        config.validate()?;
        Ok(config)
    }
}

/// A memory limit as given (a size such as `96GiB` or `100 GB`, or `none`),
/// if one is: `Some(None)` for `none`; `error` names the setting otherwise.
fn limit(
    text: Option<&str>,
    error: fn(String) -> ConfigError,
) -> Result<Option<Option<u64>>, ConfigError> {
    let Some(text) = text else {
        return Ok(None);
    };
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Some(None));
    }
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|size| Some(Some(size.as_u64())))
        .map_err(|_| error(text.to_owned()))
}

/// A fault to inject, for the engine's own tests only.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A partition worker panics when it synthesizes the partition with
    /// this seed.
    PanicInSynthesis {
        /// The partition's seed.
        seed: u64,
    },
    /// A GPU worker takes its device's lock and panics while holding it,
    /// instead of proving the partition with this seed.
    PanicUnderLock {
        /// The partition's seed.
        seed: u64,
    },
    /// A GPU worker stores a wrong proof (C negated) for the partition with
    /// this seed, for verification to catch.
    CorruptProof {
        /// The partition's seed.
        seed: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_queue_follows_gpu_workers() {
        let mut config = EngineConfig::default();
        config.validate().unwrap();
        assert_eq!(config.effective_queue_depth(), 4);
        config.devices = vec![0, 1];
        assert_eq!(config.effective_queue_depth(), 8);
    }

    #[test]
    fn settings_go_flags_over_file_over_defaults() {
        let file = EngineSettings {
            partition_workers: Some(3),
            queue_depth: Some(5),
            backend: Some("cpu".into()),
            ..EngineSettings::default()
        };
        let flags = EngineSettings {
            partition_workers: Some(7),
            verify: Some(false),
            ..EngineSettings::default()
        };
        let config = flags.over(&file).resolve(EngineConfig::default()).unwrap();
        assert_eq!(config.partition_workers, 7);
        assert_eq!(config.queue_depth, Some(5));
        assert_eq!(config.backend, BackendChoice::Cpu);
        assert!(!config.verify);
        assert_eq!(config.gpu_workers_per_device, 2);
        assert_eq!(config.synthesis_nice, DEFAULT_SYNTHESIS_NICE);

        let bad = |settings: EngineSettings| {
            settings
                .resolve(EngineConfig::default())
                .unwrap_err()
                .to_string()
        };
        let backend = bad(EngineSettings {
            backend: Some("tpu".into()),
            ..EngineSettings::default()
        });
        assert!(backend.starts_with("unknown backend \"tpu\""), "{backend}");
        let synthesis = bad(EngineSettings {
            synthesis: Some("fast".into()),
            ..EngineSettings::default()
        });
        assert!(
            synthesis.starts_with("bad synthesis mode 'fast'"),
            "{synthesis}"
        );
        let workers = bad(EngineSettings {
            gpu_workers_per_device: Some(0),
            ..EngineSettings::default()
        });
        assert_eq!(workers, "gpu_workers_per_device must be at least 1");

        let limit = |text: &str| EngineSettings {
            host_memory_limit: Some(text.into()),
            ..EngineSettings::default()
        };
        let resolved = |text: &str| limit(text).resolve(EngineConfig::default());
        assert_eq!(resolved("96GiB").unwrap().host_memory_limit, Some(96 << 30));
        assert_eq!(
            resolved("100 GB").unwrap().host_memory_limit,
            Some(100_000_000_000)
        );
        assert_eq!(resolved("none").unwrap().host_memory_limit, None);
        assert_eq!(
            EngineSettings::default()
                .resolve(EngineConfig::default())
                .unwrap()
                .host_memory_limit,
            crate::host::default_limit()
        );
        assert_eq!(
            bad(limit("lots")),
            "host_memory_limit 'lots' is neither a size such as 96GiB nor none"
        );

        let device = |text: &str| EngineSettings {
            device_memory_limit: Some(text.into()),
            ..EngineSettings::default()
        };
        let resolved = |text: &str| device(text).resolve(EngineConfig::default());
        assert_eq!(
            resolved("24GiB").unwrap().device_memory_limit,
            Some(24 << 30)
        );
        assert_eq!(resolved("none").unwrap().device_memory_limit, None);
        assert_eq!(EngineConfig::default().device_memory_limit, None);
        assert_eq!(
            bad(device("half")),
            "device_memory_limit 'half' is neither a size such as 24GiB nor none"
        );
        // Flags over a file: the flag's limit wins, the file's stays else.
        let file = device("16GiB");
        assert_eq!(
            device("24GiB").over(&file).device_memory_limit.as_deref(),
            Some("24GiB")
        );
        assert_eq!(
            EngineSettings::default()
                .over(&file)
                .device_memory_limit
                .as_deref(),
            Some("16GiB")
        );
    }

    #[test]
    fn rejects_what_cannot_work() {
        let bad = |edit: fn(&mut EngineConfig)| {
            let mut config = EngineConfig::default();
            edit(&mut config);
            config.validate().unwrap_err()
        };
        assert_eq!(bad(|c| c.devices.clear()), ConfigError::NoDevices);
        assert_eq!(
            bad(|c| c.devices = vec![1, 0, 1]),
            ConfigError::DuplicateDevice(1)
        );
        assert_eq!(
            bad(|c| c.queue_depth = Some(0)),
            ConfigError::ZeroQueueDepth
        );
        assert!(matches!(
            bad(|c| c.partition_workers = 0),
            ConfigError::NoWorkers {
                role: "partition_workers"
            }
        ));
    }
}
