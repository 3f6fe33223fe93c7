//! World snapshots: the whole state that influences future steps as one versioned byte
//! image, restored bit for bit.
//!
//! ```text
//!  offset  size  field
//!       0     8  magic "JOULESNP"
//!       8     4  format version (u32)             SNAPSHOT_VERSION
//!      12     8  payload length n (u64)
//!      20     n  payload
//!    20+n     8  64-bit FNV-1a of bytes 0 .. 20+n
//!
//!  payload:  settings (WorldDesc)      snapshot/mod.rs
//!            bodies, shapes, sets      snapshot/bodies.rs
//!            broad phase (two trees)   snapshot/broad_phase.rs
//!            contacts                  snapshot/contacts.rs
//!            joints                    snapshot/joints.rs
//!            exclusion list, material mixing (rules, pair table), step count
//! ```
//!
//! Every number is little-endian and every float is stored as its bit pattern, so a world
//! restored from an image is bit-identical to the one it was taken from: the same
//! `state_hash`, and stepping both gives the same states at every step, at any thread
//! count. The invariant restore keeps: an image is decoded and checked completely into new
//! parts first (header, checksum, then every index the engine follows without checking),
//! and only a fully valid image replaces anything. A refused image leaves the world
//! exactly as it was.
//!
//! Not in the image, by design:
//! - the job system (a world keeps its own; thread count does not change results);
//! - step listeners (closures: code, not data; `restore` keeps the world's own,
//!   `from_snapshot` starts with none);
//! - the events of the last step (contact, sensor, sleep): a restored world reports none
//!   until it steps;
//! - scratch buffers (collision, solver, islands, CCD): every step clears and refills them
//!   before reading, and the solver's constraint colouring is rebuilt each step from the
//!   contacts, which are saved;
//! - the contents of removed body and contact slots (only a body slot's generation is
//!   ever read again).
//!
//! `snapshot` destructures `World` and every saved part without `..`, so a field added to
//! any of them does not compile until someone decides whether it is state.
//!
//! ```
//! use joule_jobs::JobSystem;
//! use joule_physics::body::BodyDesc;
//! use joule_physics::world::{World, WorldDesc};
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! world.create_body(&BodyDesc::default())?;
//! let saved = world.snapshot(); // write saved.as_bytes() anywhere
//! let hash = world.state_hash();
//! for _ in 0..10 {
//!     world.step(1.0 / 60.0);
//! }
//! world.restore(saved.as_bytes())?; // back in time, bit for bit
//! assert_eq!(world.state_hash(), hash);
//! let copy = World::from_snapshot(saved.as_bytes(), JobSystem::new(2)?)?;
//! assert_eq!(copy.state_hash(), hash);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bodies;
mod broad_phase;
mod composite_shapes;
mod contacts;
pub mod dynamic;
mod joints;
mod wire;

pub use dynamic::DynamicSnapshot;

/// A free contact slot's content, for tests that build contacts by hand.
#[cfg(test)]
pub(crate) use contacts::dead_contact;

use std::fmt;

use joule_jobs::JobSystem;

use crate::body::Bodies;
use crate::body::filter::{ExclusionList, LayerTable};
use crate::collision::broad_phase::BroadPhase;
use crate::contact::ContactManager;
use crate::dynamics::island::SleepSettings;
use crate::dynamics::solver::SolverSettings;
use crate::material::{MaterialMixing, MixRule, RollingMaterial, SurfaceMaterial};
use crate::world::{World, WorldDesc};

use wire::{Reader, Writer, check, fnv1a};

/// The first eight bytes of every image.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"JOULESNP";
/// The image format this build writes and reads. Bumped whenever the payload's layout or
/// meaning changes; older images are refused, never misread.
pub const SNAPSHOT_VERSION: u32 = 9;
/// Where the payload length sits, and the bytes before the payload (magic, version,
/// payload length).
const LENGTH_AT: usize = 8 + 4;
const HEADER_LEN: usize = LENGTH_AT + 8;
/// Bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 8;

