//! The CUDA backend against the CPU backend: for the same partition and the
//! same r and s the proofs are identical, and they verify, for both
//! workloads at tiny, S and M sizes, with the key resident in device memory
//! and streamed from host memory; a prove after a failed one works; and
//! where the time goes at M.
//!
//! Every test needs a CUDA device and a build with
//! `--features supraseal-c2/cuda`; run them with `--ignored` on the GPU
//! machine (scripts/gpu-run.sh does).

use std::sync::Arc;

use bellperson_lite::{prepare_verifying_key, Parameters, PreparedVerifyingKey};
use blstrs::Scalar;
use cuzk_pipeline::{
    gpu_prove_with, partition_seed, setup, synthesize_partition, verify_request, PipelineError,
    Workload,
};
use ff::Field;
use rand::rngs::StdRng;
use rand::SeedableRng;
use supraseal_c2::{
    Backend, BackendChoice, CudaErrorKind, Error, GpuLock, PhaseTimings, Residency, Srs,
};

/// A workload's parameters, made once per test.
struct Keyed {
    workload: Workload,
    params: Parameters,
    pvk: PreparedVerifyingKey,
}

fn keyed(name: &str, size: usize) -> Keyed {
    let workload = Workload::new(name, size).expect("workload");
    let params = setup(workload).expect("setup");
    let pvk = prepare_verifying_key(&params.vk);
    Keyed {
        workload,
        params,
        pvk,
    }
}

/// Device 0's lock (the registry's one), keys set up resident unless
/// `stream`.
fn cuda_lock(stream: bool) -> Arc<GpuLock> {
    let lock = GpuLock::with_backend(0, BackendChoice::Cuda).expect("a CUDA lock on device 0");
    assert_eq!(lock.backend(), Backend::Cuda);
    lock.set_stream_srs(stream).expect("setting");
    lock
}

