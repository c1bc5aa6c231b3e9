//! The files of a fixture directory and their forms.
//!
//! ```text
//! meta.json                everything a verifier needs (Meta), 32-byte values in hex
//! c1.json                  filecoin-proofs' SealCommitPhase1Output<Tree> (serde_json)
//! c1-curio.json            {"SectorNum", "Phase1Out": base64(api JSON), "SectorSize"}
//! winning/vanilla-<i>.bin  bincode of FallbackPoStSectorProof<Tree>
//! window/vanilla-<i>.bin   bincode of FallbackPoStSectorProof<Tree>
//! snap/partition-<i>.bin   bincode of PartitionProof<Tree>
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use clap::ValueEnum;
use filecoin_proofs::SealCommitPhase1Output;
use filecoin_proofs_api::seal::SealCommitPhase1Output as ApiSealCommitPhase1Output;
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{json, Value};
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::kinds::SectorSize;

pub const META: &str = "meta.json";
pub const C1: &str = "c1.json";
pub const C1_CURIO: &str = "c1-curio.json";

/// What a verifier needs besides the proof files; `meta.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Meta {
    /// The tool, its version and the filecoin-proofs version it used.
    pub generator: String,
    /// The `--seed` every random value was drawn from.
    pub fixture_seed: u64,
    /// filecoin-proofs-api's name of the seal proof, e.g. `StackedDrg2KiBV1_1`.
    pub registered_seal_proof: RegisteredSealProof,
    /// The number filecoin-proofs-api registers it under (5, 6, 7).
    pub registered_seal_proof_number: u64,
    pub api_version: String,
    pub sector_size: u64,
    #[serde(with = "hex32")]
    pub porep_id: [u8; 32],
    pub porep_partitions: usize,
    pub miner_id: u64,
    /// The miner id's LEB128 encoding, left-aligned.
    #[serde(with = "hex32")]
    pub prover_id: [u8; 32],
    pub sector_id: u64,
    #[serde(with = "hex32")]
    pub ticket: [u8; 32],
    /// The interactive randomness the PoRep challenges derive from.
    #[serde(with = "hex32")]
    pub seed: [u8; 32],
    #[serde(with = "hex32")]
    pub comm_r: [u8; 32],
    #[serde(with = "hex32")]
    pub comm_d: [u8; 32],
    #[serde(with = "hex32")]
    pub replica_id: [u8; 32],
    pub c1: String,
    pub c1_curio: String,
    /// Absent from a `cc` fixture, which holds a C1 output alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winning: Option<PoStMeta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<PoStMeta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snap: Option<SnapMeta>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PoStMeta {
    pub registered_proof: RegisteredPoStProof,
    #[serde(with = "hex32")]
    pub randomness: [u8; 32],
    pub partition_index: usize,
    /// The challenged sectors, in the order of `vanilla_proofs`.
    pub sector_ids: Vec<u64>,
    /// Their comm_r (hex), in the same order: what a verifier is given.
    #[serde(default)]
    pub comm_rs: Vec<String>,
    /// Paths relative to the fixture directory.
    pub vanilla_proofs: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SnapMeta {
    pub registered_proof: RegisteredUpdateProof,
    #[serde(with = "hex32")]
    pub comm_r_old: [u8; 32],
    #[serde(with = "hex32")]
    pub comm_r_new: [u8; 32],
    #[serde(with = "hex32")]
    pub comm_d_new: [u8; 32],
    /// Paths relative to the fixture directory, partition 0 first.
    pub partition_proofs: Vec<String>,
}

/// C1 as Curio hands it to its prover (Go's JSON: `[]byte` is base64).
#[derive(Debug, Serialize, Deserialize)]
pub struct CurioC1 {
    #[serde(rename = "SectorNum")]
    pub sector_num: u64,
    /// filecoin-proofs-api's `SealCommitPhase1Output` as serde_json.
    #[serde(rename = "Phase1Out", with = "base64_bytes")]
    pub phase1_out: Vec<u8>,
    #[serde(rename = "SectorSize")]
    pub sector_size: u64,
}