/// Why an image was refused. The world it was given to is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The bytes do not start with [`SNAPSHOT_MAGIC`]: they are not a joule snapshot (or
    /// the start of the file was lost). Check that you pass the bytes `Snapshot` gave you.
    BadMagic,
    /// The image was written by a build with another format version. Restore it with that
    /// build, or take a new snapshot with this one.
    UnsupportedVersion {
        /// The image's version.
        found: u32,
        /// The version this build reads ([`SNAPSHOT_VERSION`]).
        expected: u32,
    },
    /// The image is shorter than its header says: it was cut off while being written,
    /// sent or read. Save and load all of `Snapshot::as_bytes`.
    Truncated,
    /// The checksum does not match the bytes: the image was damaged in storage or
    /// transit. Use an intact copy.
    ChecksumMismatch,
    /// The header and checksum are fine but the payload describes an impossible world (an
    /// index out of range, a NaN where the engine keeps finite values, a broken free list);
    /// the string says what. Images written by `World::snapshot` never do this: it means
    /// a bug in the writer, or bytes built by hand.
    Corrupt(&'static str),
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::BadMagic => write!(f, "not a joule world snapshot (bad magic bytes)"),
            SnapshotError::UnsupportedVersion { found, expected } => write!(
                f,
                "snapshot format version {found} is not supported (this build reads {expected})"
            ),
            SnapshotError::Truncated => write!(f, "snapshot is truncated"),
            SnapshotError::ChecksumMismatch => write!(f, "snapshot checksum does not match"),
            SnapshotError::Corrupt(what) => write!(f, "snapshot is corrupt: {what}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// A world's state as a byte image (see the module header for its layout). Save
/// [`as_bytes`](Self::as_bytes) anywhere and hand the bytes back to
/// [`World::restore`] or [`World::from_snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    bytes: Vec<u8>,
}

impl Snapshot {
    /// The image.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The image, by value.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Size of the image in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always false: an image holds at least its header and checksum.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl AsRef<[u8]> for Snapshot {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// The saved parts of a world, decoded and checked, waiting to replace a world's own.
struct State {
    desc: WorldDesc,
    bodies: Bodies,
    broad_phase: BroadPhase,
    contacts: ContactManager,
    joints: crate::joint::Joints,
    exclusions: ExclusionList,
    mixing: MaterialMixing,
    step_count: u64,
}

impl World {
    /// Takes a snapshot of everything that influences future steps (see the module
    /// header for what is left out). Call it between steps.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        let mut bytes = Vec::new();
        self.snapshot_into(&mut bytes);
        Snapshot { bytes }
    }

    /// Writes the same image as [`snapshot`](Self::snapshot) into `buffer`, replacing
    /// its contents and keeping its capacity: once the buffer has held an image of this
    /// world's size, taking another allocates nothing (except a table of the convex hulls
    /// in use, for worlds that have any). For a rollback every frame,
    /// [`save_dynamic`](Self::save_dynamic) is cheaper still.
    pub fn snapshot_into(&self, buffer: &mut Vec<u8>) {
        let World {
            desc,
            // Not state: results do not depend on the thread count.
            jobs: _,
            bodies,
            broad_phase,
            contacts,
            joints,
            exclusions,
            mixing,
            // Dropped: the last step's output, cleared when the next step starts.
            events: _,
            sleep_events: _,
            // Cleared and refilled by every step before it is read.
            scratch: _,
            solver_scratch: _,
            island_scratch: _,
            ccd: _,
            step_count,
            // Code, not data.
            listeners: _,
            // Built from code; the context is empty between steps.
            step_graph: _,
            step_ctx: _,
            // Output waiting for the user, like `events`; no step reads it.
            event_queue: _,
            // Identifies this process's world structure for dynamic snapshots only.
            structure: _,
        } = self;
        buffer.clear();
        let mut w = Writer {
            bytes: std::mem::take(buffer),
        };
        w.bytes.extend_from_slice(&SNAPSHOT_MAGIC);
        w.u32(SNAPSHOT_VERSION);
        w.u64(0);
        write_desc(&mut w, desc);
        bodies::write_bodies(&mut w, bodies);
        broad_phase::write_broad_phase(&mut w, broad_phase);
        contacts::write_contacts(&mut w, contacts);
        joints::write_joints(&mut w, joints);
        write_exclusions(&mut w, exclusions);
        write_mixing(&mut w, mixing);
        w.u64(*step_count);
        let payload = (w.bytes.len() - HEADER_LEN) as u64;
        w.bytes[LENGTH_AT..HEADER_LEN].copy_from_slice(&payload.to_le_bytes());
        let checksum = fnv1a(&w.bytes);
        w.u64(checksum);
        *buffer = w.bytes;
    }

    /// Replaces this world's state, settings included, with the image's. The job system
    /// and step listeners stay the world's own; the last step's events are cleared. On
    /// error nothing changes. Call it between steps.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let state = decode(bytes)?;
        self.install(state);
        Ok(())
    }

    /// A new world running on `jobs` with the image's settings and state (and no step
    /// listeners).
    pub fn from_snapshot(bytes: &[u8], jobs: JobSystem) -> Result<World, SnapshotError> {
        let state = decode(bytes)?;
        let mut world = World::new(state.desc.clone(), jobs);
        world.install(state);
        Ok(world)
    }

    fn install(&mut self, state: State) {
        let State {
            desc,
            bodies,
            broad_phase,
            contacts,
            joints,
            exclusions,
            mixing,
            step_count,
        } = state;
        let mut bodies = bodies;
        // Every pose may have jumped: a presentation must not interpolate across it.
        for (slot, body) in bodies.bodies.iter_mut().enumerate() {
            let before = self.bodies.bodies.get(slot).map_or(0, |b| b.teleports);
            body.teleports = before.wrapping_add(1);
            // And its look may have changed: a recorder records it anew.
            let before = self.bodies.bodies.get(slot).map_or(0, |b| b.revision);
            body.revision = before.wrapping_add(1);
        }
        self.desc = desc;
        self.bodies = bodies;
        self.broad_phase = broad_phase;
        self.contacts = contacts;
        self.joints = joints;
        let pair_filter = self.exclusions.pair_filter.take();
        let contact_modifier = self.exclusions.contact_modifier.take();
        self.exclusions = exclusions;
        self.exclusions.pair_filter = pair_filter;
        self.exclusions.contact_modifier = contact_modifier;
        self.mixing = mixing;
        self.step_count = step_count;
        self.events.clear();
        self.sleep_events.clear();
        self.structure = dynamic::new_structure();
    }
}

