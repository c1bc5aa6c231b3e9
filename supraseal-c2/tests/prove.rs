//! prove: a toy Groth16 circuit proved and checked with pairings, shape
//! errors naming their quantity, native errors typed, injected faults, the
//! preamble's steps as `cuzk::native` tracing events.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use blstrs::{pairing, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{Curve, Group};
use rand::rngs::StdRng;
use rand::Rng;
use supraseal_c2::{
    prove, Assignment, CudaErrorKind, Density, Error, FaultPlan, GpuLock, RawProof, Srs, SrsParts,
    NATIVE_TRACE_TARGET,
};
use tracing::field::{self, Visit};
use tracing::Level;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::Registry;

/// A sparse linear combination: (variable, coefficient).
type Lc = Vec<(usize, Scalar)>;

/// Variables: inputs first (0 is ONE), then aux.
struct R1cs {
    inputs: usize,
    aux: usize,
    constraints: Vec<(Lc, Lc, Lc)>,
}

/// x^3 + x + 5 = out. Inputs: ONE, out. Aux: x, x^2, x^3.
fn cubic() -> R1cs {
    let one = Scalar::ONE;
    let mut constraints = vec![
        (vec![(2, one)], vec![(2, one)], vec![(3, one)]),
        (vec![(3, one)], vec![(2, one)], vec![(4, one)]),
        (
            vec![(4, one), (2, one), (0, Scalar::from(5))],
            vec![(0, one)],
            vec![(1, one)],
        ),
    ];
    // As bellperson: input_i * 0 = 0 keeps the IC polynomials independent.
    for i in 0..2 {
        constraints.push((vec![(i, one)], vec![], vec![]));
    }
    R1cs {
        inputs: 2,
        aux: 3,
        constraints,
    }
}

fn witness(x: Scalar) -> Vec<Scalar> {
    vec![
        Scalar::ONE,
        x * x * x + x + Scalar::from(5),
        x,
        x * x,
        x * x * x,
    ]
}

/// m random bits b_k (b_k * b_k = b_k) and a chain s_(k+1) = s_k (s_k + b_k)
/// from a random s_0, with out = s_m: about half the aux scalars are 0 or 1,
/// the rest full width. Returns the R1CS and its full assignment.
fn chain(m: usize, rng: &mut StdRng) -> (R1cs, Vec<Scalar>) {
    let one = Scalar::ONE;
    let (bit, link) = (|k: usize| 2 + k, |k: usize| 2 + m + k);
    let mut constraints = Vec::new();
    for k in 0..m {
        let b = vec![(bit(k), one)];
        constraints.push((b.clone(), b.clone(), b));
    }
    for k in 0..m {
        let (s, b) = ((link(k), one), (bit(k), one));
        constraints.push((vec![s], vec![s, b], vec![(link(k + 1), one)]));
    }
    constraints.push((vec![(link(m), one)], vec![(0, one)], vec![(1, one)]));
    for i in 0..2 {
        constraints.push((vec![(i, one)], vec![], vec![]));
    }
    let mut z = vec![one, Scalar::ZERO];
    z.extend((0..m).map(|_| Scalar::from(rng.gen_range(0..2u64))));
    z.push(Scalar::random(&mut *rng));
    for k in 0..m {
        let s = z[link(k)];
        z.push(s * (s + z[bit(k)]));
    }
    z[1] = z[link(m)];
    let aux = z.len() - 2;
    (
        R1cs {
            inputs: 2,
            aux,
            constraints,
        },
        z,
    )
}

fn dot(lc: &Lc, z: &[Scalar]) -> Scalar {
    lc.iter().map(|(i, c)| z[*i] * c).sum()
}

/// Proving key, verifying key and densities of one setup.
struct Setup {
    g1: [G1Affine; 3], // alpha, beta, delta
    g2: [G2Affine; 3], // beta, delta, gamma
    h: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    b_g2: Vec<G2Affine>,
    ic: Vec<G1Affine>,
    a_aux: Density,
    b_input: Density,
    b_aux: Density,
}

