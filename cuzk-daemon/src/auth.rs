//! Who may call what. Transport: TLS with the server's certificate
//! (`tls_cert`, `tls_key`) and, with `tls_client_ca`, clients'
//! certificates checked against a CA in the handshake (mutual TLS).
//! Calls: bearer tokens with roles (`tokens_file`), checked on every gRPC
//! call and on `/metrics` and `/status`.
//!
//! With a tokens file every call needs a token, on every address: a local
//! user is not trusted more than a remote one. Without one, a client that
//! passed mutual TLS may do everything (the CA is the operator's own), and
//! a daemon with neither is open, which it may only be on a loopback
//! address or a unix socket unless `insecure` is set
//! ([`DaemonConfig::check_exposure`]).

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use subtle::ConstantTimeEq;
use tonic::transport::{Certificate, Identity, ServerTlsConfig};
use tonic::{Request, Status};

use crate::{DaemonConfig, DaemonError};

/// What a token allows; each role allows what the ones below it do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Read-only: `/metrics`, `/status`, `GetStatus`, `GetMetrics`.
    Metrics,
    /// Proving: `SubmitProof`, `AwaitProof`, `Prove`.
    Submit,
    /// Operating: `CancelProof`, `PreloadSrs`, `EvictSrs`.
    Admin,
}

impl FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "metrics" => Ok(Role::Metrics),
            "submit" => Ok(Role::Submit),
            "admin" => Ok(Role::Admin),
            other => Err(format!("unknown role '{other}' (admin, submit or metrics)")),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Metrics => "metrics",
            Role::Submit => "submit",
            Role::Admin => "admin",
        })
    }
}

/// The shortest token a tokens file may hold: a guessable token is no
/// authentication.
pub const MIN_TOKEN_LEN: usize = 16;

/// The daemon's access rules, read once at start.
pub(crate) struct Access {
    tokens: Vec<(Role, Vec<u8>)>,
}

impl Access {
    /// Reads `tokens_file`, if the configuration names one.
    pub(crate) fn from_config(config: &DaemonConfig) -> Result<Self, DaemonError> {
        let tokens = match &config.tokens_file {
            Some(path) => read_tokens(path)?,
            None => Vec::new(),
        };
        Ok(Self { tokens })
    }

    /// The role a token grants, if any. Every token is compared, each in
    /// constant time, so how long this takes does not say which one, or
    /// how much of one, matched.
    fn role_of(&self, token: &[u8]) -> Option<Role> {
        let mut role = None;
        for (granted, known) in &self.tokens {
            if bool::from(known.as_slice().ct_eq(token)) {
                role = role.max(Some(*granted));
            }
        }
        role
    }

    /// Whether an `authorization` header's value allows `need`: `Ok` when
    /// no tokens are configured.
    fn allows(&self, header: Option<&[u8]>, need: Role) -> Result<(), Denied> {
        if self.tokens.is_empty() {
            return Ok(());
        }
        let token = header
            .and_then(|value| value.strip_prefix(b"Bearer "))
            .ok_or(Denied::NoToken)?;
        match self.role_of(token) {
            None => Err(Denied::UnknownToken),
            Some(role) if role < need => Err(Denied::Role { role, need }),
            Some(_) => Ok(()),
        }
    }

    /// Checks a gRPC call that needs `need`.
    pub(crate) fn grpc<T>(&self, request: &Request<T>, need: Role) -> Result<(), Status> {
        let header = request
            .metadata()
            .get("authorization")
            .map(|value| value.as_bytes());
        self.allows(header, need).map_err(|denied| match denied {
            Denied::Role { .. } => Status::permission_denied(denied.to_string()),
            _ => Status::unauthenticated(denied.to_string()),
        })
    }

    /// Checks an HTTP request that needs `need`: 401 or 403 with the reason.
    pub(crate) fn http(
        &self,
        headers: &axum::http::HeaderMap,
        need: Role,
    ) -> Result<(), (axum::http::StatusCode, String)> {
        let header = headers
            .get(axum::http::header::AUTHORIZATION)
            .map(|value| value.as_bytes());
        self.allows(header, need).map_err(|denied| {
            let code = match denied {
                Denied::Role { .. } => axum::http::StatusCode::FORBIDDEN,
                _ => axum::http::StatusCode::UNAUTHORIZED,
            };
            (code, format!("{denied}\n"))
        })
    }
}

#[derive(Debug)]
enum Denied {
    NoToken,
    UnknownToken,
    Role { role: Role, need: Role },
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denied::NoToken => {
                f.write_str("this daemon needs a bearer token (authorization: Bearer TOKEN)")
            }
            Denied::UnknownToken => f.write_str("the bearer token is not one this daemon knows"),
            Denied::Role { role, need } => {
                write!(
                    f,
                    "a {role} token may not do this: it needs the {need} role"
                )
            }
        }
    }
}