/// filecoin-proofs-api's JSON form of a C1 output: the vanilla proofs tagged
/// with the sector size's variant (`{"StackedDrg32GiBV1": [...]}`) and the
/// registered proof beside them. Built as JSON, for any tree shape, and
/// checked to parse as the api's type.
pub fn api_c1_json<Tree: MerkleTreeTrait>(
    seal: RegisteredSealProof,
    c1: &SealCommitPhase1Output<Tree>,
) -> Result<Value> {
    // The api tags vanilla proofs by sector size only, whichever seal
    // proof (V1_1 or one of its twins) made them.
    let size = SectorSize::from_bytes(u64::from(seal.sector_size()))?;
    let size = size.to_possible_value().expect("every size is named");
    let variant = format!("StackedDrg{}V1", size.get_name());
    let mut value = serde_json::to_value(c1)?;
    let proofs = value["vanilla_proofs"].take();
    value["vanilla_proofs"] = json!({ variant.as_str(): proofs });
    value["registered_proof"] = serde_json::to_value(seal)?;
    let api: ApiSealCommitPhase1Output =
        serde_json::from_value(value.clone()).context("the api form of the C1 output")?;
    ensure!(
        api.registered_proof == seal,
        "the api form is tagged {:?}",
        api.registered_proof
    );
    Ok(value)
}

/// Writes a C1 output as `c1.json` and as Curio's `c1-curio.json`, and
/// fills in their names in `meta`.
pub fn write_c1<Tree: MerkleTreeTrait>(
    dir: &FixtureDir,
    meta: &mut Meta,
    c1: &SealCommitPhase1Output<Tree>,
) -> Result<()> {
    dir.write_json(C1, c1)?;
    let curio = CurioC1 {
        sector_num: meta.sector_id,
        phase1_out: serde_json::to_vec(&api_c1_json(meta.registered_seal_proof, c1)?)?,
        sector_size: meta.sector_size,
    };
    dir.write_json(C1_CURIO, &curio)?;
    meta.c1 = C1.to_string();
    meta.c1_curio = C1_CURIO.to_string();
    Ok(())
}

/// A fixture directory.
pub struct FixtureDir {
    root: PathBuf,
}

impl FixtureDir {
    pub fn new(root: &Path) -> Self {
        FixtureDir {
            root: root.to_path_buf(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    }

    pub fn write_json(&self, name: &str, value: &impl Serialize) -> Result<()> {
        self.write(name, &serde_json::to_vec(value)?)
    }

    pub fn write_json_pretty(&self, name: &str, value: &impl Serialize) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(value)?;
        text.push(b'\n');
        self.write(name, &text)
    }

    /// Writes each of `files` as `<prefix>-<i>.bin` and returns the names.
    pub fn write_numbered(&self, prefix: &str, files: &[Vec<u8>]) -> Result<Vec<String>> {
        let mut names = Vec::with_capacity(files.len());
        for (i, bytes) in files.iter().enumerate() {
            let name = format!("{prefix}-{i}.bin");
            self.write(&name, bytes)?;
            names.push(name);
        }
        Ok(names)
    }

    pub fn read(&self, name: &str) -> Result<Vec<u8>> {
        let path = self.path(name);
        fs::read(&path).with_context(|| format!("reading {}", path.display()))
    }

    pub fn read_all(&self, names: &[String]) -> Result<Vec<Vec<u8>>> {
        names.iter().map(|name| self.read(name)).collect()
    }

    pub fn read_json<T: DeserializeOwned>(&self, name: &str) -> Result<T> {
        let bytes = self.read(name)?;
        serde_json::from_slice(&bytes).with_context(|| format!("parsing {name}"))
    }
}

mod hex32 {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8; 32], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&hex::encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(deserializer)?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(&text, &mut bytes).map_err(D::Error::custom)?;
        Ok(bytes)
    }
}

mod base64_bytes {
    use base64::{engine::general_purpose::STANDARD, Engine};
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(D::Error::custom)
    }
}
