//! The `cuzk` binary end to end: setup, prove, verify, and a one-line error
//! with a non-zero exit (never a panic) for each kind of bad input.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{assert_fails_with, cuzk};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    sha: PathBuf,
    mul: PathBuf,
    proof: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let sha = dir.path().join("sha.params");
    let mul = dir.path().join("mul.params");
    let proof = dir.path().join("req.proof");
    let out = cuzk(&[
        "setup",
        "--workload",
        "sha-chain",
        "--size",
        "1",
        "--params",
        s(&sha),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cuzk(&[
        "setup",
        "--workload",
        "mul-chain",
        "--size",
        "300",
        "--params",
        s(&mul),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cuzk(&[
        "prove",
        "--params",
        s(&sha),
        "--workload",
        "sha-chain",
        "--size",
        "1",
        "--partitions",
        "2",
        "--request",
        "0",
        "--out",
        s(&proof),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Fixture {
        _dir: dir,
        sha,
        mul,
        proof,
    }
}

fn verify(params: &Path, request: &str, proof: &Path) -> Output {
    cuzk(&[
        "verify",
        "--params",
        s(params),
        "--workload",
        "sha-chain",
        "--size",
        "1",
        "--partitions",
        "2",
        "--request",
        request,
        "--proof",
        s(proof),
    ])
}

#[test]
fn setup_prove_verify_and_every_bad_input() {
    let f = fixture();
    assert_eq!(std::fs::metadata(&f.proof).unwrap().len(), 2 * 192);
    let ok = verify(&f.sha, "0", &f.proof);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    // The proof of request 0 is not a proof of request 1: partition 0 fails.
    assert_fails_with(&verify(&f.sha, "1", &f.proof), "partition 0");

    // A tampered second partition is named.
    let mut bytes = std::fs::read(&f.proof).unwrap();
    let tampered = f.proof.with_extension("tampered");
    bytes.copy_within(192 + 144..192 + 192, 192); // partition 1's A := its C
    std::fs::write(&tampered, &bytes).unwrap();
    assert_fails_with(&verify(&f.sha, "0", &tampered), "partition 1");

    // A proof of the wrong length.
    let short = f.proof.with_extension("short");
    std::fs::write(&short, &bytes[..300]).unwrap();
    assert_fails_with(&verify(&f.sha, "0", &short), "384");

    // A missing parameters file names the path.
    let missing = f.sha.with_extension("missing");
    assert_fails_with(&verify(&missing, "0", &f.proof), "missing");

    // A malformed parameters file: truncated.
    let truncated = f.sha.with_extension("truncated");
    let params = std::fs::read(&f.sha).unwrap();
    std::fs::write(&truncated, &params[..params.len() / 2]).unwrap();
    let out = cuzk(&[
        "prove",
        "--params",
        s(&truncated),
        "--workload",
        "sha-chain",
        "--size",
        "1",
        "--out",
        s(&tampered),
    ]);
    assert_fails_with(&out, "truncated");

    // Parameters for another circuit.
    let out = cuzk(&[
        "prove",
        "--params",
        s(&f.mul),
        "--workload",
        "sha-chain",
        "--size",
        "1",
        "--out",
        s(&tampered),
    ]);
    assert_fails_with(&out, "do not match");
    assert_fails_with(&verify(&f.mul, "0", &f.proof), "partition 0");

    // A bad workload name.
    let out = cuzk(&[
        "setup",
        "--workload",
        "md5",
        "--size",
        "1",
        "--params",
        s(&missing),
    ]);
    assert_fails_with(&out, "unknown workload");

    // A backend that does not exist, before any work.
    let out = cuzk(&[
        "setup",
        "--workload",
        "mul-chain",
        "--size",
        "3",
        "--params",
        s(&missing),
        "--backend",
        "gpu",
    ]);
    assert_fails_with(&out, "gpu");
}

/// `cuzk bench`'s JSON names what ran: verified, the synthesis mode and
/// where the witness came from; with stderr not a terminal, it logs each
/// request as it returns.
#[test]
fn bench_records_the_witness_source() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, witness) in [
        ("compiled", "native program"),
        ("compiled-gadgets", "gadgets"),
        ("full", "full synthesis"),
    ] {
        let json = dir.path().join(format!("{mode}.json"));
        let out = cuzk(&[
            "bench",
            "--backend",
            "cpu",
            "--workload",
            "sha-chain",
            "--size",
            "1",
            "--partitions",
            "2",
            "--requests",
            "1",
            "--synthesis",
            mode,
            "--json",
            s(&json),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(report["witness"], witness, "{mode}");
        assert_eq!(report["synthesis"], mode);
        assert_eq!(report["verified"], true);
        let line = format!("{mode} synthesis (witness: {witness})");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&line),
            "{line}"
        );
        // stderr is not a terminal here: no bar, but a line a request.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("request 1/1 proven"), "{stderr}");
    }
}
