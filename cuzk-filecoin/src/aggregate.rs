//! SnarkPack aggregation of several sectors' seal proofs: the one proof a
//! miner sends for a batch of sectors (lotus's and Curio's
//! `ProveCommitAggregate`), made by filecoin-proofs'
//! `aggregate_seal_commit_proofs` and checked by
//! `verify_aggregate_seal_commit_proofs` before it is handed back.
//!
//! Every sector's proof is checked with `verify_seal` first, so a bad one
//! is named by its place in the list rather than found as an aggregate that
//! does not verify. The SnarkPack SRS is read from filecoin-proofs'
//! parameter directory, as NI-PoRep's is.

use std::fmt;
use std::str::FromStr;

use bellperson::groth16::aggregate::AggregateVersion;
use filecoin_proofs::{PoRepConfig, SealCommitOutput};
use rayon::prelude::*;
use serde_json::Value;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::error::bad;
use crate::registry::with_tree;
use crate::{CircuitId, FilecoinError, ProofKind, ProofVersion, RegisteredProof, SectorSize};

/// The proofs the production SnarkPack SRS can aggregate at once (lotus
/// allows 819 sectors of 10 partitions in one aggregate, within it).
pub const MAX_AGGREGATED_PROOFS: usize = 8192;

/// The SnarkPack version of an aggregate (go-state-types'
/// `RegisteredAggregationProof`: `SnarkPackV1` is 0, `SnarkPackV2` 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SnarkPack {
    /// Version 1 (before network version 16).
    V1,
    /// Version 2, the one the chain takes today.
    #[default]
    V2,
}

impl SnarkPack {
    /// The version numbered `number` in go-state-types.
    pub fn from_registered(number: u64) -> Result<Self, FilecoinError> {
        match number {
            0 => Ok(SnarkPack::V1),
            1 => Ok(SnarkPack::V2),
            _ => Err(bad(
                "registered aggregation proof",
                format!("{number} is not one (0 is SnarkPackV1, 1 SnarkPackV2)"),
            )),
        }
    }

    fn upstream(self) -> AggregateVersion {
        match self {
            SnarkPack::V1 => AggregateVersion::V1,
            SnarkPack::V2 => AggregateVersion::V2,
        }
    }
}

impl FromStr for SnarkPack {
    type Err = FilecoinError;

    fn from_str(s: &str) -> Result<Self, FilecoinError> {
        match s.to_ascii_lowercase().as_str() {
            "v1" | "1" | "snarkpackv1" => Ok(SnarkPack::V1),
            "v2" | "2" | "snarkpackv2" => Ok(SnarkPack::V2),
            _ => Err(FilecoinError::Unknown {
                what: "SnarkPack version",
                name: s.to_owned(),
                expected: "v1, v2".to_owned(),
            }),
        }
    }
}

impl fmt::Display for SnarkPack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SnarkPack::V1 => "SnarkPackV1",
            SnarkPack::V2 => "SnarkPackV2",
        })
    }
}

/// One sealed sector's seal proof and the public values it proves.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSector {
    /// The sector number.
    pub sector_id: u64,
    /// Its replica commitment.
    pub comm_r: [u8; 32],
    /// Its data commitment.
    pub comm_d: [u8; 32],
    /// The sealing ticket.
    pub ticket: [u8; 32],
    /// The interactive seed the challenges were drawn from.
    pub seed: [u8; 32],
    /// Its seal proof as `seal_commit_phase2` returns it (192 bytes a
    /// partition). Not read by [`verify_seal_aggregate`].
    pub proof: Vec<u8>,
}

impl fmt::Debug for SealedSector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedSector")
            .field("sector_id", &self.sector_id)
            .field("proof_bytes", &self.proof.len())
            .finish_non_exhaustive()
    }
}

/// Sealed sectors of one seal proof, to aggregate or to check an aggregate
/// of.
#[derive(Clone, Debug)]
pub struct SealedSectors {
    /// Their seal proof (`V1_1` or Synthetic PoRep).
    pub proof: RegisteredProof,
    /// The miner's prover id.
    pub prover_id: [u8; 32],
    /// The sectors, in the aggregate's order.
    pub sectors: Vec<SealedSector>,
}

