//! A soak: many proof requests through one engine, every request proof
//! verified, the process's resident memory (VmRSS) read after each request
//! comes back. Prints the median RSS over the first and the last tenth of
//! the requests (a hundred each of 1,000) and a verdict; exits non-zero if
//! a proof did not verify or the memory grew more than `--max-growth-mib`.
//!
//! ```sh
//! cargo run --release -p cuzk-engine --example soak -- \
//!     --backend cpu --workload mul-chain --size 1000 --partitions 1 --requests 1000
//! ```
//!
//! `--params FILE` loads the parameters instead of generating them;
//! `--samples FILE` writes every sample (`request rss_bytes` a line).
//! `scripts/soak.sh` runs it.

use std::collections::VecDeque;
use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use bellperson_lite::Parameters;
use cuzk_engine::{Engine, EngineConfig, JobHandle, ProofRequest, ProvingKey};
use cuzk_pipeline::{setup, Workload};
use supraseal_c2::BackendChoice;

struct Args {
    workload: String,
    size: usize,
    partitions: usize,
    requests: usize,
    in_flight: usize,
    backend: BackendChoice,
    params: Option<String>,
    samples: Option<String>,
    max_growth_mib: f64,
}

fn parse_args() -> Result<Args, Box<dyn Error>> {
    let mut args = Args {
        workload: "mul-chain".into(),
        size: 1000,
        partitions: 1,
        requests: 1000,
        in_flight: 4,
        backend: BackendChoice::Cpu,
        params: None,
        samples: None,
        max_growth_mib: 16.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--workload" => args.workload = value()?,
            "--size" => args.size = value()?.parse()?,
            "--partitions" => args.partitions = value()?.parse()?,
            "--requests" => args.requests = value()?.parse()?,
            "--in-flight" => args.in_flight = value()?.parse()?,
            "--backend" => args.backend = value()?.parse()?,
            "--params" => args.params = Some(value()?),
            "--samples" => args.samples = Some(value()?),
            "--max-growth-mib" => args.max_growth_mib = value()?.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    if args.requests < 20 || args.partitions == 0 || args.in_flight == 0 {
        return Err("need --requests >= 20, --partitions and --in-flight >= 1".into());
    }
    Ok(args)
}

/// The process's resident memory, in bytes, from `/proc/self/status`.
fn resident_bytes() -> Result<u64, Box<dyn Error>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .ok_or("no VmRSS in /proc/self/status")?;
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kib * 1024)
}

fn median_mib(samples: &[u64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[sorted.len() / 2] as f64 / (1 << 20) as f64
}

/// Runs every request, at most `in_flight` at once; returns the RSS after
/// each request (in order) and how many verified.
fn run(
    args: &Args,
    workload: Workload,
    key: Arc<ProvingKey>,
) -> Result<(Vec<u64>, usize), Box<dyn Error>> {
    let engine = Engine::new(EngineConfig {
        backend: args.backend,
        verify: true,
        ..EngineConfig::default()
    })?;
    engine.prepare(workload)?;
    let (mut pending, mut rss, mut verified) = (VecDeque::new(), Vec::new(), 0);
    let mut wait_oldest = |pending: &mut VecDeque<JobHandle>| -> Result<(), Box<dyn Error>> {
        let handle = pending.pop_front().expect("a request in flight");
        verified += usize::from(handle.wait()?.verified);
        rss.push(resident_bytes()?);
        Ok(())
    };
    for r in 0..args.requests as u64 {
        let request = ProofRequest::new(workload, Arc::clone(&key), r, args.partitions);
        pending.push_back(engine.submit(request));
        if pending.len() == args.in_flight {
            wait_oldest(&mut pending)?;
        }
    }
    while !pending.is_empty() {
        wait_oldest(&mut pending)?;
    }
    Ok((rss, verified))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let workload = Workload::new(&args.workload, args.size)?;
    let started = Instant::now();
    let params = match &args.params {
        Some(path) => Parameters::read_file(path)?,
        None => setup(workload)?,
    };
    let key = Arc::new(ProvingKey::new(&params)?);
    drop(params);
    let setup_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (rss, verified) = run(&args, workload, key)?;
    let wall_s = started.elapsed().as_secs_f64();
    println!(
        "soak: {} {} x {} partitions, {:?} backend: {} requests in {wall_s:.1} s \
         (setup {setup_s:.1} s), {verified} verified",
        args.workload, args.size, args.partitions, args.backend, args.requests
    );
    if let Some(path) = &args.samples {
        let lines: String = rss
            .iter()
            .enumerate()
            .map(|(r, b)| format!("{r} {b}\n"))
            .collect();
        std::fs::write(path, lines)?;
    }
    verdict(&args, &rss, verified)
}

/// Prints the first and last tenth's median RSS and the verdict; an error
/// if a proof did not verify or memory grew past `--max-growth-mib`.
fn verdict(args: &Args, rss: &[u64], verified: usize) -> Result<(), Box<dyn Error>> {
    let window = args.requests / 10;
    let (first, last) = (
        median_mib(&rss[..window]),
        median_mib(&rss[rss.len() - window..]),
    );
    let peak = median_mib(&[*rss.iter().max().expect("samples")]);
    let growth = last - first;
    println!(
        "resident memory (median VmRSS): first {window} requests {first:.1} MiB, \
         last {window} {last:.1} MiB, growth {growth:+.1} MiB, peak {peak:.1} MiB"
    );
    let mut faults = Vec::new();
    if verified != args.requests {
        faults.push(format!(
            "{} request proofs did not verify",
            args.requests - verified
        ));
    }
    if growth > args.max_growth_mib {
        faults.push(format!("memory grew more than {} MiB", args.max_growth_mib));
    }
    if faults.is_empty() {
        println!("verdict: PASS: every request proof verified, resident memory flat");
        return Ok(());
    }
    let faults = faults.join("; ");
    println!("verdict: FAIL: {faults}");
    Err(faults.into())
}
