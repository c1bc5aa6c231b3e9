//! Reading and writing parameters in bellperson's `.params` format.
//!
//! Layout: the verifying key (`alpha_g1`, `beta_g1`, `beta_g2`, `gamma_g2`,
//! `delta_g1`, `delta_g2`, each uncompressed; a `u32` big-endian count and
//! the `ic` points), then `h`, `l`, `a`, `b_g1` (G1) and `b_g2` (G2), each
//! a `u32` big-endian count followed by uncompressed points. Nothing else.
//!
//! Here: writing, and reading a stream of unknown length (chunk by chunk).
//! Byte slices and files are decoded all at once, in parallel
//! (`decode.rs`, `load.rs`).

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

use super::load::in_file;
use super::{Parameters, VerifyingKey};
use crate::encoding::{decode_uncompressed, Encoded};
use crate::error::{ParamsError, Place, Section};

/// Points decoded (and checked, in parallel) per read.
const READ_CHUNK: usize = 1 << 16;
/// Points encoded per parallel task when writing.
const WRITE_CHUNK: usize = 1 << 10;

/// A reader of a stream of unknown length.
struct Source<R> {
    inner: R,
}

impl<R: Read> Source<R> {
    /// Reads until `buf` is full or the data ends; returns bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, ParamsError> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(got)
    }

    /// A section's count.
    fn count(&mut self, section: Section) -> Result<usize, ParamsError> {
        let mut raw = [0u8; 4];
        if self.fill(&mut raw)? < raw.len() {
            return Err(ParamsError::Truncated {
                section,
                place: Place::Count,
            });
        }
        Ok(u32::from_be_bytes(raw) as usize)
    }

    /// One single point (a VK point).
    fn point<P: Encoded>(&mut self, section: Section) -> Result<P, ParamsError> {
        let mut out = Vec::with_capacity(1);
        self.items(section, 1, &mut out)?;
        Ok(out[0])
    }

    /// A counted section of points.
    fn points<P: Encoded>(&mut self, section: Section) -> Result<Vec<P>, ParamsError> {
        let count = self.count(section)?;
        let mut out = Vec::with_capacity(count.min(READ_CHUNK));
        self.items(section, count, &mut out)?;
        Ok(out)
    }

    /// Reads and checks `count` points in chunks, appending to `out`.
    /// Reports the first bad point before a truncation after it.
    fn items<P: Encoded>(
        &mut self,
        section: Section,
        count: usize,
        out: &mut Vec<P>,
    ) -> Result<(), ParamsError> {
        let size = P::UNCOMPRESSED;
        let mut buf = vec![0u8; count.min(READ_CHUNK) * size];
        while out.len() < count {
            let k = (count - out.len()).min(READ_CHUNK);
            let got = self.fill(&mut buf[..k * size])?;
            decode_into(&buf[..got - got % size], section, out)?;
            if got < k * size {
                let place = Place::Item(out.len());
                return Err(ParamsError::Truncated { section, place });
            }
        }
        Ok(())
    }

    /// Fails if any byte is left.
    fn finish(mut self) -> Result<(), ParamsError> {
        match io::copy(&mut self.inner, &mut io::sink())? {
            0 => Ok(()),
            count => Err(ParamsError::TrailingBytes { count }),
        }
    }
}

/// Decodes whole points of `bytes` in parallel, appending them to `out`
/// (which holds the section's points so far); fails naming the first bad
/// one by its index in the section.
fn decode_into<P: Encoded>(
    bytes: &[u8],
    section: Section,
    out: &mut Vec<P>,
) -> Result<(), ParamsError> {
    let decoded: Vec<_> = bytes
        .par_chunks_exact(P::UNCOMPRESSED)
        .map(decode_uncompressed::<P>)
        .collect();
    for d in decoded {
        match d {
            Ok(p) => out.push(p),
            Err(fault) => {
                let index = out.len();
                return Err(ParamsError::Point {
                    section,
                    index,
                    fault,
                });
            }
        }
    }
    Ok(())
}

impl VerifyingKey {
    fn read_from<R: Read>(src: &mut Source<R>) -> Result<Self, ParamsError> {
        Ok(VerifyingKey {
            alpha_g1: src.point(Section::VkAlphaG1)?,
            beta_g1: src.point(Section::VkBetaG1)?,
            beta_g2: src.point(Section::VkBetaG2)?,
            gamma_g2: src.point(Section::VkGammaG2)?,
            delta_g1: src.point(Section::VkDeltaG1)?,
            delta_g2: src.point(Section::VkDeltaG2)?,
            ic: src.points(Section::Ic)?,
        })
    }

    /// Reads a verifying key (bellperson's layout) and checks every point.
    pub fn read<R: Read>(reader: R) -> Result<Self, ParamsError> {
        Self::read_from(&mut Source { inner: reader })
    }

