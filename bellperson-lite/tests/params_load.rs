//! `Parameters::load`: full checks on a first load, the sidecar after them,
//! digest mode on later loads, and back to full checks whenever the file
//! or the sidecar is not what was checked.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::params_fixture as fixture;

use bellperson_lite::{
    sidecar_path, FullChecksReason, LoadMode, LoadOptions, LoadReport, Parameters, ParamsError,
    PointFault, Section, SidecarOutcome,
};
use blstrs::{G1Affine, G1Projective, G2Affine, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};

const G1: usize = 96;
const G2: usize = 192;

/// A fresh directory holding the fixture as `test.params`.
fn written() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.params");
    fs::write(&path, &fixture().1).unwrap();
    (dir, path)
}

fn load(path: &Path) -> Result<(Parameters, LoadReport), ParamsError> {
    Parameters::load(path, LoadOptions::default())
}

/// Byte offset of point `index` of `section` (a proving-key section).
fn offset(p: &Parameters, section: Section, index: usize) -> usize {
    let mut at = 3 * G1 + 3 * G2 + 4 + p.vk.ic.len() * G1;
    for (s, len) in [
        (Section::H, p.h.len()),
        (Section::L, p.l.len()),
        (Section::A, p.a.len()),
        (Section::BG1, p.b_g1.len()),
    ] {
        if s == section {
            return at + 4 + index * G1;
        }
        at += 4 + len * G1;
    }
    assert_eq!(section, Section::BG2);
    at + 4 + index * G2
}

/// A point on the curve `y^2 = x^3 + b` outside the prime-order subgroup,
/// searched from `x` upwards (`b` read off the generator).
fn off_subgroup<F: Field, P>(
    (x, y): (F, F),
    make: impl Fn(F, F) -> P,
    outside: impl Fn(&P) -> bool,
) -> P {
    let b = y.square() - x.square() * x;
    let mut x = x;
    loop {
        x += F::ONE;
        if let Some(y) = Option::<F>::from((x.square() * x + b).sqrt()) {
            let p = make(x, y);
            if outside(&p) {
                return p;
            }
        }
    }
}

fn off_subgroup_g1() -> G1Affine {
    let g = G1Affine::generator();
    off_subgroup(
        (g.x(), g.y()),
        |x, y| G1Affine::from_raw_unchecked(x, y, false),
        |p| bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()),
    )
}

fn off_subgroup_g2() -> G2Affine {
    let g = G2Affine::generator();
    off_subgroup(
        (g.x(), g.y()),
        |x, y| G2Affine::from_raw_unchecked(x, y, false),
        |p| bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()),
    )
}

fn assert_point(err: ParamsError, section: Section, index: usize, fault: PointFault) {
    let text = err.to_string();
    match err {
        ParamsError::File { source, path } => {
            assert!(path.ends_with("test.params"), "{text}");
            match *source {
                ParamsError::Point {
                    section: s,
                    index: i,
                    fault: f,
                } => assert_eq!((s, i, f), (section, index, fault)),
                e => panic!("expected {section}[{index}]: {fault}, got {e:?}"),
            }
        }
        e => panic!("expected a file error, got {e:?}"),
    }
}

#[test]
fn a_first_load_checks_and_records_later_loads_trust_the_digest() {
    let (p, _) = fixture();
    let (_dir, path) = written();
    let (first, report) = load(&path).unwrap();
    assert_eq!(&first, p);
    assert_eq!(
        report.mode,
        LoadMode::FullChecks(FullChecksReason::NoSidecar)
    );
    assert_eq!(report.sidecar, SidecarOutcome::Written);
    assert_eq!(report.bytes, fixture().1.len() as u64);
    let sidecar = fs::read_to_string(sidecar_path(&path)).unwrap();
    assert!(
        sidecar.starts_with("cuzk checked parameters, format 1\n"),
        "{sidecar}"
    );
    assert!(
        sidecar.contains(&format!("length: {}\n", report.bytes)),
        "{sidecar}"
    );

    let (later, report) = load(&path).unwrap();
    assert_eq!(&later, p);
    assert_eq!(report.mode, LoadMode::Digest);
    assert_eq!(report.sidecar, SidecarOutcome::Trusted);
    assert_eq!(report.checks, std::time::Duration::ZERO);

    let forced = LoadOptions {
        full_checks: true,
        record: false,
    };
    let (_, report) = Parameters::load(&path, forced).unwrap();
    assert_eq!(report.mode, LoadMode::FullChecks(FullChecksReason::Forced));
    assert_eq!(report.sidecar, SidecarOutcome::NotRecorded);
    assert!(
        report.to_string().starts_with("full checks (forced)"),
        "{report}"
    );
}