impl Setup {
    fn parts(&self) -> SrsParts<'_> {
        SrsParts {
            alpha_g1: &self.g1[0],
            beta_g1: &self.g1[1],
            beta_g2: &self.g2[0],
            delta_g1: &self.g1[2],
            delta_g2: &self.g2[1],
            h: &self.h,
            l: &self.l,
            a: &self.a,
            b_g1: &self.b_g1,
            b_g2: &self.b_g2,
        }
    }

    fn verify(&self, inputs: &[Scalar], proof: &RawProof) -> bool {
        let ic: G1Projective = self.ic.iter().zip(inputs).map(|(p, x)| p * x).sum();
        let lhs = pairing(&proof.a, &proof.b);
        let rhs = pairing(&self.g1[0], &self.g2[0])
            + pairing(&ic.to_affine(), &self.g2[2])
            + pairing(&proof.c, &self.g2[1]);
        lhs == rhs
    }
}

/// L_i(tau) over the domain of size n: w^i (tau^n - 1) / (n (tau - w^i)).
fn lagrange_at(tau: Scalar, n: usize) -> Vec<Scalar> {
    let w = (n.trailing_zeros()..Scalar::S).fold(Scalar::ROOT_OF_UNITY, |w, _| w.square());
    let z = tau.pow_vartime([n as u64]) - Scalar::ONE;
    let n_inv = Scalar::from(n as u64).invert().unwrap();
    (0..n as u64)
        .map(|i| {
            let wi = w.pow_vartime([i]);
            wi * z * n_inv * (tau - wi).invert().unwrap()
        })
        .collect()
}

fn setup(r1cs: &R1cs, rng: &mut StdRng) -> Setup {
    let [tau, alpha, beta, gamma, delta] = [(); 5].map(|_| Scalar::random(&mut *rng));
    let n = r1cs.constraints.len().next_power_of_two();
    let lagrange = lagrange_at(tau, n);
    let vars = r1cs.inputs + r1cs.aux;
    let (mut u, mut v, mut w) = (
        vec![Scalar::ZERO; vars],
        vec![Scalar::ZERO; vars],
        vec![Scalar::ZERO; vars],
    );
    let (mut in_a, mut in_b) = (vec![false; vars], vec![false; vars]);
    for (i, (a, b, c)) in r1cs.constraints.iter().enumerate() {
        a.iter()
            .for_each(|(j, k)| (u[*j] += lagrange[i] * k, in_a[*j] = true).1);
        b.iter()
            .for_each(|(j, k)| (v[*j] += lagrange[i] * k, in_b[*j] = true).1);
        c.iter().for_each(|(j, k)| w[*j] += lagrange[i] * k);
    }
    let g1 = |s: Scalar| (G1Projective::generator() * s).to_affine();
    let g2 = |s: Scalar| (G2Projective::generator() * s).to_affine();
    let ic_or_l =
        |j: usize, by: Scalar| g1((beta * u[j] + alpha * v[j] + w[j]) * by.invert().unwrap());
    let aux = r1cs.inputs..vars;
    let z_tau = tau.pow_vartime([n as u64]) - Scalar::ONE;
    let density = |bits: &[bool]| {
        bits.iter()
            .fold(Density::new(), |mut d, &b| (d.push(b), d).1)
    };
    Setup {
        g1: [g1(alpha), g1(beta), g1(delta)],
        g2: [g2(beta), g2(delta), g2(gamma)],
        h: (0..n as u64 - 1)
            .map(|i| g1(tau.pow_vartime([i]) * z_tau * delta.invert().unwrap()))
            .collect(),
        l: aux.clone().map(|j| ic_or_l(j, delta)).collect(),
        a: (0..vars)
            .filter(|&j| j < r1cs.inputs || in_a[j])
            .map(|j| g1(u[j]))
            .collect(),
        b_g1: (0..vars).filter(|&j| in_b[j]).map(|j| g1(v[j])).collect(),
        b_g2: (0..vars).filter(|&j| in_b[j]).map(|j| g2(v[j])).collect(),
        ic: (0..r1cs.inputs).map(|j| ic_or_l(j, gamma)).collect(),
        a_aux: density(&in_a[aux.clone()]),
        b_input: density(&in_b[..r1cs.inputs]),
        b_aux: density(&in_b[aux]),
    }
}

/// A, B, C evaluations of a full assignment z.
fn evaluations(r1cs: &R1cs, z: &[Scalar]) -> [Vec<Scalar>; 3] {
    let each = |pick: fn(&(Lc, Lc, Lc)) -> &Lc| {
        r1cs.constraints
            .iter()
            .map(|row| dot(pick(row), z))
            .collect()
    };
    [each(|r| &r.0), each(|r| &r.1), each(|r| &r.2)]
}

