//! Snapshots on the wire, delta-coded against the last one the client acknowledged.
//!
//! A [`SnapshotState`] is the set of bodies a client knows at a tick: net ids, sorted,
//! with their [`BodyState`]s. The server codes the state at tick `t` against a baseline
//! the client has acknowledged (or against the empty state): the ids that left, the ids
//! whose state differs, and for each of those four flags (position, rotation, linear
//! velocity, angular velocity) and the parts that changed. A body whose quantized state
//! did not change costs nothing, so a sleeping island costs nothing; a position or
//! velocity is sent as its zigzagged difference from the baseline at a 5-bit width that
//! fits the largest of its three axes, a rotation whole in smallest-three form.
//!
//! Both sides rebuild the same state from the same baseline, so the server keeps what
//! each client will have (its [`SnapshotState`] per sent tick) and codes against it once
//! acknowledged; the client keeps the states it rebuilt, by tick, to decode the next.

use super::bits::{BitReader, BitWriter};
use super::config::{BodyState, Codec};
use super::error::WireError;
use super::ids::{read_sorted_ids, write_sorted_ids};
use super::quantize::SmallestThree;

/// The bodies a client knows at one tick, sorted by net id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SnapshotState {
    /// The server tick.
    pub tick: u32,
    /// `(net id, state)`, strictly ascending by net id.
    pub bodies: Vec<(u32, BodyState)>,
}

