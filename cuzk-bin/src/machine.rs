//! Where and from what a figure was measured: the machine and the git
//! revision the binary was built from.

use serde::Serialize;

/// The git revision of the build (`abc1234`, `abc1234-dirty` or `unknown`;
/// see `build.rs`).
pub const GIT_REVISION: &str = env!("CUZK_GIT_REVISION");

/// What `cuzk --version` prints after the name: `0.1.0 (abc1234)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("CUZK_GIT_REVISION"),
    ")"
);

/// The machine a run was measured on.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Its host name (`unknown` when it cannot be read).
    pub hostname: String,
    /// Cores this process may use.
    pub cores: usize,
    /// Total memory in bytes (`null` when it cannot be read).
    pub memory_bytes: Option<u64>,
    /// The GPUs' names as NVML reports them (empty without NVML).
    pub gpus: Vec<String>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Self {
        Self {
            hostname: hostname(),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_bytes: cuzk_engine::host::total_bytes(),
            gpus: cuzk_daemon::gpu::gpu_names(),
        }
    }
}

impl std::fmt::Display for Machine {
    /// `host (16 cores, 125.0 GiB, NVIDIA H200)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} cores", self.hostname, self.cores)?;
        if let Some(bytes) = self.memory_bytes {
            write!(f, ", {:.1} GiB", bytes as f64 / f64::from(1 << 30))?;
        }
        if !self.gpus.is_empty() {
            write!(f, ", {}", self.gpus.join(", "))?;
        }
        f.write_str(")")
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

pub use cuzk_engine::host::peak_rss_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_is_described() {
        let machine = Machine::this();
        assert!(machine.cores >= 1);
        assert!(!machine.hostname.is_empty());
        if cfg!(target_os = "linux") {
            assert!(machine.memory_bytes.unwrap() > 1 << 20);
        }
        assert!(machine.to_string().contains("cores"));
        assert!(!GIT_REVISION.is_empty());
    }
}
