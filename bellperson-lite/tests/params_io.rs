//! The `.params` format: byte-exact round trips and every malformed case.

mod common;

use bellperson_lite::{
    CompiledShape, Parameters, ParamsError, Place, PointFault, Section, VerifyingKey,
};
use blstrs::G1Affine;
use ff::Field;
use group::prime::PrimeCurveAffine;

use common::params_fixture as fixture;

const G1: usize = 96;
const G2: usize = 192;

/// Offsets of each section's count, in file order: ic, h, l, a, b_g1, b_g2.
fn counts(p: &Parameters) -> [usize; 6] {
    let lens = [p.vk.ic.len(), p.h.len(), p.l.len(), p.a.len(), p.b_g1.len()];
    let mut at = [0usize; 6];
    let mut off = 3 * G1 + 3 * G2;
    for (i, len) in lens.iter().enumerate() {
        at[i] = off;
        off += 4 + len * G1;
    }
    at[5] = off;
    at
}

/// Byte offset of point `index` of the section whose count is at `count_at`.
fn point(count_at: usize, index: usize, size: usize) -> usize {
    count_at + 4 + index * size
}

fn read_err(bytes: &[u8]) -> ParamsError {
    Parameters::from_bytes(bytes).expect_err("malformed parameters were accepted")
}

fn assert_point(err: ParamsError, section: Section, index: usize, fault: PointFault) {
    match err {
        ParamsError::Point {
            section: s,
            index: i,
            fault: f,
        } => {
            assert_eq!((s, i, f), (section, index, fault));
        }
        e => panic!("expected {section}[{index}]: {fault}, got {e:?}"),
    }
}

#[test]
fn write_read_write_is_byte_exact() {
    let (p, bytes) = fixture();
    let c = counts(p);
    assert_eq!(bytes.len(), c[5] + 4 + p.b_g2.len() * G2);
    let back = Parameters::from_bytes(bytes).unwrap();
    assert_eq!(&back, p);
    assert_eq!(&back.to_bytes().unwrap(), bytes);
    assert_eq!(&Parameters::read(&bytes[..]).unwrap(), p);
    // The verifying key alone is the file's prefix.
    let mut vk = Vec::new();
    p.vk.write(&mut vk).unwrap();
    assert_eq!(&bytes[..vk.len()], &vk[..]);
    assert_eq!(VerifyingKey::read(&vk[..]).unwrap(), p.vk);
    // The layout: VK points uncompressed, then big-endian counts.
    assert_eq!(&bytes[..G1], &p.vk.alpha_g1.to_uncompressed()[..]);
    assert_eq!(&bytes[c[1]..c[1] + 4], &(p.h.len() as u32).to_be_bytes());
}