impl SnapshotState {
    /// The state of `net_id`, if present.
    #[must_use]
    pub fn get(&self, net_id: u32) -> Option<&BodyState> {
        self.bodies
            .binary_search_by_key(&net_id, |&(id, _)| id)
            .ok()
            .map(|i| &self.bodies[i].1)
    }
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

fn write_vec_delta(w: &mut BitWriter, value: [u32; 3], base: [u32; 3]) {
    let z = [0, 1, 2].map(|i| zigzag(i64::from(value[i]) - i64::from(base[i])));
    let width = z.iter().map(|v| 64 - v.leading_zeros()).max().unwrap_or(0);
    debug_assert!(width <= 31, "quantized axes have at most 30 bits");
    w.write(u64::from(width), 5);
    for v in z {
        w.write(v, width);
    }
}

fn read_vec_delta(
    r: &mut BitReader<'_>,
    base: [u32; 3],
    steps: [u32; 3],
    field: &'static str,
) -> Result<[u32; 3], WireError> {
    let width = r.read_u32(5, field)?;
    let mut out = [0u32; 3];
    for axis in 0..3 {
        let d = unzigzag(r.read(width, field)?);
        let v = i64::from(base[axis]) + d;
        if !(0..=i64::from(steps[axis])).contains(&v) {
            return Err(WireError::OutOfRange {
                field,
                max: u64::from(steps[axis]),
                actual: v.max(0) as u64,
            });
        }
        out[axis] = v as u32;
    }
    Ok(out)
}

/// Writes the snapshot `current` coded against `baseline` (the empty state when `None`;
/// its tick goes on the wire as 0, which no real snapshot uses, ticks starting at 1).
pub fn write_snapshot(
    w: &mut BitWriter,
    codec: &Codec,
    current: &SnapshotState,
    baseline: Option<&SnapshotState>,
) {
    let empty = SnapshotState::default();
    let base = baseline.unwrap_or(&empty);
    w.write(u64::from(current.tick), 32);
    w.write(u64::from(baseline.map_or(0, |b| b.tick)), 32);
    // Ids that left: in the baseline, not in the current state (a merge of two sorted
    // lists).
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < base.bodies.len() || j < current.bodies.len() {
        match (base.bodies.get(i), current.bodies.get(j)) {
            (Some(&(bid, _)), Some(&(cid, _))) if bid < cid => {
                removed.push(bid);
                i += 1;
            }
            (Some(&(bid, bs)), Some(&(cid, cs))) if bid == cid => {
                if bs != cs {
                    changed.push((cid, bs, cs));
                }
                i += 1;
                j += 1;
            }
            (_, Some(&(cid, cs))) => {
                changed.push((cid, BodyState::default(), cs));
                j += 1;
            }
            (Some(&(bid, _)), None) => {
                removed.push(bid);
                i += 1;
            }
            (None, None) => unreachable!("the loop runs while one list has items"),
        }
    }
    write_sorted_ids(w, &removed);
    let ids: Vec<u32> = changed.iter().map(|&(id, _, _)| id).collect();
    write_sorted_ids(w, &ids);
    let bits = codec.config().rotation_bits;
    for (_, b, c) in changed {
        let flags = [
            b.position != c.position,
            b.rotation != c.rotation,
            b.linear_velocity != c.linear_velocity,
            b.angular_velocity != c.angular_velocity,
        ];
        for f in flags {
            w.write_bool(f);
        }
        if flags[0] {
            write_vec_delta(w, c.position, b.position);
        }
        if flags[1] {
            w.write(u64::from(c.rotation.largest), 2);
            for s in c.rotation.small {
                w.write(u64::from(s), bits);
            }
        }
        if flags[2] {
            write_vec_delta(w, c.linear_velocity, b.linear_velocity);
        }
        if flags[3] {
            write_vec_delta(w, c.angular_velocity, b.angular_velocity);
        }
    }
}

/// The header of a snapshot: its tick and the baseline tick it is coded against (0 for
/// none).
///
/// # Errors
/// [`WireError::Truncated`].
pub fn read_snapshot_header(r: &mut BitReader<'_>) -> Result<(u32, u32), WireError> {
    let tick = r.read_u32(32, "snapshot.tick")?;
    let baseline = r.read_u32(32, "snapshot.baseline")?;
    if tick == 0 {
        return Err(WireError::OutOfRange {
            field: "snapshot.tick",
            max: u64::from(u32::MAX),
            actual: 0,
        });
    }
    Ok((tick, baseline))
}

/// Reads the rest of a snapshot after [`read_snapshot_header`], against `baseline`
/// (which the caller found by the header's baseline tick), and rebuilds the state.
///
/// # Errors
/// Any [`WireError`]: a removed id not in the baseline, a value outside its range,
/// more bodies than `max_bodies`, a truncated packet.
pub fn read_snapshot_body(
    r: &mut BitReader<'_>,
    codec: &Codec,
    tick: u32,
    baseline: Option<&SnapshotState>,
) -> Result<SnapshotState, WireError> {
    let empty = SnapshotState::default();
    let base = baseline.unwrap_or(&empty);
    let max = codec.config().max_bodies;
    let removed = read_sorted_ids(r, max, "snapshot.removed")?;
    // Each changed body costs at least its 4 flags.
    let changed = read_sorted_ids(r, max, "snapshot.changed")?;
    r.check_count(changed.len() as u32, max, 4, "snapshot.changed")?;
    let bits = codec.config().rotation_bits;
    let mut updates = Vec::with_capacity(changed.len());
    for id in changed {
        let mut s = base.get(id).copied().unwrap_or_default();
        let flags = [
            r.read_bool("snapshot.flags")?,
            r.read_bool("snapshot.flags")?,
            r.read_bool("snapshot.flags")?,
            r.read_bool("snapshot.flags")?,
        ];
        if flags[0] {
            s.position =
                read_vec_delta(r, s.position, codec.position.steps(), "snapshot.position")?;
        }
        if flags[1] {
            let largest = r.read_u32(2, "snapshot.rotation")? as u8;
            let mut small = [0u32; 3];
            for v in &mut small {
                *v = r.read_u32(bits, "snapshot.rotation")?;
            }
            s.rotation = SmallestThree { largest, small };
        }
        if flags[2] {
            s.linear_velocity = read_vec_delta(
                r,
                s.linear_velocity,
                codec.linear_velocity.steps(),
                "snapshot.linear_velocity",
            )?;
        }
        if flags[3] {
            s.angular_velocity = read_vec_delta(
                r,
                s.angular_velocity,
                codec.angular_velocity.steps(),
                "snapshot.angular_velocity",
            )?;
        }
        updates.push((id, s));
    }
    // Merge: baseline minus removed, with the updates laid over it.
    let mut bodies = Vec::with_capacity(base.bodies.len().min(max as usize) + updates.len());
    let mut removed = removed.into_iter().peekable();
    let mut updates = updates.into_iter().peekable();
    for &(id, s) in &base.bodies {
        while let Some(&(uid, us)) = updates.peek() {
            if uid >= id {
                break;
            }
            bodies.push((uid, us));
            updates.next();
        }
        let gone = removed.peek() == Some(&id);
        if gone {
            removed.next();
        }
        match updates.peek() {
            Some(&(uid, us)) if uid == id => {
                if gone {
                    return Err(WireError::NotAscending {
                        field: "snapshot.removed",
                    });
                }
                bodies.push((uid, us));
                updates.next();
            }
            _ if !gone => bodies.push((id, s)),
            _ => {}
        }
        if let Some(&r) = removed.peek()
            && r < id
        {
            return Err(WireError::OutOfRange {
                field: "snapshot.removed",
                max: u64::from(id),
                actual: u64::from(r),
            });
        }
    }
    if let Some(r) = removed.next() {
        return Err(WireError::OutOfRange {
            field: "snapshot.removed",
            max: base.bodies.last().map_or(0, |&(id, _)| u64::from(id)),
            actual: u64::from(r),
        });
    }
    bodies.extend(updates);
    if bodies.len() > max as usize {
        return Err(WireError::OutOfRange {
            field: "snapshot.bodies",
            max: u64::from(max),
            actual: bodies.len() as u64,
        });
    }
    Ok(SnapshotState { tick, bodies })
}

/// The bits a body costs in a snapshot coded against `base` (`None`: not in the
/// baseline), without its id: what the server's bandwidth budget counts.
#[must_use]
pub fn body_cost_bits(codec: &Codec, base: Option<&BodyState>, current: &BodyState) -> u64 {
    let b = base.copied().unwrap_or_default();
    let vec_bits = |v: [u32; 3], base: [u32; 3]| -> u64 {
        let widest = (0..3)
            .map(|i| 64 - zigzag(i64::from(v[i]) - i64::from(base[i])).leading_zeros())
            .max()
            .unwrap_or(0);
        5 + 3 * u64::from(widest)
    };
    let mut bits = 4 + 1;
    if b.position != current.position {
        bits += vec_bits(current.position, b.position);
    }
    if b.rotation != current.rotation {
        bits += 2 + 3 * u64::from(codec.config().rotation_bits);
    }
    if b.linear_velocity != current.linear_velocity {
        bits += vec_bits(current.linear_velocity, b.linear_velocity);
    }
    if b.angular_velocity != current.angular_velocity {
        bits += vec_bits(current.angular_velocity, b.angular_velocity);
    }
    bits
}
