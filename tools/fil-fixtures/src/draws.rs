//! Every random value a fixture holds, drawn from the one `--seed`.
//!
//! Each purpose reads its own ChaCha20 stream of the seed, so that the
//! values of one purpose stay the same when another draws more or less.

use std::io::Write;

use anyhow::Result;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

#[derive(Clone, Copy)]
enum Stream {
    Sector = 1,
    PieceData = 2,
    PoStRandomness = 3,
    UpdateData = 4,
    UnreadLabels = 5,
    CcPoSt = 6,
}

/// The values a sector is sealed with.
pub struct SealDraws {
    pub sector_id: u64,
    pub ticket: [u8; 32],
    /// The interactive randomness (`seed` in filecoin-proofs).
    pub seed: [u8; 32],
}

/// The randomness of both PoSt kinds.
pub struct PoStDraws {
    pub winning: [u8; 32],
    pub window: [u8; 32],
}

pub struct Draws {
    seed: u64,
}

impl Draws {
    pub fn new(seed: u64) -> Self {
        Draws { seed }
    }

    fn stream(&self, stream: Stream) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        rng.set_stream(stream as u64);
        rng
    }

    pub fn seal(&self) -> SealDraws {
        let mut rng = self.stream(Stream::Sector);
        SealDraws {
            sector_id: rng.gen_range(1..1_000_000),
            ticket: rng.gen(),
            seed: rng.gen(),
        }
    }

    /// Randomness as the chain hands it to a PoSt: a canonical field
    /// element, so with the top two bits of byte 31 cleared.
    pub fn post(&self) -> PoStDraws {
        let mut rng = self.stream(Stream::PoStRandomness);
        PoStDraws {
            winning: field_safe(rng.gen()),
            window: field_safe(rng.gen()),
        }
    }

    /// Writes `len` bytes of the sealed sector's piece data.
    pub fn write_piece_data(&self, out: impl Write, len: u64) -> Result<()> {
        write_random(self.stream(Stream::PieceData), out, len)
    }

    /// The generator of a CC sector's unread labels and default tree
    /// leaves (`cc`).
    pub fn unread_labels(&self) -> ChaCha20Rng {
        self.stream(Stream::UnreadLabels)
    }

    /// The generator of CC sectors' PoSt openings, comm_c and default tree
    /// leaves (`cc`).
    pub fn cc_post(&self) -> ChaCha20Rng {
        self.stream(Stream::CcPoSt)
    }

    /// Writes `len` bytes of the data a SnapDeals update encodes.
    pub fn write_update_data(&self, out: impl Write, len: u64) -> Result<()> {
        write_random(self.stream(Stream::UpdateData), out, len)
    }
}

fn field_safe(mut bytes: [u8; 32]) -> [u8; 32] {
    bytes[31] &= 0x3f;
    bytes
}

fn write_random(mut rng: ChaCha20Rng, mut out: impl Write, len: u64) -> Result<()> {
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        out.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_for_a_seed_and_differ_across_seeds() {
        let (a, b, c) = (Draws::new(1), Draws::new(1), Draws::new(2));
        assert_eq!(a.seal().ticket, b.seal().ticket);
        assert_ne!(a.seal().ticket, c.seal().ticket);
        assert_ne!(a.post().winning, a.post().window);
        assert_eq!(a.post().window[31] & 0xc0, 0);
    }
}
