//! Every `SubmitProofRequest` Curio's callers build (lib/ffi/cuzk_funcs.go,
//! tasks/proofshare/task_prove.go), field for field, with the committed
//! 2 KiB fixtures of `cuzk-filecoin/fixtures/2KiB`, is accepted by
//! `kinds::job_spec` as the circuit it names; registered proofs cuzk does
//! not prove, and fields that disagree, are refused with INVALID_ARGUMENT
//! naming them. No parameters are needed: `job_spec` parses the inputs and
//! verifies the vanilla proofs, and proves nothing.

use std::path::{Path, PathBuf};

use cuzk_daemon::kinds::{job_spec, KindError};
use cuzk_daemon::pb::{self, Priority, ProofKind};
use cuzk_filecoin::{commitment_cid, CommitmentKind};
use serde_json::Value;
use tonic::Code;

const MINER_ID: u64 = 1000;
const SECTOR_SIZE: u64 = 2048;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuzk-filecoin/fixtures/2KiB")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn meta() -> Value {
    serde_json::from_slice(&fixture("meta.json")).unwrap()
}

fn hex(value: &Value) -> Vec<u8> {
    hex::decode(value.as_str().unwrap()).unwrap()
}

fn files(list: &Value) -> Vec<Vec<u8>> {
    let names = list.as_array().unwrap();
    names.iter().map(|f| fixture(f.as_str().unwrap())).collect()
}

fn sector_number() -> u64 {
    meta()["sector_id"].as_u64().unwrap()
}

fn accepted(req: &pb::SubmitProofRequest) -> String {
    match job_spec(req) {
        Ok(spec) => {
            assert!(spec.filecoin.is_some());
            spec.circuit.to_string()
        }
        Err(e) => panic!("refused: {e}"),
    }
}

fn refused(req: &pb::SubmitProofRequest) -> String {
    let e: KindError = job_spec(req).map(|_| ()).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e}");
    e.to_string()
}

/// lib/ffi PoRepSnarkCuzk: filecoin-ffi's C1 output in Curio's wrapper.
fn ffi_porep() -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        request_id: format!("porep-{MINER_ID}-{}", sector_number()),
        proof_kind: ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_SIZE,
        registered_proof: 5, // StackedDrg2KiBV1_1
        priority: Priority::Normal as i32,
        vanilla_proof: fixture("c1-curio.json"),
        sector_number: sector_number(),
        miner_id: MINER_ID,
        ..Default::default()
    }
}

/// tasks/proofshare computePoRep: the wrapper of
/// json.Marshal(proof.Commit1OutRaw) (filecoin-proofs-api's form, in Go's
/// field order, compact), made from filecoin-proofs' form of the C1.
fn proofshare_porep() -> pb::SubmitProofRequest {
    let c1: Value = serde_json::from_slice(&fixture("c1.json")).unwrap();
    let field = |k: &str| serde_json::to_string(&c1[k]).unwrap();
    let raw = format!(
        r#"{{"comm_d":{},"comm_r":{},"registered_proof":"StackedDrg2KiBV1_1","replica_id":{},"seed":{},"ticket":{},"vanilla_proofs":{{"StackedDrg2KiBV1":{}}}}}"#,
        field("comm_d"),
        field("comm_r"),
        field("replica_id"),
        field("seed"),
        field("ticket"),
        field("vanilla_proofs"),
    );
    let wrapped = format!(
        r#"{{"SectorNum":{},"Phase1Out":"{}","SectorSize":{SECTOR_SIZE}}}"#,
        sector_number(),
        base64(raw.as_bytes())
    );
    pb::SubmitProofRequest {
        request_id: format!("ps-porep-{MINER_ID}-{}-1", sector_number()),
        vanilla_proof: wrapped.into_bytes(),
        ..ffi_porep()
    }
}

/// Standard base64 with padding, as Go's json.Marshal writes a `[]byte`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// lib/ffi ProveUpdateCuzk: the snap-vproof.json partition proofs, the
/// commitments as 32 raw bytes (commcid.CIDTo*CommitmentV1).
fn ffi_snap() -> pb::SubmitProofRequest {
    let meta = meta();
    let snap = &meta["snap"];
    pb::SubmitProofRequest {
        request_id: format!("snap-{MINER_ID}-{}", sector_number()),
        proof_kind: ProofKind::SnapDealsUpdate as i32,
        sector_size: SECTOR_SIZE,
        registered_proof: 0, // update StackedDrg2KiBV1
        priority: Priority::Normal as i32,
        vanilla_proofs: files(&snap["partition_proofs"]),
        sector_number: sector_number(),
        miner_id: MINER_ID,
        comm_r_old: hex(&snap["comm_r_old"]),
        comm_r_new: hex(&snap["comm_r_new"]),
        comm_d_new: hex(&snap["comm_d_new"]),
        ..Default::default()
    }
}