/// A file this build generated is vouched for without decoding it; its
/// first load then trusts the digest (the same digest a checked load
/// computes), and a point changed afterwards is checked and refused.
#[test]
fn a_generated_file_vouched_for_loads_without_subgroup_checks() {
    let (p, bytes) = fixture();
    let (_dir, path) = written();
    let outcome = Parameters::vouch_generated(&path).unwrap();
    assert_eq!(outcome, SidecarOutcome::Written);
    let vouched = fs::read_to_string(sidecar_path(&path)).unwrap();
    assert!(
        vouched.contains("checks: subgroup(generated by this checker)\n"),
        "{vouched}"
    );
    let (first, report) = load(&path).unwrap();
    assert_eq!(&first, p);
    assert_eq!(report.mode, LoadMode::Digest);
    assert_eq!(report.checks, std::time::Duration::ZERO);

    // A checked load records the same digest and length.
    let forced = LoadOptions {
        full_checks: true,
        record: true,
    };
    Parameters::load(&path, forced).unwrap();
    let checked = fs::read_to_string(sidecar_path(&path)).unwrap();
    let tail = |text: &str| text.lines().skip(3).collect::<Vec<_>>().join("\n");
    assert_eq!(tail(&checked), tail(&vouched));
    assert_ne!(checked, vouched);

    Parameters::vouch_generated(&path).unwrap();
    let at = offset(p, Section::H, 3);
    let mut bad = bytes.clone();
    bad[at..at + G1].copy_from_slice(&off_subgroup_g1().to_uncompressed());
    fs::write(&path, &bad).unwrap();
    assert_point(
        load(&path).unwrap_err(),
        Section::H,
        3,
        PointFault::NotInSubgroup,
    );
}

#[test]
fn without_record_no_sidecar_is_written() {
    let (_dir, path) = written();
    let options = LoadOptions {
        full_checks: false,
        record: false,
    };
    for _ in 0..2 {
        let (_, report) = Parameters::load(&path, options).unwrap();
        assert_eq!(
            report.mode,
            LoadMode::FullChecks(FullChecksReason::NoSidecar)
        );
    }
    assert!(!sidecar_path(&path).exists());
}

#[test]
fn a_point_swapped_in_after_the_sidecar_is_checked_and_named() {
    let (p, bytes) = fixture();
    let (_dir, path) = written();
    load(&path).unwrap();
    // On the curve, canonical, not the identity: only the subgroup check
    // can refuse it, and it runs only because the digest changed.
    let at = offset(p, Section::L, 5);
    let mut bad = bytes.clone();
    bad[at..at + G1].copy_from_slice(&off_subgroup_g1().to_uncompressed());
    fs::write(&path, &bad).unwrap();
    assert_point(
        load(&path).unwrap_err(),
        Section::L,
        5,
        PointFault::NotInSubgroup,
    );
    // The sidecar still vouches only for the old bytes.
    fs::write(&path, bytes).unwrap();
    assert_eq!(load(&path).unwrap().1.mode, LoadMode::Digest);
}

#[test]
fn a_tampered_byte_is_refused_whatever_the_sidecar_says() {
    let (p, bytes) = fixture();
    let (_dir, path) = written();
    load(&path).unwrap();
    let mut bad = bytes.clone();
    bad[offset(p, Section::H, 3) + G1 - 1] ^= 1;
    fs::write(&path, &bad).unwrap();
    assert_point(
        load(&path).unwrap_err(),
        Section::H,
        3,
        PointFault::NotOnCurve,
    );
}

#[test]
fn a_changed_but_valid_file_is_checked_again_and_recorded_anew() {
    let (p, bytes) = fixture();
    let (_dir, path) = written();
    load(&path).unwrap();
    let before = fs::read_to_string(sidecar_path(&path)).unwrap();
    // Another point of the subgroup in a's slot 1.
    let other = (G1Projective::generator() * Scalar::from(7u64)).to_affine();
    let at = offset(p, Section::A, 1);
    let mut changed = bytes.clone();
    changed[at..at + G1].copy_from_slice(&other.to_uncompressed());
    fs::write(&path, &changed).unwrap();
    let (loaded, report) = load(&path).unwrap();
    assert_eq!(loaded.a[1], other);
    assert_eq!(report.mode, LoadMode::FullChecks(FullChecksReason::Changed));
    assert_eq!(report.sidecar, SidecarOutcome::Written);
    assert_ne!(fs::read_to_string(sidecar_path(&path)).unwrap(), before);
    assert_eq!(load(&path).unwrap().1.mode, LoadMode::Digest);
}

