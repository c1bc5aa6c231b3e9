//! `cuzk synth`: synthesis of one request, full against compiled (witness
//! from the gadgets, and from the native witness program where the workload
//! has one), with the witness / matrix-product split and the memory held.
//! With `--kind`, a Filecoin request's partitions: the witness from the
//! gadgets and from the native program side by side, checked equal.

use std::time::Instant;

use clap::Args;
use cuzk_pipeline::{
    partition_seed, synthesize_compiled, synthesize_partition, CircuitSource, Partition,
    PipelineError, Witness, Workload,
};
use rayon::prelude::*;

use crate::filecoin::{InputArgs, KindArgs};
use crate::single::WorkloadArgs;
use crate::CliResult;

/// Arguments of `cuzk synth`.
#[derive(Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    kind: KindArgs,
    #[command(flatten)]
    input: InputArgs,
    /// Partitions in the request (synthesized in parallel, one per core).
    #[arg(long, default_value_t = 10)]
    partitions: usize,
    /// Times to repeat each measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

/// `cuzk synth`.
pub fn synth(args: &SynthArgs) -> CliResult {
    if args.kind.kind.is_some() {
        return synth_filecoin(args).map_err(|e| -> Box<dyn std::error::Error> { e });
    }
    let workload = Workload::new(&args.workload.workload, args.workload.size)?;
    crate::checks::positive("--partitions", args.partitions)?;
    crate::checks::positive("--repeat", args.repeat)?;
    let seeds: Vec<u64> = (0..args.partitions)
        .map(|j| partition_seed(0, args.partitions, j))
        .collect();
    let threads = rayon::current_num_threads();
    println!(
        "{workload}: {} partitions, {threads} threads",
        args.partitions
    );

    let started = Instant::now();
    let shape = bellperson_lite::CompiledShape::compile(workload.shape())?;
    println!(
        "compile once: {:.2} s; {} constraints, {} non-zero terms, {} coefficients, {:.1} MiB",
        started.elapsed().as_secs_f64(),
        shape.num_constraints(),
        shape.nnz(),
        shape.num_coeffs(),
        mib(shape.heap_bytes())
    );

    let one = |f: &dyn Fn(u64) -> Result<Partition, PipelineError>| {
        median_secs(args.repeat, || f(seeds[0]).map(drop))
    };
    let request = |f: &(dyn Fn(u64) -> Result<Partition, PipelineError> + Sync)| {
        median_secs(args.repeat, || {
            seeds.par_iter().try_for_each(|&s| f(s).map(drop))
        })
    };
    let full = |s| synthesize_partition(workload, s);
    let (full_one, full_req) = (one(&full)?, request(&full)?);
    println!("full:     one partition {full_one:.3} s, whole request {full_req:.3} s");
    let mut sources = vec![("gadgets", Witness::Gadgets)];
    if workload.has_native_witness() {
        sources.push(("native", Witness::Native));
    }
    let mut sample = None;
    for (name, witness) in sources {
        let compiled = |s| synthesize_compiled(&shape, workload, s, witness, None);
        let (compiled_one, compiled_req) = (one(&compiled)?, request(&compiled)?);
        let partition = compiled(seeds[0])?;
        let split = partition.compiled.unwrap_or_default();
        println!(
            "compiled, {name} witness: one partition {compiled_one:.3} s ({:.2}x; witness {:.3} s, matrix products {:.3} s), whole request {compiled_req:.3} s ({:.2}x)",
            full_one / compiled_one,
            split.witness_ns as f64 * 1e-9,
            split.matrix_ns as f64 * 1e-9,
            full_req / compiled_req
        );
        sample = Some(partition);
    }
    if let Some(sample) = sample {
        println!(
            "per-partition working set: {:.1} MiB",
            mib(sample.assignment.heap_bytes())
        );
    }
    Ok(())
}

/// `cuzk synth --kind K ...`: each of the request's partitions (up to
/// `--partitions`) on the compiled path, one at a time on every core, the
/// witness from the gadgets and from the native program where the kind has
/// one, the two compared value for value.
fn synth_filecoin(args: &SynthArgs) -> Result<(), crate::filecoin::AnyError> {
    crate::checks::positive("--repeat", args.repeat)?;
    let request = crate::filecoin::request(&args.kind, &args.input)?;
    let count = request.partitions().count().min(args.partitions);
    println!(
        "{}: {count} of {} partitions, {} threads",
        request.id(),
        request.partitions().count(),
        rayon::current_num_threads()
    );
    let started = Instant::now();
    let shape = request.id().compile()?;
    println!(
        "compile once: {:.2} s; {} constraints, {} aux variables, {} non-zero terms, {:.1} MiB",
        started.elapsed().as_secs_f64(),
        shape.num_constraints(),
        shape.num_aux(),
        shape.nnz(),
        mib(shape.heap_bytes())
    );
    let mut sources = vec![Witness::Gadgets];
    if request.witness_source(Witness::Native) != request.witness_source(Witness::Gadgets) {
        sources.push(Witness::Native);
    }
    for k in 0..count {
        let mut witnesses = Vec::new();
        for &from in &sources {
            let mut witness = None;
            let secs = median_secs(args.repeat, || -> Result<(), crate::filecoin::AnyError> {
                witness = Some(request.record_witness(&shape, k, from)?);
                Ok(())
            })?;
            let witness = witness.expect("recorded at least once");
            // The witness is copied before the clock starts: the engine
            // hands its witness over, it does not copy it.
            let mut cpu = Vec::new();
            let products = median_of(args.repeat, || {
                let input = witness.clone();
                let (started, cpu_before) = (Instant::now(), cpu_seconds());
                let assignment = shape.evaluate(input);
                let secs = started.elapsed().as_secs_f64();
                cpu.extend(
                    cpu_seconds()
                        .zip(cpu_before)
                        .map(|(after, before)| after - before),
                );
                drop(assignment);
                Ok::<_, crate::filecoin::AnyError>(secs)
            })?;
            cpu.sort_by(f64::total_cmp);
            let cores = match cpu.get(cpu.len() / 2) {
                Some(c) => format!(" ({c:.2} core-s)"),
                None => String::new(),
            };
            println!(
                "partition {k}, {} witness: {secs:.3} s, matrix products {products:.3} s{cores}",
                request.witness_source(from),
            );
            witnesses.push(witness);
        }
        if let [gadgets, native] = &witnesses[..] {
            match native.first_difference(gadgets) {
                None => println!("partition {k}: native witness equals the gadgets'"),
                Some(at) => {
                    return Err(format!("partition {k}: native witness differs at {at}").into())
                }
            }
        }
    }
    Ok(())
}

fn median_secs<E>(repeat: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    median_of(repeat, || {
        let started = Instant::now();
        f()?;
        Ok(started.elapsed().as_secs_f64())
    })
}

/// The median of `repeat` runs of `f`, each returning the seconds it measured.
fn median_of<E>(repeat: usize, mut f: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    let mut times = (0..repeat).map(|_| f()).collect::<Result<Vec<_>, E>>()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// The process's CPU time so far (user and system, every thread), from
/// `/proc/self/stat` in clock ticks of 10 ms; `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses: utime
    // and stime are the 12th and 13th of them.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}
