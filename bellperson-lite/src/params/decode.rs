//! One parallel pass over a whole parameters file: every section decoded
//! at once, straight into its preallocated vector, and every byte hashed.
//!
//! The file is cut into units: the head (the verifying key, `ic` and `h`'s
//! count), then each proving-key section in runs of at most [`UNIT_BYTES`]
//! (a section's first unit also holds its count). One task per unit hashes
//! its bytes with blake3 and decodes its points (on the curve, canonical,
//! not the identity; the subgroup is `subgroup.rs`'s business), then lets
//! the caller release the unit's pages, so a mapped file never sits in
//! memory beside all of its decoded points. The file's digest is blake3
//! over a tag, the length and every unit's offset and hash, in file order:
//! equal digests mean equal bytes.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

use super::layout::{Layout, Span, VK_POINTS};
use super::mapped::Pages;
use super::{Parameters, VerifyingKey};
use crate::encoding::{decode_on_curve, decode_uncompressed, Encoded};
use crate::error::{ParamsError, Section};

/// Most bytes of points in one unit (smaller under `cfg(test)`, so that
/// the unit tests' small files have many units).
pub(super) const UNIT_BYTES: usize = if cfg!(test) { 1 << 10 } else { 8 << 20 };

/// What the digest covers, recorded in the sidecar: a change of the
/// units changes every digest.
pub(super) const DIGEST_NAME: &str = if cfg!(test) {
    "blake3-units-1KiB"
} else {
    "blake3-units-8MiB"
};

/// The decoded parameters (subgroups not yet checked) and the digest of
/// the bytes they came from.
pub(super) struct Scan {
    /// Every section, decoded.
    pub params: Parameters,
    /// The file's digest.
    pub digest: [u8; 32],
    /// Thread time spent hashing, summed over threads.
    pub hash_cpu: Duration,
    /// Thread time spent decoding, summed over threads.
    pub decode_cpu: Duration,
}

/// Where a unit's points go.
enum Out<'a> {
    G1(&'a mut [G1Affine]),
    G2(&'a mut [G2Affine]),
}

/// A run of one section's points, with the bytes it hashes.
struct Unit<'a> {
    span: Span,
    /// Index of the first point in the section.
    first: usize,
    /// The bytes hashed: the points, and the count before the first run.
    hashed: Range<usize>,
    out: Out<'a>,
}

/// What one unit's task found.
struct UnitDone {
    hashed_from: usize,
    hash: [u8; 32],
    hash_time: Duration,
    decode_time: Duration,
}

/// Decodes and hashes `bytes`, a whole file laid out as `layout` says,
/// telling `pages` when each unit's bytes are needed and when done.
/// The verifying key and `ic` are checked in full here, subgroups
/// included; the proving key's subgroups are not. Fails naming the first
/// bad point in file order.
pub(super) fn scan(bytes: &[u8], layout: &Layout, pages: &dyn Pages) -> Result<Scan, ParamsError> {
    let [h, l, a, b_g1, b_g2] = &layout.queries;
    let head_end = h.count_at;
    let started = Instant::now();
    let head_hash = *blake3::hash(&bytes[..head_end]).as_bytes();
    let head_hash_time = started.elapsed();
    let vk = verifying_key(bytes, &layout.ic)?;
    let (mut hv, mut lv, mut av, mut b1v) = (filled(h), filled(l), filled(a), filled(b_g1));
    let mut b2v = filled(b_g2);
    let mut units = Vec::new();
    units_of(*h, &mut hv, Out::G1, &mut units);
    units_of(*l, &mut lv, Out::G1, &mut units);
    units_of(*a, &mut av, Out::G1, &mut units);
    units_of(*b_g1, &mut b1v, Out::G1, &mut units);
    units_of(*b_g2, &mut b2v, Out::G2, &mut units);

    let done: Vec<Result<UnitDone, ParamsError>> = units
        .into_par_iter()
        .with_max_len(1)
        .map(|unit| run_unit(bytes, unit, pages))
        .collect();

    let (mut hash_cpu, mut decode_cpu) = (head_hash_time, Duration::ZERO);
    let mut hashes = Vec::with_capacity(done.len());
    for unit in done {
        let unit = unit?;
        hashes.push((unit.hashed_from, unit.hash));
        hash_cpu += unit.hash_time;
        decode_cpu += unit.decode_time;
    }
    let params = Parameters {
        vk,
        h: Arc::new(hv),
        l: Arc::new(lv),
        a: Arc::new(av),
        b_g1: Arc::new(b1v),
        b_g2: Arc::new(b2v),
    };
    Ok(Scan {
        params,
        digest: combine(layout.len, &head_hash, &hashes),
        hash_cpu,
        decode_cpu,
    })
}

