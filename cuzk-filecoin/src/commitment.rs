//! Commitments as callers send them: 32 raw bytes, or the bytes of a
//! Filecoin commitment CID as go-fil-commcid makes them (`cid.Bytes()`):
//! CIDv1, then the codec, then a multihash of a 32-byte digest, each number
//! an unsigned varint.
//!
//! | commitment | codec | multihash | CID bytes |
//! | --- | --- | --- | --- |
//! | comm_r (sealed) | `fil-commitment-sealed` 0xf102 | `poseidon-bls12_381-a2-fc1` 0xb401 | 40: `01 82e203 81e802 20` + digest |
//! | comm_d (unsealed) | `fil-commitment-unsealed` 0xf101 | `sha2-256-trunc254-padded` 0x1012 | 39: `01 81e203 9220 20` + digest |

use crate::error::bad;
use crate::FilecoinError;

/// What a commitment commits to, which its CID's codec must say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitmentKind {
    /// A replica commitment (comm_r): `fil-commitment-sealed`.
    Sealed,
    /// A data commitment (comm_d): `fil-commitment-unsealed`.
    Unsealed,
}

impl CommitmentKind {
    fn codec(self) -> u64 {
        match self {
            CommitmentKind::Sealed => 0xf102,
            CommitmentKind::Unsealed => 0xf101,
        }
    }

    fn multihash(self) -> u64 {
        match self {
            CommitmentKind::Sealed => 0xb401,
            CommitmentKind::Unsealed => 0x1012,
        }
    }

    fn codec_name(self) -> &'static str {
        match self {
            CommitmentKind::Sealed => "fil-commitment-sealed (0xf102)",
            CommitmentKind::Unsealed => "fil-commitment-unsealed (0xf101)",
        }
    }

    fn multihash_name(self) -> &'static str {
        match self {
            CommitmentKind::Sealed => "poseidon-bls12_381-a2-fc1 (0xb401)",
            CommitmentKind::Unsealed => "sha2-256-trunc254-padded (0x1012)",
        }
    }

    fn other(self) -> Self {
        match self {
            CommitmentKind::Sealed => CommitmentKind::Unsealed,
            CommitmentKind::Unsealed => CommitmentKind::Sealed,
        }
    }
}

/// The 32-byte commitment in `bytes`: 32 raw bytes as they are, or the
/// digest of a commitment CID of `kind` (its codec and multihash checked).
/// `name` names the field in errors (`bad comm_r_old: ...`).
pub fn commitment(
    name: &str,
    bytes: &[u8],
    kind: CommitmentKind,
) -> Result<[u8; 32], FilecoinError> {
    if let Ok(raw) = <[u8; 32]>::try_from(bytes) {
        return Ok(raw);
    }
    let fail = |why: String| bad(name, why);
    let malformed = || fail("a malformed CID (a varint cut short or not minimal)".to_owned());
    let mut rest = bytes;
    let version = varint(&mut rest).ok_or_else(|| {
        fail(format!(
            "{} bytes: neither a 32-byte commitment nor a commitment CID",
            bytes.len()
        ))
    })?;
    if version != 1 {
        return Err(fail(format!(
            "{} bytes: neither a 32-byte commitment nor a CIDv1",
            bytes.len()
        )));
    }
    let codec = varint(&mut rest).ok_or_else(malformed)?;
    if codec != kind.codec() {
        let what = if codec == kind.other().codec() {
            kind.other().codec_name().to_owned()
        } else {
            format!("codec 0x{codec:x}")
        };
        return Err(fail(format!(
            "a CID of {what}; it must be {}",
            kind.codec_name()
        )));
    }
    let hash = varint(&mut rest).ok_or_else(malformed)?;
    if hash != kind.multihash() {
        return Err(fail(format!(
            "a {} CID with multihash 0x{hash:x}; it must be {}",
            kind.codec_name(),
            kind.multihash_name()
        )));
    }
    let len = varint(&mut rest).ok_or_else(malformed)?;
    if len != 32 || rest.len() != 32 {
        return Err(fail(format!(
            "a commitment CID whose digest is {} bytes ({} follow); it must be 32",
            len,
            rest.len()
        )));
    }
    Ok(rest.try_into().expect("32 bytes"))
}

/// The CID bytes of commitment `comm` of `kind` (what go-fil-commcid's
/// `ReplicaCommitmentV1ToCID` / `DataCommitmentV1ToCID` give, as bytes).
pub fn commitment_cid(comm: &[u8; 32], kind: CommitmentKind) -> Vec<u8> {
    let mut out = Vec::with_capacity(40);
    for n in [1, kind.codec(), kind.multihash(), 32] {
        put_varint(&mut out, n);
    }
    out.extend_from_slice(comm);
    out
}

/// Reads an unsigned varint as multiformats defines it: at most 9 bytes,
/// minimally encoded (go-varint refuses others, so one CID has one form).
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(9) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if i > 0 && byte == 0 {
                return None;
            }
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
