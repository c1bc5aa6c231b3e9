//! The `--config FILE` TOML file: defaults for `bench` and `sweep` that
//! flags override.
//!
//! ```toml
//! [engine]
//! partition_workers = 2
//! gpu_workers_per_device = 2
//! devices = [0]
//! queue_depth = 4
//! verify = true
//! backend = "cpu"
//! synthesis = "compiled"
//! synthesis_nice = 10
//!
//! [bench]
//! workload = "sha-chain"
//! size = 4
//! requests = 1
//! partitions = 10
//! params = "sha4.params"
//! cached_synthesis = false
//!
//! [sweep]
//! partition_workers_list = [1, 2, 4]
//! gpu_workers_list = [1, 2]
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The whole file; every key is optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    /// The engine's shape.
    pub engine: EngineSettings,
    /// What the bench proves.
    pub bench: BenchSection,
    /// The sweep's grid.
    pub sweep: SweepSection,
}

/// `[engine]`: the same section as the daemon's file.
pub use cuzk_engine::EngineSettings;

/// `[bench]`: the work a bench run proves.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BenchSection {
    /// `sha-chain` or `mul-chain`.
    pub workload: Option<String>,
    /// Blocks or squarings.
    pub size: Option<usize>,
    /// Requests per run.
    pub requests: Option<usize>,
    /// Partitions per request.
    pub partitions: Option<usize>,
    /// A parameters file (otherwise parameters are generated).
    pub params: Option<PathBuf>,
    /// Synthesize once and reuse the partitions.
    pub cached_synthesis: Option<bool>,
}

/// `[sweep]`: the grid of worker counts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweepSection {
    /// Partition worker counts to try.
    pub partition_workers_list: Option<Vec<usize>>,
    /// GPU workers per device to try.
    pub gpu_workers_list: Option<Vec<usize>>,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// It could not be read.
    #[error("cannot read config file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not valid TOML for this schema.
    #[error("config file {} is invalid", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What toml says, with line and column.
        #[source]
        source: toml::de::Error,
    },
}

impl FileConfig {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigFileError::Parse {
            path: path.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let doc = include_str!("config.rs");
        let example: String = doc
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| format!("{}\n", l.trim_start_matches("//!").trim_start()))
            .collect();
        let config: FileConfig = toml::from_str(&example).unwrap();
        assert_eq!(config.engine.devices, Some(vec![0]));
        assert_eq!(config.bench.partitions, Some(10));
        assert_eq!(config.sweep.gpu_workers_list, Some(vec![1, 2]));
    }

    #[test]
    fn unknown_keys_are_refused_with_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cuzk.toml");
        std::fs::write(&path, "[engine]\npartition_workerz = 3\n").unwrap();
        let err = FileConfig::load(&path).unwrap_err();
        assert!(matches!(err, ConfigFileError::Parse { .. }));
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(source.contains("partition_workerz"), "{source}");
    }
}