/// Checks the header and checksum and returns the payload.
fn open(bytes: &[u8]) -> Result<&[u8], SnapshotError> {
    let magic_len = bytes.len().min(SNAPSHOT_MAGIC.len());
    if bytes[..magic_len] != SNAPSHOT_MAGIC[..magic_len] {
        return Err(SnapshotError::BadMagic);
    }
    let Some((header, rest)) = bytes.split_first_chunk::<HEADER_LEN>() else {
        return Err(SnapshotError::Truncated);
    };
    let mut r = Reader::new(&header[SNAPSHOT_MAGIC.len()..]);
    let version = r.u32()?;
    if version != SNAPSHOT_VERSION {
        return Err(SnapshotError::UnsupportedVersion {
            found: version,
            expected: SNAPSHOT_VERSION,
        });
    }
    let payload_len = r.u64()?;
    let available = (rest.len().saturating_sub(CHECKSUM_LEN)) as u64;
    if rest.len() < CHECKSUM_LEN || payload_len > available {
        return Err(SnapshotError::Truncated);
    }
    let end = HEADER_LEN + payload_len as usize;
    let stored = u64::from_le_bytes(
        bytes[end..end + CHECKSUM_LEN]
            .try_into()
            .expect("slice of CHECKSUM_LEN bytes"),
    );
    if fnv1a(&bytes[..end]) != stored {
        return Err(SnapshotError::ChecksumMismatch);
    }
    check(
        bytes.len() == end + CHECKSUM_LEN,
        "bytes follow the checksum",
    )?;
    Ok(&bytes[HEADER_LEN..end])
}

/// Decodes and checks a whole image into new parts.
fn decode(bytes: &[u8]) -> Result<State, SnapshotError> {
    let mut r = Reader::new(open(bytes)?);
    let desc = read_desc(&mut r)?;
    let bodies = bodies::read_bodies(&mut r, &desc.layers)?;
    let broad_phase = broad_phase::read_broad_phase(&mut r, &bodies)?;
    let contacts = contacts::read_contacts(&mut r, &bodies)?;
    let joints = joints::read_joints(&mut r, &bodies)?;
    let exclusions = read_exclusions(&mut r, &bodies)?;
    let mixing = read_mixing(&mut r)?;
    let step_count = r.u64()?;
    check(r.is_empty(), "the payload has bytes after its last part")?;
    Ok(State {
        desc,
        bodies,
        broad_phase,
        contacts,
        joints,
        exclusions,
        mixing,
        step_count,
    })
}

