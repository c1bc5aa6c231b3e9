//! The daemon's configuration: a TOML file (`cuzk serve --config`) whose
//! every key also has a flag.
//!
//! ```toml
//! listen = "0.0.0.0:9820"                # or "127.0.0.1:9820", a port, "unix:///run/cuzk/cuzk.sock"
//! metrics_listen = "127.0.0.1:9821"       # "" turns /metrics and /healthz off
//! state_dir = "/var/lib/cuzk"             # the job journal: state_dir/journal.redb
//! params_dir = "/var/lib/cuzk/params"     # default: state_dir/params
//! generate_params = false                 # true: make missing synthetic keys (tests)
//! fil_param_dir = "/var/tmp/filecoin-proof-parameters"  # Filecoin's v28-*.params
//! full_param_checks = false               # check every point even of a file checked before
//! max_jobs = 1024                         # queued + running, then RESOURCE_EXHAUSTED
//! admission_checks = 2                    # submissions' inputs checked at once
//! engine_jobs = 8                         # jobs handed to the engine at once
//! result_ttl_secs = 3600                  # unfetched outcomes kept this long
//! journal_keep_finished = 10000           # and at most this many, the newest
//! shutdown_grace_secs = 30                # running jobs' time to finish on SIGTERM
//! max_message_bytes = 268435456           # gRPC messages, both ways
//! tls_cert = "/etc/cuzk/server.pem"       # TLS on gRPC: the server's chain ...
//! tls_key = "/etc/cuzk/server.key"        # ... and its key
//! tls_client_ca = "/etc/cuzk/clients-ca.pem"  # clients need a certificate it signed
//! tokens_file = "/etc/cuzk/tokens"        # "ROLE TOKEN" lines: admin, submit, metrics
//! insecure = false                        # true: a public address without authentication
//! preload = ["mul-chain/64"]              # keys loaded at start
//!
//! [engine]
//! partition_workers = 2
//! gpu_workers_per_device = 2
//! devices = [0]
//! queue_depth = 4
//! verify = true
//! backend = "auto"
//! synthesis = "compiled"
//! synthesis_nice = 10
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use cuzk_engine::{EngineConfig, EngineSettings};
use serde::{Deserialize, Serialize};

use crate::DaemonError;

