//! The packets: what the server sends, what a client sends, and their codecs.
//!
//! Every packet starts with a 3-bit kind. Decoders check every field (counts against the
//! configuration and the packet's length, ids, tags, NaN and infinities, ranges) and
//! refuse the packet whole with a [`WireError`] naming the field; nothing is applied
//! from a refused packet.

use crate::math::{Isometry, Vec3};

use super::MAX_PACKET_BYTES;
use super::bits::{BitReader, BitWriter};
use super::config::{BodyState, Codec};
use super::error::WireError;
use super::ids::{read_sorted_ids, write_sorted_ids};
use super::quantize::SmallestThree;
use super::shapes::{MAX_SHAPE_BYTES, SHAPE_PART_BYTES, read_pose, write_pose};
use super::snapshot::{SnapshotState, read_snapshot_body, read_snapshot_header, write_snapshot};

/// The largest time stamp (seconds since a side started) a packet may carry: about 115
/// days.
pub const MAX_TIME: f64 = 1.0e7;

use super::joints::JointSpawn;
pub use super::shapes::{MAX_SHAPE_SIZE, ShapeDef};

/// The largest friction or restitution a spawn may carry.
pub const MAX_SURFACE: f32 = 1.0e3;

/// How a spawned body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetMotion {
    /// Never moves.
    Static,
    /// Moved by the server's step.
    Dynamic,
    /// Moved by the server's game code.
    Kinematic,
}

/// A body entering a client's view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spawn {
    /// The body's net id (the server's, never reused).
    pub net_id: u32,
    /// Its shape's id, defined in this message or an earlier one.
    pub shape_id: u32,
    /// How it moves.
    pub motion: NetMotion,
    /// Its state when it entered.
    pub state: BodyState,
    /// Its friction coefficient.
    pub friction: f32,
    /// Its restitution.
    pub restitution: f32,
    /// Its material id ([`MaterialId`](crate::material::MaterialId)'s number).
    pub material: u16,
    /// A static body's exact pose (`None` for the others, which snapshots move): its
    /// snapshots never come, and a quantized rotation would tilt a large level piece by
    /// up to 0.3 mrad (5 mm at 15 m).
    pub pose: Option<Isometry>,
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMessage {
    /// Transient state (unreliable): the bodies' states at a tick, delta-coded.
    Snapshot(SnapshotState),
    /// Creation and destruction (reliable, in order): bodies and joints entering and
    /// leaving this client's view, and the bodies the client owns. The shapes the
    /// spawns name came before, in [`ShapePart`](Self::ShapePart)s.
    World {
        /// Bodies entering, net ids ascending.
        spawns: Vec<Spawn>,
        /// Bodies leaving, net ids ascending.
        despawns: Vec<u32>,
        /// Bodies this client now owns and may push, net ids ascending.
        owned: Vec<u32>,
        /// Joints entering (both bodies in view after this message), net ids ascending.
        joints: Vec<JointSpawn>,
        /// Joints leaving, net ids ascending (a joint whose body leaves leaves too, and
        /// is listed here).
        joint_despawns: Vec<u32>,
    },
    /// A part of a shape definition (reliable, in order): bytes `offset..offset +
    /// data.len()` of [`ShapeDef::encode`]'s `total` bytes, at most
    /// [`SHAPE_PART_BYTES`] of them.
    ShapePart {
        /// The shape's id.
        shape_id: u32,
        /// The whole definition's length in bytes, at most
        /// [`MAX_SHAPE_BYTES`].
        total: u32,
        /// Where this part starts.
        offset: u32,
        /// The bytes.
        data: Vec<u8>,
    },
    /// The answer to a [`ClientMessage::TimeReq`] (unreliable).
    TimeRes {
        /// The request's id.
        id: u32,
        /// The server's clock when it answered, in seconds.
        server_time: f64,
    },
}

/// One action of an input frame: an impulse on a body the client owns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Action {
    /// The body's net id.
    pub body: u32,
    /// The impulse, N·s.
    pub impulse: Vec3,
}

/// A client's actions of one of its frames, stamped with its clock.
#[derive(Clone, Debug, PartialEq)]
pub struct InputFrame {
    /// The frame's sequence number, ascending from 1.
    pub seq: u32,
    /// The client's clock when the frame was made, in seconds.
    pub time: f64,
    /// The actions.
    pub actions: Vec<Action>,
}

/// A message from a client.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientMessage {
    /// A clock-synchronization request with a random id.
    TimeReq {
        /// Echoed in the response.
        id: u32,
    },
    /// The acknowledgement of the newest snapshot rebuilt, and the input history.
    Update {
        /// The newest snapshot tick this client rebuilt (0 for none).
        ack: u32,
        /// The last frames, sequence numbers ascending.
        inputs: Vec<InputFrame>,
    },
}

