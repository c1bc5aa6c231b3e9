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

use bellperson_lite::{LoadOptions, Parameters, ParamsError};
use cuzk_engine::{Engine, EngineError, ProvingKey};
use cuzk_filecoin::FilecoinError;
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
    /// A Filecoin circuit's parameters could not be found or read (the
    /// error names the file: "missing parameter file <path>").
    #[error("cannot load the parameters of {circuit}")]
    Filecoin {
        /// The circuit.
        circuit: Circuit,
        /// Why.
        #[source]
        source: FilecoinError,
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
            KeyError::Filecoin {
                source: FilecoinError::MissingParams { .. },
                ..
            } => Code::FailedPrecondition,
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

/// Where the registry reads parameters from.
#[derive(Clone, Debug)]
struct Dirs {
    /// Synthetic circuits' keys (and generated ones).
    params: PathBuf,
    /// Filecoin circuits' `v28-<id>.params` files.
    filecoin: PathBuf,
    /// How files are checked as they are read.
    options: LoadOptions,
}

/// The keys by circuit.
pub struct KeyRegistry {
    dirs: Dirs,
    generate: bool,
    engine: Weak<Engine>,
    slots: Mutex<HashMap<Circuit, Slot>>,
    /// Parameter files' paths found so far (a Filecoin circuit's name
    /// takes building its public parameters).
    paths: Mutex<HashMap<Circuit, PathBuf>>,
}

impl KeyRegistry {
    /// A registry reading synthetic keys from `params_dir` (and writing
    /// generated ones there when `generate`) and Filecoin parameters from
    /// `fil_param_dir`, preparing `engine` for each key it loads. Every
    /// point of a file is checked on its first load; later loads of the
    /// same bytes skip the subgroup checks (a sidecar records them) unless
    /// `full_param_checks`.
    pub fn new(
        params_dir: PathBuf,
        fil_param_dir: PathBuf,
        generate: bool,
        full_param_checks: bool,
        engine: Weak<Engine>,
    ) -> Self {
        let options = LoadOptions {
            full_checks: full_param_checks,
            record: true,
        };
        Self {
            dirs: Dirs {
                params: params_dir,
                filecoin: fil_param_dir,
                options,
            },
            generate,
            engine,
            slots: Mutex::new(HashMap::new()),
            paths: Mutex::new(HashMap::new()),
        }
    }

    /// Checks that a job of `circuit` can get its key without generating
    /// one: it is loaded, or its parameters file exists. Only Filecoin
    /// circuits are checked (a synthetic key is generated when missing, or
    /// its job fails with the reason). The file's name is found once per
    /// circuit, on the blocking pool (it takes building the circuit's public
    /// parameters).
    pub async fn check_available(&self, circuit: Circuit) -> Result<(), KeyError> {
        let Circuit::Filecoin(id) = circuit else {
            return Ok(());
        };
        if self.is_loaded(circuit) {
            return Ok(());
        }
        let known = self.paths.lock().get(&circuit).cloned();
        let path = match known {
            Some(path) => path,
            None => {
                let dirs = self.dirs.clone();
                let path = tokio::task::spawn_blocking(move || {
                    circuit.params_path(&dirs.params, &dirs.filecoin)
                })
                .await
                .map_err(|_| KeyError::Panicked { circuit })?
                .map_err(|source| KeyError::Filecoin { circuit, source })?;
                self.paths.lock().insert(circuit, path.clone());
                path
            }
        };
        if path.exists() {
            Ok(())
        } else {
            Err(KeyError::Filecoin {
                circuit,
                source: FilecoinError::MissingParams { path, circuit: id },
            })
        }
    }

    fn is_loaded(&self, circuit: Circuit) -> bool {
        let slots = self.slots.lock();
        slots.get(&circuit).is_some_and(|slot| slot.get().is_some())
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
                let (dirs, generate) = (self.dirs.clone(), self.generate);
                let engine = self.engine.upgrade().ok_or(KeyError::Stopped { circuit })?;
                tokio::task::spawn_blocking(move || load(circuit, &dirs, generate, &engine))
                    .await
                    .map_err(|_| KeyError::Panicked { circuit })?
                    .map(Arc::new)
            })
            .await?;
        Ok((Arc::clone(entry), loaded_now))
    }
}

/// Reads (or, for a synthetic circuit, generates and saves) the parameters
/// of `circuit`, loads them into the prover and prepares the engine for the
/// circuit.
fn load(
    circuit: Circuit,
    dirs: &Dirs,
    generate: bool,
    engine: &Engine,
) -> Result<LoadedKey, KeyError> {
    let started = Instant::now();
    let params = match circuit {
        Circuit::Filecoin(id) => {
            let (params, report) =
                cuzk_filecoin::params::load_with(id, &dirs.filecoin, dirs.options)
                    .map_err(|source| KeyError::Filecoin { circuit, source })?;
            tracing::info!(%circuit, %report, "parameters read");
            params
        }
        Circuit::Synthetic(_) => synthetic_params(circuit, dirs, generate)?,
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

/// A synthetic circuit's parameters: read from `params_dir` and checked,
/// or generated and saved there.
fn synthetic_params(circuit: Circuit, dirs: &Dirs, generate: bool) -> Result<Parameters, KeyError> {
    let params_dir = &dirs.params;
    let path = circuit
        .params_path(params_dir, params_dir)
        .expect("a synthetic circuit's path is a plain name");
    let params = if path.exists() {
        let (params, report) = Parameters::load(&path, dirs.options)
            .map_err(|source| KeyError::Read { circuit, source })?;
        tracing::info!(%circuit, %report, "parameters read");
        circuit
            .check(&params)
            .map_err(|source| KeyError::Mismatch {
                circuit,
                path: path.clone(),
                source,
            })?;
        params
    } else if let Some(generated) = generate.then(|| circuit.generate()).flatten() {
        let params = generated.map_err(|source| KeyError::Generate { circuit, source })?;
        save(circuit, &params, &path)?;
        params
    } else {
        return Err(KeyError::Missing { circuit, path });
    };
    Ok(params)
}

/// Writes `params` to `path` whole, so a crash never leaves half a key
/// where the next start would read it.
fn save(circuit: Circuit, params: &Parameters, path: &Path) -> Result<(), KeyError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| KeyError::Save {
        circuit,
        path: path.to_owned(),
        source,
    })?;
    params
        .write_file(path)
        .map_err(|source| KeyError::Write { circuit, source })
}

/// Bytes of the proving key's points as the prover holds them.
fn srs_bytes(params: &Parameters) -> u64 {
    let g1 = params.h.len() + params.l.len() + params.a.len() + params.b_g1.len();
    g1 as u64 * G1_BYTES + params.b_g2.len() as u64 * G2_BYTES
}
