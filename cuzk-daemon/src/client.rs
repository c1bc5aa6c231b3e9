//! Connecting to a daemon, over TCP or a unix socket.

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::pb::proving_engine_client::ProvingEngineClient;
use crate::{DaemonError, ListenAddr};

/// A connected `cuzk.v1.ProvingEngine` client.
pub type Client = ProvingEngineClient<Channel>;

/// Largest message a client sends or takes (as Curio's client: 256 MiB).
pub const CLIENT_MESSAGE_BYTES: usize = 256 << 20;

/// Why a client could not connect.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The address does not parse.
    #[error(transparent)]
    Address(#[from] DaemonError),
    /// Nothing answered there.
    #[error("cannot connect to the cuzk daemon at {addr}")]
    Connect {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
}

/// Connects to the daemon at `addr` (`unix:///path`, `host:port` or a
/// port on 127.0.0.1).
pub async fn connect(addr: &str) -> Result<Client, ClientError> {
    let fail = |source| ClientError::Connect {
        addr: addr.to_owned(),
        source,
    };
    let channel = match addr.parse::<ListenAddr>()? {
        ListenAddr::Tcp(socket) => Endpoint::from_shared(format!("http://{socket}"))
            .map_err(fail)?
            .tcp_nodelay(true)
            .connect()
            .await
            .map_err(fail)?,
        ListenAddr::Unix(path) => {
            // The URI is a placeholder: the connector ignores it.
            Endpoint::from_static("http://cuzk.local")
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?))
                    }
                }))
                .await
                .map_err(fail)?
        }
    };
    Ok(ProvingEngineClient::new(channel)
        .max_decoding_message_size(CLIENT_MESSAGE_BYTES)
        .max_encoding_message_size(CLIENT_MESSAGE_BYTES))
}