fn write_desc(w: &mut Writer, desc: &WorldDesc) {
    let WorldDesc {
        gravity,
        layers,
        contact_margin,
        broad_phase_margin,
        report_persist_events,
        solver,
        sleep,
    } = desc;
    w.vec3((*gravity).into());
    let LayerTable { count, bits } = layers;
    w.u16(*count);
    w.count(bits.len());
    for &b in bits {
        w.u64(b);
    }
    w.f32(*contact_margin);
    w.f32(*broad_phase_margin);
    w.bool(*report_persist_events);
    let SolverSettings {
        substeps,
        contact_hertz,
        contact_damping_ratio,
        max_push_out_speed,
        restitution_threshold,
        joint_tree_mass_ratio,
    } = solver;
    w.u32(*substeps);
    for x in [
        *contact_hertz,
        *contact_damping_ratio,
        *max_push_out_speed,
        *restitution_threshold,
        *joint_tree_mass_ratio,
    ] {
        w.f32(x);
    }
    let SleepSettings {
        enabled,
        linear_threshold,
        angular_threshold,
        time_to_sleep,
    } = sleep;
    w.bool(*enabled);
    for x in [*linear_threshold, *angular_threshold, *time_to_sleep] {
        w.f32(x);
    }
}

fn read_desc(r: &mut Reader<'_>) -> Result<WorldDesc, SnapshotError> {
    let setting = "a world setting is not finite";
    let gravity = r.finite_vec3(setting)?.into();
    let count = r.u16()?;
    let n = r.count(8)?;
    let bits = (0..n).map(|_| r.u64()).collect::<Result<Vec<_>, _>>()?;
    let layers = LayerTable { count, bits };
    check_layers(&layers)?;
    let contact_margin = r.finite(setting)?;
    let broad_phase_margin = r.finite(setting)?;
    let report_persist_events = r.bool()?;
    let solver = SolverSettings {
        substeps: r.u32()?,
        contact_hertz: r.finite(setting)?,
        contact_damping_ratio: r.finite(setting)?,
        max_push_out_speed: r.finite(setting)?,
        restitution_threshold: r.finite(setting)?,
        // Infinity is a valid ratio here (no tree solved exactly).
        joint_tree_mass_ratio: match r.f32()? {
            x if x.is_nan() => return Err(SnapshotError::Corrupt(setting)),
            x => x,
        },
    };
    let sleep = SleepSettings {
        enabled: r.bool()?,
        linear_threshold: r.finite(setting)?,
        angular_threshold: r.finite(setting)?,
        time_to_sleep: r.finite(setting)?,
    };
    Ok(WorldDesc {
        gravity,
        layers,
        contact_margin,
        broad_phase_margin,
        report_persist_events,
        solver,
        sleep,
    })
}

/// The table's shape (`LayerTable::all_colliding` sizes it; `collides` indexes by it), its
/// symmetry, and no bits past the last layer pair.
fn check_layers(t: &LayerTable) -> Result<(), SnapshotError> {
    let n = usize::from(t.count);
    check(
        t.bits.len() == (n * n).div_ceil(64).max(1),
        "the layer table has the wrong size",
    )?;
    let bit = |i: usize| t.bits[i / 64] & (1 << (i % 64)) != 0;
    check(
        (n * n..t.bits.len() * 64).all(|i| !bit(i)),
        "the layer table has bits past its last layer",
    )?;
    check(
        (0..n).all(|a| (0..a).all(|b| bit(a * n + b) == bit(b * n + a))),
        "the layer table is not symmetric",
    )
}

fn write_exclusions(w: &mut Writer, exclusions: &ExclusionList) {
    // The pair filter is code, not data (like step listeners).
    let ExclusionList {
        pairs,
        pair_filter: _,
        contact_modifier: _,
    } = exclusions;
    w.count(pairs.len());
    for &(a, b) in pairs {
        bodies::write_id(w, a);
        bodies::write_id(w, b);
    }
}

fn read_exclusions(r: &mut Reader<'_>, bodies: &Bodies) -> Result<ExclusionList, SnapshotError> {
    let n = r.count(16)?;
    let mut list = ExclusionList::default();
    for _ in 0..n {
        let (a, b) = (bodies::read_id(r)?, bodies::read_id(r)?);
        check(
            a <= b && bodies.get(a).is_ok() && bodies.get(b).is_ok(),
            "an excluded pair names a removed body",
        )?;
        check(list.insert(a, b), "an excluded pair is listed twice")?;
    }
    Ok(list)
}

