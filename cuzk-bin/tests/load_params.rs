//! `cuzk load-params` and `--full-param-checks` through the real binary:
//! a first load checks every point and writes the sidecar, a later load
//! trusts it, the flag forces the checks, and `prove` uses the same path.

mod common;

use common::{assert_fails_with, cuzk};

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn load_params_reports_first_and_later_loads() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("m.params");
    let p = params.to_str().unwrap();
    let workload = ["--workload", "mul-chain", "--size", "64"];
    stdout(&cuzk(
        &[&["setup"][..], &workload, &["--params", p]].concat(),
    ));

    let first = stdout(&cuzk(&["load-params", "--params", p]));
    assert!(
        first.contains("mode          full checks (no sidecar)"),
        "{first}"
    );
    assert!(first.contains("sidecar       written"), "{first}");
    assert!(first.contains("peak RSS"), "{first}");
    assert!(dir.path().join("m.params.cuzk-checked").exists());

    let later = stdout(&cuzk(&["load-params", "--params", p]));
    assert!(
        later.contains("mode          digest (sidecar matches)"),
        "{later}"
    );
    let forced = stdout(&cuzk(&[
        "load-params",
        "--params",
        p,
        "--full-param-checks",
    ]));
    assert!(forced.contains("full checks (forced)"), "{forced}");
    let stream = stdout(&cuzk(&["load-params", "--params", p, "--stream"]));
    assert!(stream.contains("mode          stream"), "{stream}");

    // prove loads through the same path and says how.
    let out = dir.path().join("r.proof");
    let prove = [&["prove"][..], &workload, &["--params", p, "--out"]].concat();
    let proved = cuzk(&[&prove[..], &[out.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&proved.stderr);
    assert!(proved.status.success(), "{stderr}");
    assert!(stderr.contains("digest (sidecar matches)"), "{stderr}");

    // A truncated file: one error line naming the file.
    let bytes = std::fs::read(&params).unwrap();
    std::fs::write(&params, &bytes[..bytes.len() - 1]).unwrap();
    assert_fails_with(&cuzk(&["load-params", "--params", p]), "m.params");
}
