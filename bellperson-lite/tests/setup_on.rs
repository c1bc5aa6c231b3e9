//! Parameter generation through a lock (`generate_random_parameters_on`)
//! against the CPU tables: the same seed gives byte-identical parameters.
//! The CPU-backend lock runs everywhere; the CUDA one needs a device and
//! `--features supraseal-c2/cuda` (run with `--ignored` on the GPU machine).

mod common;

use bellperson_lite::{generate_random_parameters, generate_random_parameters_on, Parameters};
use supraseal_c2::{BackendChoice, GpuLock};

use common::{rng, Mixed, MulChain};

fn bytes(p: &Parameters) -> Vec<u8> {
    p.to_bytes().expect("encode")
}

fn assert_same_parameters(lock: &GpuLock) {
    // MulChain: a few hundred constraints; Mixed: variables without density
    // (identities dropped from a, b_g1, b_g2).
    let cpu = generate_random_parameters(MulChain { n: 300, x: None }, &mut rng(7)).unwrap();
    let on = generate_random_parameters_on(MulChain { n: 300, x: None }, &mut rng(7), Some(lock))
        .unwrap();
    assert!(bytes(&cpu) == bytes(&on), "MulChain parameters differ");
    let shape = Mixed { vars: 500, seed: 3 };
    let cpu = generate_random_parameters(shape.clone(), &mut rng(8)).unwrap();
    let on = generate_random_parameters_on(shape, &mut rng(8), Some(lock)).unwrap();
    assert!(bytes(&cpu) == bytes(&on), "Mixed parameters differ");
    // And another seed gives other parameters.
    let other =
        generate_random_parameters_on(Mixed { vars: 500, seed: 3 }, &mut rng(9), Some(lock))
            .unwrap();
    assert!(bytes(&other) != bytes(&on));
}

#[test]
fn cpu_lock_gives_the_parameters_of_the_tables() {
    assert_same_parameters(&GpuLock::cpu(0));
    let none = generate_random_parameters_on(MulChain { n: 20, x: None }, &mut rng(3), None);
    let cpu = generate_random_parameters(MulChain { n: 20, x: None }, &mut rng(3));
    assert!(bytes(&none.unwrap()) == bytes(&cpu.unwrap()));
}

#[test]
#[ignore = "needs a CUDA device and --features supraseal-c2/cuda (run with --ignored on the GPU machine)"]
fn cuda_lock_gives_the_parameters_of_the_tables() {
    let lock = GpuLock::with_backend(0, BackendChoice::Cuda).expect("a CUDA lock on device 0");
    assert_same_parameters(&lock);
}
