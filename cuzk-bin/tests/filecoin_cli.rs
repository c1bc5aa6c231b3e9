//! `cuzk setup|prove|verify --kind ...` end to end on a 2 KiB WindowPoSt
//! partition (the smallest Filecoin circuit) from the committed fixtures:
//! the proof `prove` writes is checked by filecoin-proofs' verifier, and
//! bad input gets one error line.

use std::path::{Path, PathBuf};

mod common;
use common::{assert_fails_with, cuzk};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuzk-filecoin/fixtures/2KiB")
}

fn meta() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("meta.json")).unwrap()).unwrap()
}

#[test]
fn window_post_setup_prove_verify() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    let p = params.to_str().unwrap();
    let m = meta();
    let vanilla = fixtures().join(m["window"]["vanilla_proofs"][0].as_str().unwrap());
    let randomness = m["window"]["randomness"].as_str().unwrap();
    let proof = dir.path().join("window.proof");
    let inputs = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--kind",
            "window-post",
            "--sector-size",
            "2KiB",
            "--param-dir",
            p,
            "--miner-id",
            "1000",
            "--vanilla",
            vanilla.to_str().unwrap(),
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let run = |cmd: &str, extra: &[&str]| {
        let mut args = vec![cmd.to_owned()];
        args.extend(inputs(extra));
        cuzk(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    // No parameters yet: the file looked for is named.
    let out = run(
        "prove",
        &["--randomness", randomness, "--out", proof.to_str().unwrap()],
    );
    assert_fails_with(&out, "missing parameter file");
    assert_fails_with(&out, "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.params");

    let out = cuzk(&[
        "setup",
        "--kind",
        "window-post",
        "--sector-size",
        "2KiB",
        "--param-dir",
        p,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run(
        "prove",
        &["--randomness", randomness, "--out", proof.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::metadata(&proof).unwrap().len(), 192);

    let out = run(
        "verify",
        &[
            "--randomness",
            randomness,
            "--proof",
            proof.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("verifies (filecoin-proofs)"));

    // The same proof for other randomness: the vanilla proof is refused.
    let other = format!(
        "{}{}",
        if randomness.starts_with('0') {
            "1"
        } else {
            "0"
        },
        &randomness[1..]
    );
    let out = run(
        "verify",
        &["--randomness", &other, "--proof", proof.to_str().unwrap()],
    );
    assert_fails_with(&out, "does not verify");

    // Bad input: a garbage vanilla proof, an unwritable output.
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"junk").unwrap();
    let out = cuzk(&[
        "prove",
        "--kind",
        "window-post",
        "--sector-size",
        "2KiB",
        "--param-dir",
        p,
        "--miner-id",
        "1000",
        "--vanilla",
        junk.to_str().unwrap(),
        "--randomness",
        randomness,
        "--out",
        proof.to_str().unwrap(),
    ]);
    assert_fails_with(&out, "bad vanilla proof 0");
    let out = run(
        "prove",
        &["--randomness", randomness, "--out", "/no/such/dir/x.proof"],
    );
    assert_fails_with(&out, "no directory /no/such/dir");
}

#[test]
fn a_malformed_c1_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let c1 = dir.path().join("c1.json");
    std::fs::write(&c1, b"{\"vanilla_proofs\": [").unwrap();
    let out = cuzk(&[
        "prove",
        "--kind",
        "porep",
        "--sector-size",
        "2KiB",
        "--c1",
        c1.to_str().unwrap(),
        "--miner-id",
        "1000",
        "--sector-id",
        "1",
        "--param-dir",
        dir.path().to_str().unwrap(),
        "--out",
        dir.path().join("p").to_str().unwrap(),
    ]);
    assert_fails_with(&out, "bad C1 output");
    let out = cuzk(&["setup", "--kind", "post", "--sector-size", "2KiB"]);
    assert_fails_with(&out, "unknown proof kind 'post'");
}