fn assignment<'a>(setup: &'a Setup, z: &'a [Scalar], abc: &'a [Vec<Scalar>; 3]) -> Assignment<'a> {
    Assignment {
        a: &abc[0],
        b: &abc[1],
        c: &abc[2],
        input: &z[..2],
        aux: &z[2..],
        a_aux_density: &setup.a_aux,
        b_input_density: &setup.b_input,
        b_aux_density: &setup.b_aux,
    }
}

#[test]
fn toy_batch_proofs_verify() {
    let mut rng = common::rng("toy_batch_proofs_verify");
    let r1cs = cubic();
    let setup = setup(&r1cs, &mut rng);
    let srs = Srs::new(setup.parts()).unwrap();
    assert_eq!(srs.domain_size(), 8);
    let zs = [witness(Scalar::from(3)), witness(Scalar::random(&mut rng))];
    let abcs = zs.clone().map(|z| evaluations(&r1cs, &z));
    let batch: Vec<_> = (0..2)
        .map(|i| assignment(&setup, &zs[i], &abcs[i]))
        .collect();
    let [r, s] = [(); 2].map(|_| vec![Scalar::random(&mut rng), Scalar::random(&mut rng)]);
    let lock = GpuLock::cpu(0);
    let out = prove(&lock, &srs, &batch, &r, &s).unwrap();
    assert_eq!(out.proofs.len(), 2);
    for (z, proof) in zs.iter().zip(&out.proofs) {
        assert!(setup.verify(&z[..2], proof), "proof verifies");
        assert!(
            !setup.verify(&[z[0], z[1] + Scalar::ONE], proof),
            "wrong input fails"
        );
    }
    assert_eq!(lock.stats().acquisitions, 1, "one lock for the whole batch");
    let t = out.timings;
    assert!(t.lock_taken_ns <= t.lock_released_ns);
    assert_eq!(t.kernel_ns, t.lock_released_ns - t.lock_taken_ns);
    // Zero blinding is a valid (non-zero-knowledge) proof too.
    let zero = [Scalar::ZERO];
    let out = prove(&lock, &srs, &batch[..1], &zero, &zero).unwrap();
    assert!(setup.verify(&zs[0][..2], &out.proofs[0]));
}

/// One `cuzk::native` event: (device, step, ms, level).
type NativeStep = (u64, String, f64, Level);

/// The `cuzk::native` events the process saw.
#[derive(Clone, Default)]
struct NativeSteps(Arc<Mutex<Vec<NativeStep>>>);

impl<S: tracing::Subscriber> Layer<S> for NativeSteps {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != NATIVE_TRACE_TARGET {
            return;
        }
        let mut step = StepFields::default();
        event.record(&mut step);
        let level = *event.metadata().level();
        self.0
            .lock()
            .unwrap()
            .push((step.device, step.step, step.ms, level));
    }
}

#[derive(Default)]
struct StepFields {
    device: u64,
    step: String,
    ms: f64,
}

impl Visit for StepFields {
    fn record_u64(&mut self, field: &field::Field, value: u64) {
        if field.name() == "device" {
            self.device = value;
        }
    }
    fn record_f64(&mut self, field: &field::Field, value: f64) {
        if field.name() == "ms" {
            self.ms = value;
        }
    }
    fn record_str(&mut self, field: &field::Field, value: &str) {
        if field.name() == "step" {
            self.step = value.to_owned();
        }
    }
    fn record_debug(&mut self, _: &field::Field, _: &dyn std::fmt::Debug) {}
}

/// The preamble's steps arrive as `debug` events of `cuzk::native` (so an
/// `info` filter, the binaries' default, keeps them out). The subscriber is
/// the process's global one, as in the binaries: a subscriber scoped to this
/// test's thread missed the events now and then while the other tests ran
/// beside it (tracing caches a callsite's interest for all threads).
#[test]
fn preamble_steps_reach_tracing_when_enabled() {
    let case = Cubic::new("preamble_steps_reach_tracing_when_enabled", 3);
    // Device 3: no other test of this file uses it, so its events are ours.
    let lock = GpuLock::cpu(3);
    let steps = NativeSteps::default();
    tracing::subscriber::set_global_default(Registry::default().with(steps.clone()))
        .expect("the only global subscriber of this test binary");
    // A callsite another test's thread was registering while the subscriber
    // was set may still hold the interest it found before: ask again.
    tracing::callsite::rebuild_interest_cache();
    assert!(case.verifies(&case.prove(&lock).unwrap()));

    let seen: Vec<_> = steps
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(device, ..)| *device == 3)
        .cloned()
        .collect();
    let names: Vec<&str> = seen.iter().map(|(_, step, ..)| step.as_str()).collect();
    assert_eq!(names, ["classify", "backend", "b_g2"], "{seen:?}");
    for (_, step, ms, level) in &seen {
        assert!(
            ms.is_finite() && *ms >= 0.0 && *ms < 60_000.0,
            "{step}: {ms} ms"
        );
        // Debug, so the default info filter keeps them out of the log.
        assert_eq!(*level, Level::DEBUG, "{step}");
    }
}

