//! Starting, running and stopping the daemon.
//!
//! Start: open the journal, start the engine, queue the journal's
//! unfinished jobs, load the `preload` keys, bind the sockets. Run: serve
//! gRPC and HTTP, dispatch jobs, expire old outcomes. Stop (when the
//! shutdown future resolves, e.g. on SIGTERM): refuse new jobs, give
//! running ones `shutdown_grace_secs` to finish, release awaiters, close
//! the servers, stop the engine (jobs still in it stay in the journal and
//! run after the restart) and remove the unix socket.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cuzk_engine::Engine;
use tokio::net::{TcpListener, UnixListener};
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tokio_stream::StreamExt;

use crate::auth::{Access, Role};
use crate::daemon::{unix_ms, Daemon, Lifecycle};
use crate::journal::Journal;
use crate::kinds::Circuit;
use crate::metrics::COMPACTED_EXPIRED;
use crate::pb::proving_engine_server::ProvingEngineServer;
use crate::service::Service;
use crate::{DaemonConfig, DaemonError, ListenAddr};
use tonic::service::interceptor::InterceptedService;

/// How long shutdown waits for the engine's last users to let go.
const ENGINE_RELEASE: Duration = Duration::from_secs(10);

enum GrpcListener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// Points filecoin-proofs at the daemon's Filecoin parameter directory
/// (`FIL_PROOFS_PARAMETER_CACHE`), once per process: filecoin-proofs reads
/// it once. The daemon proves with the files it loads itself, so a process
/// whose filecoin-proofs had settled elsewhere (a second daemon in one
/// test process) only gets a warning.
fn point_filecoin_proofs_at(dir: &Path) {
    static POINTED: OnceLock<PathBuf> = OnceLock::new();
    let pointed = POINTED.get_or_init(|| {
        if let Err(err) = cuzk_filecoin::params::point_filecoin_proofs_at(dir) {
            tracing::warn!(error = %err, "filecoin-proofs reads another parameter directory");
        }
        dir.to_owned()
    });
    if pointed != dir {
        tracing::warn!(
            fil_param_dir = %dir.display(),
            filecoin_proofs = %pointed.display(),
            "filecoin-proofs was pointed at another parameter directory earlier in this process"
        );
    }
}

/// A daemon with its sockets bound, ready to [`run`](Server::run).
pub struct Server {
    daemon: Arc<Daemon>,
    grpc: GrpcListener,
    grpc_addr: ListenAddr,
    http: Option<TcpListener>,
    /// The gRPC server, with its TLS (`tls_cert`, mutual with
    /// `tls_client_ca`) already parsed.
    builder: tonic::transport::Server,
}

fn io_error(what: String) -> impl FnOnce(std::io::Error) -> DaemonError {
    move |source| DaemonError::Io { what, source }
}