#[test]
fn files_round_trip_and_errors_name_the_path() {
    let (p, bytes) = fixture();
    let dir = std::env::temp_dir().join(format!("bellperson-lite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("test.params");
    p.write_file(&path).unwrap();
    assert_eq!(&std::fs::read(&path).unwrap(), bytes);
    assert_eq!(&Parameters::read_file(&path).unwrap(), p);

    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let err = Parameters::read_file(&path).unwrap_err();
    assert!(err.to_string().contains("test.params"), "{err}");
    match err {
        ParamsError::File { source, .. } => {
            assert!(matches!(
                *source,
                ParamsError::Count {
                    section: Section::BG2,
                    ..
                }
            ))
        }
        e => panic!("{e:?}"),
    }
    let missing = dir.join("missing.params");
    let err = Parameters::read_file(&missing).unwrap_err();
    assert!(err.to_string().contains("missing.params"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncation_names_section_and_place() {
    let (p, bytes) = fixture();
    let c = counts(p);
    let cases = [
        (10, Section::VkAlphaG1, Place::Item(0)),
        (400, Section::VkGammaG2, Place::Item(0)),
        (c[0] + 2, Section::Ic, Place::Count),
        (c[2] + 1, Section::L, Place::Count),
    ];
    for (cut, section, place) in cases {
        match read_err(&bytes[..cut]) {
            ParamsError::Truncated {
                section: s,
                place: pl,
            } => assert_eq!((s, pl), (section, place)),
            e => panic!("cut {cut}: {e:?}"),
        }
    }
    // Known size: a count that overruns the data is caught before reading.
    let cut = point(c[1], 7, G1) + 5;
    assert!(matches!(
        read_err(&bytes[..cut]),
        ParamsError::Count {
            section: Section::H,
            ..
        }
    ));
    // Unknown size (a stream): caught at the first missing point.
    match Parameters::read(&bytes[..cut]).unwrap_err() {
        ParamsError::Truncated { section, place } => {
            assert_eq!((section, place), (Section::H, Place::Item(7)))
        }
        e => panic!("{e:?}"),
    }
    let err = Parameters::read(&bytes[..bytes.len() - 1]).unwrap_err();
    let last = Place::Item(p.b_g2.len() - 1);
    assert!(
        matches!(err, ParamsError::Truncated { section: Section::BG2, place } if place == last)
    );
}

#[test]
fn a_bad_count_is_caught_before_allocating() {
    let (p, bytes) = fixture();
    let at = counts(p)[2];
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    match read_err(&bad) {
        ParamsError::Count {
            section,
            count,
            needed,
            ..
        } => {
            assert_eq!((section, count), (Section::L, u32::MAX));
            assert_eq!(needed, u64::from(u32::MAX) * G1 as u64);
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn points_off_the_curve_are_named_by_section_and_index() {
    let (p, bytes) = fixture();
    let c = counts(p);
    let cases = [
        (G1 - 1, Section::VkAlphaG1, 0),
        (3 * G1 + 3 * G2 - 1, Section::VkDeltaG2, 0),
        (point(c[0], 1, G1) + G1 - 1, Section::Ic, 1),
        (point(c[1], 3, G1) + G1 - 1, Section::H, 3),
        (point(c[2], 0, G1) + G1 - 1, Section::L, 0),
        (point(c[4], 4, G1) + G1 - 1, Section::BG1, 4),
        (point(c[5], 2, G2) + G2 - 1, Section::BG2, 2),
    ];
    for (byte, section, index) in cases {
        let mut bad = bytes.clone();
        bad[byte] ^= 1;
        assert_point(read_err(&bad), section, index, PointFault::NotOnCurve);
    }
}

#[test]
fn the_first_bad_point_is_reported() {
    let (p, bytes) = fixture();
    let h = counts(p)[1];
    let mut bad = bytes.clone();
    bad[point(h, 9, G1) + G1 - 1] ^= 1;
    bad[point(h, 2, G1) + G1 - 1] ^= 1;
    assert_point(read_err(&bad), Section::H, 2, PointFault::NotOnCurve);
    assert_point(
        Parameters::read(&bad[..]).unwrap_err(),
        Section::H,
        2,
        PointFault::NotOnCurve,
    );
}

#[test]
fn trailing_bytes_are_an_error() {
    let (_, bytes) = fixture();
    let mut long = bytes.clone();
    long.extend_from_slice(&[0; 5]);
    assert!(matches!(
        read_err(&long),
        ParamsError::TrailingBytes { count: 5 }
    ));
    let err = Parameters::read(&long[..]).unwrap_err();
    assert!(matches!(err, ParamsError::TrailingBytes { count: 5 }));
}

/// A point on the curve outside the prime-order subgroup.
fn off_subgroup<F: Field>(start: F, make: impl Fn(F, F) -> G1Affine) -> G1Affine {
    let four = F::ONE.double().double();
    let mut x = start;
    loop {
        x += F::ONE;
        if let Some(y) = Option::<F>::from((x.square() * x + four).sqrt()) {
            let p = make(x, y);
            if bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()) {
                return p;
            }
        }
    }
}

#[test]
fn subgroup_identity_and_encoding_faults() {
    let (p, bytes) = fixture();
    let a = counts(p)[3];
    let outsider = off_subgroup(G1Affine::generator().x(), |x, y| {
        G1Affine::from_raw_unchecked(x, y, false)
    });
    let mut bad = bytes.clone();
    let at = point(a, 2, G1);
    bad[at..at + G1].copy_from_slice(&outsider.to_uncompressed());
    assert_point(read_err(&bad), Section::A, 2, PointFault::NotInSubgroup);

    let mut bad = bytes.clone();
    let at = point(a, 0, G1);
    bad[at..at + G1].copy_from_slice(&G1Affine::identity().to_uncompressed());
    assert_point(read_err(&bad), Section::A, 0, PointFault::Identity);

    let mut bad = bytes.clone();
    bad[point(counts(p)[4], 1, G1)] |= 0x80;
    assert_point(read_err(&bad), Section::BG1, 1, PointFault::NonCanonical);
}

#[test]
fn a_shape_knows_its_file_size_before_the_setup() {
    let (p, bytes) = fixture();
    assert_eq!(p.file_bytes(), bytes.len() as u64);
    let shape = CompiledShape::compile(common::MulChain { n: 40, x: None }).unwrap();
    assert_eq!(shape.params_file_bytes().unwrap(), bytes.len() as u64);
    // Columns missing from A or B leave identities out of a and b: the
    // shape counts them from its densities.
    let mixed = common::Mixed { vars: 300, seed: 5 };
    let shape = CompiledShape::compile(mixed.clone()).unwrap();
    let p = bellperson_lite::generate_random_parameters(mixed, &mut common::rng(5)).unwrap();
    assert!(
        p.a.len() < p.l.len() && p.b_g1.len() < p.l.len(),
        "sparse a and b"
    );
    let bytes = p.to_bytes().unwrap();
    assert_eq!(shape.params_file_bytes().unwrap(), bytes.len() as u64);
}