const KIND_SNAPSHOT: u64 = 1;
const KIND_WORLD: u64 = 2;
const KIND_TIME_RES: u64 = 3;
const KIND_TIME_REQ: u64 = 4;
const KIND_UPDATE: u64 = 5;
const KIND_SHAPE_PART: u64 = 6;

fn write_state(w: &mut BitWriter, codec: &Codec, s: &BodyState) {
    let bits = |q: &super::quantize::Quantizer| q.bits();
    for (v, b) in s.position.iter().zip(bits(&codec.position)) {
        w.write(u64::from(*v), b);
    }
    w.write(u64::from(s.rotation.largest), 2);
    for v in s.rotation.small {
        w.write(u64::from(v), codec.config().rotation_bits);
    }
    for (v, b) in s.linear_velocity.iter().zip(bits(&codec.linear_velocity)) {
        w.write(u64::from(*v), b);
    }
    for (v, b) in s.angular_velocity.iter().zip(bits(&codec.angular_velocity)) {
        w.write(u64::from(*v), b);
    }
}

fn read_axes(
    r: &mut BitReader<'_>,
    q: &super::quantize::Quantizer,
    field: &'static str,
) -> Result<[u32; 3], WireError> {
    let mut out = [0u32; 3];
    for ((o, bits), steps) in out.iter_mut().zip(q.bits()).zip(q.steps()) {
        let v = r.read_u32(bits, field)?;
        if v > steps {
            return Err(WireError::OutOfRange {
                field,
                max: u64::from(steps),
                actual: u64::from(v),
            });
        }
        *o = v;
    }
    Ok(out)
}

fn read_state(r: &mut BitReader<'_>, codec: &Codec) -> Result<BodyState, WireError> {
    let position = read_axes(r, &codec.position, "spawn.position")?;
    let largest = r.read_u32(2, "spawn.rotation")? as u8;
    let mut small = [0u32; 3];
    for v in &mut small {
        *v = r.read_u32(codec.config().rotation_bits, "spawn.rotation")?;
    }
    Ok(BodyState {
        position,
        rotation: SmallestThree { largest, small },
        linear_velocity: read_axes(r, &codec.linear_velocity, "spawn.linear_velocity")?,
        angular_velocity: read_axes(r, &codec.angular_velocity, "spawn.angular_velocity")?,
    })
}

fn read_surface(r: &mut BitReader<'_>, field: &'static str) -> Result<f32, WireError> {
    let v = r.read_f32(MAX_SURFACE, field)?;
    if v < 0.0 {
        return Err(WireError::FloatOutOfRange {
            field,
            max: f64::from(MAX_SURFACE),
            actual: f64::from(v),
        });
    }
    Ok(v)
}

fn check_ascending(ids: impl Iterator<Item = u32>, field: &'static str) -> Result<(), WireError> {
    let mut previous = None;
    for id in ids {
        if previous.is_some_and(|p| id <= p) {
            return Err(WireError::NotAscending { field });
        }
        previous = Some(id);
    }
    Ok(())
}

fn check_length(bytes: &[u8]) -> Result<(), WireError> {
    if bytes.len() > MAX_PACKET_BYTES {
        return Err(WireError::TooLong {
            actual: bytes.len(),
        });
    }
    Ok(())
}

impl ServerMessage {
    /// Encodes a snapshot of `current` coded against `baseline`.
    #[must_use]
    pub fn encode_snapshot(
        codec: &Codec,
        current: &SnapshotState,
        baseline: Option<&SnapshotState>,
    ) -> Vec<u8> {
        let mut w = BitWriter::new();
        w.write(KIND_SNAPSHOT, 3);
        write_snapshot(&mut w, codec, current, baseline);
        w.finish()
    }

