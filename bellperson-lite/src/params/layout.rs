//! Where each section of a `.params` file lies, found from its counts
//! before any point is decoded, so that the sections can be decoded at
//! once, in parallel.

use std::ops::Range;

use crate::error::{ParamsError, Place, Section};

/// Bytes of an uncompressed G1 point.
pub(super) const G1_BYTES: usize = 96;
/// Bytes of an uncompressed G2 point.
pub(super) const G2_BYTES: usize = 192;

/// The verifying key's single points, in file order, with their sizes.
pub(super) const VK_POINTS: [(Section, usize); 6] = [
    (Section::VkAlphaG1, G1_BYTES),
    (Section::VkBetaG1, G1_BYTES),
    (Section::VkBetaG2, G2_BYTES),
    (Section::VkGammaG2, G2_BYTES),
    (Section::VkDeltaG1, G1_BYTES),
    (Section::VkDeltaG2, G2_BYTES),
];

/// The counted sections after the verifying key's single points, in file
/// order, with their point sizes.
const COUNTED: [(Section, usize); 6] = [
    (Section::Ic, G1_BYTES),
    (Section::H, G1_BYTES),
    (Section::L, G1_BYTES),
    (Section::A, G1_BYTES),
    (Section::BG1, G1_BYTES),
    (Section::BG2, G2_BYTES),
];

/// One counted section: its `u32` count at `count_at`, then `count`
/// points of `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    /// The section.
    pub section: Section,
    /// Byte offset of its count.
    pub count_at: usize,
    /// Its number of points.
    pub count: usize,
    /// Bytes per point.
    pub size: usize,
}

impl Span {
    /// Byte offset of the first point.
    pub fn points_at(&self) -> usize {
        self.count_at + 4
    }

    /// Bytes of point `index` and the `n` after it, `index + n <= count`.
    pub fn points(&self, index: usize, n: usize) -> Range<usize> {
        let start = self.points_at() + index * self.size;
        start..start + n * self.size
    }

    /// Byte offset just past the section.
    pub fn end(&self) -> usize {
        self.points_at() + self.count * self.size
    }
}

/// The sections of a whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// The verifying key's `ic`.
    pub ic: Span,
    /// The proving key's sections: `h`, `l`, `a`, `b_g1`, `b_g2`.
    pub queries: [Span; 5],
    /// The file's length.
    pub len: usize,
}

impl Layout {
    /// Reads the counts of `bytes` (a whole file), checking each against
    /// the bytes that remain and that nothing follows `b_g2`.
    pub fn of(bytes: &[u8]) -> Result<Self, ParamsError> {
        let len = bytes.len();
        let mut at = 0;
        for (section, size) in VK_POINTS {
            at += size;
            if at > len {
                let place = Place::Item(0);
                return Err(ParamsError::Truncated { section, place });
            }
        }
        let mut spans = [None; 6];
        for (slot, (section, size)) in spans.iter_mut().zip(COUNTED) {
            let raw = bytes.get(at..at + 4).ok_or(ParamsError::Truncated {
                section,
                place: Place::Count,
            })?;
            let count = u32::from_be_bytes(raw.try_into().expect("four bytes"));
            let needed = u64::from(count) * size as u64;
            let remaining = (len - at - 4) as u64;
            if needed > remaining {
                return Err(ParamsError::Count {
                    section,
                    count,
                    needed,
                    remaining,
                });
            }
            let span = Span {
                section,
                count_at: at,
                count: count as usize,
                size,
            };
            at = span.end();
            *slot = Some(span);
        }
        if at < len {
            let count = (len - at) as u64;
            return Err(ParamsError::TrailingBytes { count });
        }
        let [ic, h, l, a, b_g1, b_g2] = spans.map(|s| s.expect("every section was read"));
        Ok(Layout {
            ic,
            queries: [h, l, a, b_g1, b_g2],
            len,
        })
    }
}