impl SealedSectors {
    /// The sectors of `c1s` (C1 outputs in any form cuzk proves, each with
    /// its sector number unless the C1 names it, and its seal proof),
    /// sealed by `prover_id`. Their seal proof is the one the C1 outputs
    /// name, else `V1_1` at `size` (or at the size they name); they must
    /// agree.
    pub fn from_c1s(
        prover_id: [u8; 32],
        size: Option<SectorSize>,
        c1s: impl IntoIterator<Item = (Vec<u8>, Option<u64>, Vec<u8>)>,
    ) -> Result<Self, FilecoinError> {
        let mut named: Option<RegisteredProof> = None;
        let mut sized = size;
        let mut sectors = Vec::new();
        for (i, (c1, sector_id, proof)) in c1s.into_iter().enumerate() {
            let what = || format!("C1 output {}", i + 1);
            let parsed = crate::porep::parse_c1(&c1).map_err(|e| bad(what(), e))?;
            let sector_id = match (sector_id, parsed.sector_num) {
                (Some(given), Some(n)) if given != n => {
                    return Err(bad(
                        what(),
                        format!("it is for sector {n} (SectorNum), not {given}"),
                    ))
                }
                (Some(n), _) | (None, Some(n)) => n,
                (None, None) => {
                    return Err(bad(
                        what(),
                        "it does not name its sector: give its sector number",
                    ))
                }
            };
            if let Some(got) = parsed.size {
                match sized {
                    Some(want) if want != got => {
                        return Err(bad(what(), format!("it is for {got} sectors, not {want}")))
                    }
                    _ => sized = Some(got),
                }
            }
            if let Some(proof) = parsed.proof {
                if named.is_some_and(|p| p != proof) {
                    return Err(bad(
                        what(),
                        format!("it is a {proof} C1, the ones before it are not"),
                    ));
                }
                named = Some(proof);
            }
            let field = |name: &str| -> Result<[u8; 32], FilecoinError> {
                let value = parsed.raw.get(name).cloned().unwrap_or(Value::Null);
                serde_json::from_value(value)
                    .map_err(|e| bad(what(), format!("its {name} is not 32 bytes: {e}")))
            };
            sectors.push(SealedSector {
                sector_id,
                comm_r: field("comm_r")?,
                comm_d: field("comm_d")?,
                ticket: field("ticket")?,
                seed: field("seed")?,
                proof,
            });
        }
        let size = sized.ok_or_else(|| {
            bad(
                "C1 outputs",
                "none names its sector size: give one (--sector-size)",
            )
        })?;
        let proof = named.unwrap_or_else(|| RegisteredProof::proven(ProofKind::PoRep, size));
        if proof.size != size {
            return Err(bad(
                "C1 outputs",
                format!("they are {proof} C1s, not for {size} sectors"),
            ));
        }
        Ok(SealedSectors {
            proof,
            prover_id,
            sectors,
        })
    }

    /// Their comm_r and seed lists, in order: what SnarkPack's transcript
    /// hashes beside the proofs.
    fn transcript(&self) -> (Vec<[u8; 32]>, Vec<[u8; 32]>) {
        self.sectors.iter().map(|s| (s.comm_r, s.seed)).unzip()
    }

    /// The configuration they were sealed under, once the request is known
    /// to be one that can be aggregated: a seal proof cuzk proves, not
    /// NI-PoRep (its proof is an aggregate already), and at least one
    /// sector, no more than the SRS takes.
    fn config(&self) -> Result<PoRepConfig, FilecoinError> {
        let config = self.proof.porep_config()?;
        if self.proof.version == ProofVersion::NiPoRep {
            return Err(bad(
                "seal proof",
                format!(
                    "{} proofs are SnarkPack aggregates of their partitions already; \
                     aggregate V1_1 or Synthetic PoRep proofs",
                    self.proof
                ),
            ));
        }
        let partitions = usize::from(config.partitions);
        let proofs = self.sectors.len() * partitions;
        if self.sectors.is_empty() || proofs > MAX_AGGREGATED_PROOFS {
            return Err(bad(
                "sectors",
                format!(
                    "{} given: an aggregate takes 1 to {} sectors of {}",
                    self.sectors.len(),
                    MAX_AGGREGATED_PROOFS / partitions,
                    self.proof.size
                ),
            ));
        }
        let srs = crate::params::snarkpack_srs_path();
        if !srs.exists() {
            return Err(FilecoinError::MissingSrs { path: srs });
        }
        // filecoin-proofs reads the verifying key from its directory too.
        let circuit = CircuitId::new(ProofKind::PoRep, self.proof.size);
        let vk = circuit.vk_path(&storage_proofs_core::parameter_cache::parameter_cache_dir())?;
        if !vk.exists() {
            return Err(FilecoinError::MissingParams { path: vk, circuit });
        }
        Ok(config)
    }
}