/// lib/ffi WindowPoStCuzk: one partition's sectors' vanilla proofs.
fn window_post() -> pb::SubmitProofRequest {
    let meta = meta();
    let window = &meta["window"];
    pb::SubmitProofRequest {
        request_id: format!("wdpost-{MINER_ID}-0-1"),
        proof_kind: ProofKind::WindowPostPartition as i32,
        sector_size: SECTOR_SIZE,
        registered_proof: 10, // StackedDrgWindow2KiBV1_1 (api V1_2)
        priority: Priority::High as i32,
        vanilla_proofs: files(&window["vanilla_proofs"]),
        miner_id: MINER_ID,
        randomness: hex(&window["randomness"]),
        partition_index: 0,
        ..Default::default()
    }
}

/// lib/ffi WinningPoStCuzk: the challenged sector's vanilla proof.
fn winning_post() -> pb::SubmitProofRequest {
    let meta = meta();
    let winning = &meta["winning"];
    pb::SubmitProofRequest {
        request_id: format!("winpost-{MINER_ID}-00"),
        proof_kind: ProofKind::WinningPost as i32,
        sector_size: SECTOR_SIZE,
        registered_proof: 0, // StackedDrgWinning2KiBV1
        priority: Priority::Critical as i32,
        vanilla_proofs: files(&winning["vanilla_proofs"]),
        miner_id: MINER_ID,
        randomness: hex(&winning["randomness"]),
        ..Default::default()
    }
}

#[test]
fn every_curio_caller_is_accepted() {
    assert_eq!(accepted(&ffi_porep()), "porep-2KiB");
    assert_eq!(accepted(&proofshare_porep()), "porep-2KiB");
    assert_eq!(accepted(&ffi_snap()), "snap-deals-2KiB");
    assert_eq!(accepted(&window_post()), "window-post-2KiB");
    assert_eq!(accepted(&winning_post()), "winning-post-2KiB");

    // tasks/proofshare computeSnap: no sector_size, only the registered
    // update proof (0 is the 2 KiB one), raw commitments.
    let proofshare_snap = pb::SubmitProofRequest {
        sector_size: 0,
        ..ffi_snap()
    };
    assert_eq!(accepted(&proofshare_snap), "snap-deals-2KiB");

    // Commitments as CID bytes (cid.Bytes(), as an earlier ProveUpdateCuzk
    // sent them), alone or mixed with raw ones.
    let snap = ffi_snap();
    let cid = |bytes: &[u8], kind| commitment_cid(bytes.try_into().unwrap(), kind);
    let with_cids = pb::SubmitProofRequest {
        comm_r_old: cid(&snap.comm_r_old, CommitmentKind::Sealed),
        comm_d_new: cid(&snap.comm_d_new, CommitmentKind::Unsealed),
        ..snap.clone()
    };
    assert_eq!(accepted(&with_cids), "snap-deals-2KiB");

    // Only registered_proof, or only sector_size.
    for (registered_proof, sector_size) in [(5, 0), (0, SECTOR_SIZE)] {
        let porep = pb::SubmitProofRequest {
            registered_proof,
            sector_size,
            ..ffi_porep()
        };
        assert_eq!(accepted(&porep), "porep-2KiB");
    }
    let window = pb::SubmitProofRequest {
        sector_size: 0,
        ..window_post()
    };
    assert_eq!(accepted(&window), "window-post-2KiB");
    let window = pb::SubmitProofRequest {
        registered_proof: 0,
        ..window_post()
    };
    assert_eq!(accepted(&window), "window-post-2KiB");
    // Both unset: a PoRep's C1 output names its own size.
    let porep = pb::SubmitProofRequest {
        registered_proof: 0,
        sector_size: 0,
        ..ffi_porep()
    };
    assert_eq!(accepted(&porep), "porep-2KiB");
}