/// Parses a tokens file: one `ROLE TOKEN` a line, `#` comments and blank
/// lines skipped. A file others may read is refused: it holds secrets.
fn read_tokens(path: &Path) -> Result<Vec<(Role, Vec<u8>)>, DaemonError> {
    let bad = |line: usize, why: &str| {
        DaemonError::Config(format!("tokens_file {} line {line}: {why}", path.display()))
    };
    let text = std::fs::read_to_string(path).map_err(|source| DaemonError::Io {
        what: format!("cannot read tokens_file {}", path.display()),
        source,
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|source| DaemonError::Io {
                what: format!("cannot read tokens_file {}", path.display()),
                source,
            })?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(DaemonError::Config(format!(
                "tokens_file {} may be read by others (mode {:o}): chmod 600 it",
                path.display(),
                mode & 0o777
            )));
        }
    }
    let mut tokens: Vec<(Role, Vec<u8>)> = Vec::new();
    for (n, line) in text.lines().enumerate().map(|(n, l)| (n + 1, l.trim())) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(role), Some(token), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(n, "expected ROLE TOKEN"));
        };
        let role: Role = role.parse().map_err(|why: String| bad(n, &why))?;
        if token.len() < MIN_TOKEN_LEN {
            return Err(bad(
                n,
                &format!("a token needs at least {MIN_TOKEN_LEN} characters"),
            ));
        }
        if tokens.iter().any(|(_, t)| t == token.as_bytes()) {
            return Err(bad(n, "this token is listed twice"));
        }
        tokens.push((role, token.as_bytes().to_vec()));
    }
    if tokens.is_empty() {
        return Err(DaemonError::Config(format!(
            "tokens_file {} lists no token",
            path.display()
        )));
    }
    Ok(tokens)
}

/// The gRPC server's TLS settings, if `tls_cert` is set.
pub(crate) fn server_tls(config: &DaemonConfig) -> Result<Option<ServerTlsConfig>, DaemonError> {
    let (Some(cert), Some(key)) = (&config.tls_cert, &config.tls_key) else {
        return Ok(None);
    };
    let identity = Identity::from_pem(read_pem("tls_cert", cert)?, read_pem("tls_key", key)?);
    let mut tls = ServerTlsConfig::new().identity(identity);
    if let Some(ca) = &config.tls_client_ca {
        tls = tls.client_ca_root(Certificate::from_pem(read_pem("tls_client_ca", ca)?));
    }
    Ok(Some(tls))
}

/// A PEM file's bytes, checked to hold at least one PEM block so that a
/// wrong file is named at start, not at the first handshake.
pub(crate) fn read_pem(key: &str, path: &Path) -> Result<Vec<u8>, DaemonError> {
    let pem = std::fs::read(path).map_err(|source| DaemonError::Io {
        what: format!("cannot read {key} {}", path.display()),
        source,
    })?;
    if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(DaemonError::Config(format!(
            "{key} {} is not a PEM file",
            path.display()
        )));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(lines: &str) -> Result<Access, DaemonError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, lines).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let config = DaemonConfig {
            tokens_file: Some(path),
            ..DaemonConfig::default()
        };
        Access::from_config(&config)
    }

    #[test]
    fn roles_allow_what_is_below_them() {
        let access = access(
            "# operators\nadmin aaaaaaaaaaaaaaaaaaaa\n\nsubmit ssssssssssssssssssss\nmetrics mmmmmmmmmmmmmmmmmmmm\n",
        )
        .unwrap();
        let bearer = |t: &str| format!("Bearer {t}").into_bytes();
        let (a, s, m) = (
            bearer("aaaaaaaaaaaaaaaaaaaa"),
            bearer("ssssssssssssssssssss"),
            bearer("mmmmmmmmmmmmmmmmmmmm"),
        );
        for need in [Role::Metrics, Role::Submit, Role::Admin] {
            assert!(access.allows(Some(&a), need).is_ok());
        }
        assert!(access.allows(Some(&s), Role::Submit).is_ok());
        assert!(access.allows(Some(&s), Role::Metrics).is_ok());
        assert!(matches!(
            access.allows(Some(&s), Role::Admin),
            Err(Denied::Role {
                role: Role::Submit,
                need: Role::Admin
            })
        ));
        assert!(access.allows(Some(&m), Role::Metrics).is_ok());
        assert!(access.allows(Some(&m), Role::Submit).is_err());
        assert!(matches!(
            access.allows(None, Role::Metrics),
            Err(Denied::NoToken)
        ));
        // The token without its scheme, a prefix of one, one longer.
        for wrong in [
            &b"aaaaaaaaaaaaaaaaaaaa"[..],
            b"Bearer aaaaaaaaaaaaaaaaaaa",
            b"Bearer aaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(access.allows(Some(wrong), Role::Metrics).is_err());
        }
    }

    #[test]
    fn no_tokens_configured_allows_every_call() {
        let access = Access::from_config(&DaemonConfig::default()).unwrap();
        assert!(access.allows(None, Role::Admin).is_ok());
    }

    #[test]
    fn bad_tokens_files_are_refused_with_their_line() {
        for (text, why) in [
            ("admin short\n", "line 1: a token needs at least 16"),
            ("root aaaaaaaaaaaaaaaaaaaa\n", "line 1: unknown role 'root'"),
            ("\nadmin\n", "line 2: expected ROLE TOKEN"),
            (
                "admin aaaaaaaaaaaaaaaaaaaa x\n",
                "line 1: expected ROLE TOKEN",
            ),
            (
                "admin aaaaaaaaaaaaaaaaaaaa\nsubmit aaaaaaaaaaaaaaaaaaaa\n",
                "line 2: this token is listed twice",
            ),
            ("# nothing\n", "lists no token"),
        ] {
            let err = access(text).err().expect(text).to_string();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_tokens_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, "admin aaaaaaaaaaaaaaaaaaaa\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let config = DaemonConfig {
            tokens_file: Some(path),
            ..DaemonConfig::default()
        };
        let err = Access::from_config(&config).err().unwrap().to_string();
        assert!(err.contains("chmod 600"), "{err}");
    }
}
