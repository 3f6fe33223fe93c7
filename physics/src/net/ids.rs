//! Sorted id arrays, delta-coded at the bit width of the largest delta (seed 000
//! §Snapshot packet serialization).
//!
//! Layout: the count ([`BitWriter::write_var`]); when not empty, the first id
//! (`write_var`), 6 bits of width `w` (1 to 32), then `count - 1` gaps of `w` bits each,
//! a gap being `next - previous - 1` (ids are strictly ascending, so gaps are never
//! negative). Consecutive ids, which is what a server's dense net ids mostly are, cost
//! one bit each: the width is at least 1 so that every id costs a bit, which is what
//! bounds the array a reader allocates by the packet's length (4 bytes per bit).

use super::bits::{BitReader, BitWriter};
use super::error::WireError;

/// Writes `ids`, which must be strictly ascending.
///
/// # Panics
/// If `ids` is not strictly ascending: the encoder's own bug.
pub fn write_sorted_ids(w: &mut BitWriter, ids: &[u32]) {
    w.write_var(ids.len() as u32);
    let Some((&first, rest)) = ids.split_first() else {
        return;
    };
    let mut widest = 0u32;
    let mut previous = first;
    for &id in rest {
        assert!(
            id > previous,
            "write_sorted_ids: ids must be strictly ascending"
        );
        widest = widest.max(id - previous - 1);
        previous = id;
    }
    let width = (32 - widest.leading_zeros()).max(1);
    w.write_var(first);
    w.write(u64::from(width), 6);
    let mut previous = first;
    for &id in rest {
        w.write(u64::from(id - previous - 1), width);
        previous = id;
    }
}

/// Reads what [`write_sorted_ids`] wrote: at most `max` ids, strictly ascending.
///
/// # Errors
/// [`WireError::OutOfRange`] for a count above `max` or above the bits left, or a width
/// above 32; [`WireError::NotAscending`] when an id passes `u32::MAX`;
/// [`WireError::Truncated`].
pub fn read_sorted_ids(
    r: &mut BitReader<'_>,
    max: u32,
    field: &'static str,
) -> Result<Vec<u32>, WireError> {
    let count = r.read_var(field)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let first = r.read_var(field)?;
    let width = r.read(6, field)?;
    if !(1..=32).contains(&width) {
        return Err(WireError::OutOfRange {
            field,
            max: 32,
            actual: width,
        });
    }
    // Every gap costs `width` bits, so the count is bounded by the bits left before
    // anything is allocated.
    let gaps = r.check_count(count - 1, max.saturating_sub(1), width as u32, field)?;
    let mut ids = Vec::with_capacity(gaps + 1);
    ids.push(first);
    let mut previous = first;
    for _ in 0..gaps {
        let gap = r.read_u32(width as u32, field)?;
        let next = previous
            .checked_add(gap)
            .and_then(|v| v.checked_add(1))
            .ok_or(WireError::NotAscending { field })?;
        ids.push(next);
        previous = next;
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ids: &[u32]) -> u64 {
        let mut w = BitWriter::new();
        write_sorted_ids(&mut w, ids);
        let bits = w.bit_len();
        let bytes = w.finish();
        let mut r = BitReader::new(&bytes);
        assert_eq!(read_sorted_ids(&mut r, u32::MAX, "ids").unwrap(), ids);
        r.finish().unwrap();
        bits
    }

    #[test]
    fn arrays_come_back_and_cost_the_width_of_the_largest_gap() {
        assert_eq!(round_trip(&[]), 6);
        // 1000 consecutive ids: count (6 + 10), first (6 + 3), width 6, 999 gaps of 1 bit.
        let dense: Vec<u32> = (5..1005).collect();
        assert_eq!(round_trip(&dense), 16 + 9 + 6 + 999);
        // Every third id: gaps of 2, 2 bits each.
        let sparse: Vec<u32> = (0..300).map(|i| i * 3).collect();
        assert_eq!(round_trip(&sparse), (6 + 9) + 6 + 6 + 299 * 2);
        round_trip(&[0, u32::MAX]);
        round_trip(&[u32::MAX]);
    }

    #[test]
    fn an_id_past_u32_max_is_refused() {
        let mut w = BitWriter::new();
        w.write_var(2);
        w.write_var(u32::MAX);
        w.write(1, 6);
        w.write(0, 1);
        let bytes = w.finish();
        let err = read_sorted_ids(&mut BitReader::new(&bytes), 100, "ids").unwrap_err();
        assert_eq!(err, WireError::NotAscending { field: "ids" });
    }
}
