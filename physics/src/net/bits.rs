//! The bit-packed archive: a writer that packs fields of any width, and a reader that
//! never reads past its packet.
//!
//! Fields are packed least-significant bit first into bytes; the last byte is padded with
//! zeros. The reader knows the packet's length in bits, checks every read against it and
//! returns [`WireError::Truncated`] naming the field, so decoders built on it cannot read
//! out of bounds; [`BitReader::check_count`] bounds every count read from the packet by
//! the bits left, which is what bounds a decoder's allocations by the packet's length.

use super::error::WireError;

/// Packs fields of 0 to 64 bits into bytes.
#[derive(Clone, Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    scratch: u64,
    scratch_bits: u32,
}

impl BitWriter {
    /// An empty writer.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the low `bits` bits of `value`.
    ///
    /// # Panics
    /// If `bits > 64` or `value` does not fit in `bits` bits: the encoder's own bug.
    pub fn write(&mut self, value: u64, bits: u32) {
        assert!(bits <= 64, "BitWriter::write: at most 64 bits, got {bits}");
        assert!(
            bits == 64 || value >> bits == 0,
            "BitWriter::write: {value} does not fit in {bits} bits"
        );
        if bits > 32 {
            self.write(value & 0xffff_ffff, 32);
            self.write(value >> 32, bits - 32);
            return;
        }
        self.scratch |= value << self.scratch_bits;
        self.scratch_bits += bits;
        while self.scratch_bits >= 8 {
            self.bytes.push(self.scratch as u8);
            self.scratch >>= 8;
            self.scratch_bits -= 8;
        }
    }

    /// Writes one flag.
    pub fn write_bool(&mut self, value: bool) {
        self.write(u64::from(value), 1);
    }

    /// Writes a `u32` in a 6-bit width and that many bits: small values cost little.
    pub fn write_var(&mut self, value: u32) {
        let width = 32 - value.leading_zeros();
        self.write(u64::from(width), 6);
        self.write(u64::from(value), width);
    }

    /// Writes an `f32`'s bits.
    pub fn write_f32(&mut self, value: f32) {
        self.write(u64::from(value.to_bits()), 32);
    }

    /// Writes an `f64`'s bits.
    pub fn write_f64(&mut self, value: f64) {
        self.write(value.to_bits(), 64);
    }

    /// Bits written so far.
    #[must_use]
    pub fn bit_len(&self) -> u64 {
        self.bytes.len() as u64 * 8 + u64::from(self.scratch_bits)
    }

    /// The packed bytes, the last one padded with zeros.
    #[must_use]
    pub fn finish(mut self) -> Vec<u8> {
        if self.scratch_bits > 0 {
            self.bytes.push(self.scratch as u8);
        }
        self.bytes
    }
}

/// Reads fields back from a packet, refusing any read past its end.
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    position: u64,
}

