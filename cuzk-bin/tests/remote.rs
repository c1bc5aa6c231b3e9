//! `cuzk serve` reached from another host: TLS with a server certificate,
//! bearer tokens with roles, mutual TLS, and the refusal to serve a public
//! address unauthenticated. The certificates (a CA, the server's, a
//! client's, and a stranger's CA) are made here with rcgen. The daemon
//! listens on 0.0.0.0 and the client dials this machine's own non-loopback
//! address (the one a route to the outside would leave from), or 127.0.0.1
//! where the machine has none.

mod common;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};

const CUZK: &str = env!("CARGO_BIN_EXE_cuzk");
const NONE: &[&str] = &[];

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// This machine's address as another host on its network would dial it.
fn own_address() -> IpAddr {
    // Connecting a UDP socket sends nothing: it only picks the route.
    let routed = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|socket| socket.connect(("192.0.2.1", 9)).map(|()| socket))
        .and_then(|socket| socket.local_addr());
    match routed {
        Ok(addr) if !addr.ip().is_loopback() && !addr.ip().is_unspecified() => addr.ip(),
        _ => {
            eprintln!("no non-loopback address here: the client dials 127.0.0.1");
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        }
    }
}

/// A CA, and the PEM files of certificates it signed.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: PathBuf,
}

impl Ca {
    fn new(dir: &Path, name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        let pem = dir.join(format!("{name}.pem"));
        std::fs::write(&pem, cert.pem()).unwrap();
        Self {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A leaf certificate for `names` (DNS names or IP addresses):
    /// (certificate PEM file, key PEM file).
    fn issue(
        &self,
        dir: &Path,
        file: &str,
        names: &[String],
        usage: ExtendedKeyUsagePurpose,
    ) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names.to_vec()).unwrap();
        params.distinguished_name.push(DnType::CommonName, file);
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let (cert_pem, key_pem) = (
            dir.join(format!("{file}.pem")),
            dir.join(format!("{file}.key")),
        );
        std::fs::write(&cert_pem, cert.pem()).unwrap();
        std::fs::write(&key_pem, key.serialize_pem()).unwrap();
        (cert_pem, key_pem)
    }
}

/// Writes `text` to a file only its owner may read.
fn secret(path: &Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_owned()
}

/// A running `cuzk serve` and the ports its first stdout line names.
struct Served {
    child: Child,
    grpc_port: u16,
    metrics_port: Option<u16>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_command(state: &Path, listen: &str, metrics: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(CUZK);
    command
        .args(["serve", "--listen", listen, "--metrics-listen", metrics])
        .args(["--state-dir", s(state), "--backend", "cpu"])
        .args(["--partition-workers", "1"])
        .args(extra)
        .env("RUST_LOG", "warn");
    command
}

fn serve(state: &Path, listen: &str, metrics: &str, extra: &[&str]) -> Served {
    let (child, grpc, metrics) =
        common::spawn_serve(&mut serve_command(state, listen, metrics, extra));
    let port = |addr: &str| addr.rsplit_once(':').unwrap().1.parse::<u16>().unwrap();
    Served {
        child,
        grpc_port: port(&grpc),
        metrics_port: (metrics != "off").then(|| port(&metrics)),
    }
}

fn client<C: AsRef<OsStr>>(addr: &str, credentials: &[C], args: &[&str]) -> Output {
    Command::new(CUZK)
        .args(["client", "--addr", addr])
        .args(credentials)
        .args(args)
        .env_remove("CUZK_TOKEN")
        .output()
        .expect("cuzk client runs")
}

fn succeeds(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "failed: {stderr}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Asserts that `out` failed with `needle` in its error line.
fn refused(out: &Output, needle: &str) {
    common::assert_fails_with(out, needle);
}

/// Asserts that `out` failed at the transport: no connection, or one the
/// TLS layer broke off; where it broke off, the error line names `hint`.
fn cut_off(out: &Output, hint: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded: {stderr}");
    assert!(
        stderr.contains("cannot connect")
            || (stderr.contains("broke off before it answered") && stderr.contains(hint)),
        "{stderr}"
    );
}

/// `GET path` over HTTP/1.0 with an optional bearer token: the status code.
fn http_status(addr: (IpAddr, u16), path: &str, token: Option<&str>) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    write!(stream, "GET {path} HTTP/1.0\r\nHost: cuzk\r\n{auth}\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split(' ').nth(1).unwrap().parse().unwrap()
}

const ADMIN: &str = "admin-7c1e0b9d4a2f83e65d10";
const SUBMIT: &str = "submit-58a2c4e9f01b7d36ac22";
const METRICS: &str = "metrics-e40d9a1c72b5f86e3319";

#[test]
fn a_public_address_is_refused_without_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let out = serve_command(dir.path(), "0.0.0.0:0", "", &[])
        .output()
        .unwrap();
    refused(&out, "0.0.0.0:0 is not a loopback address");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--insecure"));
    // A public /metrics beside a loopback gRPC: the same.
    let out = serve_command(dir.path(), "127.0.0.1:0", "0.0.0.0:0", &[])
        .output()
        .unwrap();
    refused(&out, "metrics_listen 0.0.0.0:0 is not a loopback address");
    // A tokens file others may read is refused before anything starts.
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("admin {ADMIN}\n")).unwrap();
    let out = serve_command(
        dir.path(),
        "127.0.0.1:0",
        "",
        &["--tokens-file", s(&tokens)],
    )
    .output()
    .unwrap();
    refused(&out, "chmod 600");
    // --insecure: the operator says every host that can reach it is trusted.
    let mut served = serve(dir.path(), "0.0.0.0:0", "", &["--insecure"]);
    let addr = format!("{}:{}", own_address(), served.grpc_port);
    assert!(succeeds(&client(&addr, NONE, &["status"])).contains("proofs completed"));
    served.child.kill().unwrap();
}

