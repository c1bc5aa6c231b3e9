//! The 192-byte proof encoding.

mod common;

use bellperson_lite::{PointFault, Proof, ProofError, ProofPart, PROOF_BYTES};
use blstrs::{G1Projective, G2Projective};
use group::{Curve, Group};

fn some_proof(seed: u64) -> Proof {
    let mut rng = common::rng(seed);
    Proof {
        a: G1Projective::random(&mut rng).to_affine(),
        b: G2Projective::random(&mut rng).to_affine(),
        c: G1Projective::random(&mut rng).to_affine(),
    }
}

#[test]
fn proof_bytes_round_trip() {
    let p = some_proof(1);
    let bytes = p.to_bytes();
    assert_eq!(bytes.len(), PROOF_BYTES);
    assert_eq!(&bytes[..48], &p.a.to_compressed()[..]);
    assert_eq!(&bytes[48..144], &p.b.to_compressed()[..]);
    assert_eq!(&bytes[144..], &p.c.to_compressed()[..]);
    assert_eq!(Proof::from_bytes(&bytes).unwrap(), p);

    let mut stream = Vec::new();
    p.write(&mut stream).unwrap();
    some_proof(2).write(&mut stream).unwrap();
    let mut reader = &stream[..];
    assert_eq!(Proof::read(&mut reader).unwrap(), p);
    assert_eq!(Proof::read(&mut reader).unwrap(), some_proof(2));
    assert!(matches!(Proof::read(&mut reader), Err(ProofError::Io(_))));
}

#[test]
fn a_wrong_length_is_its_own_error() {
    let bytes = some_proof(1).to_bytes();
    for len in [0, 191, 193] {
        let mut v = bytes.to_vec();
        v.resize(len, 0);
        match Proof::from_bytes(&v) {
            Err(ProofError::Length { expected, got }) => assert_eq!((expected, got), (192, len)),
            r => panic!("{r:?}"),
        }
    }
}

fn fault(bytes: &[u8]) -> (ProofPart, PointFault) {
    match Proof::from_bytes(bytes) {
        Err(ProofError::Point { part, fault }) => (part, fault),
        r => panic!("{r:?}"),
    }
}

#[test]
fn invalid_points_are_named() {
    let good = some_proof(3).to_bytes();
    // An x coordinate above the field modulus.
    let mut bad = good;
    bad[0] = 0x9f;
    bad[1..48].fill(0xff);
    assert_eq!(fault(&bad), (ProofPart::A, PointFault::NotOnCurve));
    let mut bad = good;
    bad[48] = 0x9f;
    bad[49..144].fill(0xff);
    assert_eq!(fault(&bad), (ProofPart::B, PointFault::NotOnCurve));
    // The point at infinity.
    let mut bad = good;
    bad[144] = 0xc0;
    bad[145..].fill(0);
    assert_eq!(fault(&bad), (ProofPart::C, PointFault::Identity));
}