impl<'a> BitReader<'a> {
    /// A reader at the start of `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, position: 0 }
    }

    /// Bits not yet read.
    #[must_use]
    pub fn remaining_bits(&self) -> u64 {
        self.bytes.len() as u64 * 8 - self.position
    }

    /// Reads `bits` bits (at most 64).
    ///
    /// # Errors
    /// [`WireError::Truncated`] naming `field` when fewer bits are left.
    pub fn read(&mut self, bits: u32, field: &'static str) -> Result<u64, WireError> {
        debug_assert!(bits <= 64, "BitReader::read: at most 64 bits");
        let left = self.remaining_bits();
        if u64::from(bits) > left {
            return Err(WireError::Truncated {
                field,
                needed: u64::from(bits),
                left,
            });
        }
        let mut value = 0u64;
        let mut done = 0u32;
        while done < bits {
            let byte = self.bytes[(self.position / 8) as usize];
            let offset = (self.position % 8) as u32;
            let take = (8 - offset).min(bits - done);
            let chunk = (u64::from(byte) >> offset) & ((1u64 << take) - 1);
            value |= chunk << done;
            done += take;
            self.position += u64::from(take);
        }
        Ok(value)
    }

    /// Reads a value of `bits` bits (at most 32) as a `u32`.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_u32(&mut self, bits: u32, field: &'static str) -> Result<u32, WireError> {
        debug_assert!(bits <= 32, "BitReader::read_u32: at most 32 bits");
        Ok(self.read(bits, field)? as u32)
    }

    /// Reads one flag.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_bool(&mut self, field: &'static str) -> Result<bool, WireError> {
        Ok(self.read(1, field)? == 1)
    }

    /// Reads what [`BitWriter::write_var`] wrote.
    ///
    /// # Errors
    /// [`WireError::OutOfRange`] for a width above 32, or as [`read`](Self::read).
    pub fn read_var(&mut self, field: &'static str) -> Result<u32, WireError> {
        let width = self.read(6, field)?;
        if width > 32 {
            return Err(WireError::OutOfRange {
                field,
                max: 32,
                actual: width,
            });
        }
        self.read_u32(width as u32, field)
    }

    /// Reads a finite `f32` of magnitude at most `max`.
    ///
    /// # Errors
    /// [`WireError::NotFinite`], [`WireError::FloatOutOfRange`], or as
    /// [`read`](Self::read).
    pub fn read_f32(&mut self, max: f32, field: &'static str) -> Result<f32, WireError> {
        let value = f32::from_bits(self.read(32, field)? as u32);
        if !value.is_finite() {
            return Err(WireError::NotFinite { field });
        }
        if value.abs() > max {
            return Err(WireError::FloatOutOfRange {
                field,
                max: f64::from(max),
                actual: f64::from(value),
            });
        }
        Ok(value)
    }

    /// Reads a finite `f64` in `[0, max]`.
    ///
    /// # Errors
    /// As [`read_f32`](Self::read_f32).
    pub fn read_time(&mut self, max: f64, field: &'static str) -> Result<f64, WireError> {
        let value = f64::from_bits(self.read(64, field)?);
        if !value.is_finite() {
            return Err(WireError::NotFinite { field });
        }
        if !(0.0..=max).contains(&value) {
            return Err(WireError::FloatOutOfRange {
                field,
                max,
                actual: value,
            });
        }
        Ok(value)
    }

    /// Checks a count read from the packet before anything is allocated for it: at most
    /// `max`, and at most one element per `min_bits_each` bits left (one per bit when an
    /// element may cost nothing), so an allocation is never larger than the packet allows.
    ///
    /// # Errors
    /// [`WireError::OutOfRange`] naming `field`.
    pub fn check_count(
        &self,
        count: u32,
        max: u32,
        min_bits_each: u32,
        field: &'static str,
    ) -> Result<usize, WireError> {
        let by_length = self.remaining_bits() / u64::from(min_bits_each.max(1));
        let bound = u64::from(max).min(by_length);
        if u64::from(count) > bound {
            return Err(WireError::OutOfRange {
                field,
                max: bound,
                actual: u64::from(count),
            });
        }
        Ok(count as usize)
    }

    /// Checks that nothing but the last byte's padding is left.
    ///
    /// # Errors
    /// [`WireError::TrailingBytes`].
    pub fn finish(&self) -> Result<(), WireError> {
        let left = self.remaining_bits();
        if left >= 8 {
            return Err(WireError::TrailingBytes {
                left: (left / 8) as usize,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_every_width_come_back() {
        let mut w = BitWriter::new();
        let mut expected = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for bits in 0..=64u32 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = if bits == 64 {
                x
            } else {
                x & ((1u64 << bits) - 1)
            };
            w.write(v, bits);
            expected.push((v, bits));
        }
        let total = w.bit_len();
        assert_eq!(total, (0..=64u64).sum::<u64>());
        let bytes = w.finish();
        assert_eq!(bytes.len() as u64, total.div_ceil(8));
        let mut r = BitReader::new(&bytes);
        for (v, bits) in expected {
            assert_eq!(r.read(bits, "field").unwrap(), v, "{bits} bits");
        }
        r.finish().unwrap();
        assert!(matches!(
            r.read(8, "past"),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn a_count_is_bounded_by_the_bits_left() {
        let bytes = [0u8; 4];
        let r = BitReader::new(&bytes);
        assert_eq!(r.check_count(32, 1000, 1, "n").unwrap(), 32);
        assert!(r.check_count(33, 1000, 1, "n").is_err());
        assert!(r.check_count(9, 1000, 4, "n").is_err());
        assert!(r.check_count(9, 8, 1, "n").is_err());
    }
}