/// TLS and tokens on 0.0.0.0: the wrong credentials are refused, a submit
/// token proves a 2 KiB PoRep that filecoin-proofs verifies but may not
/// cancel or evict, an admin token may, a metrics token reads only.
#[test]
fn tokens_over_tls_on_a_public_address() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ip = own_address();
    let ca = Ca::new(d, "operator-ca");
    let (cert, key) = ca.issue(
        d,
        "gpu-box",
        &["gpu-box.example".into(), ip.to_string()],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let tokens = secret(
        &d.join("tokens"),
        &format!("# who may do what\nadmin {ADMIN}\nsubmit {SUBMIT}\nmetrics {METRICS}\n"),
    );
    let params = d.join("fil-params");
    let served = serve(
        &d.join("state"),
        "0.0.0.0:0",
        "0.0.0.0:0",
        &[
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
            "--tokens-file",
            s(&tokens),
            "--fil-param-dir",
            s(&params),
        ],
    );
    let addr = format!("{ip}:{}", served.grpc_port);
    let token_file = |name: &str, token: &str| {
        let path = secret(&d.join(name), &format!("{token}\n"));
        path.to_str().unwrap().to_owned()
    };
    let (admin, submit, metrics, wrong) = (
        token_file("admin.token", ADMIN),
        token_file("submit.token", SUBMIT),
        token_file("metrics.token", METRICS),
        token_file("wrong.token", "submit-58a2c4e9f01b7d36ac23"),
    );
    let tls = ["--tls-ca", s(&ca.pem)];
    let with = |token: &str| -> Vec<String> {
        let mut args: Vec<String> = tls.iter().map(|a| a.to_string()).collect();
        args.extend(["--token-file".into(), token.into()]);
        args
    };
    let run = |credentials: &[String], args: &[&str]| client(&addr, credentials, args);

    // Plain text to a TLS port; TLS without a token; a wrong token; a CA
    // that did not sign the server's certificate; a name it does not carry.
    // The plain-text client's call always gets as far as the port, and the
    // line says what to pass.
    let plain = client(&addr, NONE, &["status"]);
    cut_off(&plain, "it serves TLS: pass --tls-ca");
    assert!(String::from_utf8_lossy(&plain.stderr).contains("broke off"));
    refused(&client(&addr, &tls, &["status"]), "Unauthenticated");
    refused(
        &run(&with(&wrong), &["status"]),
        "not one this daemon knows",
    );
    let stranger = Ca::new(d, "stranger-ca");
    let mut other_ca = with(&submit);
    other_ca[1] = s(&stranger.pem).to_owned();
    cut_off(&run(&other_ca, &["status"]), "cannot connect");
    let mut other_name = with(&submit);
    other_name.extend(["--tls-domain".into(), "elsewhere.example".into()]);
    cut_off(&run(&other_name, &["status"]), "cannot connect");

    // A metrics token reads, and may not submit.
    assert!(succeeds(&run(&with(&metrics), &["status"])).contains("proofs completed"));
    let synthetic = ["submit", "--kind", "mul-chain", "--size", "64"];
    refused(&run(&with(&metrics), &synthetic), "PermissionDenied");

    // A submit token proves a real PoRep; filecoin-proofs verifies it.
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuzk-filecoin/fixtures/2KiB");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx.join("meta.json")).unwrap()).unwrap();
    let c1 = fx.join(meta["c1_curio"].as_str().unwrap());
    let sector_id = meta["sector_id"].to_string();
    let setup = common::cuzk(&[
        "setup",
        "--kind",
        "porep",
        "--sector-size",
        "2KiB",
        "--backend",
        "cpu",
        "--param-dir",
        s(&params),
    ]);
    succeeds(&setup);
    let proof = d.join("porep.proof");
    let inputs = [
        "--kind",
        "porep",
        "--sector-size",
        "2KiB",
        "--miner-id",
        "1000",
        "--c1",
        s(&c1),
        "--sector-id",
        &sector_id,
    ];
    let mut prove = vec!["prove"];
    prove.extend(inputs);
    prove.extend(["--out", s(&proof)]);
    assert!(succeeds(&run(&with(&submit), &prove)).contains("completed"));
    let mut verify = vec!["verify", "--param-dir", s(&params)];
    verify.extend(inputs);
    verify.extend(["--proof", s(&proof)]);
    assert!(succeeds(&common::cuzk(&verify)).contains("verifies (filecoin-proofs)"));

    // Operating needs the admin role.
    let job = succeeds(&run(&with(&submit), &synthetic)).trim().to_owned();
    refused(&run(&with(&submit), &["cancel", &job]), "PermissionDenied");
    refused(
        &run(&with(&submit), &["evict", "porep-2KiB"]),
        "PermissionDenied",
    );
    refused(
        &run(&with(&submit), &["preload", "mul-chain/64"]),
        "PermissionDenied",
    );
    let cancel = run(&with(&admin), &["cancel", &job]);
    let stderr = String::from_utf8_lossy(&cancel.stderr);
    assert!(
        !stderr.contains("PermissionDenied") && !stderr.contains("Unauthenticated"),
        "{stderr}"
    );

    // /metrics and /status need a token; /healthz does not.
    let http = (ip, served.metrics_port.unwrap());
    assert_eq!(http_status(http, "/metrics", None), 401);
    assert_eq!(
        http_status(http, "/status", Some("not-a-token-at-all")),
        401
    );
    assert_eq!(http_status(http, "/metrics", Some(METRICS)), 200);
    assert_eq!(http_status(http, "/status", Some(SUBMIT)), 200);
    assert_eq!(http_status(http, "/healthz", None), 200);
}