impl Server {
    /// Opens the journal, starts the engine, queues the journal's
    /// unfinished jobs, loads the `preload` keys and binds the sockets.
    pub async fn bind(config: DaemonConfig) -> Result<Self, DaemonError> {
        config.validate()?;
        // Credentials first: a wrong file is named before the engine and
        // the journal start.
        let access = Access::from_config(&config)?;
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = crate::auth::server_tls(&config)? {
            // Parses the certificate and key now, not at the first call.
            builder = builder.tls_config(tls).map_err(|err| {
                DaemonError::Config(format!(
                    "tls_cert / tls_key / tls_client_ca: {}",
                    crate::error::error_chain(&err)
                ))
            })?;
        }
        point_filecoin_proofs_at(&config.fil_param_dir());
        let engine_config = config.engine_config()?;
        let (journal_path, keep_finished) = (config.journal_path(), config.journal_keep_finished);
        let (engine, journal) = tokio::task::spawn_blocking(move || {
            let journal = Journal::open(&journal_path, keep_finished)?;
            Ok::<_, DaemonError>((Engine::new(engine_config)?, journal))
        })
        .await
        .expect("starting the engine panicked")?;
        let daemon = Arc::new(Daemon::new(config, access, engine, journal)?);
        let recovered = {
            let daemon = Arc::clone(&daemon);
            tokio::task::spawn_blocking(move || daemon.recover())
                .await
                .expect("reading the journal panicked")?
        };
        tracing::info!(recovered, engine_jobs = daemon.engine_jobs, "journal read");
        for id in daemon.config.preload.clone() {
            let circuit = Circuit::parse(&id)?;
            daemon
                .keys
                .preload(circuit)
                .await
                .map_err(|source| DaemonError::Preload {
                    circuit: id.clone(),
                    source: Box::new(source),
                })?;
        }
        let (grpc, grpc_addr) = bind_grpc(&daemon.config.listen_addr()?).await?;
        let http = match daemon.config.metrics_addr()? {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(io_error(format!("cannot listen on {addr} (metrics)")))?,
            ),
            None => None,
        };
        Ok(Self {
            daemon,
            grpc,
            grpc_addr,
            http,
            builder,
        })
    }

    /// Where gRPC is served (a TCP port of 0 resolved).
    pub fn grpc_addr(&self) -> &ListenAddr {
        &self.grpc_addr
    }

    /// Where `/metrics` is served, if it is.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` resolves, then shuts down as the module
    /// docs say.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), DaemonError> {
        let Server {
            daemon,
            grpc,
            grpc_addr,
            http,
            mut builder,
        } = self;
        let stopped = {
            let daemon = Arc::clone(&daemon);
            async move { daemon.reached(Lifecycle::Stopped).await }
        };
        let limit = daemon.config.max_message_bytes;
        let service = ProvingEngineServer::new(Service {
            daemon: Arc::clone(&daemon),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
        // A caller without a token this daemon knows is turned away on the
        // call's headers, before its message is read; each RPC then checks
        // the role it needs (service.rs).
        let known_callers = {
            let daemon = Arc::clone(&daemon);
            move |request: tonic::Request<()>| {
                daemon.access.grpc(&request, Role::Metrics)?;
                Ok(request)
            }
        };
        let service = InterceptedService::new(service, known_callers);
        let router = builder.add_service(service);
        let grpc = match grpc {
            GrpcListener::Tcp(listener) => {
                let incoming = TcpListenerStream::new(listener).map(|stream| {
                    let stream = stream?;
                    stream.set_nodelay(true)?;
                    Ok::<_, std::io::Error>(stream)
                });
                tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped))
            }
            GrpcListener::Unix(listener) => tokio::spawn(
                router.serve_with_incoming_shutdown(UnixListenerStream::new(listener), stopped),
            ),
        };
        let http = http.map(|listener| {
            let daemon = Arc::clone(&daemon);
            let app = crate::http::router(Arc::clone(&daemon));
            tokio::spawn(async move {
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move { daemon.reached(Lifecycle::Stopped).await })
                    .await
            })
        });
        tokio::spawn(crate::runner::dispatch(Arc::clone(&daemon)));
        tokio::spawn(expire_outcomes(Arc::clone(&daemon)));
        tracing::info!(grpc = %grpc_addr, "serving");
        shutdown.await;
        stop(&daemon).await;
        let served = grpc.await.expect("the gRPC server panicked");
        if let Some(http) = http {
            let _ = http.await;
        }
        release_engine(&daemon).await;
        wait_for_tasks(daemon).await;
        if let ListenAddr::Unix(path) = &grpc_addr {
            let _ = std::fs::remove_file(path);
        }
        tracing::info!("stopped");
        Ok(served?)
    }
}