#[test]
fn larger_proof_verifies() {
    let mut rng = common::rng("larger_proof_verifies");
    let (r1cs, z) = chain(300, &mut rng);
    let setup = setup(&r1cs, &mut rng);
    let srs = Srs::new(setup.parts()).unwrap();
    assert_eq!(srs.domain_size(), 1024);
    let abc = evaluations(&r1cs, &z);
    let [r, s] = [(); 2].map(|_| [Scalar::random(&mut rng)]);
    let lock = GpuLock::cpu(0);
    let out = prove(&lock, &srs, &[assignment(&setup, &z, &abc)], &r, &s).unwrap();
    assert!(setup.verify(&z[..2], &out.proofs[0]));
    assert!(!setup.verify(&[z[0], z[1].double()], &out.proofs[0]));
}

fn expect_shape(result: Result<supraseal_c2::ProveOutput, Error>, quantity: &str) {
    match result {
        Err(Error::Shape { what, .. }) => {
            assert!(what.contains(quantity), "{what:?} vs {quantity:?}")
        }
        other => panic!("expected a shape error about {quantity:?}, got {other:?}"),
    }
}

#[test]
fn mismatched_shapes_are_named() {
    let mut rng = common::rng("mismatched_shapes_are_named");
    let r1cs = cubic();
    let setup = setup(&r1cs, &mut rng);
    let srs = Srs::new(setup.parts()).unwrap();
    let lock = GpuLock::cpu(0);
    let z = witness(Scalar::from(2));
    let abc = evaluations(&r1cs, &z);
    let good = assignment(&setup, &z, &abc);
    let one = [Scalar::ONE];
    let run = |a: Assignment<'_>| prove(&lock, &srs, &[a], &one, &one);

    expect_shape(prove(&lock, &srs, &[good], &[], &one), "r blinding factors");
    expect_shape(
        prove(&lock, &srs, &[good], &one, &[one[0]; 2]),
        "s blinding factors",
    );
    expect_shape(
        run(Assignment {
            b: &abc[1][1..],
            ..good
        }),
        "B evaluations vs A",
    );
    let long = [abc[2].clone(), vec![Scalar::ZERO]].concat();
    expect_shape(run(Assignment { c: &long, ..good }), "C evaluations vs A");
    let nine = vec![Scalar::ZERO; 9];
    expect_shape(
        run(Assignment {
            a: &nine,
            b: &nine,
            c: &nine,
            ..good
        }),
        "domain - 1 vs SRS h",
    );
    let mut extra = setup.a_aux.clone();
    extra.push(true);
    expect_shape(
        run(Assignment {
            a_aux_density: &extra,
            ..good
        }),
        "A aux density vs aux",
    );
    expect_shape(
        run(Assignment {
            b_input_density: &extra,
            ..good
        }),
        "B input density vs inputs",
    );
    expect_shape(
        run(Assignment {
            b_aux_density: &extra,
            ..good
        }),
        "B aux density vs aux",
    );
    let short = Density::all_ones(2);
    let aux_short = Assignment {
        aux: &z[2..4],
        a_aux_density: &short,
        b_aux_density: &short,
        ..good
    };
    expect_shape(run(aux_short), "aux assignment vs SRS l");
    let mut sparse = Density::new();
    for bit in [true, false, true] {
        sparse.push(bit);
    }
    expect_shape(
        run(Assignment {
            a_aux_density: &sparse,
            ..good
        }),
        "inputs + A aux density vs SRS a",
    );
    let all = Density::all_ones(3);
    expect_shape(
        run(Assignment {
            b_aux_density: &all,
            ..good
        }),
        "B densities vs SRS b_g1",
    );
    assert_eq!(
        lock.stats().acquisitions,
        0,
        "shape errors come before the lock"
    );
    assert!(run(good).is_ok());
}

