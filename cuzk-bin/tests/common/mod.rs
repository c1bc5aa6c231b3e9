//! Running the `cuzk` binary and checking its one-line errors.

use std::process::{Command, Output};

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
