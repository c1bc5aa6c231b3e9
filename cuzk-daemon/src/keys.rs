//! The proving keys the daemon holds, one per [`Circuit`], loaded on first
//! use (or by `PreloadSRS`) and freed by `EvictSRS`.
//!
//! A job holds a [`KeyLease`] from the moment its key is loaded until its
//! outcome is known; `evict` refuses while any lease is held. Leases are
//! taken under the registry's mutex and only on the key that is still in
//! the registry, so an eviction never races a job into using a key it has
//! just dropped. The key's memory goes with its last reference: at once
//! after an eviction, or when the engine lets go of a cancelled job's
//! partition that was mid-step.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bellperson_lite::{Parameters, ParamsError};
use cuzk_engine::{Engine, EngineError, ProvingKey};
use cuzk_pipeline::PipelineError;
use parking_lot::Mutex;
use tokio::sync::OnceCell;
use tonic::Code;

use crate::kinds::Circuit;

/// Bytes of one G1 and one G2 point as the prover holds them (affine).
const G1_BYTES: u64 = 96;
const G2_BYTES: u64 = 192;

/// Why a key could not be loaded or evicted.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// No parameters file, and generating is off (or not possible).
    #[error("no parameters for {circuit}: {} does not exist", path.display())]
    Missing {
        /// The circuit.
        circuit: Circuit,
        /// Where the file was looked for.
        path: PathBuf,
    },
    /// The parameters file could not be read.
    #[error("cannot read the parameters of {circuit}")]
    Read {
        /// The circuit.
        circuit: Circuit,
        /// Why (the error names the file).
        #[source]
        source: ParamsError,
    },
    /// The file holds parameters of another circuit.
    #[error("{} is not a key for {circuit}", path.display())]
    Mismatch {
        /// The circuit.
        circuit: Circuit,
        /// The file.
        path: PathBuf,
        /// What disagrees.
        #[source]
        source: PipelineError,
    },
    /// Generating fresh parameters failed.
    #[error("cannot generate parameters for {circuit}")]
    Generate {
        /// The circuit.
        circuit: Circuit,
        /// Why.
        #[source]
        source: PipelineError,
    },
    /// Generated parameters could not be written (the error names the
    /// file).
    #[error("cannot write the generated parameters of {circuit}")]
    Write {
        /// The circuit.
        circuit: Circuit,
        /// Why.
        #[source]
        source: ParamsError,
    },
    /// The parameters directory could not be made, or the written file
    /// not moved into place.
    #[error("cannot save the generated parameters of {circuit} as {}", path.display())]
    Save {
        /// The circuit.
        circuit: Circuit,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The prover could not take the key, or the engine could not prepare.
    #[error("cannot load the key of {circuit} into the prover")]
    Engine {
        /// The circuit.
        circuit: Circuit,
        /// Why.
        #[source]
        source: EngineError,
    },
    /// Jobs still hold the key.
    #[error("{circuit} is in use by {jobs} job(s); cancel them or wait")]
    InUse {
        /// The circuit.
        circuit: Circuit,
        /// Jobs holding it.
        jobs: usize,
    },
    /// The daemon is stopping: its engine is gone.
    #[error("cannot load the key of {circuit}: the daemon is stopping")]
    Stopped {
        /// The circuit.
        circuit: Circuit,
    },
    /// The loading thread panicked.
    #[error("loading the key of {circuit} panicked")]
    Panicked {
        /// The circuit.
        circuit: Circuit,
    },
}

impl KeyError {
    /// The gRPC code the caller gets.
    pub fn code(&self) -> Code {
        match self {
            KeyError::InUse { .. } | KeyError::Missing { .. } | KeyError::Mismatch { .. } => {
                Code::FailedPrecondition
            }
            _ => Code::Internal,
        }
    }
}

/// One loaded key with what status reports about it.
pub struct LoadedKey {
    circuit: Circuit,
    key: Arc<ProvingKey>,
    size_bytes: u64,
    load_time: Duration,
    /// Jobs holding a lease; increased only under the registry's mutex.
    leases: AtomicUsize,
}

/// A job's hold on a key; dropping it lets the key be evicted.
pub struct KeyLease {
    entry: Arc<LoadedKey>,
}

impl KeyLease {
    /// The key, to hand to the engine.
    pub fn key(&self) -> Arc<ProvingKey> {
        Arc::clone(&self.entry.key)
    }
}

