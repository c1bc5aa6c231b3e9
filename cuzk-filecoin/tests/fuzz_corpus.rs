//! The fuzz corpora (fuzz/corpus/<target>/) and the 2 KiB fixtures replayed
//! through the fuzz targets' harnesses on the normal test build: CI's part
//! of the fuzzing (docs/fuzzing.md). Each harness fails on a panic, on a
//! disagreement between two readers of one format, or on a round trip that
//! changes the bytes; the allocator fails an allocation past 256 MiB (or
//! 1 GiB live), as under the fuzzer.

#[path = "../../fuzz/src/cap.rs"]
mod cap;
#[path = "../../fuzz/src/targets.rs"]
mod targets;

use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

use cuzk_filecoin::{FilecoinError, FilecoinRequest};

#[global_allocator]
static ALLOC: cap::Capped = cap::Capped;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `inputs` through `harness`; returns the inputs it failed on.
fn replay(harness: fn(&[u8]), inputs: &[(String, Vec<u8>)]) -> Vec<String> {
    inputs
        .iter()
        .filter(|(_, bytes)| panic::catch_unwind(|| harness(bytes)).is_err())
        .map(|(name, _)| name.clone())
        .collect()
}

#[test]
fn every_corpus_file_passes_its_harness() {
    let mut failed = Vec::new();
    for &(name, harness) in targets::TARGETS {
        let dir = Path::new(ROOT).join("fuzz/corpus").join(name);
        let inputs: Vec<_> = files(&dir)
            .into_iter()
            .map(|path| (path.display().to_string(), fs::read(&path).expect("read")))
            .collect();
        assert!(!inputs.is_empty(), "no corpus for target {name}");
        failed.extend(replay(harness, &inputs));
    }
    assert!(failed.is_empty(), "harnesses failed on: {failed:#?}");
}

#[test]
fn the_fixtures_pass_their_harnesses() {
    let fixtures = Path::new(ROOT).join("cuzk-filecoin/fixtures/2KiB");
    let read = |path: &str| fs::read(fixtures.join(path)).expect("fixture");
    let named = |path: &str| (path.to_owned(), read(path));
    let post = |selector: u8, path: &str| (path.to_owned(), [vec![selector], read(path)].concat());
    let failed = [
        replay(targets::c1, &[named("c1.json"), named("c1-curio.json")]),
        replay(
            targets::post,
            &[
                post(0, "window/vanilla-0.bin"),
                post(1, "winning/vanilla-0.bin"),
            ],
        ),
        replay(targets::snap, &[named("snap/partition-0.bin")]),
    ]
    .concat();
    assert!(failed.is_empty(), "harnesses failed on: {failed:?}");
}

/// The harnesses do fail: a panic inside one is reported, not swallowed.
#[test]
fn a_failing_harness_is_reported() {
    fn panics(_: &[u8]) {
        panic!("on purpose");
    }
    let inputs = [("x".to_owned(), vec![1u8])];
    assert_eq!(replay(panics, &inputs), ["x"]);
}

/// A request's outcome: refused as malformed (storage-proofs' check
/// panicked inside, and the panic was contained), or else what it was.
fn refused_as_malformed(outcome: Result<FilecoinRequest, FilecoinError>) -> Result<(), String> {
    match outcome {
        Err(FilecoinError::BadInput { reason, .. }) if reason.contains("malformed") => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

/// Inputs on which filecoin-proofs' and storage-proofs' checks panicked,
/// found by fuzzing (fuzz/regressions): a WindowPoSt proof with no
/// challenges, a Merkle path index past its hashes, non-canonical Poseidon
/// domain elements. Each is refused with an error naming the input.
#[test]
fn inputs_that_panicked_upstream_are_refused() {
    let dir = Path::new(ROOT).join("fuzz/regressions");
    let regressions = files(&dir);
    assert!(regressions.len() >= 4);
    for path in regressions {
        let name = path.file_name().expect("a file").to_string_lossy();
        let bytes = fs::read(&path).expect("read");
        let outcome = match name.split('-').next() {
            Some("post") => targets::post_request(&bytes).expect("not empty"),
            Some("snap") => targets::snap_request(&bytes),
            _ => panic!("{name}: no target"),
        };
        if let Err(other) = refused_as_malformed(outcome) {
            panic!("{name}: {other}");
        }
    }
    // The C1 fixture with one Poseidon hash of a column's path made
    // non-canonical (the fuzzer's find, as an edit of the fixture).
    let c1 = Path::new(ROOT).join("cuzk-filecoin/fixtures/2KiB/c1.json");
    let mut c1: serde_json::Value = serde_json::from_slice(&fs::read(c1).expect("c1")).unwrap();
    let byte = "/vanilla_proofs/0/0/replica_column_proofs/drg_parents/1/inclusion_proof\
                /data/Single/path/path/1/hashes/3/31";
    *c1.pointer_mut(byte).expect("the fixture's shape") = 146.into();
    let outcome = targets::c1_request(&serde_json::to_vec(&c1).unwrap());
    refused_as_malformed(outcome).expect("C1 with a non-canonical hash");
}
