//! Connecting to a daemon, over TCP (plain or TLS) or a unix socket, with
//! a bearer token on every call if one is given.

use std::path::PathBuf;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity, Uri};

use crate::pb::proving_engine_client::ProvingEngineClient;
use crate::{DaemonError, ListenAddr};

/// A connected `cuzk.v1.ProvingEngine` client.
pub type Client = ProvingEngineClient<InterceptedService<Channel, Token>>;

/// How a client proves who it is, and which server it trusts.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// CA certificates (PEM) the server's certificate must chain to; set,
    /// the connection is TLS.
    pub tls_ca: Option<PathBuf>,
    /// The name the server's certificate must carry; default: the host of
    /// the address as given (a name or an IP address).
    pub tls_domain: Option<String>,
    /// This client's certificate chain and key (PEM), for mutual TLS.
    pub tls_identity: Option<(PathBuf, PathBuf)>,
    /// A bearer token sent with every call.
    pub token: Option<String>,
}

/// Adds `authorization: Bearer TOKEN` to each call, when there is a token.
#[derive(Clone, Debug)]
pub struct Token(Option<MetadataValue<Ascii>>);

impl Interceptor for Token {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// Largest message a client sends or takes (as Curio's client: 256 MiB).
pub const CLIENT_MESSAGE_BYTES: usize = 256 << 20;

/// Why a client could not connect.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The address does not parse.
    #[error(transparent)]
    Address(#[from] DaemonError),
    /// A credential file cannot be read, or a token cannot be sent.
    #[error("{0}")]
    Credentials(String),
    /// Nothing answered there, or the TLS handshake failed.
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
/// port on 127.0.0.1), without TLS or a token.
pub async fn connect(addr: &str) -> Result<Client, ClientError> {
    connect_with(addr, &Credentials::default()).await
}

/// Connects to the daemon at `addr` with `credentials`.
pub async fn connect_with(addr: &str, credentials: &Credentials) -> Result<Client, ClientError> {
    let fail = |source| ClientError::Connect {
        addr: addr.to_owned(),
        source,
    };
    let token = match &credentials.token {
        Some(token) => Some(
            format!("Bearer {token}")
                .parse::<MetadataValue<Ascii>>()
                .map_err(|_| {
                    ClientError::Credentials("the token has characters a header may not".into())
                })?,
        ),
        None => None,
    };
    let channel = match addr.parse::<ListenAddr>()? {
        ListenAddr::Tcp(socket) => {
            let mut endpoint = match &credentials.tls_ca {
                None => Endpoint::from_shared(format!("http://{socket}")).map_err(fail)?,
                Some(ca) => {
                    let mut tls = ClientTlsConfig::new()
                        .ca_certificate(Certificate::from_pem(read("--tls-ca", ca)?))
                        .domain_name(
                            credentials
                                .tls_domain
                                .clone()
                                .unwrap_or_else(|| host_of(addr)),
                        );
                    if let Some((cert, key)) = &credentials.tls_identity {
                        tls = tls.identity(Identity::from_pem(
                            read("--tls-cert", cert)?,
                            read("--tls-key", key)?,
                        ));
                    }
                    Endpoint::from_shared(format!("https://{socket}"))
                        .map_err(fail)?
                        .tls_config(tls)
                        .map_err(fail)?
                }
            };
            endpoint = endpoint.tcp_nodelay(true);
            endpoint.connect().await.map_err(fail)?
        }
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
    Ok(ProvingEngineClient::with_interceptor(channel, Token(token))
        .max_decoding_message_size(CLIENT_MESSAGE_BYTES)
        .max_encoding_message_size(CLIENT_MESSAGE_BYTES))
}

/// Why a call failed, as one line a user can act on. An answer from the
/// daemon (a status it sent) is its code and message. A status tonic made
/// from a transport error (it carries that error as its source) means the
/// connection broke before any answer: after a plain-text client's HTTP/2
/// preface reaches a TLS port, or a server that wants client certificates
/// turns a client without one away after the handshake. Which of hyper's
/// or h2's errors shows first is a race, so the line names the likely
/// cause instead, found by asking the port itself where that settles it.
pub async fn call_error(addr: &str, credentials: &Credentials, status: &tonic::Status) -> String {
    use std::error::Error;
    let Some(cause) = status.source() else {
        return format!("{:?}: {}", status.code(), status.message());
    };
    let mut line = format!(
        "the connection to the cuzk daemon at {addr} broke off before it answered \
         ({:?}: {})",
        status.code(),
        crate::error_chain(cause)
    );
    let tcp = match addr.parse::<ListenAddr>() {
        Ok(ListenAddr::Tcp(socket)) => Some(socket),
        _ => None,
    };
    let hint = match (tcp, &credentials.tls_ca, &credentials.tls_identity) {
        (Some(socket), None, _) if serves_tls(socket).await => {
            "; it serves TLS: pass --tls-ca with the CA that signed its certificate"
        }
        (Some(_), Some(_), None) => {
            "; a daemon with --tls-client-ca turns away clients without a certificate: \
             pass --tls-cert and --tls-key"
        }
        (Some(_), Some(_), Some(_)) => {
            "; a daemon with --tls-client-ca turns away certificates its clients' CA \
             did not sign"
        }
        _ => "",
    };
    line.push_str(hint);
    line
}

/// Whether the server at `socket` answers an HTTP/2 preface with a TLS
/// record (rustls sends a fatal alert for a record it cannot parse).
async fn serves_tls(socket: std::net::SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(socket).await?;
        stream
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await?;
        let mut head = [0u8; 3];
        stream.read_exact(&mut head).await?;
        // A TLS record: content type alert (21) or handshake (22), then
        // protocol version 3.x.
        Ok::<_, std::io::Error>(matches!(head, [21 | 22, 3, _]))
    };
    matches!(
        tokio::time::timeout(std::time::Duration::from_secs(2), probe).await,
        Ok(Ok(true))
    )
}

/// The host part of `host:port` (`[v6]:port` unbracketed), or the whole.
fn host_of(addr: &str) -> String {
    let hostport = addr.strip_prefix("tcp://").unwrap_or(addr);
    let host = hostport.rsplit_once(':').map_or(hostport, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host {
        // A bare port, or ":port": the daemon's default host.
        "" => "127.0.0.1".to_owned(),
        port if port.bytes().all(|b| b.is_ascii_digit()) => "127.0.0.1".to_owned(),
        host => host.to_owned(),
    }
}

fn read(flag: &str, path: &std::path::Path) -> Result<Vec<u8>, ClientError> {
    std::fs::read(path)
        .map_err(|err| ClientError::Credentials(format!("{flag} {}: {err}", path.display())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tls_name_is_the_host_as_given() {
        for (addr, host) in [
            ("gpu-box.lan:9820", "gpu-box.lan"),
            ("10.0.0.5:9820", "10.0.0.5"),
            ("tcp://10.0.0.5:9820", "10.0.0.5"),
            ("[::1]:9820", "::1"),
            (":9820", "127.0.0.1"),
            ("9820", "127.0.0.1"),
        ] {
            assert_eq!(super::host_of(addr), host, "{addr}");
        }
    }
}
