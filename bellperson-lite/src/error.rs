//! Typed errors of every stage.

use std::fmt;
use std::io;
use std::path::PathBuf;

use bellpepper_core::SynthesisError;

/// A section of a parameters file, named as in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// `vk.alpha_g1`.
    VkAlphaG1,
    /// `vk.beta_g1`.
    VkBetaG1,
    /// `vk.beta_g2`.
    VkBetaG2,
    /// `vk.gamma_g2`.
    VkGammaG2,
    /// `vk.delta_g1`.
    VkDeltaG1,
    /// `vk.delta_g2`.
    VkDeltaG2,
    /// `ic`: the verifying key's input commitments, one per public input.
    Ic,
    /// `h`: the H query.
    H,
    /// `l`: the L query, one point per aux variable.
    L,
    /// `a`: the A query.
    A,
    /// `b_g1`: the B query in G1.
    BG1,
    /// `b_g2`: the B query in G2.
    BG2,
}

impl Section {
    /// The section's name: `vk.alpha_g1`, …, `ic`, `h`, `l`, `a`, `b_g1`,
    /// `b_g2`.
    pub fn name(self) -> &'static str {
        match self {
            Section::VkAlphaG1 => "vk.alpha_g1",
            Section::VkBetaG1 => "vk.beta_g1",
            Section::VkBetaG2 => "vk.beta_g2",
            Section::VkGammaG2 => "vk.gamma_g2",
            Section::VkDeltaG1 => "vk.delta_g1",
            Section::VkDeltaG2 => "vk.delta_g2",
            Section::Ic => "ic",
            Section::H => "h",
            Section::L => "l",
            Section::A => "a",
            Section::BG1 => "b_g1",
            Section::BG2 => "b_g2",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the bytes of one curve point were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum PointFault {
    /// Not the encoding of a point on the curve: bad flag bits, a
    /// coordinate not below the field modulus, or a point off the curve.
    #[error("not a point on the curve")]
    NotOnCurve,
    /// A point, but not in its canonical encoding (e.g. the compression flag
    /// set in an uncompressed slot), so it would not round-trip.
    #[error("not in canonical encoding")]
    NonCanonical,
    /// On the curve but not in the prime-order subgroup.
    #[error("not in the prime-order subgroup")]
    NotInSubgroup,
    /// The point at infinity, which this position never holds.
    #[error("the point at infinity")]
    Identity,
}

/// Where a parameters file ends too early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The section's `u32` count.
    Count,
    /// Item `index` of the section (0 for the single VK points).
    Item(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Count => f.write_str(" count"),
            Place::Item(i) => write!(f, "[{i}]"),
        }
    }
}

/// What can go wrong reading, writing or matching parameters.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// A file operation failed; names the file and says what went wrong.
    #[error("parameters file {}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The failure.
        #[source]
        source: Box<ParamsError>,
    },
    /// The underlying reader or writer failed (not an early end).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The data ends inside `section`, at `place`.
    #[error("truncated: data ends in {section}{place}")]
    Truncated {
        /// The section being read.
        section: Section,
        /// Where in it.
        place: Place,
    },
    /// A section's count needs more bytes than remain (a truncated file or a
    /// corrupt count); checked before anything is allocated.
    #[error("{section}: count {count} needs {needed} bytes but only {remaining} remain")]
    Count {
        /// The section.
        section: Section,
        /// The count read.
        count: u32,
        /// Bytes the count implies.
        needed: u64,
        /// Bytes left in the data.
        remaining: u64,
    },
    /// A point's bytes were refused.
    #[error("{section}[{index}]: {fault}")]
    Point {
        /// The section.
        section: Section,
        /// Index of the first bad point in it (0 for the single VK points).
        index: usize,
        /// Why.
        fault: PointFault,
    },
    /// Bytes follow the last section.
    #[error("{count} trailing bytes after b_g2")]
    TrailingBytes {
        /// How many.
        count: u64,
    },
    /// A section has more points than its `u32` count can say.
    #[error("{section}: {len} points do not fit a u32 count")]
    TooLarge {
        /// The section.
        section: Section,
        /// Its length.
        len: usize,
    },
    /// The parameters were made for another circuit: a section's length
    /// disagrees with what the synthesized circuit needs.
    #[error("{section}: the circuit needs {expected} points, the parameters have {got}")]
    Shape {
        /// The section that disagrees (checked in the order ic, h, l, a,
        /// b_g1, b_g2).
        section: Section,
        /// What the circuit needs.
        expected: usize,
        /// What the parameters hold.
        got: usize,
    },
    /// The circuit cannot be checked: its domain would be too large.
    #[error("circuit")]
    Circuit(#[from] SynthesisError),
}

/// Which point of a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofPart {
    /// A, in G1.
    A,
    /// B, in G2.
    B,
    /// C, in G1.
    C,
}

impl fmt::Display for ProofPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProofPart::A => "A",
            ProofPart::B => "B",
            ProofPart::C => "C",
        })
    }
}

/// What can go wrong decoding a proof.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The bytes are not exactly one proof long.
    #[error("proof is {got} bytes, expected {expected}")]
    Length {
        /// Bytes expected (192).
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// One of the points was refused.
    #[error("proof point {part}: {fault}")]
    Point {
        /// Which point.
        part: ProofPart,
        /// Why.
        fault: PointFault,
    },
    /// The underlying reader or writer failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What keeps a verification from running (a proof that merely fails to
/// verify is `Ok(false)`, not an error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerificationError {
    /// The number of public inputs (without `ONE`) does not match the key.
    #[error("{got} public inputs given, the verifying key takes {expected}")]
    InputCount {
        /// Inputs the key takes.
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// Like [`InputCount`](Self::InputCount), for proof `index` of a batch.
    #[error("proof {index}: {got} public inputs given, the verifying key takes {expected}")]
    BatchInputCount {
        /// The proof's position in the batch.
        index: usize,
        /// Inputs the key takes.
        expected: usize,
        /// Inputs given.
        got: usize,
    },
    /// The verifying key has no `ic` point at all (not even `ONE`'s).
    #[error("the verifying key has no ic points")]
    EmptyIc,
    /// A batch has a different number of proofs and input vectors.
    #[error("{proofs} proofs but {inputs} public input vectors")]
    BatchLength {
        /// Proofs given.
        proofs: usize,
        /// Input vectors given.
        inputs: usize,
    },
}

/// What can go wrong proving.
#[derive(Debug, thiserror::Error)]
pub enum ProverError {
    /// The native prover failed.
    #[error(transparent)]
    Native(#[from] supraseal_c2::Error),
    /// A circuit could not be synthesized.
    #[error("synthesis")]
    Synthesis(#[from] SynthesisError),
    /// Assignment `index` lacks its input constraints (see
    /// [`crate::ProvingAssignment::seal`]).
    #[error("assignment {index} is not sealed")]
    Unsealed {
        /// The assignment's position.
        index: usize,
    },
    /// The blinding values do not match the circuits one for one.
    #[error("{provers} assignments but {r} r and {s} s blinding values")]
    Blinding {
        /// Assignments given.
        provers: usize,
        /// `r` values given.
        r: usize,
        /// `s` values given.
        s: usize,
    },
}

/// Why parameter generation failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The circuit's shape: an unconstrained variable, a domain too large,
    /// or the circuit's own error.
    #[error("synthesis")]
    Synthesis(#[from] SynthesisError),
    /// The fixed-base multiplications on the lock's backend failed.
    #[error(transparent)]
    Native(#[from] supraseal_c2::Error),
}