impl Drop for KeyLease {
    fn drop(&mut self) {
        self.entry.leases.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What `GetStatus` lists per loaded key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyStatus {
    /// The circuit id.
    pub circuit: String,
    /// Bytes of points the prover holds.
    pub size_bytes: u64,
    /// Jobs holding it.
    pub leases: usize,
}

/// How a `preload` went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preloaded {
    /// The key was loaded before this call.
    pub already_loaded: bool,
    /// How long loading took (when this call loaded it), or took then.
    pub load_time: Duration,
    /// Bytes of points the prover holds.
    pub size_bytes: u64,
}

type Slot = Arc<OnceCell<Arc<LoadedKey>>>;

/// The keys by circuit.
pub struct KeyRegistry {
    params_dir: PathBuf,
    generate: bool,
    engine: Weak<Engine>,
    slots: Mutex<HashMap<Circuit, Slot>>,
}

impl KeyRegistry {
    /// A registry reading `params_dir` (and writing generated parameters
    /// there when `generate`), preparing `engine` for each key it loads.
    pub fn new(params_dir: PathBuf, generate: bool, engine: Weak<Engine>) -> Self {
        Self {
            params_dir,
            generate,
            engine,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// A lease on the key of `circuit`, loading it first if needed (on the
    /// blocking pool; concurrent callers wait for the one load). The
    /// duration is the load's when this call did it.
    pub async fn lease(&self, circuit: Circuit) -> Result<(KeyLease, Option<Duration>), KeyError> {
        loop {
            let slot = Arc::clone(self.slots.lock().entry(circuit).or_default());
            let (entry, loaded_now) = self.load_into(&slot, circuit).await?;
            let slots = self.slots.lock();
            if slots.get(&circuit).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                entry.leases.fetch_add(1, Ordering::SeqCst);
                let load_time = loaded_now.then_some(entry.load_time);
                return Ok((KeyLease { entry }, load_time));
            }
            // Evicted between loading and leasing: load it again.
        }
    }

    /// Loads the key of `circuit` unless it is loaded.
    pub async fn preload(&self, circuit: Circuit) -> Result<Preloaded, KeyError> {
        let (lease, loaded_now) = self.lease(circuit).await?;
        Ok(Preloaded {
            already_loaded: loaded_now.is_none(),
            load_time: lease.entry.load_time,
            size_bytes: lease.entry.size_bytes,
        })
    }

    /// Drops the registry's key of `circuit`: `Ok(Some(bytes))` when one was
    /// loaded, `Ok(None)` when none was, [`KeyError::InUse`] while a job
    /// holds it.
    pub fn evict(&self, circuit: Circuit) -> Result<Option<u64>, KeyError> {
        let mut slots = self.slots.lock();
        let Some(entry) = slots.get(&circuit).and_then(|slot| slot.get()) else {
            return Ok(None);
        };
        let jobs = entry.leases.load(Ordering::SeqCst);
        if jobs > 0 {
            return Err(KeyError::InUse { circuit, jobs });
        }
        let size = entry.size_bytes;
        slots.remove(&circuit);
        Ok(Some(size))
    }

    /// Every loaded key, by circuit id.
    pub fn loaded(&self) -> Vec<KeyStatus> {
        let slots = self.slots.lock();
        let mut keys: Vec<KeyStatus> = slots
            .values()
            .filter_map(|slot| slot.get())
            .map(|entry| KeyStatus {
                circuit: entry.circuit.to_string(),
                size_bytes: entry.size_bytes,
                leases: entry.leases.load(Ordering::SeqCst),
            })
            .collect();
        keys.sort_by(|a, b| a.circuit.cmp(&b.circuit));
        keys
    }

    async fn load_into(
        &self,
        slot: &Slot,
        circuit: Circuit,
    ) -> Result<(Arc<LoadedKey>, bool), KeyError> {
        let mut loaded_now = false;
        let entry = slot
            .get_or_try_init(|| async {
                loaded_now = true;
                let (dir, generate) = (self.params_dir.clone(), self.generate);
                let engine = self.engine.upgrade().ok_or(KeyError::Stopped { circuit })?;
                tokio::task::spawn_blocking(move || load(circuit, &dir, generate, &engine))
                    .await
                    .map_err(|_| KeyError::Panicked { circuit })?
                    .map(Arc::new)
            })
            .await?;
        Ok((Arc::clone(entry), loaded_now))
    }
}

/// Reads (or generates and saves) the parameters of `circuit`, loads them
/// into the prover and prepares the engine for the circuit.
fn load(
    circuit: Circuit,
    params_dir: &Path,
    generate: bool,
    engine: &Engine,
) -> Result<LoadedKey, KeyError> {
    let started = Instant::now();
    let path = params_dir.join(circuit.params_file_name());
    let params = if path.exists() {
        let params =
            Parameters::read_file(&path).map_err(|source| KeyError::Read { circuit, source })?;
        circuit
            .check(&params)
            .map_err(|source| KeyError::Mismatch {
                circuit,
                path: path.clone(),
                source,
            })?;
        params
    } else if generate && circuit.can_generate() {
        let params = circuit
            .generate()
            .map_err(|source| KeyError::Generate { circuit, source })?;
        save(circuit, &params, &path)?;
        params
    } else {
        return Err(KeyError::Missing { circuit, path });
    };
    let size_bytes = srs_bytes(&params);
    let engine_error = |source| KeyError::Engine { circuit, source };
    let key = ProvingKey::new(&params).map_err(engine_error)?;
    drop(params);
    circuit.prepare(engine).map_err(engine_error)?;
    let load_time = started.elapsed();
    tracing::info!(%circuit, size_bytes, load_ms = load_time.as_millis() as u64, "key loaded");
    Ok(LoadedKey {
        circuit,
        key: Arc::new(key),
        size_bytes,
        load_time,
        leases: AtomicUsize::new(0),
    })
}

/// Writes `params` to `path` through a temporary file and a rename, so a
/// crash never leaves half a key where the next start would read it.
fn save(circuit: Circuit, params: &Parameters, path: &Path) -> Result<(), KeyError> {
    let io_error = |source| KeyError::Save {
        circuit,
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error)?;
    let partial = path.with_extension(format!("partial.{}", std::process::id()));
    params
        .write_file(&partial)
        .map_err(|source| KeyError::Write { circuit, source })?;
    std::fs::rename(&partial, path).map_err(io_error)
}

/// Bytes of the proving key's points as the prover holds them.
fn srs_bytes(params: &Parameters) -> u64 {
    let g1 = params.h.len() + params.l.len() + params.a.len() + params.b_g1.len();
    g1 as u64 * G1_BYTES + params.b_g2.len() as u64 * G2_BYTES
}
