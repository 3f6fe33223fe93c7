//! The packets: what the server sends, what a client sends, and their codecs.
//!
//! Every packet starts with a 3-bit kind. Decoders check every field (counts against the
//! configuration and the packet's length, ids, tags, NaN and infinities, ranges) and
//! refuse the packet whole with a [`WireError`] naming the field; nothing is applied
//! from a refused packet.

use crate::math::Vec3;

use super::MAX_PACKET_BYTES;
use super::bits::{BitReader, BitWriter};
use super::config::{BodyState, Codec};
use super::error::WireError;
use super::ids::{read_sorted_ids, write_sorted_ids};
use super::quantize::SmallestThree;
use super::snapshot::{SnapshotState, read_snapshot_body, read_snapshot_header, write_snapshot};

/// The largest time stamp (seconds since a side started) a packet may carry: about 115
/// days.
pub const MAX_TIME: f64 = 1.0e7;

/// The largest size (a radius, a half extent) a shape on the wire may have, in metres.
pub const MAX_SHAPE_SIZE: f32 = 1.0e4;

/// A shape definition, sent once by id on the reliable channel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeDef {
    /// A sphere of this radius.
    Sphere {
        /// Radius.
        radius: f32,
    },
    /// A box of these half extents.
    Cuboid {
        /// Half extents.
        half_extents: Vec3,
    },
    /// A capsule along y.
    Capsule {
        /// Half the length of the segment.
        half_height: f32,
        /// Radius.
        radius: f32,
    },
    /// A cylinder along y.
    Cylinder {
        /// Half the height.
        half_height: f32,
        /// Radius.
        radius: f32,
    },
}

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
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMessage {
    /// Transient state (unreliable): the bodies' states at a tick, delta-coded.
    Snapshot(SnapshotState),
    /// Creation and destruction (reliable, in order): shape definitions, bodies
    /// entering and leaving this client's view, and the bodies the client owns.
    World {
        /// Shapes first seen by this client, `(shape id, definition)`, ids ascending.
        shapes: Vec<(u32, ShapeDef)>,
        /// Bodies entering, net ids ascending.
        spawns: Vec<Spawn>,
        /// Bodies leaving, net ids ascending.
        despawns: Vec<u32>,
        /// Bodies this client now owns and may push, net ids ascending.
        owned: Vec<u32>,
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

fn read_size(r: &mut BitReader<'_>, field: &'static str) -> Result<f32, WireError> {
    let v = r.read_f32(MAX_SHAPE_SIZE, field)?;
    if v <= 0.0 {
        return Err(WireError::FloatOutOfRange {
            field,
            max: f64::from(MAX_SHAPE_SIZE),
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
    /// If an id list is not strictly ascending: the server's own bug.
    #[must_use]
    pub fn encode(&self, codec: &Codec) -> Vec<u8> {
        match self {
            ServerMessage::Snapshot(s) => Self::encode_snapshot(codec, s, None),
            ServerMessage::World {
                shapes,
                spawns,
                despawns,
                owned,
            } => {
                let mut w = BitWriter::new();
                w.write(KIND_WORLD, 3);
                let shape_ids: Vec<u32> = shapes.iter().map(|&(id, _)| id).collect();
                write_sorted_ids(&mut w, &shape_ids);
                for (_, def) in shapes {
                    match *def {
                        ShapeDef::Sphere { radius } => {
                            w.write(0, 2);
                            w.write_f32(radius);
                        }
                        ShapeDef::Cuboid { half_extents } => {
                            w.write(1, 2);
                            for v in half_extents.to_array() {
                                w.write_f32(v);
                            }
                        }
                        ShapeDef::Capsule {
                            half_height,
                            radius,
                        } => {
                            w.write(2, 2);
                            w.write_f32(half_height);
                            w.write_f32(radius);
                        }
                        ShapeDef::Cylinder {
                            half_height,
                            radius,
                        } => {
                            w.write(3, 2);
                            w.write_f32(half_height);
                            w.write_f32(radius);
                        }
                    }
                }
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
                }
                write_sorted_ids(&mut w, despawns);
                write_sorted_ids(&mut w, owned);
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
                let shape_ids = read_sorted_ids(&mut r, max, "world.shapes")?;
                r.check_count(shape_ids.len() as u32, max, 34, "world.shapes")?;
                let mut shapes = Vec::with_capacity(shape_ids.len());
                for id in shape_ids {
                    let def = match r.read(2, "world.shape.kind")? {
                        0 => ShapeDef::Sphere {
                            radius: read_size(&mut r, "world.shape.radius")?,
                        },
                        1 => ShapeDef::Cuboid {
                            half_extents: Vec3::new(
                                read_size(&mut r, "world.shape.half_extents")?,
                                read_size(&mut r, "world.shape.half_extents")?,
                                read_size(&mut r, "world.shape.half_extents")?,
                            ),
                        },
                        2 => ShapeDef::Capsule {
                            half_height: read_size(&mut r, "world.shape.half_height")?,
                            radius: read_size(&mut r, "world.shape.radius")?,
                        },
                        _ => ShapeDef::Cylinder {
                            half_height: read_size(&mut r, "world.shape.half_height")?,
                            radius: read_size(&mut r, "world.shape.radius")?,
                        },
                    };
                    shapes.push((id, def));
                }
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
                    spawns.push(Spawn {
                        net_id,
                        shape_id,
                        motion,
                        state,
                    });
                }
                let despawns = read_sorted_ids(&mut r, max, "world.despawns")?;
                let owned = read_sorted_ids(&mut r, max, "world.owned")?;
                ServerMessage::World {
                    shapes,
                    spawns,
                    despawns,
                    owned,
                }
            }
            KIND_TIME_RES => ServerMessage::TimeRes {
                id: r.read_u32(32, "time_res.id")?,
                server_time: r.read_time(MAX_TIME, "time_res.server_time")?,
            },
            kind => {
                return Err(WireError::OutOfRange {
                    field: "packet.kind",
                    max: KIND_TIME_RES,
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
