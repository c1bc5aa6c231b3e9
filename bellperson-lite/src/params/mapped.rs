//! A parameters file mapped into memory: the one module of this crate that
//! uses `unsafe` (mapping a file is unsafe in Rust, since another process
//! could change it underneath).

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::ops::Range;

use memmap2::{Advice, Mmap, UncheckedAdvice};

/// What the decoding pass tells the memory behind the bytes it reads.
pub(super) trait Pages: Sync {
    /// `range` is about to be read: start reading it ahead.
    fn will_need(&self, range: Range<usize>);
    /// `range` has been read and is not needed any more.
    fn release(&self, range: Range<usize>);
}

/// Bytes already in memory: nothing to tell.
pub(super) struct InMemory;

impl Pages for InMemory {
    fn will_need(&self, _: Range<usize>) {}
    fn release(&self, _: Range<usize>) {}
}

/// The smallest page size of the platforms we run on; releases round
/// inwards to it.
const PAGE: usize = 4096;

/// A whole file, mapped read-only (an empty file is not mapped).
pub(super) struct Mapped(Option<Mmap>);

impl Mapped {
    /// Maps `file`.
    pub fn new(file: &File) -> io::Result<Self> {
        if file.metadata()?.len() == 0 {
            return Ok(Mapped(None));
        }
        // SAFETY: the map is read-only and lives only while one load decodes
        // it into owned vectors. The file must not be truncated or written
        // meanwhile (a truncation faults the process, a write changes the
        // bytes being read): the same contract as bellperson's and
        // supraseal's mapped loading. Parameter files are written once, by
        // a temporary file and a rename (`cuzk setup` and the daemon).
        let map = unsafe { Mmap::map(file)? };
        Ok(Mapped(Some(map)))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or(&[])
    }
}

impl Pages for Mapped {
    fn will_need(&self, range: Range<usize>) {
        if let Some(map) = &self.0 {
            // Advice only: a failure changes nothing but speed.
            let _ = map.advise_range(Advice::WillNeed, range.start, range.len());
        }
    }

    fn release(&self, range: Range<usize>) {
        let start = range.start.next_multiple_of(PAGE);
        let end = range.end / PAGE * PAGE;
        if let (Some(map), true) = (&self.0, start < end) {
            // SAFETY: the map is a shared, read-only mapping of a file, so
            // dropping its pages changes no byte: a later read faults them
            // back in from the page cache or the file. It only keeps the
            // mapped file out of this process's resident memory once
            // decoded. A failure changes nothing but memory use.
            let _ = unsafe {
                map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }
}