/// Refuses new jobs, waits for running ones (up to the grace period), then
/// releases awaiters and lets the servers close.
async fn stop(daemon: &Daemon) {
    daemon.set_lifecycle(Lifecycle::Draining);
    let grace = Duration::from_secs(daemon.config.shutdown_grace_secs);
    let started = Instant::now();
    tracing::info!(
        running = daemon.table.running(),
        grace_secs = grace.as_secs(),
        "draining"
    );
    while daemon.table.running() > 0 && started.elapsed() < grace {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    daemon.set_lifecycle(Lifecycle::Stopped);
}

/// Drops the engine once nothing else holds it: queued partitions fail
/// with `Shutdown` (their jobs stay in the journal) and the engine joins
/// its threads before the process exits.
async fn release_engine(daemon: &Daemon) {
    let Some(mut engine) = daemon.take_engine() else {
        return;
    };
    let started = Instant::now();
    loop {
        match Arc::try_unwrap(engine) {
            Ok(engine) => {
                let _ = tokio::task::spawn_blocking(move || drop(engine)).await;
                return;
            }
            Err(shared) if started.elapsed() < ENGINE_RELEASE => {
                engine = shared;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => {
                tracing::warn!("the engine is still in use; leaving it to the process exit");
                return;
            }
        }
    }
}

/// Waits (a while) until every task that holds the daemon has ended, so
/// that the journal is closed when `run` returns.
async fn wait_for_tasks(daemon: Arc<Daemon>) {
    let started = Instant::now();
    while Arc::strong_count(&daemon) > 1 && started.elapsed() < ENGINE_RELEASE {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if Arc::strong_count(&daemon) > 1 {
        tracing::warn!("tasks still hold the daemon; leaving them to the process exit");
    }
}

/// Forgets outcomes nobody fetched within `result_ttl_secs`, now and then.
async fn expire_outcomes(daemon: Arc<Daemon>) {
    let ttl = Duration::from_secs(daemon.config.result_ttl_secs);
    let period = ttl.clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        let cutoff = unix_ms().saturating_sub(ttl.as_millis() as u64);
        let journal = Arc::clone(&daemon.journal);
        match tokio::task::spawn_blocking(move || journal.expire(cutoff)).await {
            Ok(Ok(expired)) => daemon.forgotten(COMPACTED_EXPIRED, &expired),
            Ok(Err(err)) => {
                tracing::warn!(error = %crate::error::error_chain(&err), "expiry failed")
            }
            Err(_) => tracing::warn!("expiry panicked"),
        }
        tokio::select! {
            () = tokio::time::sleep(period) => {}
            () = daemon.reached(Lifecycle::Draining) => return,
        }
    }
}

/// Binds the gRPC socket. A unix socket file left by a daemon that died is
/// removed first; one that a live daemon answers on is an error.
async fn bind_grpc(addr: &ListenAddr) -> Result<(GrpcListener, ListenAddr), DaemonError> {
    match addr {
        ListenAddr::Tcp(addr) => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(io_error(format!("cannot listen on {addr}")))?;
            let bound = listener
                .local_addr()
                .map_err(io_error(format!("cannot listen on {addr}")))?;
            Ok((GrpcListener::Tcp(listener), ListenAddr::Tcp(bound)))
        }
        ListenAddr::Unix(path) => {
            if path.exists() {
                if tokio::net::UnixStream::connect(path).await.is_ok() {
                    return Err(DaemonError::Config(format!(
                        "another daemon is listening on {}",
                        path.display()
                    )));
                }
                std::fs::remove_file(path).map_err(io_error(format!(
                    "cannot remove stale socket {}",
                    path.display()
                )))?;
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(io_error(format!("cannot create {}", dir.display())))?;
            }
            let listener = UnixListener::bind(path)
                .map_err(io_error(format!("cannot listen on {}", path.display())))?;
            Ok((GrpcListener::Unix(listener), ListenAddr::Unix(path.clone())))
        }
    }
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("installing a SIGINT handler");
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM"),
        _ = int.recv() => tracing::info!("SIGINT"),
    }
}
