//! The cuzk proving service: a long-running daemon around
//! [`cuzk_engine::Engine`] that speaks `cuzk.v1.ProvingEngine` (the gRPC
//! protocol of Curio's cuzk client) over TCP or a unix socket, serves
//! `/metrics`, `/healthz` and `/status` over HTTP, and keeps a journal of every job it
//! accepts so that a crash or restart loses none.
//!
//! A job goes: `SubmitProof` checks it ([`kinds::job_spec`], the one place
//! that maps a request to engine work), admits it (at most `max_jobs`
//! queued or running, beyond that `RESOURCE_EXHAUSTED`), writes it to the
//! [`journal`] and queues it by priority. A dispatcher hands queued jobs to
//! the engine, at most `engine_jobs` at once; each running job holds a
//! lease on its proving key ([`keys`]), so that `EvictSRS` never frees a
//! key in use. Each running job's outcome is waited for on tokio's blocking
//! pool (`CancelProof` reaches the engine through the job's cancel switch,
//! no polling); an outcome goes to the journal,
//! then to the metrics and the awaiters, and stays until fetched or
//! expired.
//!
//! ```
//! use cuzk_daemon::{client, pb, DaemonConfig, Server};
//!
//! # let dir = tempfile::tempdir()?;
//! let runtime = tokio::runtime::Runtime::new()?;
//! runtime.block_on(async {
//!     let config = DaemonConfig {
//!         listen: "127.0.0.1:0".into(),
//!         metrics_listen: String::new(),
//!         state_dir: dir.path().into(),
//!         generate_params: true, // a test key for mul-chain/16
//!         ..DaemonConfig::default()
//!     };
//!     let server = Server::bind(config).await?;
//!     let addr = server.grpc_addr().to_string();
//!     let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//!     let serving = tokio::spawn(server.run(async { stopped.await.ok(); }));
//!
//!     let mut client = client::connect(&addr).await?;
//!     let submit = pb::SubmitProofRequest {
//!         proof_kind: pb::ProofKind::MulChain as i32,
//!         sector_size: 16,         // mul-chain/16
//!         sector_number: 7,        // request 7
//!         synthetic_partitions: 2, // two 192-byte proofs
//!         ..Default::default()
//!     };
//!     let prove = pb::ProveRequest { submit: Some(submit) };
//!     let result = client.prove(prove).await?.into_inner().result.unwrap();
//!     assert_eq!(result.status(), pb::await_proof_response::Status::Completed);
//!     assert_eq!(result.proof.len(), 2 * 192);
//!     assert!(result.verified);
//!
//!     stop.send(()).unwrap();
//!     serving.await??;
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod auth;
pub mod client;
mod config;
mod daemon;
mod error;
pub mod gpu;
mod http;
mod jobs;
pub mod journal;
pub mod keys;
pub mod kinds;
pub mod metrics;
mod runner;
mod server;
mod service;
mod status;

pub use config::{DaemonConfig, ListenAddr};
pub use error::{error_chain, DaemonError};
pub use jobs::{job_id, parse_job_id};
pub use server::{shutdown_signal, Server};

/// The `cuzk.v1` protocol, generated from `proto/cuzk/v1/proving.proto`.
#[allow(missing_docs)]
pub mod pb {
    tonic::include_proto!("cuzk.v1");
}

/// Logs to stderr through `tracing`, filtered by `RUST_LOG` (default
/// `info`); records of the `log` crate (the engine's) go the same way.
/// Does nothing if a subscriber is already installed.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}
