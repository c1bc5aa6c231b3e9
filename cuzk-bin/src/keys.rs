//! Loading a parameters file into what the prover and verifier need.

use std::path::Path;
use std::time::Instant;

use bellperson_lite::{Parameters, PreparedVerifyingKey, VerifyingKey};
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

/// Reads only the verifying key at the head of the parameters file `path`
/// (the proving key's points after it are not needed, nor checked).
pub fn load_verifying_key(path: &Path) -> Result<PreparedVerifyingKey, Box<dyn std::error::Error>> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot read parameters {}: {e}", path.display()))?;
    let vk = VerifyingKey::read(std::io::BufReader::new(file))?;
    Ok(bellperson_lite::prepare_verifying_key(&vk))
}
