//! `fil-fixtures`: seals a small Filecoin sector offline with filecoin-proofs
//! 19.1 and writes the inputs a Groth16 prover receives for it (PoRep C1,
//! WinningPoSt and WindowPoSt vanilla proofs, SnapDeals partition proofs)
//! with what a verifier needs, then checks them; `cc` writes a
//! committed-capacity sector's C1 output at any size (32 GiB and 64 GiB
//! included) without sealing it; `c2-bench` times
//! filecoin-proofs' own PoRep C2 on one. See README.md.

#![forbid(unsafe_code)]

mod c2bench;
mod cc;
mod cc_post;
mod check;
mod draws;
mod fixture;
mod kinds;
mod loadparams;
mod make;
mod post;
mod seal;
mod snap;
mod sparse;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::c2bench::BenchOptions;
use crate::cc::CcOptions;
use crate::kinds::{SealVariant, SectorSize};
use crate::make::MakeOptions;

#[derive(Parser)]
#[command(
    version,
    about = "Makes Filecoin proof inputs from a sector sealed offline"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Seal a sector, write its fixture directory and check it.
    Make(MakeArgs),
    /// Write a committed-capacity sector's PoRep C1 output without sealing
    /// it (any size, 32 GiB and 64 GiB included), and check it.
    Cc(FixtureArgs),
    /// Verify the vanilla proofs of a fixture directory against its meta.json.
    Check(CheckArgs),
    /// Time filecoin-proofs' own seal_commit_phase2 (PoRep C2) on one C1
    /// output, N requests in a row, each proof checked with verify_seal.
    C2Bench(C2BenchArgs),
    /// Time supraseal-c2's own loading of a `.params` file (what
    /// bellperson's SuprasealParameters::new does before a C2), with the
    /// process's peak resident memory. Needs the `supraseal` feature.
    LoadParams(LoadParamsArgs),
}

#[derive(Args)]
struct LoadParamsArgs {
    /// The parameter file (bellperson's format, as `cuzk setup` writes it).
    #[arg(long)]
    params: PathBuf,
    /// Write the record (seconds, bytes, peak RSS) here as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct C2BenchArgs {
    /// The C1 output: filecoin-proofs' form (c1.json), filecoin-proofs-api's
    /// JSON, or Curio's wrapper (c1-curio.json).
    #[arg(long)]
    c1: PathBuf,
    /// The fixture's meta.json (ids, sector size); default: meta.json next
    /// to the C1 file, if there is one.
    #[arg(long)]
    meta: Option<PathBuf>,
    /// The parameter directory (v28-<id>.params and .vk under
    /// filecoin-proofs' names, as `cuzk setup` writes them).
    #[arg(long)]
    param_dir: PathBuf,
    /// seal_commit_phase2 calls, one after another; the first also loads
    /// the parameters.
    #[arg(long, default_value_t = 1)]
    requests: usize,
    /// Write the run's record here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Default: meta.json's.
    #[arg(long)]
    miner_id: Option<u64>,
    /// Default: the Curio wrapper's SectorNum, else meta.json's.
    #[arg(long)]
    sector_id: Option<u64>,
    /// Default: the C1 output's registered proof (api and Curio forms), else
    /// meta.json's.
    #[arg(long, value_enum)]
    sector_size: Option<SectorSize>,
    /// The git revision to record (default: $CUZK_GIT_REV).
    #[arg(long)]
    rev: Option<String>,
}

/// What a fixture is made of: the sector size, the seed every random value
/// derives from, the miner, and where it goes.
#[derive(Args)]
struct FixtureArgs {
    #[arg(long, value_enum)]
    sector_size: SectorSize,
    /// Every random value (data or unread labels, ticket, seed, sector id,
    /// randomness) derives from it.
    #[arg(long)]
    seed: u64,
    /// The fixture directory; replaced if it exists.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1000)]
    miner_id: u64,
    #[command(flatten)]
    work: WorkArgs,
}