    /// Encodes this message; a snapshot is coded against nothing (use
    /// [`encode_snapshot`](Self::encode_snapshot) to code one against a baseline).
    ///
    /// # Panics
    /// If an id list is not strictly ascending, or a spawn has a pose and is not static
    /// (or the other way round): the server's own bug.
    #[must_use]
    pub fn encode(&self, codec: &Codec) -> Vec<u8> {
        match self {
            ServerMessage::Snapshot(s) => Self::encode_snapshot(codec, s, None),
            ServerMessage::World {
                spawns,
                despawns,
                owned,
                joints,
                joint_despawns,
            } => {
                let mut w = BitWriter::new();
                w.write(KIND_WORLD, 3);
                let spawn_ids: Vec<u32> = spawns.iter().map(|s| s.net_id).collect();
                write_sorted_ids(&mut w, &spawn_ids);
                for s in spawns {
                    w.write_var(s.shape_id);
                    w.write(
                        match s.motion {
                            NetMotion::Static => 0,
                            NetMotion::Dynamic => 1,
                            NetMotion::Kinematic => 2,
                        },
                        2,
                    );
                    write_state(&mut w, codec, &s.state);
                    w.write_f32(s.friction);
                    w.write_f32(s.restitution);
                    w.write(u64::from(s.material), 16);
                    assert_eq!(
                        s.pose.is_some(),
                        s.motion == NetMotion::Static,
                        "Spawn::pose: exactly the static bodies have one"
                    );
                    if let Some(pose) = &s.pose {
                        write_pose(&mut w, pose);
                    }
                }
                write_sorted_ids(&mut w, despawns);
                write_sorted_ids(&mut w, owned);
                let joint_ids: Vec<u32> = joints.iter().map(|j| j.net_id).collect();
                write_sorted_ids(&mut w, &joint_ids);
                for j in joints {
                    j.write(&mut w);
                }
                write_sorted_ids(&mut w, joint_despawns);
                w.finish()
            }
            ServerMessage::ShapePart {
                shape_id,
                total,
                offset,
                data,
            } => {
                let mut w = BitWriter::new();
                w.write(KIND_SHAPE_PART, 3);
                w.write_var(*shape_id);
                w.write_var(*total);
                w.write_var(*offset);
                w.write_var(data.len() as u32);
                for &b in data {
                    w.write(u64::from(b), 8);
                }
                w.finish()
            }
            ServerMessage::TimeRes { id, server_time } => {
                let mut w = BitWriter::new();
                w.write(KIND_TIME_RES, 3);
                w.write(u64::from(*id), 32);
                w.write_f64(*server_time);
                w.finish()
            }
        }
    }

    /// Decodes a server packet; `baseline` finds a snapshot's baseline by tick (return
    /// `None` for one this side does not hold).
    ///
    /// # Errors
    /// Any [`WireError`]; [`WireError::UnknownBaseline`] for a snapshot coded against a
    /// tick `baseline` does not know.
    pub fn decode<'s>(
        bytes: &[u8],
        codec: &Codec,
        baseline: impl FnOnce(u32) -> Option<&'s SnapshotState>,
    ) -> Result<ServerMessage, WireError> {
        check_length(bytes)?;
        let mut r = BitReader::new(bytes);
        let msg = match r.read(3, "packet.kind")? {
            KIND_SNAPSHOT => {
                let (tick, base_tick) = read_snapshot_header(&mut r)?;
                let base = if base_tick == 0 {
                    None
                } else {
                    Some(
                        baseline(base_tick)
                            .ok_or(WireError::UnknownBaseline { tick: base_tick })?,
                    )
                };
                ServerMessage::Snapshot(read_snapshot_body(&mut r, codec, tick, base)?)
            }
            KIND_WORLD => {
                let max = codec.config().max_bodies;
                let spawn_ids = read_sorted_ids(&mut r, max, "world.spawns")?;
                r.check_count(spawn_ids.len() as u32, max, 8, "world.spawns")?;
                let mut spawns = Vec::with_capacity(spawn_ids.len());
                for net_id in spawn_ids {
                    let shape_id = r.read_var("world.spawn.shape_id")?;
                    let motion = match r.read(2, "world.spawn.motion")? {
                        0 => NetMotion::Static,
                        1 => NetMotion::Dynamic,
                        2 => NetMotion::Kinematic,
                        tag => {
                            return Err(WireError::OutOfRange {
                                field: "world.spawn.motion",
                                max: 2,
                                actual: tag,
                            });
                        }
                    };
                    let state = read_state(&mut r, codec)?;
                    let friction = read_surface(&mut r, "world.spawn.friction")?;
                    let restitution = read_surface(&mut r, "world.spawn.restitution")?;
                    let material = r.read(16, "world.spawn.material")? as u16;
                    let pose = if motion == NetMotion::Static {
                        Some(read_pose(&mut r, "world.spawn.pose")?)
                    } else {
                        None
                    };
                    spawns.push(Spawn {
                        net_id,
                        shape_id,
                        motion,
                        state,
                        friction,
                        restitution,
                        material,
                        pose,
                    });
                }
                let despawns = read_sorted_ids(&mut r, max, "world.despawns")?;
                let owned = read_sorted_ids(&mut r, max, "world.owned")?;
                let joint_ids = read_sorted_ids(&mut r, max, "world.joints")?;
                // A joint is at least its body (6), kind (3), frames (448) and flags (3).
                r.check_count(joint_ids.len() as u32, max, 460, "world.joints")?;
                let mut joints = Vec::with_capacity(joint_ids.len());
                for net_id in joint_ids {
                    joints.push(JointSpawn::read(&mut r, net_id)?);
                }
                let joint_despawns = read_sorted_ids(&mut r, max, "world.joint_despawns")?;
                ServerMessage::World {
                    spawns,
                    despawns,
                    owned,
                    joints,
                    joint_despawns,
                }
            }
            KIND_SHAPE_PART => {
                let shape_id = r.read_var("shape_part.shape_id")?;
                let total = r.read_var("shape_part.total")?;
                if total == 0 || total > MAX_SHAPE_BYTES {
                    return Err(WireError::OutOfRange {
                        field: "shape_part.total",
                        max: u64::from(MAX_SHAPE_BYTES),
                        actual: u64::from(total),
                    });
                }
                let offset = r.read_var("shape_part.offset")?;
                if offset >= total {
                    return Err(WireError::OutOfRange {
                        field: "shape_part.offset",
                        max: u64::from(total - 1),
                        actual: u64::from(offset),
                    });
                }
                let len = r.read_var("shape_part.data")?;
                let most = (total - offset).min(SHAPE_PART_BYTES as u32);
                let len = r.check_count(len, most, 8, "shape_part.data")?;
                if len == 0 {
                    return Err(WireError::OutOfRange {
                        field: "shape_part.data (at least 1 byte)",
                        max: u64::from(most),
                        actual: 0,
                    });
                }
                let mut data = Vec::with_capacity(len);
                for _ in 0..len {
                    data.push(r.read(8, "shape_part.data")? as u8);
                }
                ServerMessage::ShapePart {
                    shape_id,
                    total,
                    offset,
                    data,
                }
            }
            KIND_TIME_RES => ServerMessage::TimeRes {
                id: r.read_u32(32, "time_res.id")?,
                server_time: r.read_time(MAX_TIME, "time_res.server_time")?,
            },
            kind => {
                return Err(WireError::OutOfRange {
                    field: "packet.kind",
                    max: KIND_SHAPE_PART,
                    actual: kind,
                });
            }
        };
        r.finish()?;
        Ok(msg)
    }
}

