//! `cuzk serve`: the proving daemon (cuzk-daemon) until SIGTERM or SIGINT.
//! Every key of its TOML file (`--config`) has a flag of the same name,
//! with dashes, which overrides it.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use cuzk_daemon::{DaemonConfig, Server};
use cuzk_engine::EngineSettings;

use crate::CliResult;

/// Arguments of `cuzk serve`; see cuzk-daemon's `DaemonConfig` for each.
#[derive(Args, Debug, Default)]
pub struct ServeArgs {
    /// TOML file of settings (docs/daemon.md); flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// gRPC address: unix:///path, host:port, or a port (127.0.0.1).
    #[arg(long)]
    pub listen: Option<String>,
    /// HTTP address of /metrics and /healthz ("" for none).
    #[arg(long)]
    pub metrics_listen: Option<String>,
    /// Directory of the job journal.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Directory of the proving keys (default: STATE_DIR/params).
    #[arg(long)]
    pub params_dir: Option<PathBuf>,
    /// Directory of Filecoin's v28-*.params / .vk files (default:
    /// $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters/).
    #[arg(long)]
    pub fil_param_dir: Option<PathBuf>,
    /// Generate missing synthetic keys (a test setup): true or false
    /// (default false: a missing key is refused).
    #[arg(long)]
    pub generate_params: Option<bool>,
    /// Jobs queued or running at once, then RESOURCE_EXHAUSTED.
    #[arg(long)]
    pub max_jobs: Option<usize>,
    /// Submissions whose inputs (vanilla proofs) are checked at once.
    #[arg(long)]
    pub admission_checks: Option<usize>,
    /// Jobs handed to the engine at once.
    #[arg(long)]
    pub engine_jobs: Option<usize>,
    /// Seconds an unfetched outcome is kept.
    #[arg(long)]
    pub result_ttl_secs: Option<u64>,
    /// Unfetched outcomes the journal keeps at most (the newest).
    #[arg(long)]
    pub journal_keep_finished: Option<usize>,
    /// Seconds running jobs get to finish on SIGTERM.
    #[arg(long)]
    pub shutdown_grace_secs: Option<u64>,
    /// Largest gRPC message, in bytes.
    #[arg(long)]
    pub max_message_bytes: Option<usize>,
    /// Circuit ids whose keys are loaded at start (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub preload: Option<Vec<String>>,
    /// The server's certificate chain (PEM): gRPC over TLS; with --tls-key.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// The key of --tls-cert (PEM).
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) clients' certificates must chain to (mutual
    /// TLS).
    #[arg(long)]
    pub tls_client_ca: Option<PathBuf>,
    /// Bearer tokens, one "ROLE TOKEN" a line (admin, submit, metrics;
    /// mode 600): every call then needs one.
    #[arg(long)]
    pub tokens_file: Option<PathBuf>,
    /// Serve a non-loopback address without authentication (a trusted
    /// network only).
    #[arg(long)]
    pub insecure: bool,
    /// Synthesis threads.
    #[arg(long)]
    pub partition_workers: Option<usize>,
    /// Prover threads per device.
    #[arg(long)]
    pub gpu_workers_per_device: Option<usize>,
    /// Device ordinals (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub devices: Option<Vec<u32>>,
    /// Synthesized partitions that may wait for a GPU worker.
    #[arg(long)]
    pub queue_depth: Option<usize>,
    /// Verify every proof before handing it out: true or false.
    #[arg(long)]
    pub verify: Option<bool>,
    /// Prover backend: auto, cpu or cuda.
    #[arg(long)]
    pub backend: Option<String>,
    /// full, compiled, compiled-gadgets or checked:N.
    #[arg(long)]
    pub synthesis: Option<String>,
    /// Nice value of the synthesis threads (0-19).
    #[arg(long)]
    pub synthesis_nice: Option<i32>,
    /// Host memory the engine keeps its partitions within: a size (96GiB)
    /// or none (default: 85 % of the machine's).
    #[arg(long)]
    pub host_memory_limit: Option<String>,
    /// Device memory each device's proving keys are planned within: a size
    /// (24GiB) or none (default: what the device has free). A key that does
    /// not fit is streamed from host memory.
    #[arg(long)]
    pub device_memory_limit: Option<String>,
    /// Jobs of at least this priority (Curio's: 3 HIGH, 4 CRITICAL) get a
    /// lane of their own: a partition worker and a GPU worker per device
    /// that take nothing else, so a WinningPoSt does not wait behind PoRep
    /// partitions [default: no lane].
    #[arg(long)]
    pub urgent_priority: Option<i32>,
    /// Records of each kind (prove spans, synthesis spans) the engine's
    /// metrics keep; the oldest are dropped beyond [default: 100000].
    #[arg(long)]
    pub records_kept: Option<usize>,
}

