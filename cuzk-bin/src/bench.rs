//! `cuzk bench`: run proof requests through the engine and report
//! throughput, lock occupancy and measured GPU utilization, lock gaps and
//! stage medians. Every request proof is verified unless `--no-verify`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use cuzk_engine::{BackendChoice, EngineSettings};
use cuzk_engine::{
    Engine, EngineConfig, EngineError, JobHandle, MetricsSnapshot, ProofRequest, ProvingKey,
    RequestProof,
};
use cuzk_pipeline::{
    partition_seed, synthesize_source, synthesize_with, CircuitSource, Partition, PipelineError,
    ShapeCache, SynthesisMode, Workload,
};
use rayon::prelude::*;
use supraseal_c2::monotonic_ns;

use crate::checks::{positive, writable_output};
use crate::config::FileConfig;
use crate::gpu_util::Sampler;
use crate::logging::{secs, CLI};
use crate::machine::Machine;
use crate::progress;
use crate::report::BenchReport;

/// What `bench` and `sweep` both take: the work, the devices, the key.
#[derive(Args, Clone, Debug, Default)]
pub struct RunArgs {
    /// Proof requests to run [default: 1]
    #[arg(long)]
    pub requests: Option<usize>,
    /// Partitions per request [default: 10]
    #[arg(long)]
    pub partitions: Option<usize>,
    /// Circuit family: sha-chain or mul-chain [default: sha-chain]
    #[arg(long)]
    pub workload: Option<String>,
    /// Workload size: SHA-256 blocks or squarings [default: 4]
    #[arg(long)]
    pub size: Option<usize>,
    /// Device ordinals, comma-separated [default: 0]
    #[arg(long, value_delimiter = ',')]
    pub devices: Option<Vec<u32>>,
    /// Synthesized partitions that may wait for a GPU worker [default: 2 × GPU workers]
    #[arg(long)]
    pub queue_depth: Option<usize>,
    /// Synthesis: full, compiled (native witness where the workload has one), compiled-gadgets (witness from the gadgets), or checked[:N] (compiled, every N-th partition compared with full) [default: compiled]
    #[arg(long)]
    pub synthesis: Option<String>,
    /// Nice value (0-19) of the synthesis threads, so that synthesis running ahead yields the cores to the GPU workers [default: 10]
    #[arg(long)]
    pub synthesis_nice: Option<i32>,
    /// Host memory the partitions in flight are kept within: a size (96GiB, 100 GB) or none; a partition's synthesis waits until it fits [default: 85 % of the machine's]
    #[arg(long)]
    pub host_memory_limit: Option<String>,
    /// Device memory each device's proving keys are planned within: a size (24GiB) or none; a key that does not fit is streamed from host memory [default: what the device has free]
    #[arg(long)]
    pub device_memory_limit: Option<String>,
    /// Prover backend [default: auto]
    #[arg(long, value_parser = ["cpu", "cuda", "auto"])]
    pub backend: Option<String>,
    /// Parameters file (generated once when not given)
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Synthesize one request's partitions once and reuse them, to measure the GPU side alone
    #[arg(long)]
    pub cached_synthesis: bool,
    /// Do not verify the request proofs (they are batch-verified by default); the report then says so
    #[arg(long)]
    pub no_verify: bool,
    /// Verification is the default; kept so that older command lines run
    #[arg(long, hide = true, conflicts_with = "no_verify")]
    pub verify: bool,
    #[command(flatten)]
    pub fil: crate::filecoin::KindArgs,
    #[command(flatten)]
    pub input: crate::filecoin::InputArgs,
}