#[test]
fn a_sidecar_from_another_checker_is_not_trusted() {
    let (_dir, path) = written();
    load(&path).unwrap();
    let sidecar = sidecar_path(&path);
    let text = fs::read_to_string(&sidecar).unwrap();
    let other = text.replace(
        "checker: bellperson-lite ",
        "checker: bellperson-lite 0.0.1-",
    );
    fs::write(&sidecar, other).unwrap();
    let (_, report) = load(&path).unwrap();
    assert_eq!(
        report.mode,
        LoadMode::FullChecks(FullChecksReason::OtherChecker)
    );
    assert_eq!(fs::read_to_string(&sidecar).unwrap(), text);
}

#[test]
fn a_point_outside_the_subgroup_is_refused_on_first_load() {
    let (p, bytes) = fixture();
    let (_dir, path) = written();
    let mut bad = bytes.clone();
    let at = offset(p, Section::BG2, 2);
    bad[at..at + G2].copy_from_slice(&off_subgroup_g2().to_uncompressed());
    let at = offset(p, Section::H, p.h.len() - 1);
    bad[at..at + G1].copy_from_slice(&off_subgroup_g1().to_uncompressed());
    fs::write(&path, &bad).unwrap();
    assert_point(
        load(&path).unwrap_err(),
        Section::H,
        p.h.len() - 1,
        PointFault::NotInSubgroup,
    );
    assert!(!sidecar_path(&path).exists(), "a bad file got a sidecar");
    // The same file through read_file and from_bytes.
    assert!(Parameters::read_file(&path).is_err());
    let at = offset(p, Section::H, p.h.len() - 1);
    bad[at..at + G1].copy_from_slice(&bytes[at..at + G1]);
    match Parameters::from_bytes(&bad).unwrap_err() {
        ParamsError::Point {
            section,
            index,
            fault,
        } => {
            assert_eq!(
                (section, index, fault),
                (Section::BG2, 2, PointFault::NotInSubgroup)
            )
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn a_truncated_file_names_the_section_and_the_file() {
    let (_, bytes) = fixture();
    let (_dir, path) = written();
    load(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 7]).unwrap();
    let err = load(&path).unwrap_err();
    assert!(err.to_string().contains("test.params"), "{err}");
    match err {
        ParamsError::File { source, .. } => assert!(
            matches!(
                *source,
                ParamsError::Count {
                    section: Section::BG2,
                    ..
                }
            ),
            "{source:?}"
        ),
        e => panic!("{e:?}"),
    }
    fs::write(&path, b"").unwrap();
    match load(&path).unwrap_err() {
        ParamsError::File { source, .. } => assert!(
            matches!(
                *source,
                ParamsError::Truncated {
                    section: Section::VkAlphaG1,
                    ..
                }
            ),
            "{source:?}"
        ),
        e => panic!("{e:?}"),
    }
}

#[test]
fn a_directory_that_cannot_take_the_sidecar_still_loads() {
    let (p, _) = fixture();
    let (_dir, path) = written();
    // A non-empty directory where the sidecar would go: no rename can
    // replace it, even as root (a read-only directory would not stop root).
    let blocker = sidecar_path(&path);
    fs::create_dir(&blocker).unwrap();
    fs::write(blocker.join("keep"), b"").unwrap();
    for _ in 0..2 {
        let (loaded, report) = load(&path).unwrap();
        assert_eq!(&loaded, p);
        assert!(matches!(report.mode, LoadMode::FullChecks(_)), "{report}");
        assert!(
            matches!(report.sidecar, SidecarOutcome::NotWritten(_)),
            "{report}"
        );
    }
    let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "temporary files left: {leftovers:?}");
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_still_loads() {
    use std::os::unix::fs::PermissionsExt;
    let (p, _) = fixture();
    let (dir, path) = written();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).unwrap();
    let (loaded, report) = load(&path).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(&loaded, p);
    // Root writes anyway; anyone else is refused, and the load goes on.
    match report.sidecar {
        SidecarOutcome::Written | SidecarOutcome::NotWritten(_) => {}
        other => panic!("{other:?}"),
    }
}
