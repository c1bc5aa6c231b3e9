//! Groth16 parameters: the verifying key and the proving key's queries, in
//! bellperson's layout (`a`, `b_g1`, `b_g2` hold only points of variables
//! with density).

mod codec;
pub(crate) use codec::file_bytes;
mod decode;
mod layout;
mod load;
mod mapped;
mod sidecar;
mod subgroup;
#[cfg(test)]
mod tests;

pub use load::{LoadMode, LoadOptions, LoadReport, SidecarOutcome};
pub use sidecar::{path_of as sidecar_path, FullChecksReason, SUFFIX as SIDECAR_SUFFIX};

use std::fmt;
use std::sync::Arc;

use blstrs::{G1Affine, G2Affine};
use supraseal_c2::{Srs, SrsPoints};

use crate::cs::domain_size;
use crate::error::{ParamsError, Section};
use crate::ProvingAssignment;

/// The verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// `alpha` in G1.
    pub alpha_g1: G1Affine,
    /// `beta` in G1.
    pub beta_g1: G1Affine,
    /// `beta` in G2.
    pub beta_g2: G2Affine,
    /// `gamma` in G2.
    pub gamma_g2: G2Affine,
    /// `delta` in G1.
    pub delta_g1: G1Affine,
    /// `delta` in G2.
    pub delta_g2: G2Affine,
    /// `(beta u_i + alpha v_i + w_i) / gamma` per public input, `ONE` first.
    pub ic: Vec<G1Affine>,
}

/// The full parameters: verifying key and proving key.
#[derive(Clone, PartialEq, Eq)]
pub struct Parameters {
    /// The verifying key.
    pub vk: VerifyingKey,
    /// `tau^i Z(tau) / delta` for `i` in `0..n-1` (`n` the domain size).
    pub h: Arc<Vec<G1Affine>>,
    /// `(beta u_i + alpha v_i + w_i) / delta` per aux variable.
    pub l: Arc<Vec<G1Affine>>,
    /// `u_i(tau)` for every input, then for the aux variables with A
    /// density.
    pub a: Arc<Vec<G1Affine>>,
    /// `v_i(tau)` in G1 for the inputs, then the aux variables, with B
    /// density.
    pub b_g1: Arc<Vec<G1Affine>>,
    /// The same variables as `b_g1`, in G2.
    pub b_g2: Arc<Vec<G2Affine>>,
}

impl fmt::Debug for Parameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parameters")
            .field("ic", &self.vk.ic.len())
            .field("h", &self.h.len())
            .field("l", &self.l.len())
            .field("a", &self.a.len())
            .field("b_g1", &self.b_g1.len())
            .field("b_g2", &self.b_g2.len())
            .finish_non_exhaustive()
    }
}

impl Parameters {
    /// The proving key for the native prover, sharing these parameters'
    /// point vectors (no copy: the key stays in host memory once).
    pub fn srs(&self) -> Result<Srs, supraseal_c2::Error> {
        Srs::share(SrsPoints {
            alpha_g1: self.vk.alpha_g1,
            beta_g1: self.vk.beta_g1,
            beta_g2: self.vk.beta_g2,
            delta_g1: self.vk.delta_g1,
            delta_g2: self.vk.delta_g2,
            h: Arc::clone(&self.h),
            l: Arc::clone(&self.l),
            a: Arc::clone(&self.a),
            b_g1: Arc::clone(&self.b_g1),
            b_g2: Arc::clone(&self.b_g2),
        })
    }

    /// The bytes of these parameters as a file ([`Parameters::write`]).
    pub fn file_bytes(&self) -> u64 {
        file_bytes(
            self.vk.ic.len(),
            self.h.len(),
            self.l.len(),
            self.a.len(),
            self.b_g1.len(),
        )
    }

    /// Checks that these parameters were made for the circuit `prover` was
    /// synthesized from, comparing every section's length with what the
    /// circuit needs (in the order ic, h, l, a, b_g1, b_g2). A mismatch is
    /// [`ParamsError::Shape`], naming the section.
    pub fn check_shape(&self, prover: &ProvingAssignment) -> Result<(), ParamsError> {
        let asg = prover.as_assignment();
        let n = domain_size(prover.num_sealed_constraints())?;
        let inputs = prover.num_inputs();
        let b = asg.b_input_density.count_ones() + asg.b_aux_density.count_ones();
        let checks = [
            (Section::Ic, inputs, self.vk.ic.len()),
            (Section::H, n - 1, self.h.len()),
            (Section::L, prover.num_aux(), self.l.len()),
            (
                Section::A,
                inputs + asg.a_aux_density.count_ones(),
                self.a.len(),
            ),
            (Section::BG1, b, self.b_g1.len()),
            (Section::BG2, b, self.b_g2.len()),
        ];
        match checks
            .into_iter()
            .find(|(_, expected, got)| expected != got)
        {
            Some((section, expected, got)) => Err(ParamsError::Shape {
                section,
                expected,
                got,
            }),
            None => Ok(()),
        }
    }
}
