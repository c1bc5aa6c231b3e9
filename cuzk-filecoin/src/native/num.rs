//! Mirrors of the gadgets on field elements that storage-proofs' circuits
//! use: bit decomposition and packing (bellpepper-core 0.2's
//! `AllocatedNum::to_bits_le`, bellperson 0.27's `multipack::pack_bits`),
//! storage-proofs' `reverse_bit_numbering` and its insertion gadgets
//! (`gadgets::insertion::{insert, pick, select}`).

use blstrs::Scalar;
use cuzk_pipeline::witness::{Bit, NumSink};
use ff::PrimeField;

/// `Scalar::NUM_BITS`: the bits `to_bits_le` allocates.
const NUM_BITS: usize = 255;
/// `Scalar::CAPACITY`: the bits `pack_bits` packs.
const CAPACITY: usize = 254;

/// `AllocatedNum::to_bits_le`: the 255 bits of `v`, least significant
/// first, each allocated.
pub(crate) fn to_bits_le<S: NumSink + ?Sized>(sink: &mut S, v: &Scalar) -> Vec<Bit> {
    let repr = v.to_repr();
    let bytes = repr.as_ref();
    (0..NUM_BITS)
        .map(|i| sink.alloc((bytes[i / 8] >> (i % 8)) & 1 == 1))
        .collect()
}

/// `reverse_bit_numbering`: pads to whole bytes with constant zeros, then
/// reverses the bits of each byte.
pub(crate) fn reverse_bit_numbering(mut bits: Vec<Bit>) -> Vec<Bit> {
    while !bits.len().is_multiple_of(8) {
        bits.push(Bit::Const(false));
    }
    bits.chunks(8)
        .flat_map(|byte| byte.iter().rev())
        .copied()
        .collect()
}

/// The field element whose bits, least significant first, are the first
/// 254 of `bits` (254 bits are always below the modulus).
pub(crate) fn packed_value(bits: &[Bit]) -> Scalar {
    let mut repr = [0u8; 32];
    for (i, b) in bits.iter().take(CAPACITY).enumerate() {
        repr[i / 8] |= u8::from(b.value()) << (i % 8);
    }
    Scalar::from_repr_vartime(repr).expect("254 bits are in the field")
}

/// `multipack::pack_bits`: one element allocated, the packing of the first
/// 254 of `bits`.
pub(crate) fn pack_bits<S: NumSink + ?Sized>(sink: &mut S, bits: &[Bit]) -> Scalar {
    sink.num(packed_value(bits))
}

/// `insertion::pick`: `a` if `condition`, else `b`, allocated.
pub(crate) fn pick<S: NumSink + ?Sized>(
    sink: &mut S,
    condition: Bit,
    a: &Scalar,
    b: &Scalar,
) -> Scalar {
    sink.num(if condition.value() { *a } else { *b })
}

/// `insertion::insert`: `element` inserted into `elements` at the position
/// `bits` spell (least significant first), through the gadget's picks.
pub(crate) fn insert<S: NumSink + ?Sized>(
    sink: &mut S,
    element: &Scalar,
    bits: &[Bit],
    elements: &[Scalar],
) -> Vec<Scalar> {
    let size = elements.len() + 1;
    assert_eq!(1 << bits.len(), size, "one index bit per halving");
    match size {
        2 => vec![
            pick(sink, bits[0], &elements[0], element),
            pick(sink, bits[0], element, &elements[0]),
        ],
        4 => insert_4(sink, element, bits, elements),
        8 => insert_8(sink, element, bits, elements),
        _ => insert_any(sink, element, bits, elements),
    }
}

/// `insertion::insert_4`.
fn insert_4<S: NumSink + ?Sized>(
    sink: &mut S,
    a: &Scalar,
    bits: &[Bit],
    elements: &[Scalar],
) -> Vec<Scalar> {
    let (b0, b1) = (bits[0], bits[1]);
    let [b, c, d] = [&elements[0], &elements[1], &elements[2]];
    let p0_x0 = pick(sink, b0, b, a);
    let p0 = pick(sink, b1, b, &p0_x0);
    let p1_x0 = pick(sink, b0, a, b);
    let p1 = pick(sink, b1, c, &p1_x0);
    let p2_x1 = pick(sink, b0, d, a);
    let p2 = pick(sink, b1, &p2_x1, c);
    let p3_x1 = pick(sink, b0, a, d);
    let p3 = pick(sink, b1, &p3_x1, d);
    vec![p0, p1, p2, p3]
}

/// `insertion::insert_8`: two helper bits (`b0 nor b1`, `b0 and b1`),
/// then twenty picks.
fn insert_8<S: NumSink + ?Sized>(
    sink: &mut S,
    a: &Scalar,
    bits: &[Bit],
    elements: &[Scalar],
) -> Vec<Scalar> {
    let (b0, b1, b2) = (bits[0], bits[1], bits[2]);
    let [b, c, d, e, f, g, h] = std::array::from_fn(|i| &elements[i]);
    let nor = sink.alloc(!b0.value() & !b1.value());
    let and = sink.alloc(b0.value() & b1.value());

    let p0_xx0 = pick(sink, nor, a, b);
    let p0 = pick(sink, b2, b, &p0_xx0);

    let p1_x00 = pick(sink, b0, a, b);
    let p1_xx0 = pick(sink, b1, c, &p1_x00);
    let p1 = pick(sink, b2, c, &p1_xx0);

    let p2_x10 = pick(sink, b0, d, a);
    let p2_xx0 = pick(sink, b1, &p2_x10, c);
    let p2 = pick(sink, b2, d, &p2_xx0);

    let p3_xx0 = pick(sink, and, a, d);
    let p3 = pick(sink, b2, e, &p3_xx0);

    let p4_xx1 = pick(sink, nor, a, f);
    let p4 = pick(sink, b2, &p4_xx1, e);

    let p5_x01 = pick(sink, b0, a, f);
    let p5_xx1 = pick(sink, b1, g, &p5_x01);
    let p5 = pick(sink, b2, &p5_xx1, f);

    let p6_x11 = pick(sink, b0, h, a);
    let p6_xx1 = pick(sink, b1, &p6_x11, g);
    let p6 = pick(sink, b2, &p6_xx1, g);

    let p7_xx1 = pick(sink, and, a, h);
    let p7 = pick(sink, b2, &p7_xx1, h);

    vec![p0, p1, p2, p3, p4, p5, p6, p7]
}

/// The general case of `insertion::insert`: a `select` per position.
fn insert_any<S: NumSink + ?Sized>(
    sink: &mut S,
    element: &Scalar,
    bits: &[Bit],
    elements: &[Scalar],
) -> Vec<Scalar> {
    let size = elements.len() + 1;
    let result = |index: usize, pos: usize| match pos.cmp(&index) {
        std::cmp::Ordering::Less => elements[pos],
        std::cmp::Ordering::Equal => *element,
        std::cmp::Ordering::Greater => elements[pos - 1],
    };
    (0..size)
        .map(|pos| {
            let choices: Vec<Scalar> = (0..size).map(|index| result(index, pos)).collect();
            select(sink, &choices, bits)
        })
        .collect()
}

/// `insertion::select`: the element of `from` that `bits` index, halving
/// from the most significant bit.
pub(crate) fn select<S: NumSink + ?Sized>(sink: &mut S, from: &[Scalar], bits: &[Bit]) -> Scalar {
    let mut state = from.to_vec();
    for &bit in bits.iter().rev() {
        let half = state.len() / 2;
        state = (0..half)
            .map(|j| pick(sink, bit, &state[half + j], &state[j]))
            .collect();
    }
    state[0]
}