/// `cuzk bench`.
#[derive(Args, Clone, Debug, Default)]
pub struct BenchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Partition (synthesis) workers [default: one per core]
    #[arg(long)]
    pub partition_workers: Option<usize>,
    /// GPU workers per device [default: 2]
    #[arg(long)]
    pub gpu_workers_per_device: Option<usize>,
    /// Write the figures and every lock hold and synthesis span as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an SVG timeline of lock holds and synthesis per worker
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// TOML file with defaults for these flags
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Why a bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A device cannot run the backend asked for.
    #[error("device {device}")]
    Device {
        /// The device.
        device: u32,
        /// Why.
        #[source]
        source: supraseal_c2::Error,
    },
    /// A count that must be positive, an output that cannot be written.
    #[error(transparent)]
    Input(#[from] crate::checks::InputError),
    /// The workload name or size is bad.
    #[error(transparent)]
    Workload(PipelineError),
    /// Synthesizing the cached partitions failed.
    #[error("synthesizing partition {partition} for --cached-synthesis failed")]
    Synthesis {
        /// Which partition.
        partition: usize,
        /// Why.
        #[source]
        source: PipelineError,
    },
    /// The flags and config file describe an engine that cannot work.
    #[error("invalid engine configuration")]
    Config(#[from] cuzk_engine::ConfigError),
    /// The engine could not be built.
    #[error("cannot start the engine")]
    Engine(#[source] EngineError),
    /// A request failed.
    #[error("request {request} failed")]
    Request {
        /// Its number.
        request: u64,
        /// Why.
        #[source]
        source: EngineError,
    },
    /// The Filecoin request could not be built.
    #[error("bad Filecoin request")]
    Filecoin(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An output file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The run as resolved from flags, then the config file, then defaults.
#[derive(Clone, Debug)]
pub struct Plan {
    /// What each partition proves.
    pub workload: Workload,
    /// A Filecoin request (`--kind`): every request of the run proves it
    /// again, instead of `workload`.
    pub filecoin: Option<Arc<cuzk_filecoin::FilecoinRequest>>,
    /// The parameter directory of a Filecoin run.
    pub param_dir: PathBuf,
    /// Requests per run.
    pub requests: usize,
    /// Partitions per request.
    pub partitions: usize,
    /// A parameters file to load, or `None` to generate.
    pub params: Option<PathBuf>,
    /// Reuse one request's synthesized partitions.
    pub cached_synthesis: bool,
    /// The engine's shape (worker counts filled in by the caller).
    pub engine: EngineConfig,
    /// Compiled shapes, shared by every engine the plan runs, so that the
    /// compilation (once per workload) is paid in the warm-up.
    pub shapes: Arc<ShapeCache>,
}

impl Plan {
    /// Resolves `run` and the engine flags of `more` (the worker counts
    /// `cuzk bench` takes) over `file`.
    pub fn resolve(
        run: &RunArgs,
        more: EngineSettings,
        file: &FileConfig,
    ) -> Result<Self, BenchError> {
        let bench = &file.bench;
        let flags = EngineSettings {
            devices: run.devices.clone(),
            queue_depth: run.queue_depth,
            verify: match (run.verify, run.no_verify) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            backend: run.backend.clone(),
            synthesis: run.synthesis.clone(),
            synthesis_nice: run.synthesis_nice,
            host_memory_limit: run.host_memory_limit.clone(),
            device_memory_limit: run.device_memory_limit.clone(),
            ..more
        };
        let settings = flags.over(&file.engine);
        let backend = settings
            .backend()
            .map_err(BenchError::Config)?
            .unwrap_or(BackendChoice::Auto);
        let engine = settings
            .resolve(EngineConfig {
                devices: default_devices(backend),
                backend,
                ..EngineConfig::default()
            })
            .map_err(BenchError::Config)?;
        // Refuse an impossible backend now, before minutes of setup.
        for &device in &engine.devices {
            supraseal_c2::GpuLock::with_backend(device, backend)
                .map_err(|source| BenchError::Device { device, source })?;
        }
        let name = run
            .workload
            .as_deref()
            .or(bench.workload.as_deref())
            .unwrap_or("sha-chain");
        let size = run.size.or(bench.size).unwrap_or(4);
        let param_dir = cuzk_filecoin::params::parameter_dir(run.fil.param_dir.as_deref());
        let filecoin = match run.fil.kind {
            None => None,
            Some(_) => {
                cuzk_filecoin::params::point_filecoin_proofs_at(&param_dir)
                    .map_err(|e| BenchError::Filecoin(Box::new(e)))?;
                let request =
                    crate::filecoin::request(&run.fil, &run.input).map_err(BenchError::Filecoin)?;
                Some(Arc::new(request))
            }
        };
        let partitions = match &filecoin {
            Some(request) => request.partitions().count(),
            None => run.partitions.or(bench.partitions).unwrap_or(10),
        };
        let plan = Self {
            workload: Workload::new(name, size).map_err(BenchError::Workload)?,
            filecoin,
            param_dir,
            requests: run.requests.or(bench.requests).unwrap_or(1),
            partitions,
            params: run.params.clone().or(bench.params.clone()),
            cached_synthesis: run.cached_synthesis || bench.cached_synthesis.unwrap_or(false),
            engine,
            shapes: Arc::default(),
        };
        positive("--requests", plan.requests)?;
        positive("--partitions", plan.partitions)?;
        Ok(plan)
    }

    /// Where the witness of what the run proves comes from in `mode`.
    pub fn witness_source(&self, mode: SynthesisMode) -> &'static str {
        match &self.filecoin {
            Some(request) if mode != SynthesisMode::Full => {
                let from = match mode {
                    SynthesisMode::CompiledGadgets => cuzk_pipeline::Witness::Gadgets,
                    _ => cuzk_pipeline::Witness::Native,
                };
                cuzk_pipeline::CircuitSource::witness_source(&**request, from)
            }
            _ => mode.witness_source(self.workload),
        }
    }

    /// What the run proves: the workload, or the Filecoin circuit.
    pub fn label(&self) -> String {
        match &self.filecoin {
            Some(request) => request.id().to_string(),
            None => self.workload.to_string(),
        }
    }

    /// Loads the parameters file, or generates parameters (slow, once).
    pub fn proving_key(&self) -> Result<Arc<ProvingKey>, Box<dyn std::error::Error>> {
        if let Some(request) = &self.filecoin {
            let params = crate::keys::load_filecoin(request.id(), &self.param_dir)?;
            return Ok(Arc::new(ProvingKey::new(&params)?));
        }
        let key = match &self.params {
            Some(path) => {
                let loaded = crate::keys::load(path)?;
                let pvk = bellperson_lite::prepare_verifying_key(&loaded.params.vk);
                ProvingKey::from_parts(loaded.srs, pvk)
            }
            None => {
                let started = Instant::now();
                // On the first device (when it is a CUDA one).
                let device = self.engine.devices.first().copied().unwrap_or(0);
                let (params, on) = crate::keys::generate(
                    self.workload,
                    device,
                    self.engine.backend,
                    None,
                    &self.shapes,
                )?;
                let workload = self.workload.to_string();
                tracing::info!(target: CLI, workload, on, seconds = secs(started), "parameters generated (no --params)");
                ProvingKey::new(&params)?
            }
        };
        Ok(Arc::new(key))
    }

    /// Compiles the workload's shape (in every synthesis mode but `full`),
    /// unmeasured: an engine compiles a shape once per workload, so the
    /// figures are of the steady state, as for the key upload.
    pub fn compile_shape(&self) -> Result<(), BenchError> {
        if self.engine.synthesis == SynthesisMode::Full {
            return Ok(());
        }
        let started = Instant::now();
        let spinner = progress::spinner(format!("compiling {}'s shape", self.label()));
        let shape = match &self.filecoin {
            Some(request) => {
                let source: &dyn CircuitSource = &**request;
                self.shapes
                    .get_or_compile(&source.circuit_key(), || source.compile())
            }
            None => self.shapes.get(self.workload),
        }
        .map_err(BenchError::Workload)?;
        drop(spinner);
        tracing::info!(
            target: CLI,
            circuit = self.label(),
            seconds = secs(started),
            constraints = shape.num_constraints(),
            mib = (shape.heap_bytes() >> 20) as u64,
            "warm-up: shape compiled (once per circuit, not measured)"
        );
        Ok(())
    }

    /// With `--cached-synthesis`, request 0's partitions, synthesized once.
    pub fn cached_partitions(&self) -> Result<Option<Vec<Arc<Partition>>>, BenchError> {
        if !self.cached_synthesis {
            return Ok(None);
        }
        tracing::info!(
            target: CLI,
            partitions = self.partitions,
            "--cached-synthesis: synthesizing the partitions once"
        );
        let bar = progress::bar(self.partitions as u64, "partitions", "synthesized (cached)");
        let partitions = (0..self.partitions)
            .into_par_iter()
            .map(|j| {
                let seed = partition_seed(0, self.partitions, j);
                let mode = self.engine.synthesis;
                match &self.filecoin {
                    Some(request) => synthesize_source(mode, &self.shapes, &**request, j, None),
                    None => synthesize_with(mode, &self.shapes, self.workload, seed, None),
                }
                .map(Arc::new)
                .map_err(|source| BenchError::Synthesis {
                    partition: j,
                    source,
                })
                .inspect(|_| bar.inc(1))
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(partitions))
    }
}

/// On a CUDA device the first proof uploads the proving key to the device:
/// prove one partition per device first, unmeasured, so that the figures are
/// of the steady state. A no-op on the CPU backend.
pub fn warm_up(
    plan: &Plan,
    key: &Arc<ProvingKey>,
    cached: Option<&[Arc<Partition>]>,
) -> Result<(), BenchError> {
    let mut one = plan.clone();
    (one.requests, one.partitions) = (1, 1);
    for &device in &plan.engine.devices {
        let lock = supraseal_c2::GpuLock::with_backend(device, plan.engine.backend)
            .map_err(|source| BenchError::Device { device, source })?;
        if lock.backend() == supraseal_c2::Backend::Cpu {
            continue;
        }
        let config = EngineConfig {
            devices: vec![device],
            partition_workers: 1,
            gpu_workers_per_device: 1,
            ..plan.engine.clone()
        };
        tracing::info!(target: CLI, device, "warm-up: uploading the proving key to the device");
        let started = Instant::now();
        measure(&one, config, key, cached.map(|c| &c[..1]))?;
        tracing::info!(
            target: CLI,
            device,
            seconds = secs(started),
            "warm-up: one partition proven (not measured)"
        );
    }
    Ok(())
}

fn describe_backends(backends: &[(u32, supraseal_c2::Backend)]) -> String {
    let names: Vec<String> = backends.iter().map(|(_, b)| b.to_string()).collect();
    match names.as_slice() {
        [one] => one.clone(),
        [first, rest @ ..] if rest.iter().all(|n| n == first) => {
            format!("{first} x{}", names.len())
        }
        _ => names.join("+"),
    }
}

/// Every CUDA device for CUDA (or auto with a device), else the one CPU
/// "device", 0.
fn default_devices(backend: BackendChoice) -> Vec<u32> {
    let gpus = supraseal_c2::cuda_device_count();
    match backend {
        BackendChoice::Cpu => vec![0],
        _ if gpus > 0 => (0..gpus as u32).collect(),
        _ => vec![0],
    }
}

/// What one run measured.
pub struct Measurement {
    /// The engine's configuration.
    pub config: EngineConfig,
    /// From the first submission to the last request proof.
    pub wall_ns: u64,
    /// Each request's submission-to-completion time.
    pub latencies_ns: Vec<u64>,
    /// The engine's records and figures.
    pub metrics: MetricsSnapshot,
    /// The backend of each device, e.g. `cuda` or `cuda x2`.
    pub backend: String,
    /// Whether every request proof was self-verified.
    pub verified: bool,
    /// Per device (in `config.devices` order), the mean GPU utilization
    /// NVML measured during the run (0 to 1; `None` without NVML or on the
    /// CPU backend).
    pub gpu_utilization: Vec<Option<f64>>,
    /// What the host pool did during the run (after the warm-up).
    pub host_pool: HostPoolFigures,
    /// The host-memory budget and the waits it caused.
    pub host_memory: cuzk_engine::host::Budget,
}

/// The host pool's work during a measured run: fresh allocations there
/// (page-locking, which holds the CUDA driver) should be none once the
/// engine is prepared.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct HostPoolFigures {
    /// Vectors that got a fresh allocation.
    pub allocated: u64,
    /// Vectors that got a kept block.
    pub reused: u64,
    /// Blocks freed (the pool was full).
    pub freed: u64,
    /// The pool's limit at the end.
    pub limit_bytes: u64,
}

impl HostPoolFigures {
    fn between(before: supraseal_c2::HostPoolStats, after: supraseal_c2::HostPoolStats) -> Self {
        Self {
            allocated: after.allocated - before.allocated,
            reused: after.reused - before.reused,
            freed: after.freed - before.freed,
            limit_bytes: after.limit_bytes,
        }
    }
}

/// Runs `plan` once on a fresh engine of shape `config`.
pub fn measure(
    plan: &Plan,
    config: EngineConfig,
    key: &Arc<ProvingKey>,
    cached: Option<&[Arc<Partition>]>,
) -> Result<Measurement, BenchError> {
    let engine = Engine::with_shapes(config.clone(), Arc::clone(&plan.shapes))
        .map_err(BenchError::Engine)?;
    // Unmeasured, as a long-running prover does it once at start.
    if cached.is_none() && plan.filecoin.is_none() {
        engine.prepare(plan.workload).map_err(BenchError::Engine)?;
    }
    let backends = engine.backends();
    let sampler = Sampler::start(
        backends
            .iter()
            .map(|&(device, backend)| (backend == supraseal_c2::Backend::Cuda).then_some(device))
            .collect(),
    );
    let pool_before = supraseal_c2::host_pool_stats();
    let started_ns = monotonic_ns();
    let handles: Vec<(u64, JobHandle)> = (0..plan.requests as u64)
        .map(|r| {
            let handle = match cached {
                // Cached partitions are request 0's; every request reuses them.
                Some(parts) => engine.submit_synthesized(request(plan, key, 0), parts.to_vec()),
                None => engine.submit(request(plan, key, r)),
            };
            (r, handle)
        })
        .collect();
    // A whole NI-PoRep request is aggregated and checked as filecoin-proofs
    // returns it, in the measured time; a warm-up's partial one is not.
    let finish = plan
        .filecoin
        .as_deref()
        .filter(|r| r.aggregated() && r.partitions().count() == plan.partitions);
    let proofs = wait_with_progress(&engine, handles, plan.partitions, finish);
    let gpu_utilization = sampler.finish();
    let proofs = proofs?;
    Ok(Measurement {
        config,
        wall_ns: monotonic_ns() - started_ns,
        latencies_ns: proofs
            .iter()
            .map(|p| p.completed_ns - p.submitted_ns)
            .collect(),
        metrics: engine.metrics(),
        backend: describe_backends(&backends),
        verified: proofs.iter().all(|p| p.verified),
        gpu_utilization,
        host_pool: HostPoolFigures::between(pool_before, supraseal_c2::host_pool_stats()),
        host_memory: engine.host_memory(),
    })
}

fn request(plan: &Plan, key: &Arc<ProvingKey>, r: u64) -> ProofRequest {
    match &plan.filecoin {
        Some(request) => ProofRequest {
            // The warm-up proves only the first partition(s).
            partitions: plan.partitions,
            ..ProofRequest::from_source(request.clone(), Arc::clone(key))
        },
        None => ProofRequest::new(plan.workload, Arc::clone(key), r, plan.partitions),
    }
}

/// Waits for every request, in order, with a bar of partitions proven and
/// the count of requests returned (drawn only when stderr is a terminal;
/// otherwise a status line as each request returns, so that a redirected
/// run of minutes a request shows its progress in its log), finishing each
/// proof with `finish` when given (NI-PoRep's aggregation).
fn wait_with_progress(
    engine: &Engine,
    handles: Vec<(u64, JobHandle)>,
    partitions_per_request: usize,
    finish: Option<&cuzk_filecoin::FilecoinRequest>,
) -> Result<Vec<RequestProof>, BenchError> {
    let requests = handles.len();
    let bar = progress::bar(
        (requests * partitions_per_request) as u64,
        "partitions",
        format!("0/{requests} requests"),
    );
    let (done, finished) = (AtomicUsize::new(0), AtomicBool::new(false));
    let started = Instant::now();
    std::thread::scope(|scope| {
        if !bar.is_hidden() {
            let (bar, done, finished) = (&bar, &done, &finished);
            scope.spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    bar.set_position(engine.partitions_proven() as u64);
                    let done = done.load(Ordering::Relaxed);
                    bar.set_message(format!("{done}/{requests} requests"));
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        }
        let outcome = handles
            .into_iter()
            .map(|(request, h)| {
                let proof = h
                    .wait()
                    .map_err(|source| BenchError::Request { request, source })?;
                if let Some(finisher) = finish {
                    finisher
                        .finish(proof.to_bytes())
                        .map_err(|e| BenchError::Filecoin(Box::new(e)))?;
                }
                let returned = done.fetch_add(1, Ordering::Relaxed) + 1;
                if bar.is_hidden() {
                    tracing::info!(
                        target: CLI,
                        partitions_proven = engine.partitions_proven(),
                        seconds = secs(started),
                        "request {returned}/{requests} proven"
                    );
                }
                Ok(proof)
            })
            .collect();
        finished.store(true, Ordering::Relaxed);
        outcome
    })
}

/// `cuzk bench`: resolves the plan, runs it once, prints the report and
/// writes the JSON and timeline files asked for.
pub fn run_bench(args: &BenchArgs, config: &FileConfig) -> Result<(), Box<dyn std::error::Error>> {
    let workers = EngineSettings {
        partition_workers: args.partition_workers,
        gpu_workers_per_device: args.gpu_workers_per_device,
        ..EngineSettings::default()
    };
    // Resolving validates the engine: what cannot work is refused before
    // minutes of setup.
    let plan = Plan::resolve(&args.run, workers, config)?;
    writable_output(args.json.as_ref())?;
    writable_output(args.timeline.as_ref())?;
    let key = plan.proving_key()?;
    plan.compile_shape()?;
    let cached = plan.cached_partitions()?;
    warm_up(&plan, &key, cached.as_deref())?;
    let measurement = measure(&plan, plan.engine.clone(), &key, cached.as_deref())?;
    let report = BenchReport::new(&plan, &measurement, &Machine::this());
    print!("{}", report.summary());
    if let Some(path) = &args.json {
        write_file(path, &serde_json::to_string_pretty(&report)?)?;
    }
    if let Some(path) = &args.timeline {
        let title = format!("cuzk bench: {}", report.title());
        write_file(path, crate::timeline::render(&measurement.metrics, &title))?;
    }
    Ok(())
}

/// Writes `text` to `path`, naming the file on failure.
pub fn write_file(path: &std::path::Path, text: impl AsRef<[u8]>) -> Result<(), BenchError> {
    std::fs::write(path, text).map_err(|source| BenchError::Write {
        path: path.to_owned(),
        source,
    })
}