    /// Writes the verifying key in bellperson's layout.
    pub fn write<W: Write>(&self, mut writer: W) -> Result<(), ParamsError> {
        check_len(Section::Ic, self.ic.len())?;
        let mut head = Vec::with_capacity(6 * 192);
        self.alpha_g1.put_uncompressed(&mut head);
        self.beta_g1.put_uncompressed(&mut head);
        self.beta_g2.put_uncompressed(&mut head);
        self.gamma_g2.put_uncompressed(&mut head);
        self.delta_g1.put_uncompressed(&mut head);
        self.delta_g2.put_uncompressed(&mut head);
        writer.write_all(&head)?;
        write_points(&mut writer, Section::Ic, &self.ic)
    }
}

/// The bytes of a parameter file in bellperson's format with these section
/// lengths: the verifying key's six points, then each section as a count
/// and its points, uncompressed.
pub(crate) fn file_bytes(ic: usize, h: usize, l: usize, a: usize, b: usize) -> u64 {
    let (g1, g2) = (G1Affine::UNCOMPRESSED as u64, G2Affine::UNCOMPRESSED as u64);
    let count = 4;
    let vk = 3 * g1 + 3 * g2 + count + g1 * ic as u64;
    let sections = |points: usize, size: u64| count + size * points as u64;
    vk + sections(h, g1) + sections(l, g1) + sections(a, g1) + sections(b, g1) + sections(b, g2)
}

fn check_len(section: Section, len: usize) -> Result<u32, ParamsError> {
    u32::try_from(len).map_err(|_| ParamsError::TooLarge { section, len })
}

/// Writes a count and the points, encoding chunks in parallel.
fn write_points<W: Write, P: Encoded>(
    writer: &mut W,
    section: Section,
    points: &[P],
) -> Result<(), ParamsError> {
    writer.write_all(&check_len(section, points.len())?.to_be_bytes())?;
    for group in points.chunks(READ_CHUNK) {
        let parts: Vec<Vec<u8>> = group
            .par_chunks(WRITE_CHUNK)
            .map(|chunk| {
                let mut buf = Vec::with_capacity(chunk.len() * P::UNCOMPRESSED);
                chunk.iter().for_each(|p| p.put_uncompressed(&mut buf));
                buf
            })
            .collect();
        for part in parts {
            writer.write_all(&part)?;
        }
    }
    Ok(())
}

impl Parameters {
    fn read_from<R: Read>(mut src: Source<R>) -> Result<Self, ParamsError> {
        let vk = VerifyingKey::read_from(&mut src)?;
        let h = src.points::<G1Affine>(Section::H)?;
        let l = src.points::<G1Affine>(Section::L)?;
        let a = src.points::<G1Affine>(Section::A)?;
        let b_g1 = src.points::<G1Affine>(Section::BG1)?;
        let b_g2 = src.points::<G2Affine>(Section::BG2)?;
        src.finish()?;
        Ok(Parameters {
            vk,
            h: Arc::new(h),
            l: Arc::new(l),
            a: Arc::new(a),
            b_g1: Arc::new(b_g1),
            b_g2: Arc::new(b_g2),
        })
    }

    /// Reads parameters from a stream of unknown length, checking every
    /// point (on the curve, canonical, not the identity, in the subgroup)
    /// in parallel chunks. Memory grows with what is actually read, so a
    /// corrupt count cannot make it allocate ahead of the data. The stream
    /// must end right after `b_g2`. A slice or a file of known length is
    /// faster through [`from_bytes`](Self::from_bytes) or
    /// [`load`](Self::load).
    pub fn read<R: Read>(reader: R) -> Result<Self, ParamsError> {
        Self::read_from(Source { inner: reader })
    }

    /// Writes the parameters in bellperson's format.
    pub fn write<W: Write>(&self, mut writer: W) -> Result<(), ParamsError> {
        check_len(Section::H, self.h.len())?;
        check_len(Section::L, self.l.len())?;
        check_len(Section::A, self.a.len())?;
        check_len(Section::BG1, self.b_g1.len())?;
        check_len(Section::BG2, self.b_g2.len())?;
        self.vk.write(&mut writer)?;
        write_points(&mut writer, Section::H, &self.h)?;
        write_points(&mut writer, Section::L, &self.l)?;
        write_points(&mut writer, Section::A, &self.a)?;
        write_points(&mut writer, Section::BG1, &self.b_g1)?;
        write_points(&mut writer, Section::BG2, &self.b_g2)
    }

    /// The parameters in bellperson's format, in memory.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ParamsError> {
        let mut out = Vec::new();
        self.write(&mut out)?;
        Ok(out)
    }

    /// Writes a parameters file, replacing it whole
    /// ([`write_atomically`](crate::files::write_atomically): a crash leaves
    /// the old file or the new). Errors name the file.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), ParamsError> {
        let path = path.as_ref();
        crate::files::write_atomically(path, |out| self.write(out)).map_err(|e| in_file(path, e))
    }
}
