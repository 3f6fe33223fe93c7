//! The image's primitive encoding: little-endian integers, floats as their bit patterns,
//! and a 64-bit FNV-1a checksum.
//!
//! The reader never panics on bad input. Running out of payload is `Corrupt` (the header's
//! length and checksum were fine, so the payload itself is malformed), a length prefix
//! larger than what is left is caught before anything is allocated, and a flag byte other
//! than 0 or 1 is refused.

use crate::math::{Mat3A, Quat, Vec3A};

use super::SnapshotError;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`. Each step (xor a byte, multiply by an odd number) is a
/// bijection of the state, so changing any single byte always changes the result.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// Appends values to a byte image.
#[derive(Default)]
pub(crate) struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, x: u8) {
        self.bytes.push(x);
    }

    pub fn bool(&mut self, x: bool) {
        self.u8(u8::from(x));
    }

    pub fn u16(&mut self, x: u16) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    pub fn u32(&mut self, x: u32) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    pub fn i32(&mut self, x: i32) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    pub fn u64(&mut self, x: u64) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }

    /// A count or index; the engine's ids are u32, so every count fits.
    pub fn count(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("world part lengths fit u32 (ids are u32)"));
    }

    pub fn f32(&mut self, x: f32) {
        self.u32(x.to_bits());
    }

    pub fn vec3(&mut self, v: Vec3A) {
        for x in v.to_array() {
            self.f32(x);
        }
    }

    pub fn quat(&mut self, q: Quat) {
        for x in q.to_array() {
            self.f32(x);
        }
    }

    pub fn mat3(&mut self, m: Mat3A) {
        for c in [m.x_axis, m.y_axis, m.z_axis] {
            self.vec3(c);
        }
    }
}

/// Reads values back from a payload.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

const ENDED: SnapshotError = SnapshotError::Corrupt("the payload ends inside a value");

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], SnapshotError> {
        let (head, tail) = self.bytes.split_first_chunk::<N>().ok_or(ENDED)?;
        self.bytes = tail;
        Ok(*head)
    }

    pub fn u8(&mut self) -> Result<u8, SnapshotError> {
        Ok(self.take::<1>()?[0])
    }

    pub fn bool(&mut self) -> Result<bool, SnapshotError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(SnapshotError::Corrupt("a flag byte is neither 0 nor 1")),
        }
    }

    pub fn u16(&mut self) -> Result<u16, SnapshotError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    pub fn u32(&mut self) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    pub fn i32(&mut self) -> Result<i32, SnapshotError> {
        Ok(i32::from_le_bytes(self.take()?))
    }

    pub fn u64(&mut self) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// A count of items each at least `min_item_bytes` long: refused before anything is
    /// allocated when the rest of the payload cannot hold that many.
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize, SnapshotError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_bytes.max(1)) > self.bytes.len() {
            return Err(ENDED);
        }
        Ok(n)
    }

    pub fn f32(&mut self) -> Result<f32, SnapshotError> {
        Ok(f32::from_bits(self.u32()?))
    }

    pub fn vec3(&mut self) -> Result<Vec3A, SnapshotError> {
        Ok(Vec3A::new(self.f32()?, self.f32()?, self.f32()?))
    }

    pub fn quat(&mut self) -> Result<Quat, SnapshotError> {
        Ok(Quat::from_xyzw(
            self.f32()?,
            self.f32()?,
            self.f32()?,
            self.f32()?,
        ))
    }

    pub fn mat3(&mut self) -> Result<Mat3A, SnapshotError> {
        Ok(Mat3A::from_cols(self.vec3()?, self.vec3()?, self.vec3()?))
    }

    /// A finite float (sizes, materials, poses).
    pub fn finite(&mut self, what: &'static str) -> Result<f32, SnapshotError> {
        let x = self.f32()?;
        check(x.is_finite(), what)?;
        Ok(x)
    }

    /// A vector with finite components.
    pub fn finite_vec3(&mut self, what: &'static str) -> Result<Vec3A, SnapshotError> {
        let v = self.vec3()?;
        check(v.is_finite(), what)?;
        Ok(v)
    }
}

/// `Corrupt(what)` unless `ok`.
pub(crate) fn check(ok: bool, what: &'static str) -> Result<(), SnapshotError> {
    if ok {
        Ok(())
    } else {
        Err(SnapshotError::Corrupt(what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference (Fowler, Noll, Vo): "" and "a".
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn values_round_trip_bit_exactly() {
        let mut w = Writer::default();
        let odd = [
            f32::from_bits(0x7fc0_1234),
            -0.0,
            f32::MIN_POSITIVE / 2.0,
            1.5,
        ];
        for x in odd {
            w.f32(x);
        }
        w.u64(u64::MAX - 7);
        w.bool(true);
        let mut r = Reader::new(&w.bytes);
        for x in odd {
            assert_eq!(r.f32().unwrap().to_bits(), x.to_bits());
        }
        assert_eq!(r.u64().unwrap(), u64::MAX - 7);
        assert!(r.bool().unwrap());
        assert!(r.is_empty());
        assert_eq!(r.u8(), Err(ENDED));
    }

    #[test]
    fn oversized_lengths_are_refused_before_allocating() {
        let mut w = Writer::default();
        w.u32(u32::MAX);
        assert_eq!(Reader::new(&w.bytes).count(1), Err(ENDED));
        let mut w = Writer::default();
        w.u32(2);
        w.u8(0);
        w.u8(2);
        let mut r = Reader::new(&w.bytes);
        assert_eq!(r.count(1), Ok(2));
        assert!(!r.bool().unwrap());
        assert!(r.bool().is_err(), "2 is not a flag");
    }
}
