//! Helpers shared by the integration tests.

use rand::rngs::StdRng;
use rand::SeedableRng;

/// A seeded RNG: the seed comes from `CUZK_TEST_SEED` or the OS, and is
/// printed so that a failure can be replayed.
pub fn rng(test: &str) -> StdRng {
    let seed = std::env::var("CUZK_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("{test}: seed {seed} (CUZK_TEST_SEED={seed} replays it)");
    StdRng::seed_from_u64(seed)
}