/// Mutual TLS: a client needs a certificate the clients' CA signed.
#[test]
fn mutual_tls_needs_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ip = own_address();
    let servers = Ca::new(d, "server-ca");
    let clients = Ca::new(d, "client-ca");
    let stranger = Ca::new(d, "stranger-ca");
    let (cert, key) = servers.issue(
        d,
        "gpu-box",
        &[ip.to_string()],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let curio = clients.issue(
        d,
        "curio-node",
        &["curio-node".into()],
        ExtendedKeyUsagePurpose::ClientAuth,
    );
    let forged = stranger.issue(
        d,
        "forged",
        &["curio-node".into()],
        ExtendedKeyUsagePurpose::ClientAuth,
    );
    let served = serve(
        &d.join("state"),
        "0.0.0.0:0",
        "",
        &[
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
            "--tls-client-ca",
            s(&clients.pem),
        ],
    );
    let addr = format!("{ip}:{}", served.grpc_port);
    let tls = ["--tls-ca", s(&servers.pem)];
    let as_client = |(cert, key): &(PathBuf, PathBuf)| {
        client(
            &addr,
            &[tls[0], tls[1], "--tls-cert", s(cert), "--tls-key", s(key)],
            &["status"],
        )
    };
    cut_off(
        &client(&addr, &tls, &["status"]),
        "pass --tls-cert and --tls-key",
    );
    cut_off(&as_client(&forged), "its clients' CA did not sign");
    assert!(succeeds(&as_client(&curio)).contains("proofs completed"));
}