#[test]
fn bad_srs_parts_are_named() {
    let mut rng = common::rng("bad_srs_parts_are_named");
    let setup = setup(&cubic(), &mut rng);
    let parts = setup.parts();
    match Srs::new(SrsParts {
        b_g2: &setup.b_g2[1..],
        ..parts
    }) {
        Err(Error::Shape { what, .. }) => assert!(what.contains("b_g2 vs b_g1"), "{what}"),
        other => panic!("expected a shape error, got {:?}", other.map(|_| ())),
    }
    match Srs::new(SrsParts {
        h: &setup.h[1..],
        ..parts
    }) {
        Err(Error::Shape { what, .. }) => assert!(what.contains("SRS h"), "{what}"),
        other => panic!("expected a shape error, got {:?}", other.map(|_| ())),
    }
}

/// The cubic circuit proven for one x, with r = s = 1.
struct Cubic {
    setup: Setup,
    srs: Srs,
    z: Vec<Scalar>,
    abc: [Vec<Scalar>; 3],
}

impl Cubic {
    fn new(test: &str, x: u64) -> Self {
        let r1cs = cubic();
        let setup = setup(&r1cs, &mut common::rng(test));
        let srs = Srs::new(setup.parts()).unwrap();
        let z = witness(Scalar::from(x));
        let abc = evaluations(&r1cs, &z);
        Self { setup, srs, z, abc }
    }

    fn prove(&self, lock: &GpuLock) -> Result<supraseal_c2::ProveOutput, Error> {
        let one = [Scalar::ONE];
        let batch = [assignment(&self.setup, &self.z, &self.abc)];
        prove(lock, &self.srs, &batch, &one, &one)
    }

    fn verifies(&self, out: &supraseal_c2::ProveOutput) -> bool {
        self.setup.verify(&self.z[..2], &out.proofs[0])
    }
}

#[test]
fn native_errors_come_back_as_errors() {
    let case = Cubic::new("native_errors_come_back_as_errors", 4);
    let lock = GpuLock::cpu(0);
    let held = lock.lock();
    match case.prove(&lock) {
        Err(Error::Native(message)) => assert!(message.contains("re-entrant"), "{message}"),
        other => panic!("expected a native error, got {other:?}"),
    }
    drop(held);
    assert!(case.verifies(&case.prove(&lock).unwrap()));
    assert_eq!(lock.stats().acquisitions, 2);
}

#[test]
fn injected_faults_come_back_typed_and_a_sticky_one_sticks() {
    let case = Cubic::new("injected_faults_come_back_typed_and_a_sticky_one_sticks", 5);
    let lock = GpuLock::cpu(0);
    let plan: FaultPlan = "transient@1,alloc@2,panic@3,sticky@5,sticky@1:dev1"
        .parse()
        .unwrap();
    lock.set_fault_plan(&plan);
    let run = |lock: &GpuLock| case.prove(lock);

    match run(&lock) {
        Err(Error::Cuda {
            code: 9,
            kind: CudaErrorKind::Transient,
            detail,
            ..
        }) => assert!(
            detail.starts_with("cudaErrorInvalidConfiguration"),
            "{detail}"
        ),
        other => panic!("expected a transient CUDA error, got {other:?}"),
    }
    assert!(matches!(
        run(&lock),
        Err(Error::Cuda {
            code: 2,
            kind: CudaErrorKind::OutOfMemory,
            ..
        })
    ));
    let panic = catch_unwind(AssertUnwindSafe(|| run(&lock))).unwrap_err();
    let message = panic.downcast_ref::<String>().expect("a formatted panic");
    assert!(message.contains("kernel region 3 of device 0"), "{message}");
    drop(lock.try_lock().expect("the panic released the lock"));
    assert!(case.verifies(&run(&lock).unwrap()));
    assert!(!lock.is_lost());

    let sticky = run(&lock).unwrap_err();
    assert!(sticky.is_sticky() && lock.is_lost(), "{sticky}");
    assert!(matches!(sticky, Error::Cuda { code: 700, .. }));
    // The device stays lost: the same error, without a fault planned.
    assert_eq!(run(&lock).unwrap_err(), sticky);
    // Only that lock: another is fine, and sticky@1:dev1 is not device 0's.
    assert!(run(&GpuLock::cpu(0)).is_ok());
}