/// Curio's `UseSyntheticPoRep`: a Synthetic PoRep C1 (registered proof 10)
/// in Curio's wrapper, or in filecoin-proofs' own form (which does not name
/// its proof) with `registered_proof` set.
#[test]
fn synthetic_porep_is_accepted() {
    let dir = fixtures().join("../2KiB-synthetic");
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let m: Value = serde_json::from_slice(&read("meta.json")).unwrap();
    let sector_number = m["sector_id"].as_u64().unwrap();
    let synthetic = pb::SubmitProofRequest {
        registered_proof: 10,
        vanilla_proof: read("c1-curio.json"),
        sector_number,
        ..ffi_porep()
    };
    assert_eq!(accepted(&synthetic), "porep-2KiB");
    let raw = pb::SubmitProofRequest {
        vanilla_proof: read("c1.json"),
        ..synthetic.clone()
    };
    assert_eq!(accepted(&raw), "porep-2KiB");
    // Without the number, filecoin-proofs' form reads as V1_1 and its
    // vanilla proofs answer the wrong challenges.
    let e = refused(&pb::SubmitProofRequest {
        registered_proof: 0,
        ..raw
    });
    assert!(e.contains("does not verify"), "{e}");
}

#[test]
fn proofs_cuzk_does_not_make_and_disagreeing_fields_are_refused() {
    // Registered seal proofs of another version or feature; 0 (2 KiB V1)
    // reads as unset, so a 2 KiB V1 C1 output is refused by its own name.
    for (number, name, instead) in [
        (1, "StackedDrg8MiBV1 (1)", "StackedDrg8MiBV1_1 (6)"),
        (3, "StackedDrg32GiBV1 (3)", "StackedDrg32GiBV1_1 (8)"),
    ] {
        let e = refused(&pb::SubmitProofRequest {
            registered_proof: number,
            sector_size: 0,
            ..ffi_porep()
        });
        assert_eq!(
            e,
            format!("registered_proof: {name} is not supported: cuzk proves {instead}")
        );
    }
    // Synthetic PoRep is proven, but a V1_1 C1 sent as one is refused by
    // the name it carries, or by its size.
    let e = refused(&pb::SubmitProofRequest {
        registered_proof: 10,
        sector_size: 0,
        ..ffi_porep()
    });
    assert_eq!(
        e,
        "bad C1 output: it is a StackedDrg2KiBV1_1 (5) C1, \
         not StackedDrg2KiBV1_1_Feat_SyntheticPoRep (10)"
    );
    let e = refused(&pb::SubmitProofRequest {
        registered_proof: 13,
        sector_size: 0,
        ..ffi_porep()
    });
    assert!(e.contains("it is for 2KiB sectors, not 32GiB"), "{e}");
    let snap = ffi_snap();
    let unsealed = commitment_cid(
        snap.comm_r_old.as_slice().try_into().unwrap(),
        CommitmentKind::Unsealed,
    );
    let cases = [
        (
            pb::SubmitProofRequest {
                registered_proof: 5,
                ..window_post()
            },
            "registered_proof: StackedDrgWindow2KiBV1 (5) is not supported: \
             cuzk proves StackedDrgWindow2KiBV1_2 (10)",
        ),
        (
            pb::SubmitProofRequest {
                sector_size: 32 << 30,
                ..ffi_porep()
            },
            "registered_proof: sector_size 34359738368 (32GiB) and \
             registered_proof 5 (StackedDrg2KiBV1_1) disagree",
        ),
        (
            pb::SubmitProofRequest {
                registered_proof: 13,
                ..window_post()
            },
            "sector_size 2048 (2KiB) and registered_proof 13",
        ),
        (
            pb::SubmitProofRequest {
                registered_proof: 10,
                ..winning_post()
            },
            "registered_proof: bad registered proof 10: \
             StackedDrgWindow2KiBV1_2 is a WindowPoSt proof",
        ),
        (
            pb::SubmitProofRequest {
                registered_proof: 0,
                sector_size: 0,
                ..window_post()
            },
            "sector_size: neither sector_size nor registered_proof",
        ),
        (
            pb::SubmitProofRequest {
                registered_proof: 7,
                ..ffi_snap()
            },
            "no registered update proof has that number",
        ),
        // The C1 output's sector, miner and size must be the request's.
        (
            pb::SubmitProofRequest {
                sector_number: sector_number() + 1,
                ..ffi_porep()
            },
            "(SectorNum), not",
        ),
        (
            pb::SubmitProofRequest {
                miner_id: MINER_ID + 1,
                ..proofshare_porep()
            },
            "replica_id is not that of sector",
        ),
        (
            pb::SubmitProofRequest {
                registered_proof: 8,
                sector_size: 0,
                ..ffi_porep()
            },
            "it is for 2KiB sectors, not 32GiB",
        ),
        // A commitment CID of the wrong kind.
        (
            pb::SubmitProofRequest {
                comm_r_old: unsealed,
                ..snap
            },
            "comm_r_old: a CID of fil-commitment-unsealed (0xf101); \
             it must be fil-commitment-sealed",
        ),
    ];
    for (request, needle) in cases {
        let e = refused(&request);
        assert!(e.contains(needle), "'{e}' lacks '{needle}'");
    }
}
