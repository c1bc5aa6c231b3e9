//! The subgroup check of the proving key's points, batched.
//!
//! A point on the curve is in the prime-order subgroup G when its
//! component in the small torsion part (the cofactor's) is zero. blst's
//! exact test costs about 128 point doublings a point; a parameters file
//! holds tens of millions of points. So each run of points is tested as 64
//! random subset sums instead: every point draws a 64-bit mask, and sum
//! `k` adds the points whose mask has bit `k` set. A sum of points of G is
//! in G. If some point `P` is not, then for each sum, whatever the other
//! points' bits, at most one value of `P`'s bit puts the sum in G, so all
//! 64 sums pass with probability at most 2^-64. The masks come from a seed
//! drawn from the operating system at each load, after the file is fixed,
//! so a file cannot be made to fit them.
//!
//! The sums are cheap: a mask's 8 bytes pick one of 256 buckets in each of
//! 8 groups (8 additions a point, against blst's ~128 doublings), and each
//! group's 8 sums come from its buckets by folding. When a run fails, its
//! points are tested one by one (exactly) to name the first bad one.

use rand_core::{OsRng, RngCore};
use rayon::prelude::*;

use super::decode::unit_points;
use super::layout::Span;
use super::Parameters;
use crate::encoding::Encoded;
use crate::error::{ParamsError, PointFault, Section};

/// Mask bits (and so subset sums) in each bucket group.
const GROUP_BITS: usize = 8;
/// Buckets per group.
const BUCKETS: usize = 1 << GROUP_BITS;
/// Bucket groups: 8 groups of 8 bits make 64 subset sums a run.
const GROUPS: usize = 8;
/// Points whose masks are drawn at once.
const MASK_BLOCK: usize = 1024;

/// A run of one section's decoded points.
enum Run<'a> {
    G1(&'a [blstrs::G1Affine]),
    G2(&'a [blstrs::G2Affine]),
}

/// Checks that every point of the proving key is in its subgroup; fails
/// naming the first that is not, in file order. The runs are those of the
/// decoding pass, `queries` the file's proving-key sections.
pub(super) fn check(params: &Parameters, queries: &[Span; 5]) -> Result<(), ParamsError> {
    let mut seed = [0u8; 32];
    OsRng
        .try_fill_bytes(&mut seed)
        .map_err(|e| ParamsError::Io(e.into()))?;
    let mut runs: Vec<(Section, usize, Run<'_>)> = Vec::new();
    let [h, l, a, b_g1, b_g2] = queries;
    for (span, points) in [(h, &params.h), (l, &params.l), (a, &params.a)] {
        runs_of(span, points, Run::G1, &mut runs);
    }
    runs_of(b_g1, &params.b_g1, Run::G1, &mut runs);
    runs_of(b_g2, &params.b_g2, Run::G2, &mut runs);
    let outcomes: Vec<Result<(), ParamsError>> = runs
        .into_par_iter()
        .with_max_len(1)
        .map(|(section, first, run)| {
            let mut masks = masks(&seed, section, first);
            let bad = match run {
                Run::G1(points) => first_bad(points, &mut masks),
                Run::G2(points) => first_bad(points, &mut masks),
            };
            match bad {
                Some(i) => Err(ParamsError::Point {
                    section,
                    index: first + i,
                    fault: PointFault::NotInSubgroup,
                }),
                None => Ok(()),
            }
        })
        .collect();
    outcomes.into_iter().collect()
}

fn runs_of<'a, P>(
    span: &Span,
    points: &'a [P],
    wrap: fn(&'a [P]) -> Run<'a>,
    runs: &mut Vec<(Section, usize, Run<'a>)>,
) {
    let per = unit_points(span);
    for (k, run) in points.chunks(per).enumerate() {
        runs.push((span.section, k * per, wrap(run)));
    }
}

/// The masks of the run starting at point `first` of `section`: blake3's
/// output stream, keyed with the load's seed.
fn masks(seed: &[u8; 32], section: Section, first: usize) -> blake3::OutputReader {
    let mut hasher = blake3::Hasher::new_keyed(seed);
    hasher.update(section.name().as_bytes());
    hasher.update(&(first as u64).to_le_bytes());
    hasher.finalize_xof()
}

/// The index of the first point of `points` outside the subgroup, if the
/// batched test says there may be one (then each point is tested exactly).
pub(super) fn first_bad<P: Encoded>(
    points: &[P],
    masks: &mut blake3::OutputReader,
) -> Option<usize> {
    if batch_passes(points, masks) {
        return None;
    }
    points.par_iter().position_first(|p| !p.in_subgroup())
}

/// The 64 subset sums of `points`, each tested for the subgroup.
fn batch_passes<P: Encoded>(points: &[P], masks: &mut blake3::OutputReader) -> bool {
    // On the heap: 2,048 G2 sums are 590 KB.
    let mut buckets: Vec<P::Sum> = std::iter::repeat_n(P::zero(), GROUPS * BUCKETS).collect();
    let mut block = [0u8; GROUPS * MASK_BLOCK];
    for run in points.chunks(MASK_BLOCK) {
        let block = &mut block[..run.len() * GROUPS];
        masks.fill(block);
        for (point, mask) in run.iter().zip(block.chunks_exact(GROUPS)) {
            for (group, &bits) in mask.iter().enumerate() {
                if bits != 0 {
                    point.add_to(&mut buckets[group * BUCKETS + usize::from(bits)]);
                }
            }
        }
    }
    buckets
        .chunks_mut(BUCKETS)
        .all(|group| bit_sums::<P>(group).iter().all(P::sum_in_subgroup))
}

/// From one group's buckets (bucket `m` holds the points whose mask byte
/// is `m`), the sum for each bit `b`: every bucket whose index has bit `b`
/// set. The top half gives the top bit's sum and is then folded onto the
/// bottom half, which leaves the same problem one bit smaller.
pub(super) fn bit_sums<P: Encoded>(buckets: &mut [P::Sum]) -> [P::Sum; GROUP_BITS] {
    let mut sums = [P::zero(); GROUP_BITS];
    let mut n = buckets.len();
    for sum in sums.iter_mut().rev() {
        let half = n / 2;
        let (low, high) = buckets[..n].split_at_mut(half);
        for (l, h) in low.iter_mut().zip(high.iter()) {
            P::add_sum(sum, h);
            P::add_sum(l, h);
        }
        n = half;
    }
    sums
}