/// The whole file; every key is optional.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Where gRPC is served: `unix:///path`, `host:port` or a bare port
    /// (bound on 127.0.0.1).
    pub listen: String,
    /// Where `/metrics` and `/healthz` are served (TCP; a bare port binds
    /// 127.0.0.1); empty for none.
    pub metrics_listen: String,
    /// The directory of the job journal (`journal.redb`).
    pub state_dir: PathBuf,
    /// Where proving keys are read from (`<name>-<size>.params`); default
    /// `state_dir/params`.
    pub params_dir: Option<PathBuf>,
    /// Generate the parameters of a synthetic circuit that has no file
    /// (a test setup, not a ceremony) and save them to `params_dir`. Off by
    /// default: a client could otherwise make the daemon spend minutes and
    /// gigabytes on a setup nobody asked its operator for.
    pub generate_params: bool,
    /// Where the Filecoin kinds' parameters are read from (filecoin-proofs'
    /// `v28-<id>.params`); default `$FIL_PROOFS_PARAMETER_CACHE`, else
    /// `/var/tmp/filecoin-proof-parameters/`. filecoin-proofs is pointed at
    /// it too.
    pub fil_param_dir: Option<PathBuf>,
    /// Check every point of each parameters file loaded, subgroups
    /// included, even when its sidecar (`<file>.cuzk-checked`) says this
    /// version already checked these bytes.
    pub full_param_checks: bool,
    /// Jobs queued or running at once; a submission beyond gets
    /// `RESOURCE_EXHAUSTED`.
    pub max_jobs: usize,
    /// Submissions whose inputs are checked at once (a Filecoin request's
    /// vanilla proofs are verified on admission: seconds of CPU each at
    /// 32 GiB); the rest wait their turn. Cheap checks (request id, the
    /// job limit) come first.
    pub admission_checks: usize,
    /// Jobs handed to the engine at once (the rest wait in the daemon's
    /// queue, by priority); default: as many partitions as the engine
    /// holds in flight.
    pub engine_jobs: Option<usize>,
    /// How long an outcome nobody fetched is kept.
    pub result_ttl_secs: u64,
    /// How many outcomes nobody fetched the journal keeps at most: beyond,
    /// the oldest finished are forgotten (their jobs then read as expired).
    pub journal_keep_finished: usize,
    /// On SIGTERM, how long running jobs may take to finish before the
    /// daemon stops anyway (they run again after restart).
    pub shutdown_grace_secs: u64,
    /// Largest gRPC message accepted or sent (PoRep inputs are ~50 MB).
    pub max_message_bytes: usize,
    /// Circuits whose keys are loaded at start (`mul-chain/64`, ...).
    pub preload: Vec<String>,
    /// The server's certificate chain (PEM): gRPC is served over TLS.
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert` (PEM).
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM): a gRPC client must present a certificate one
    /// of them signed (mutual TLS).
    pub tls_client_ca: Option<PathBuf>,
    /// Bearer tokens with roles, one `ROLE TOKEN` a line (`admin`,
    /// `submit`, `metrics`); with it, every call needs a token.
    pub tokens_file: Option<PathBuf>,
    /// Serve a non-loopback address without authentication.
    pub insecure: bool,
    /// The engine's shape (`[engine]`): an absent key keeps the engine's
    /// default.
    pub engine: EngineSettings,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:9820".to_owned(),
            metrics_listen: "127.0.0.1:9821".to_owned(),
            state_dir: PathBuf::from("cuzk-state"),
            params_dir: None,
            generate_params: false,
            fil_param_dir: None,
            full_param_checks: false,
            max_jobs: 1024,
            admission_checks: 2,
            engine_jobs: None,
            result_ttl_secs: 3600,
            journal_keep_finished: 10_000,
            shutdown_grace_secs: 30,
            max_message_bytes: 256 << 20,
            preload: Vec::new(),
            tls_cert: None,
            tls_key: None,
            tls_client_ca: None,
            tokens_file: None,
            insecure: false,
            engine: EngineSettings::default(),
        }
    }
}

impl DaemonConfig {
    /// Reads and parses `path`.
    pub fn load(path: &Path) -> Result<Self, DaemonError> {
        let text = std::fs::read_to_string(path).map_err(|source| DaemonError::Io {
            what: format!("cannot read config file {}", path.display()),
            source,
        })?;
        toml::from_str(&text).map_err(|source| DaemonError::ConfigFile {
            path: path.to_owned(),
            source,
        })
    }

    /// The proving-key directory, default applied.
    pub fn params_dir(&self) -> PathBuf {
        self.params_dir
            .clone()
            .unwrap_or_else(|| self.state_dir.join("params"))
    }

    /// The Filecoin parameter directory, default applied.
    pub fn fil_param_dir(&self) -> PathBuf {
        cuzk_filecoin::params::parameter_dir(self.fil_param_dir.as_deref())
    }

    /// The journal's file.
    pub fn journal_path(&self) -> PathBuf {
        self.state_dir.join("journal.redb")
    }

    /// The gRPC address, parsed.
    pub fn listen_addr(&self) -> Result<ListenAddr, DaemonError> {
        self.listen.parse()
    }

    /// The metrics address, parsed; `None` when turned off.
    pub fn metrics_addr(&self) -> Result<Option<SocketAddr>, DaemonError> {
        if self.metrics_listen.is_empty() {
            return Ok(None);
        }
        match self.metrics_listen.parse()? {
            ListenAddr::Tcp(addr) => Ok(Some(addr)),
            ListenAddr::Unix(_) => Err(DaemonError::Config(format!(
                "metrics_listen '{}' must be a TCP address",
                self.metrics_listen
            ))),
        }
    }

    /// The engine's configuration: the engine's defaults, overridden by
    /// `[engine]` (self-verification on unless turned off).
    pub fn engine_config(&self) -> Result<EngineConfig, DaemonError> {
        self.engine
            .resolve(EngineConfig::default())
            .map_err(|err| DaemonError::Config(format!("[engine]: {err}")))
    }

    /// Jobs handed to the engine at once, default applied: every partition
    /// the engine can hold in flight (partition workers, queue slots, GPU
    /// workers), so that no worker waits for the daemon.
    pub fn engine_jobs(&self, engine: &EngineConfig) -> usize {
        self.engine_jobs.unwrap_or_else(|| {
            engine.partition_workers + engine.effective_queue_depth() + engine.gpu_workers()
        })
    }

    /// Checks what the engine does not: limits that must be positive.
    pub fn validate(&self) -> Result<(), DaemonError> {
        let positive = [
            ("max_jobs", self.max_jobs),
            ("admission_checks", self.admission_checks),
            ("engine_jobs", self.engine_jobs.unwrap_or(1)),
            ("max_message_bytes", self.max_message_bytes),
            ("journal_keep_finished", self.journal_keep_finished),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return Err(DaemonError::Config(format!("{key} must be at least 1")));
        }
        self.listen_addr()?;
        self.metrics_addr()?;
        self.check_exposure()
    }

    /// Refuses settings that would serve strangers unauthenticated: gRPC
    /// on an address other than loopback needs TLS and a way to
    /// authenticate clients (mutual TLS or tokens), `/metrics` there needs
    /// tokens, unless `insecure` says the network is trusted. A unix
    /// socket is guarded by its file's permissions.
    pub fn check_exposure(&self) -> Result<(), DaemonError> {
        let config = |why: String| Err(DaemonError::Config(why));
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => return config("tls_cert is set but tls_key is not".into()),
            (None, Some(_)) => return config("tls_key is set but tls_cert is not".into()),
            _ => {}
        }
        if self.tls_client_ca.is_some() && self.tls_cert.is_none() {
            return config("tls_client_ca needs tls_cert and tls_key (mutual TLS is TLS)".into());
        }
        let listen = self.listen_addr()?;
        if self.tls_cert.is_some() && matches!(listen, ListenAddr::Unix(_)) {
            return config(format!(
                "tls_cert is set but listen is the unix socket {}: TLS is for TCP; a socket \
                 is guarded by its file's permissions",
                self.listen
            ));
        }
        if self.insecure {
            return Ok(());
        }
        if let ListenAddr::Tcp(addr) = listen {
            let authenticated = self.tls_client_ca.is_some() || self.tokens_file.is_some();
            if !addr.ip().is_loopback() && (self.tls_cert.is_none() || !authenticated) {
                return config(format!(
                    "listen {addr} is not a loopback address: serve it with TLS (tls_cert, \
                     tls_key) and authenticate clients (tls_client_ca or tokens_file), or \
                     pass --insecure if every host that can reach it is trusted"
                ));
            }
        }
        if let Some(addr) = self.metrics_addr()? {
            if !addr.ip().is_loopback() && self.tokens_file.is_none() {
                return config(format!(
                    "metrics_listen {addr} is not a loopback address: set tokens_file (a \
                     metrics token for the scraper) or pass --insecure"
                ));
            }
        }
        Ok(())
    }
}

/// Where a server listens or a client connects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A unix socket's path.
    Unix(PathBuf),
}

impl FromStr for ListenAddr {
    type Err = DaemonError;

    /// `unix:///abs/path` (or `unix:path`), `host:port`, `:port` or a bare
    /// port; a missing host is 127.0.0.1, never every interface.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| DaemonError::Config(format!("bad address '{text}': {why}"));
        if let Some(path) = text.strip_prefix("unix://").or(text.strip_prefix("unix:")) {
            if path.is_empty() {
                return Err(bad("no socket path"));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let hostport = text.strip_prefix("tcp://").unwrap_or(text);
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        if let Ok(port) = hostport.trim_start_matches(':').parse::<u16>() {
            return Ok(ListenAddr::Tcp(SocketAddr::new(loopback, port)));
        }
        if let Ok(addr) = hostport.parse::<SocketAddr>() {
            return Ok(ListenAddr::Tcp(addr));
        }
        let mut resolved = hostport
            .to_socket_addrs()
            .map_err(|err| bad(&err.to_string()))?;
        resolved
            .next()
            .map(ListenAddr::Tcp)
            .ok_or_else(|| bad("the host name resolves to nothing"))
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => write!(f, "{addr}"),
            ListenAddr::Unix(path) => write!(f, "unix://{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let example: String = include_str!("config.rs")
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| format!("{}\n", l.trim_start_matches("//!").trim_start()))
            .collect();
        let config: DaemonConfig = toml::from_str(&example).unwrap();
        assert_eq!(
            config.listen_addr().unwrap(),
            ListenAddr::Tcp("0.0.0.0:9820".parse().unwrap())
        );
        assert_eq!(config.engine.devices, Some(vec![0]));
        assert_eq!(config.preload, vec!["mul-chain/64".to_owned()]);
        config.validate().unwrap();
        assert!(config.engine_config().unwrap().verify);
    }

    #[test]
    fn addresses_default_to_loopback() {
        let tcp = |s: &str| match s.parse::<ListenAddr>().unwrap() {
            ListenAddr::Tcp(addr) => addr,
            ListenAddr::Unix(p) => panic!("{s} parsed as unix {}", p.display()),
        };
        assert_eq!(tcp("9820"), "127.0.0.1:9820".parse().unwrap());
        assert_eq!(tcp(":9820"), "127.0.0.1:9820".parse().unwrap());
        assert_eq!(tcp("0.0.0.0:1"), "0.0.0.0:1".parse().unwrap());
        assert!(tcp("localhost:7").ip().is_loopback());
        assert_eq!(
            "unix:rel.sock".parse::<ListenAddr>().unwrap(),
            ListenAddr::Unix("rel.sock".into())
        );
        assert!("unix://".parse::<ListenAddr>().is_err());
    }

    #[test]
    fn refuses_what_cannot_work() {
        let config = DaemonConfig {
            max_jobs: 0,
            ..DaemonConfig::default()
        };
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("max_jobs"));
        let config = DaemonConfig {
            metrics_listen: "unix:///tmp/m.sock".to_owned(),
            ..DaemonConfig::default()
        };
        assert!(config.validate().is_err());
        let mut config = DaemonConfig::default();
        config.engine.backend = Some("tpu".to_owned());
        let err = config.engine_config().unwrap_err().to_string();
        assert!(err.contains("[engine]: unknown backend \"tpu\""), "{err}");
        let err = toml::from_str::<DaemonConfig>("max_jobz = 3").unwrap_err();
        assert!(err.to_string().contains("max_jobz"), "{err}");
    }

    #[test]
    fn a_public_address_needs_tls_and_authentication() {
        let at = |listen: &str, metrics: &str| DaemonConfig {
            listen: listen.to_owned(),
            metrics_listen: metrics.to_owned(),
            ..DaemonConfig::default()
        };
        let tls = |mut c: DaemonConfig| {
            c.tls_cert = Some("cert.pem".into());
            c.tls_key = Some("key.pem".into());
            c
        };
        let refused = |c: &DaemonConfig| c.validate().unwrap_err().to_string();
        // Loopback and unix sockets may be open.
        for open in [
            at("127.0.0.1:9820", "127.0.0.1:9821"),
            at("[::1]:9820", ""),
            at("unix:///tmp/c.sock", ""),
        ] {
            open.validate().unwrap();
        }
        let public = at("0.0.0.0:9820", "");
        assert!(refused(&public).contains("not a loopback address"));
        // TLS alone does not say who the client is; tokens are not private
        // without TLS.
        assert!(refused(&tls(public.clone())).contains("authenticate clients"));
        let tokens_only = DaemonConfig {
            tokens_file: Some("tokens".into()),
            ..public.clone()
        };
        assert!(refused(&tokens_only).contains("with TLS"));
        let with_tokens = tls(tokens_only);
        with_tokens.validate().unwrap();
        let mutual = DaemonConfig {
            tls_client_ca: Some("ca.pem".into()),
            ..tls(public.clone())
        };
        mutual.validate().unwrap();
        // A public /metrics needs a token, even beside an authenticated gRPC.
        let metrics = DaemonConfig {
            metrics_listen: "0.0.0.0:9821".to_owned(),
            ..mutual.clone()
        };
        assert!(refused(&metrics).contains("metrics_listen"));
        // --insecure lets an operator say the network is trusted.
        for insecure in [public.clone(), metrics] {
            DaemonConfig {
                insecure: true,
                ..insecure
            }
            .validate()
            .unwrap();
        }
        // Settings that make no sense are refused even with --insecure.
        let half = DaemonConfig {
            tls_cert: Some("cert.pem".into()),
            insecure: true,
            ..public.clone()
        };
        assert!(refused(&half).contains("tls_key is not"));
        let ca_alone = DaemonConfig {
            tls_client_ca: Some("ca.pem".into()),
            ..public.clone()
        };
        assert!(refused(&ca_alone).contains("mutual TLS is TLS"));
        let unix_tls = tls(at("unix:///tmp/c.sock", ""));
        assert!(refused(&unix_tls).contains("TLS is for TCP"));
    }
}
