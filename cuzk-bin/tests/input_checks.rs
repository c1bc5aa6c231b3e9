//! Arguments that cannot work are refused at once, before any long work
//! (parameter generation, proving), with exit code 1 and one line that
//! names the flag or file and gives each cause once.

use std::path::Path;

mod common;
use common::{assert_refused, cuzk};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn counts_of_zero_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.proof");
    let params = dir.path().join("absent.params");
    let zero = |flag: &str| format!("cuzk: {flag} must be at least 1");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["synth", "--size", "1", "--partitions", "0"],
            zero("--partitions"),
        ),
        (
            vec!["synth", "--size", "1", "--repeat", "0"],
            zero("--repeat"),
        ),
        (
            vec!["bench", "--backend", "cpu", "--requests", "0"],
            zero("--requests"),
        ),
        (
            vec!["bench", "--backend", "cpu", "--partitions", "0"],
            zero("--partitions"),
        ),
        (
            vec!["bench", "--backend", "cpu", "--partition-workers", "0"],
            "cuzk: invalid engine configuration: partition_workers must be at least 1".into(),
        ),
        (
            vec!["bench", "--backend", "cpu", "--gpu-workers-per-device", "0"],
            "cuzk: invalid engine configuration: gpu_workers_per_device must be at least 1".into(),
        ),
        (
            vec!["bench", "--backend", "cpu", "--queue-depth", "0"],
            "cuzk: invalid engine configuration: queue_depth must be at least 1".into(),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--requests", "0"],
            zero("--requests"),
        ),
        (
            vec![
                "sweep",
                "--backend",
                "cpu",
                "--partition-workers-list",
                "2,0",
            ],
            zero("--partition-workers-list"),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--gpu-workers-list", "0"],
            zero("--gpu-workers-list"),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--device-counts", "0"],
            zero("--device-counts"),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--device-counts", "2"],
            "cuzk: --device-counts: 2 is more than the 1 there are".into(),
        ),
        (
            vec![
                "prove",
                "--params",
                s(&params),
                "--partitions",
                "0",
                "--out",
                s(&out),
            ],
            zero("--partitions"),
        ),
        (
            vec![
                "verify",
                "--params",
                s(&params),
                "--partitions",
                "0",
                "--proof",
                s(&out),
            ],
            zero("--partitions"),
        ),
        (
            vec!["setup", "--size", "0", "--params", s(&params)],
            "cuzk: bad workload: sha-chain needs a size of at least 1".into(),
        ),
        (
            vec![
                "client",
                "submit",
                "--kind",
                "mul-chain",
                "--size",
                "4",
                "--partitions",
                "0",
            ],
            zero("--partitions"),
        ),
        (
            vec!["client", "submit", "--kind", "mul-chain", "--size", "0"],
            zero("--size"),
        ),
    ];
    for (args, expected) in cases {
        assert_refused(&cuzk(&args), &expected);
    }
    assert!(!out.exists() && !params.exists());
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir/out");
    // The cause names the directory that is not there.
    let cause = format!("no directory {}", dir.path().join("no-such-dir").display());
    let unwritable = |path: &Path| format!("cuzk: cannot write {}: {cause}", path.display());
    let (m, d) = (s(&missing), s(dir.path()));
    let bench = [
        "bench",
        "--backend",
        "cpu",
        "--workload",
        "mul-chain",
        "--size",
        "64",
    ];
    let cases: Vec<(Vec<&str>, String)> = vec![
        ([&bench[..], &["--json", m]].concat(), unwritable(&missing)),
        (
            [&bench[..], &["--timeline", m]].concat(),
            unwritable(&missing),
        ),
        (
            [&bench[..], &["--json", d]].concat(),
            format!("cuzk: cannot write {d}: it is a directory"),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--json", m],
            unwritable(&missing),
        ),
        (
            vec!["sweep", "--backend", "cpu", "--timeline", m],
            unwritable(&missing),
        ),
        (
            vec!["setup", "--size", "1", "--params", m],
            unwritable(&missing),
        ),
        (
            vec!["prove", "--params", m, "--out", m],
            unwritable(&missing),
        ),
        (
            vec![
                "client",
                "prove",
                "--kind",
                "mul-chain",
                "--size",
                "4",
                "--out",
                m,
            ],
            unwritable(&missing),
        ),
    ];
    for (args, expected) in cases {
        assert_refused(&cuzk(&args), &expected);
    }
    // A parameter directory that cannot be made, refused before the
    // (minutes-long) generation.
    let proc_dir = Path::new("/proc/no-such-dir");
    let cause = std::fs::create_dir_all(proc_dir).unwrap_err();
    let args = [
        "setup",
        "--kind",
        "porep",
        "--sector-size",
        "2KiB",
        "--param-dir",
        s(proc_dir),
    ];
    let expected = format!("cuzk: cannot write /proc/no-such-dir: {cause}");
    assert_refused(&cuzk(&args), &expected);
}

#[test]
fn each_cause_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.params");
    let out = dir.path().join("x.proof");
    let cause = std::fs::File::open(&missing).unwrap_err();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["bench", "--backend", "cpu", "--workload", "md5"],
            "cuzk: bad workload: unknown workload 'md5' (expected one of sha-chain, mul-chain)"
                .into(),
        ),
        (
            vec!["bench", "--backend", "cpu", "--synthesis", "fast"],
            "cuzk: invalid engine configuration: bad synthesis mode 'fast' (expected full, compiled, checked or checked:N with N >= 1)"
                .into(),
        ),
    ];
    for (args, expected) in cases {
        assert_refused(&cuzk(&args), &expected);
    }
    // A missing parameters file: one line naming it, the OS's cause once.
    let out = cuzk(&["prove", "--params", s(&missing), "--out", s(&out)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = stderr.trim_end();
    assert!(
        !line.contains('\n') && line.starts_with("cuzk: "),
        "{stderr}"
    );
    assert!(line.contains(&missing.display().to_string()), "{line}");
    assert_eq!(line.matches(&cause.to_string()).count(), 1, "{line}");
}
