//! Loading a parameters file into what the prover and verifier need.

use std::path::Path;
use std::time::Instant;

use bellperson_lite::{Parameters, PreparedVerifyingKey};
use supraseal_c2::Srs;

/// Parameters read from a file, with their native SRS.
pub struct LoadedKey {
    /// The parameters as read.
    pub params: Parameters,
    /// The proving key's points, in native memory.
    pub srs: Srs,
}

/// Reads and checks `path`, then copies its points into a native SRS.
pub fn load(path: &Path) -> Result<LoadedKey, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let params = Parameters::read_file(path)?;
    let srs = params.srs()?;
    log::info!(
        "loaded {} in {:.2} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(LoadedKey { params, srs })
}

/// Reads `path` and prepares its verifying key.
pub fn load_verifying_key(path: &Path) -> Result<PreparedVerifyingKey, Box<dyn std::error::Error>> {
    let params = Parameters::read_file(path)?;
    Ok(bellperson_lite::prepare_verifying_key(&params.vk))
}