/// How many Groth16 proofs an aggregate of `sectors` sectors of `proof`
/// holds: every partition's, padded (by repeating the last) to a power of
/// two, as filecoin-proofs pads them.
pub fn aggregated_proofs(proof: RegisteredProof, sectors: usize) -> Result<usize, FilecoinError> {
    let partitions = usize::from(proof.porep_config()?.partitions);
    Ok((sectors * partitions).max(2).next_power_of_two())
}

/// The SnarkPack aggregate (`version`) of `seals`' proofs, as
/// `aggregate_seal_commit_proofs` makes it, after `verify_seal` accepted
/// each sector's proof and before it is returned,
/// `verify_aggregate_seal_commit_proofs` accepted the aggregate. CPU work:
/// about a second at the test sizes; the SRS file is read each time.
pub fn aggregate_seal_proofs(
    seals: &SealedSectors,
    version: SnarkPack,
) -> Result<Vec<u8>, FilecoinError> {
    let config = seals.config()?;
    with_tree!(seals.proof.size, Tree => {
        check_each::<Tree>(&config, seals)?;
        let (comm_rs, seeds) = seals.transcript();
        let outputs: Vec<SealCommitOutput> = seals
            .sectors
            .iter()
            .map(|s| SealCommitOutput {
                proof: s.proof.clone(),
            })
            .collect();
        let aggregate = filecoin_proofs::aggregate_seal_commit_proofs::<Tree>(
            &config,
            &comm_rs,
            &seeds,
            &outputs,
            version.upstream(),
        )?;
        if !verify_with::<Tree>(&config, seals, &aggregate, version)? {
            return Err(FilecoinError::Upstream(anyhow::anyhow!(
                "the {version} aggregate of {} sectors' proofs does not verify",
                seals.sectors.len()
            )));
        }
        Ok(aggregate)
    })
}

/// Whether `aggregate` is the SnarkPack (`version`) aggregate of proofs of
/// `seals` in that order (their `proof` fields are not read), by
/// filecoin-proofs' `verify_aggregate_seal_commit_proofs`.
pub fn verify_seal_aggregate(
    seals: &SealedSectors,
    aggregate: &[u8],
    version: SnarkPack,
) -> Result<bool, FilecoinError> {
    let config = seals.config()?;
    with_tree!(seals.proof.size, Tree => verify_with::<Tree>(&config, seals, aggregate, version))
}

/// `verify_seal` of each sector's proof, in parallel; the first that fails
/// is named.
fn check_each<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    seals: &SealedSectors,
) -> Result<(), FilecoinError> {
    let want = 192 * usize::from(config.partitions);
    let failed = seals
        .sectors
        .par_iter()
        .enumerate()
        .map(|(i, s)| {
            let what = || {
                format!(
                    "sector {} (proof {} of {})",
                    s.sector_id,
                    i + 1,
                    seals.sectors.len()
                )
            };
            if s.proof.len() != want {
                return Err(bad(
                    what(),
                    format!(
                        "{} bytes, a {} proof has {want}",
                        s.proof.len(),
                        seals.proof
                    ),
                ));
            }
            let valid = filecoin_proofs::verify_seal::<Tree>(
                config,
                s.comm_r,
                s.comm_d,
                seals.prover_id,
                s.sector_id.into(),
                s.ticket,
                s.seed,
                &s.proof,
            )
            .map_err(|e| bad(what(), format!("{e:#}")))?;
            if valid {
                Ok(())
            } else {
                Err(bad(
                    what(),
                    format!(
                        "verify_seal rejects it for these commitments, ticket and seed \
                         sealed by {}",
                        crate::porep::miner_of(&seals.prover_id)
                    ),
                ))
            }
        })
        .find_first(Result::is_err);
    failed.unwrap_or(Ok(()))
}

