//! `cuzk`: the command-line face of the cuzk proving engine. It parses
//! arguments and calls the layers below; it holds no proving logic.

#![forbid(unsafe_code)]

mod bench;
mod checks;
mod client;
mod config;
mod filecoin;
mod gpu_util;
mod keys;
mod load_params;
mod logging;
mod machine;
mod progress;
mod report;
mod serve;
mod single;
mod sweep;
mod synth;
mod timeline;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// cuzk: a Groth16 proving engine for Filecoin-style proofs on BLS12-381.
#[derive(Parser)]
#[command(name = "cuzk", version = machine::VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Check every point of each parameters file loaded, even when its sidecar (FILE.cuzk-checked) says this version already did
    #[arg(long, global = true)]
    full_param_checks: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Generate random parameters for a workload or a Filecoin proof kind (a test setup, not a ceremony).
    Setup(single::SetupArgs),
    /// Prove every partition of one request and write the request proof.
    Prove(single::ProveArgs),
    /// Verify a request proof; exit 1 naming the first partition that fails.
    Verify(single::VerifyArgs),
    /// Fold several sectors' PoRep proofs into one SnarkPack aggregate (or check one).
    Aggregate(single::AggregateArgs),
    /// Run requests through the engine and report throughput, lock occupancy and GPU utilization.
    Bench(bench::BenchArgs),
    /// Run the bench over a grid of worker counts.
    Sweep(sweep::SweepArgs),
    /// Measure synthesis of one request, full against compiled.
    Synth(synth::SynthArgs),
    /// Load a parameters file and report each phase's time, GB/s and peak memory.
    LoadParams(load_params::LoadParamsArgs),
    /// Run the proving daemon (gRPC cuzk.v1.ProvingEngine, /metrics) until SIGTERM.
    Serve(serve::ServeArgs),
    /// Talk to a running daemon: submit, await, prove, aggregate, cancel, status, metrics.
    Client(client::ClientArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(match cli.command {
        Some(Command::Serve(_)) => logging::SERVE_FILTER,
        _ => logging::DEFAULT_FILTER,
    });
    keys::set_full_param_checks(cli.full_param_checks);
    let outcome = match cli.command {
        Some(Command::Setup(args)) => single::setup(&args),
        Some(Command::Prove(args)) => single::prove(&args),
        Some(Command::Verify(args)) => single::verify(&args),
        Some(Command::Aggregate(args)) => single::aggregate(&args),
        Some(Command::Synth(args)) => synth::synth(&args),
        Some(Command::LoadParams(args)) => load_params::load_params(&args),
        Some(Command::Serve(args)) => serve::serve(&args),
        Some(Command::Client(args)) => client::client(&args),
        Some(Command::Bench(args)) => {
            run_with_config(args.config.clone(), |c| bench::run_bench(&args, c))
        }
        Some(Command::Sweep(args)) => {
            run_with_config(args.config.clone(), |c| sweep::run_sweep(&args, c))
        }
        None => run_with_config(None, |c| bench::run_bench(&bench::BenchArgs::default(), c)),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cuzk: {}", cuzk_daemon::error_chain(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}

type CliResult = Result<(), Box<dyn std::error::Error>>;

fn run_with_config(
    path: Option<std::path::PathBuf>,
    run: impl FnOnce(&config::FileConfig) -> CliResult,
) -> CliResult {
    let config = match path {
        Some(p) => config::FileConfig::load(&p)?,
        None => config::FileConfig::default(),
    };
    run(&config)
}
