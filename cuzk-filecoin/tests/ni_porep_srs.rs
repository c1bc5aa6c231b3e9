//! An NI-PoRep request where filecoin-proofs' parameter directory has no
//! SnarkPack SRS is refused when it is built, before any proving, with the
//! file's path and the command that makes a test one. Its own test binary:
//! filecoin-proofs settles on its parameter directory once per process, and
//! this one must be empty.

use cuzk_filecoin::{params, FilecoinError, FilecoinRequest, SealIds};

#[test]
fn ni_porep_without_the_srs_is_refused_naming_the_file() {
    let empty = tempfile::tempdir().unwrap();
    params::point_filecoin_proofs_at(empty.path()).expect("the first use in this process");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/2KiB-ni");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    let ids = SealIds {
        prover_id: cuzk_filecoin::prover_id(meta["miner_id"].as_u64().unwrap()),
        sector_id: meta["sector_id"].as_u64().unwrap(),
    };
    let c1 = std::fs::read(dir.join("c1-curio.json")).unwrap();
    let error = FilecoinRequest::porep(&c1, None, ids).unwrap_err();
    let expected = empty.path().join("v28-fil-inner-product-v1.srs");
    assert!(
        matches!(&error, FilecoinError::MissingSrs { path } if *path == expected),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains(&expected.display().to_string()) && text.contains("cuzk setup --kind porep"),
        "{text}"
    );
}