fn rng() -> StdRng {
    let seed = std::env::var("CUZK_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    eprintln!("seed {seed} (CUZK_TEST_SEED={seed} replays it)");
    StdRng::seed_from_u64(seed)
}

/// Proves every partition of request 5 on the CPU and on device 0 once per
/// `(stream, residency)` of `cuda` (a fresh `Srs` each, set up streamed or
/// not as `stream` says), with the same r and s; checks the proofs are
/// identical, the residency is the one expected, and the request verifies.
/// Returns the timings: [cpu, cuda_0, ...] per partition.
fn compare(k: &Keyed, partitions: usize, cuda: &[(bool, Residency)]) -> Vec<Vec<PhaseTimings>> {
    let mut rng = rng();
    let cpu = GpuLock::cpu(0);
    let cpu_srs = k.params.srs().expect("srs");
    let srs: Vec<Srs> = cuda.iter().map(|_| k.params.srs().expect("srs")).collect();
    let mut proofs = Vec::new();
    let mut timings = Vec::new();
    for j in 0..partitions {
        let seed = partition_seed(5, partitions, j);
        let partition = synthesize_partition(k.workload, seed).expect("synthesis");
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let expected = gpu_prove_with(&partition, &cpu_srs, &cpu, r, s).expect("CPU prove");
        assert_eq!(expected.timings.backend, Backend::Cpu);
        let mut row = vec![expected.timings];
        for (&(stream, residency), srs) in cuda.iter().zip(&srs) {
            // The setting counts when a key is first used on the device.
            let lock = cuda_lock(stream);
            let got = gpu_prove_with(&partition, srs, &lock, r, s).expect("CUDA prove");
            assert_eq!(got.proof, expected.proof, "{}: partition {j}", k.workload);
            assert_eq!(got.timings.backend, Backend::Cuda);
            assert_eq!(got.timings.residency, residency);
            row.push(got.timings);
        }
        proofs.push(expected.proof);
        timings.push(row);
    }
    verify_request(&k.pvk, k.workload, 5, &proofs).expect("the request verifies");
    timings
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn tiny_sha_chain_cuda_proofs_equal_cpu_proofs() {
    compare(
        &keyed("sha-chain", 1),
        2,
        &[(false, Residency::Device), (true, Residency::Streamed)],
    );
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn tiny_mul_chain_cuda_proofs_equal_cpu_proofs() {
    compare(
        &keyed("mul-chain", 1000),
        2,
        &[(false, Residency::Device), (true, Residency::Streamed)],
    );
}

#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn s_sha_chain_cuda_proofs_equal_cpu_proofs() {
    // Streamed at S: two windows per point set.
    compare(
        &keyed("sha-chain", 4),
        2,
        &[(false, Residency::Device), (true, Residency::Streamed)],
    );
}

/// M: one partition on the CPU, on CUDA with the key resident (twice: the
/// first sets it up), and streamed (eight windows per point set); prints
/// where the time went.
#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn m_sha_chain_cuda_proofs_equal_cpu_proofs_and_timings() {
    let k = keyed("sha-chain", 38);
    let timings = compare(
        &k,
        1,
        &[(false, Residency::Device), (true, Residency::Streamed)],
    );
    // The same partition again, resident: the key is set up once.
    let resident = cuda_lock(false);
    let srs = k.params.srs().expect("srs");
    let partition = synthesize_partition(k.workload, partition_seed(5, 1, 0)).expect("synthesis");
    let mut rng = rng();
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let first = gpu_prove_with(&partition, &srs, &resident, r, s).expect("first");
    let warm = gpu_prove_with(&partition, &srs, &resident, r, s).expect("warm");
    assert_eq!(first.proof, warm.proof);
    assert!(first.timings.srs_upload_ns > 0 && warm.timings.srs_upload_ns == 0);

    println!("sha-chain 38 blocks (M), one partition; ms");
    println!("| run | backend | residency | preamble | kernel region | of which SRS set-up | epilogue | prove |");
    println!("|---|---|---|---:|---:|---:|---:|---:|");
    let rows = [
        ("CPU", timings[0][0]),
        ("CUDA, first use", first.timings),
        ("CUDA, warm", warm.timings),
        ("CUDA streamed, first use", timings[0][2]),
    ];
    for (name, t) in rows {
        let ms = |ns: u64| ns as f64 * 1e-6;
        println!(
            "| {name} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            t.backend,
            t.residency,
            ms(t.preamble_ns),
            ms(t.kernel_ns),
            ms(t.srs_upload_ns),
            ms(t.epilogue_ns),
            ms(t.preamble_ns + t.lock_wait_ns + t.kernel_ns + t.epilogue_ns)
        );
    }
    // A warm streamed prove, for the streaming cost without the pinning.
    let streamed = cuda_lock(true);
    let streamed_srs = k.params.srs().expect("srs");
    gpu_prove_with(&partition, &streamed_srs, &streamed, r, s).expect("streamed set-up");
    streamed.set_stream_srs(false).expect("setting");
    let t = gpu_prove_with(&partition, &streamed_srs, &streamed, r, s)
        .expect("streamed warm")
        .timings;
    println!(
        "| CUDA streamed, warm | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        t.backend,
        t.residency,
        t.preamble_ns as f64 * 1e-6,
        t.kernel_ns as f64 * 1e-6,
        t.srs_upload_ns as f64 * 1e-6,
        t.epilogue_ns as f64 * 1e-6,
        (t.preamble_ns + t.lock_wait_ns + t.kernel_ns + t.epilogue_ns) as f64 * 1e-6
    );
}

/// A key that cannot fit (a 1 MiB limit) fails typed, a failed CUDA call
/// (an absurd allocation) fails typed naming the call, the lock is free
/// after each, and the next prove on the same lock and device works.
#[test]
#[ignore = "needs a CUDA device (run with --ignored on the GPU machine)"]
fn prove_works_after_errors_on_the_same_device() {
    let k = keyed("sha-chain", 1);
    let lock = cuda_lock(false);
    let partition = synthesize_partition(k.workload, partition_seed(5, 1, 0)).expect("synthesis");
    let (r, s) = (Scalar::from(3u64), Scalar::from(4u64));

    lock.set_device_memory_limit(Some(1 << 20))
        .expect("setting");
    let srs = k.params.srs().expect("srs");
    match gpu_prove_with(&partition, &srs, &lock, r, s) {
        Err(PipelineError::Prover(bellperson_lite::ProverError::Native(Error::DeviceMemory {
            device,
            available,
            ..
        }))) => assert_eq!((device, available), (0, 1 << 20)),
        other => panic!("expected Error::DeviceMemory, got {other:?}"),
    }
    drop(lock.try_lock().expect("the lock was released"));

    match lock.probe_device_memory(1 << 60) {
        Err(Error::Cuda {
            call, detail, kind, ..
        }) => {
            assert!(call.contains("cudaMalloc"), "{call}: {detail}");
            assert_eq!(kind, CudaErrorKind::OutOfMemory);
        }
        other => panic!("expected Error::Cuda, got {other:?}"),
    }
    drop(lock.try_lock().expect("the lock was released"));
    lock.probe_device_memory(1 << 20)
        .expect("a small allocation");

    lock.set_device_memory_limit(None).expect("setting");
    let got = gpu_prove_with(&partition, &srs, &lock, r, s).expect("prove after the errors");
    let expected = gpu_prove_with(&partition, &srs, &GpuLock::cpu(0), r, s).expect("CPU prove");
    assert_eq!(got.proof, expected.proof);
    assert_eq!(got.timings.residency, Residency::Device);
    verify_request(&k.pvk, k.workload, 5, &[got.proof]).expect("verifies");
}
