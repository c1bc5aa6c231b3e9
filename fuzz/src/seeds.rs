//! The seed corpora: a small parameter file and a valid proof made here,
//! the committed 2 KiB Filecoin fixtures, and small C1 outputs of each
//! form that reach the deeper checks without the fixtures' bulk.

use std::fs;
use std::io;
use std::path::Path;

use base64::Engine as _;
use bellpepper_core::{num::AllocatedNum, Circuit, ConstraintSystem, SynthesisError};
use bellperson_lite::{create_random_proof_batch, generate_random_parameters};
use blstrs::Scalar;
use serde_json::{json, Value};
use supraseal_c2::GpuLock;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../cuzk-filecoin/fixtures/2KiB"
);

/// The fixtures where this binary was built or, on a machine it was carried
/// to (`scripts/fuzz.sh farm`), under the working directory (the repository
/// root).
fn fixtures() -> &'static Path {
    let built = Path::new(FIXTURES);
    if built.is_dir() {
        built
    } else {
        Path::new("cuzk-filecoin/fixtures/2KiB")
    }
}

/// Knows `x` with `x^3 + x = y`, `y` public: a few constraints, so every
/// section of its parameter file holds points.
struct Cubic(Option<Scalar>);

impl Circuit<Scalar> for Cubic {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
            self.0.ok_or(SynthesisError::AssignmentMissing)
        })?;
        let x2 = x.square(cs.namespace(|| "x^2"))?;
        let x3 = x2.mul(cs.namespace(|| "x^3"), &x)?;
        let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
            Ok(x3.get_value().ok_or(SynthesisError::AssignmentMissing)?
                + x.get_value().ok_or(SynthesisError::AssignmentMissing)?)
        })?;
        cs.enforce(
            || "y = x^3 + x",
            |lc| lc + x3.get_variable() + x.get_variable(),
            |lc| lc + CS::one(),
            |lc| lc + y.get_variable(),
        );
        y.inputize(cs.namespace(|| "y"))
    }
}

/// Writes every target's seeds under `dir/<target>/`.
pub fn write(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let put = |target: &str, name: &str, bytes: &[u8]| -> io::Result<()> {
        fs::create_dir_all(dir.join(target))?;
        fs::write(dir.join(target).join(name), bytes)
    };
    let rng = &mut rand::thread_rng();
    let params = generate_random_parameters(Cubic(None), rng)?;
    put("params", "cubic.params", &params.to_bytes()?)?;
    let mut vk = Vec::new();
    params.vk.write(&mut vk)?;
    put("params", "cubic.vk", &vk)?;
    let lock = GpuLock::cpu(0);
    let circuits = vec![Cubic(Some(Scalar::from(3)))];
    let (proofs, _) = create_random_proof_batch(circuits, &params.srs()?, &lock, rng)?;
    put("proof", "cubic.proof", &proofs[0].to_bytes())?;

    let fixture = |path: &str| fs::read(fixtures().join(path));
    for (selector, form) in [(0u8, "window"), (1u8, "winning")] {
        let mut seed = vec![selector];
        seed.extend(fixture(&format!("{form}/vanilla-0.bin"))?);
        put("post", form, &seed)?;
    }
    put("snap", "partition-0", &fixture("snap/partition-0.bin")?)?;
    for (name, bytes) in c1_seeds(&fixture("c1.json")?)? {
        put("c1", name, &bytes)?;
    }
    Ok(())
}

/// The raw C1 fixture, and small forms of it that still deserialize and
/// reach the vanilla proof checks: one challenge's proof with every list of
/// non-numbers cut to its first element (byte arrays kept whole), in the
/// raw, api and Curio forms; and the api form with no proofs.
fn c1_seeds(raw: &[u8]) -> Result<Vec<(&'static str, Vec<u8>)>, serde_json::Error> {
    let full: Value = serde_json::from_slice(raw)?;
    let small = shrink(&full);
    let api = |proofs: Value| {
        let mut api = small.clone();
        api["registered_proof"] = json!("StackedDrg2KiBV1_1");
        api["vanilla_proofs"] = json!({ "StackedDrg2KiBV1": proofs });
        api
    };
    let api_small = api(small["vanilla_proofs"].clone());
    let api_none = api(json!([[]]));
    let curio = |inner: &Value| {
        let encoded = base64::engine::general_purpose::STANDARD.encode(inner.to_string());
        json!({ "SectorNum": 872761, "Phase1Out": encoded, "SectorSize": 2048 })
    };
    let bytes = |v: &Value| v.to_string().into_bytes();
    Ok(vec![
        ("raw-full", raw.to_vec()),
        ("raw-small", bytes(&small)),
        ("api-small", bytes(&api_small)),
        ("api-none", bytes(&api_none)),
        ("curio-small", bytes(&curio(&api_small))),
    ])
}

/// `value` with every array of non-numbers cut to its first element.
fn shrink(value: &Value) -> Value {
    match value {
        Value::Array(items) if items.iter().all(Value::is_number) => value.clone(),
        Value::Array(items) => Value::Array(items.iter().take(1).map(shrink).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shrink(v))).collect())
        }
        _ => value.clone(),
    }
}