fn verify_with<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    seals: &SealedSectors,
    aggregate: &[u8],
    version: SnarkPack,
) -> Result<bool, FilecoinError> {
    let mut inputs = Vec::new();
    for s in &seals.sectors {
        inputs.extend(filecoin_proofs::get_seal_inputs::<Tree>(
            config,
            s.comm_r,
            s.comm_d,
            seals.prover_id,
            s.sector_id.into(),
            s.ticket,
            s.seed,
        )?);
    }
    let (comm_rs, seeds) = seals.transcript();
    // A malformed aggregate (bytes that do not parse) is a "no", as a
    // verifier should answer, not a failure of the verifier.
    let verdict = crate::error::unless_panics("aggregate", || {
        filecoin_proofs::verify_aggregate_seal_commit_proofs::<Tree>(
            config,
            aggregate.to_vec(),
            &comm_rs,
            &seeds,
            inputs,
            version.upstream(),
        )
    })?;
    Ok(verdict.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_go_state_types_numbers_them() {
        assert_eq!(SnarkPack::from_registered(0).unwrap(), SnarkPack::V1);
        assert_eq!(SnarkPack::from_registered(1).unwrap(), SnarkPack::V2);
        assert!(SnarkPack::from_registered(2)
            .unwrap_err()
            .to_string()
            .contains("1 SnarkPackV2"));
        assert_eq!("V2".parse::<SnarkPack>().unwrap(), SnarkPack::V2);
        assert!("v3".parse::<SnarkPack>().is_err());
        assert_eq!(SnarkPack::default(), SnarkPack::V2);
    }

    #[test]
    fn padded_counts_follow_filecoin_proofs() {
        let porep = |size| RegisteredProof::proven(ProofKind::PoRep, size);
        assert_eq!(aggregated_proofs(porep(SectorSize::S2KiB), 1).unwrap(), 2);
        assert_eq!(aggregated_proofs(porep(SectorSize::S2KiB), 3).unwrap(), 4);
        // 32 GiB: 10 partitions a sector.
        assert_eq!(aggregated_proofs(porep(SectorSize::S32GiB), 4).unwrap(), 64);
        assert_eq!(
            aggregated_proofs(porep(SectorSize::S32GiB), 819).unwrap(),
            8192
        );
    }

    #[test]
    fn requests_that_cannot_be_aggregated_are_refused_first() {
        let sector = SealedSector {
            sector_id: 1,
            comm_r: [0; 32],
            comm_d: [0; 32],
            ticket: [0; 32],
            seed: [0; 32],
            proof: vec![0; 192],
        };
        let seals = |proof: RegisteredProof, n: usize| SealedSectors {
            proof,
            prover_id: crate::prover_id(1000),
            sectors: vec![sector.clone(); n],
        };
        let v1_1 = RegisteredProof::proven(ProofKind::PoRep, SectorSize::S32GiB);
        let none = aggregate_seal_proofs(&seals(v1_1, 0), SnarkPack::V2).unwrap_err();
        assert!(none.to_string().contains("1 to 819 sectors"), "{none}");
        let many = aggregate_seal_proofs(&seals(v1_1, 820), SnarkPack::V2).unwrap_err();
        assert!(many.to_string().contains("820 given"), "{many}");
        let ni = RegisteredProof::from_number(ProofKind::PoRep, 18).unwrap();
        let error = aggregate_seal_proofs(&seals(ni, 2), SnarkPack::V2).unwrap_err();
        assert!(error
            .to_string()
            .contains("aggregates of their partitions already"));
        let v1 = RegisteredProof::from_number(ProofKind::PoRep, 3).unwrap();
        assert!(matches!(
            aggregate_seal_proofs(&seals(v1, 2), SnarkPack::V2),
            Err(FilecoinError::Unsupported { .. })
        ));
    }
}