impl ServeArgs {
    /// The file's settings (or the defaults), flags applied.
    pub fn resolve(&self) -> Result<DaemonConfig, cuzk_daemon::DaemonError> {
        let mut c = match &self.config {
            Some(path) => DaemonConfig::load(path)?,
            None => DaemonConfig::default(),
        };
        set(&mut c.listen, &self.listen);
        set(&mut c.metrics_listen, &self.metrics_listen);
        set(&mut c.state_dir, &self.state_dir);
        c.params_dir = self.params_dir.clone().or(c.params_dir);
        c.fil_param_dir = self.fil_param_dir.clone().or(c.fil_param_dir);
        set(&mut c.generate_params, &self.generate_params);
        // The global --full-param-checks is this key's flag.
        c.full_param_checks |= crate::keys::load_options().full_checks;
        set(&mut c.max_jobs, &self.max_jobs);
        set(&mut c.admission_checks, &self.admission_checks);
        c.engine_jobs = self.engine_jobs.or(c.engine_jobs);
        set(&mut c.result_ttl_secs, &self.result_ttl_secs);
        set(&mut c.journal_keep_finished, &self.journal_keep_finished);
        set(&mut c.shutdown_grace_secs, &self.shutdown_grace_secs);
        set(&mut c.max_message_bytes, &self.max_message_bytes);
        set(&mut c.preload, &self.preload);
        c.tls_cert = self.tls_cert.clone().or(c.tls_cert);
        c.tls_key = self.tls_key.clone().or(c.tls_key);
        c.tls_client_ca = self.tls_client_ca.clone().or(c.tls_client_ca);
        c.tokens_file = self.tokens_file.clone().or(c.tokens_file);
        c.insecure |= self.insecure;
        let flags = EngineSettings {
            partition_workers: self.partition_workers,
            gpu_workers_per_device: self.gpu_workers_per_device,
            devices: self.devices.clone(),
            queue_depth: self.queue_depth,
            verify: self.verify,
            backend: self.backend.clone(),
            synthesis: self.synthesis.clone(),
            synthesis_nice: self.synthesis_nice,
            host_memory_limit: self.host_memory_limit.clone(),
            device_memory_limit: self.device_memory_limit.clone(),
            urgent_priority: self.urgent_priority,
            records_kept: self.records_kept,
        };
        c.engine = flags.over(&c.engine);
        Ok(c)
    }
}

fn set<T: Clone>(field: &mut T, flag: &Option<T>) {
    if let Some(value) = flag {
        *field = value.clone();
    }
}

/// Runs the daemon until SIGTERM or SIGINT. Prints one line to stdout once
/// the sockets are bound: `cuzk serve: gRPC on ADDR, metrics on ADDR`.
pub fn serve(args: &ServeArgs) -> CliResult {
    let config = args.resolve()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cuzk-rt")
        .build()?;
    runtime.block_on(async {
        let server = Server::bind(config).await?;
        let metrics = server
            .metrics_addr()
            .map_or_else(|| "off".to_owned(), |a| a.to_string());
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "cuzk serve: gRPC on {}, metrics on {metrics}",
            server.grpc_addr()
        )?;
        stdout.flush()?;
        drop(stdout);
        server.run(cuzk_daemon::shutdown_signal()).await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every key of the config file, `[engine]` flattened.
    fn config_keys() -> Vec<String> {
        let mut full = DaemonConfig {
            params_dir: Some("p".into()),
            engine_jobs: Some(1),
            tls_cert: Some("c".into()),
            tls_key: Some("k".into()),
            tls_client_ca: Some("ca".into()),
            tokens_file: Some("t".into()),
            ..DaemonConfig::default()
        };
        let e = &mut full.engine;
        e.partition_workers = Some(1);
        e.gpu_workers_per_device = Some(1);
        e.devices = Some(vec![0]);
        e.queue_depth = Some(1);
        e.verify = Some(true);
        e.backend = Some("cpu".into());
        e.synthesis = Some("full".into());
        e.synthesis_nice = Some(0);
        let toml::Value::Table(table) = toml::Value::try_from(&full).unwrap() else {
            panic!("the config is not a table")
        };
        let mut keys = Vec::new();
        for (key, value) in table {
            match value {
                toml::Value::Table(section) => keys.extend(section.keys().cloned()),
                _ => keys.push(key),
            }
        }
        keys
    }

    #[test]
    fn every_config_key_has_a_flag() {
        // `cuzk serve` as the binary parses it, global flags included.
        let mut command = crate::Cli::command();
        command.build();
        let serve = command
            .find_subcommand("serve")
            .expect("cuzk has a serve subcommand");
        let flags: Vec<String> = serve
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_owned))
            .collect();
        let keys = config_keys();
        assert!(keys.len() >= 19, "{keys:?}");
        for key in keys {
            let flag = key.replace('_', "-");
            assert!(flags.contains(&flag), "config key {key} has no --{flag}");
        }
    }

    #[test]
    fn flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cuzk.toml");
        std::fs::write(
            &path,
            "max_jobs = 5\nlisten = \"9000\"\n[engine]\nbackend = \"cpu\"\n",
        )
        .unwrap();
        let args = ServeArgs {
            config: Some(path),
            listen: Some("unix:///tmp/x.sock".into()),
            partition_workers: Some(3),
            ..ServeArgs::default()
        };
        let config = args.resolve().unwrap();
        assert_eq!(config.max_jobs, 5);
        assert_eq!(config.listen, "unix:///tmp/x.sock");
        assert_eq!(config.engine.backend.as_deref(), Some("cpu"));
        assert_eq!(config.engine.partition_workers, Some(3));
    }
}