/// The verifying key's points and `ic`, every check included.
fn verifying_key(bytes: &[u8], ic: &Span) -> Result<VerifyingKey, ParamsError> {
    let mut at = 0;
    let mut g1 = Vec::with_capacity(3);
    let mut g2 = Vec::with_capacity(3);
    for (section, size) in VK_POINTS {
        let point = &bytes[at..at + size];
        at += size;
        let fault = |fault| ParamsError::Point {
            section,
            index: 0,
            fault,
        };
        match size {
            96 => g1.push(decode_uncompressed::<G1Affine>(point).map_err(fault)?),
            _ => g2.push(decode_uncompressed::<G2Affine>(point).map_err(fault)?),
        }
    }
    let ic = bytes[ic.points(0, ic.count)]
        .chunks_exact(ic.size)
        .enumerate()
        .map(|(index, point)| {
            decode_uncompressed::<G1Affine>(point).map_err(|fault| ParamsError::Point {
                section: Section::Ic,
                index,
                fault,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic,
    })
}

/// A section's vector, allocated and filled (in parallel) ahead of the
/// decoding that overwrites it.
fn filled<P: Encoded>(span: &Span) -> Vec<P> {
    let mut out = Vec::new();
    (0..span.count)
        .into_par_iter()
        .map(|_| P::identity())
        .collect_into_vec(&mut out);
    out
}

/// Points per unit of `span`'s section.
pub(super) fn unit_points(span: &Span) -> usize {
    (UNIT_BYTES / span.size).max(1)
}

/// The units of `span`: for each, the index of its first point and the
/// bytes it hashes (its points, and the count before the first unit). A
/// section without points still has one unit, for its count.
fn unit_ranges(span: &Span) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    let per = unit_points(span);
    let units = span.count.div_ceil(per).max(1);
    (0..units).map(move |k| {
        let first = k * per;
        let points = span.points(first, per.min(span.count - first));
        let from = if first == 0 {
            span.count_at
        } else {
            points.start
        };
        (first, from..points.end)
    })
}

/// Cuts `span` and its vector `out` into units, appended to `units`.
fn units_of<'a, P>(
    span: Span,
    out: &'a mut [P],
    wrap: fn(&'a mut [P]) -> Out<'a>,
    units: &mut Vec<Unit<'a>>,
) {
    let per = unit_points(&span);
    let mut runs = out.chunks_mut(per);
    for (first, hashed) in unit_ranges(&span) {
        units.push(Unit {
            span,
            first,
            hashed,
            out: wrap(runs.next().unwrap_or_default()),
        });
    }
}

/// The file's digest from the hash of its head (everything before the
/// proving key's first count) and each unit's first byte and hash, in
/// file order.
fn combine(len: usize, head_hash: &[u8; 32], units: &[(usize, [u8; 32])]) -> [u8; 32] {
    let mut digest = blake3::Hasher::new();
    digest.update(DIGEST_NAME.as_bytes());
    digest.update(&(len as u64).to_le_bytes());
    digest.update(&0u64.to_le_bytes());
    digest.update(head_hash);
    for (from, hash) in units {
        digest.update(&(*from as u64).to_le_bytes());
        digest.update(hash);
    }
    *digest.finalize().as_bytes()
}

/// The digest [`scan`] computes, from the bytes alone: nothing decoded,
/// nothing checked (for a file this build has just written).
pub(super) fn digest_only(bytes: &[u8], layout: &Layout, pages: &dyn Pages) -> [u8; 32] {
    let head_hash = *blake3::hash(&bytes[..layout.queries[0].count_at]).as_bytes();
    let ranges: Vec<Range<usize>> = layout
        .queries
        .iter()
        .flat_map(|span| unit_ranges(span).map(|(_, hashed)| hashed))
        .collect();
    let units: Vec<(usize, [u8; 32])> = ranges
        .into_par_iter()
        .with_max_len(1)
        .map(|hashed| {
            pages.will_need(hashed.clone());
            let hash = *blake3::hash(&bytes[hashed.clone()]).as_bytes();
            pages.release(hashed.clone());
            (hashed.start, hash)
        })
        .collect();
    combine(layout.len, &head_hash, &units)
}

fn run_unit(bytes: &[u8], unit: Unit<'_>, pages: &dyn Pages) -> Result<UnitDone, ParamsError> {
    pages.will_need(unit.hashed.clone());
    let started = Instant::now();
    let hash = *blake3::hash(&bytes[unit.hashed.clone()]).as_bytes();
    let hash_time = started.elapsed();
    let decoded = match unit.out {
        Out::G1(out) => decode_run(bytes, &unit.span, unit.first, out),
        Out::G2(out) => decode_run(bytes, &unit.span, unit.first, out),
    };
    let decode_time = started.elapsed() - hash_time;
    pages.release(unit.hashed.clone());
    decoded?;
    Ok(UnitDone {
        hashed_from: unit.hashed.start,
        hash,
        hash_time,
        decode_time,
    })
}

/// Decodes points `first..first + out.len()` of `span` into `out`,
/// stopping at the first bad one.
fn decode_run<P: Encoded>(
    bytes: &[u8],
    span: &Span,
    first: usize,
    out: &mut [P],
) -> Result<(), ParamsError> {
    let points = bytes[span.points(first, out.len())].chunks_exact(span.size);
    for (i, (point, slot)) in points.zip(out.iter_mut()).enumerate() {
        *slot = decode_on_curve(point).map_err(|fault| ParamsError::Point {
            section: span.section,
            index: first + i,
            fault,
        })?;
    }
    Ok(())
}