#[derive(Args)]
struct MakeArgs {
    #[command(flatten)]
    fixture: FixtureArgs,
    /// Keep the sealed sector's files (replica, caches) in the work directory.
    #[arg(long)]
    keep_sector: bool,
    /// Seal with the Synthetic PoRep proof of the size (registered proofs
    /// 10-14): Commit 1 picks its challenges from a synthetic set made
    /// after PreCommit 2.
    #[arg(long)]
    synthetic: bool,
    /// Seal with the non-interactive PoRep proof of the size (registered
    /// proofs 15-19): Commit 1 answers challenges drawn from the replica
    /// alone, in 13 partitions at the test sizes.
    #[arg(long, conflicts_with = "synthetic")]
    non_interactive: bool,
}

#[derive(Args)]
struct CheckArgs {
    /// The fixture directory.
    #[arg(long)]
    dir: PathBuf,
    #[command(flatten)]
    work: WorkArgs,
}

#[derive(Args)]
struct WorkArgs {
    /// Scratch space: the SDR parent cache, an (empty) parameter cache and
    /// the sector being sealed. Defaults to $TMPDIR/fil-fixtures.
    #[arg(long)]
    work: Option<PathBuf>,
}

impl WorkArgs {
    fn dir(&self) -> PathBuf {
        self.work
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("fil-fixtures"))
    }
}

/// Points filecoin-proofs' caches into the work directory. Its settings are
/// read once, on first use, so this runs before any proof code.
fn use_work_dir(work: &Path) -> Result<()> {
    for (var, sub) in [
        ("FIL_PROOFS_PARENT_CACHE", "parent-cache"),
        ("FIL_PROOFS_PARAMETER_CACHE", "parameters"),
    ] {
        let dir = work.join(sub);
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        std::env::set_var(var, &dir);
    }
    Ok(())
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    if let Err(err) = run(Cli::parse()) {
        // One line: the error and its causes.
        eprintln!("fil-fixtures: error: {err:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Make(MakeArgs {
            fixture: args,
            keep_sector,
            synthetic,
            non_interactive,
        }) => {
            let variant = match (synthetic, non_interactive) {
                (true, _) => SealVariant::Synthetic,
                (_, true) => SealVariant::NonInteractive,
                _ => SealVariant::Interactive,
            };
            let work = args.work.dir();
            use_work_dir(&work)?;
            let opts = MakeOptions {
                size: args.sector_size,
                seed: args.seed,
                miner_id: args.miner_id,
                sector_dir: work.join(format!("sector-{}-{}", args.sector_size.bytes(), args.seed)),
                out: args.out,
                keep_sector,
                variant,
            };
            make::make(&opts)?;
            check::check_fixture(&opts.out).context("self-check of the written fixture")?;
            eprintln!("wrote and checked {}", opts.out.display());
        }
        Command::Cc(args) => {
            use_work_dir(&args.work.dir())?;
            let opts = CcOptions {
                size: args.sector_size,
                seed: args.seed,
                miner_id: args.miner_id,
                out: args.out,
            };
            cc::make_cc(&opts)?;
            make::timed("check", || check::check_fixture(&opts.out))
                .context("self-check of the written fixture")?;
            eprintln!("wrote and checked {}", opts.out.display());
        }
        Command::Check(args) => {
            use_work_dir(&args.work.dir())?;
            check::check_fixture(&args.dir)?;
            eprintln!("{} checks out", args.dir.display());
        }
        Command::C2Bench(args) => {
            // Before anything touches filecoin-proofs' settings.
            let param_dir = c2bench::use_param_dir(&args.param_dir)?;
            let opts = BenchOptions {
                c1: args.c1,
                meta: args.meta,
                requests: args.requests,
                json: args.json,
                miner_id: args.miner_id,
                sector_id: args.sector_id,
                sector_size: args.sector_size,
                rev: args.rev,
            };
            c2bench::run(&opts, &param_dir)?;
        }
        Command::LoadParams(args) => loadparams::run(&args.params, args.json.as_deref())?,
    }
    Ok(())
}
