//! Running the `cuzk` binary and checking its one-line errors.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

/// Runs `cuzk args...` (with filecoin-proofs' parameter directory unset, so
/// that only `--param-dir` decides it).
pub fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env_remove("FIL_PROOFS_PARAMETER_CACHE")
        .output()
        .expect("run cuzk")
}

/// Asserts failure with one `cuzk: ...` line on stderr mentioning `needle`.
pub fn assert_fails_with(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "panicked: {stderr}");
    let line = stderr.lines().last().unwrap_or_default();
    assert!(line.starts_with("cuzk: "), "no error line: {stderr}");
    assert!(
        line.contains(needle),
        "'{line}' does not mention '{needle}'"
    );
}

/// Asserts exit code 1 with `expected` as the whole of stderr: one line,
/// printed before any work started.
pub fn assert_refused(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr, format!("{expected}\n"));
}

/// Spawns `cuzk serve` as `command` says and reads the line it prints once
/// its sockets are bound: (the child, its gRPC address, its metrics
/// address or `off`).
pub fn spawn_serve(command: &mut Command) -> (Child, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cuzk serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let rest = line
        .trim()
        .strip_prefix("cuzk serve: gRPC on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
    let (grpc, metrics) = rest.split_once(", metrics on ").unwrap();
    (child, grpc.to_owned(), metrics.to_owned())
}