impl ClientMessage {
    /// Encodes this message.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = BitWriter::new();
        match self {
            ClientMessage::TimeReq { id } => {
                w.write(KIND_TIME_REQ, 3);
                w.write(u64::from(*id), 32);
            }
            ClientMessage::Update { ack, inputs } => {
                w.write(KIND_UPDATE, 3);
                w.write(u64::from(*ack), 32);
                w.write_var(inputs.len() as u32);
                for frame in inputs {
                    w.write(u64::from(frame.seq), 32);
                    w.write_f64(frame.time);
                    w.write_var(frame.actions.len() as u32);
                    for a in &frame.actions {
                        w.write_var(a.body);
                        for v in a.impulse.to_array() {
                            w.write_f32(v);
                        }
                    }
                }
            }
        }
        w.finish()
    }

    /// Decodes and validates a client packet: counts within the configuration, sequence
    /// numbers ascending, times and impulses finite and in range.
    ///
    /// # Errors
    /// Any [`WireError`] naming the field.
    pub fn decode(bytes: &[u8], codec: &Codec) -> Result<ClientMessage, WireError> {
        check_length(bytes)?;
        let config = codec.config();
        let mut r = BitReader::new(bytes);
        let msg = match r.read(3, "packet.kind")? {
            KIND_TIME_REQ => ClientMessage::TimeReq {
                id: r.read_u32(32, "time_req.id")?,
            },
            KIND_UPDATE => {
                let ack = r.read_u32(32, "update.ack")?;
                let n = r.read_var("update.inputs")?;
                // A frame is at least 32 + 64 + 6 bits.
                let n = r.check_count(n, config.input_history, 102, "update.inputs")?;
                let mut inputs = Vec::with_capacity(n);
                for _ in 0..n {
                    let seq = r.read_u32(32, "input.seq")?;
                    let time = r.read_time(MAX_TIME, "input.time")?;
                    let m = r.read_var("input.actions")?;
                    // An action is at least 6 + 96 bits.
                    let m = r.check_count(m, config.max_actions, 102, "input.actions")?;
                    let mut actions = Vec::with_capacity(m);
                    for _ in 0..m {
                        // Which bodies the client may push is the server's check
                        // (ownership), made before anything is applied.
                        let body = r.read_var("action.body")?;
                        let impulse = Vec3::new(
                            r.read_f32(config.max_impulse, "action.impulse")?,
                            r.read_f32(config.max_impulse, "action.impulse")?,
                            r.read_f32(config.max_impulse, "action.impulse")?,
                        );
                        actions.push(Action { body, impulse });
                    }
                    inputs.push(InputFrame { seq, time, actions });
                }
                check_ascending(inputs.iter().map(|f| f.seq), "update.inputs.seq")?;
                ClientMessage::Update { ack, inputs }
            }
            kind => {
                return Err(WireError::OutOfRange {
                    field: "packet.kind",
                    max: KIND_UPDATE,
                    actual: kind,
                });
            }
        };
        r.finish()?;
        Ok(msg)
    }
}