fn mix_rule_code(rule: MixRule) -> u8 {
    match rule {
        MixRule::GeometricMean => 0,
        MixRule::Average => 1,
        MixRule::Min => 2,
        MixRule::Max => 3,
        MixRule::Multiply => 4,
    }
}

fn read_mix_rule(r: &mut Reader<'_>) -> Result<MixRule, SnapshotError> {
    Ok(match r.u8()? {
        0 => MixRule::GeometricMean,
        1 => MixRule::Average,
        2 => MixRule::Min,
        3 => MixRule::Max,
        4 => MixRule::Multiply,
        _ => return Err(SnapshotError::Corrupt("unknown mixing rule")),
    })
}

fn write_mixing(w: &mut Writer, mixing: &MaterialMixing) {
    let MaterialMixing {
        friction_rule,
        restitution_rule,
        pairs,
        surfaces,
        rolling_pairs,
    } = mixing;
    w.u8(mix_rule_code(*friction_rule));
    w.u8(mix_rule_code(*restitution_rule));
    w.count(pairs.len());
    for &((a, b), m) in pairs {
        w.u16(a);
        w.u16(b);
        w.f32(m.friction);
        w.f32(m.restitution);
    }
    w.count(surfaces.len());
    for &(id, m) in surfaces {
        w.u16(id);
        w.f32(m.friction);
        w.f32(m.restitution);
    }
    w.count(rolling_pairs.len());
    for &((a, b), m) in rolling_pairs {
        w.u16(a);
        w.u16(b);
        w.f32(m.rolling);
        w.f32(m.spinning);
    }
}

fn read_mixing(r: &mut Reader<'_>) -> Result<MaterialMixing, SnapshotError> {
    let mut mixing = MaterialMixing::new();
    let friction = read_mix_rule(r)?;
    let restitution = read_mix_rule(r)?;
    mixing.set_rules(friction, restitution);
    let pair_key = |r: &mut Reader<'_>| {
        let key = (r.u16()?, r.u16()?);
        check(key.0 <= key.1, "a material pair key is not ordered")?;
        Ok(key)
    };
    let surface = |r: &mut Reader<'_>| {
        Ok(SurfaceMaterial {
            friction: r.f32()?,
            restitution: r.f32()?,
        })
    };
    mixing.pairs = read_table(
        r,
        12,
        pair_key,
        surface,
        SurfaceMaterial::is_valid,
        "a material pair entry is unsorted or out of range",
    )?;
    mixing.surfaces = read_table(
        r,
        10,
        |r| r.u16(),
        surface,
        SurfaceMaterial::is_valid,
        "a part surface entry is unsorted or out of range",
    )?;
    let rolling = |r: &mut Reader<'_>| {
        Ok(RollingMaterial {
            rolling: r.f32()?,
            spinning: r.f32()?,
        })
    };
    mixing.rolling_pairs = read_table(
        r,
        12,
        pair_key,
        rolling,
        RollingMaterial::is_valid,
        "a rolling pair entry is unsorted or out of range",
    )?;
    Ok(mixing)
}

/// Reads a table of `(key, value)` entries (`entry_bytes` each) that must be sorted by
/// strictly increasing key and hold valid values, as the `MaterialMixing` tables are;
/// `what` is the error otherwise.
fn read_table<K: Ord + Copy, V>(
    r: &mut Reader<'_>,
    entry_bytes: usize,
    mut key: impl FnMut(&mut Reader<'_>) -> Result<K, SnapshotError>,
    mut value: impl FnMut(&mut Reader<'_>) -> Result<V, SnapshotError>,
    valid: impl Fn(&V) -> bool,
    what: &'static str,
) -> Result<Vec<(K, V)>, SnapshotError> {
    let n = r.count(entry_bytes)?;
    let mut out: Vec<(K, V)> = Vec::with_capacity(n);
    for _ in 0..n {
        let k = key(r)?;
        let sorted = out.last().is_none_or(|(last, _)| *last < k);
        let v = value(r)?;
        if !sorted || !valid(&v) {
            return Err(SnapshotError::Corrupt(what));
        }
        out.push((k, v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
