//! The authoritative server: it owns the [`World`], steps it at a fixed rate and streams
//! it to each client.
//!
//! Every [`NetConfig::snapshot_interval`](super::NetConfig::snapshot_interval) steps, for each client:
//!
//! - **Area of interest.** The client's point and radius; an island (bodies joined by
//!   contacts, from [`World::contacts`], or by joints) is inside when any of its bodies is, and then
//!   all of it is sent, since the bodies of an island move as one. Static bodies are
//!   sent once, when they enter, and never in snapshots.
//! - **Reliable changes.** Bodies entering the area are spawned (with the definitions of
//!   shapes this client has not seen, each sent once by id, in parts of at most
//!   [`SHAPE_PART_BYTES`], before the spawns that use
//!   them; every kind of shape crosses), bodies leaving or removed are despawned, on the
//!   reliable channel; so are joints, once both their bodies are in view (or their body
//!   A is the world), and when they are removed or a body of theirs leaves. A joint
//!   whose description changed (`World::set_joint_kind`) is despawned and spawned anew
//!   under a new net id. A body's friction, restitution and material id go with its
//!   spawn; a later change sends the spawn again under the same net id, and a joint
//!   disabled (or broken) leaves the client's view until it is enabled again.
//! - **Snapshot.** The state the client will rebuild is coded against the last snapshot
//!   it acknowledged. Islands whose quantized state changed are taken most relevant
//!   first until the client's bandwidth budget for the tick is spent. A body's
//!   relevance grows with how far the client's copy is from the server's position
//!   (what the client would show wrong if it were left out), with the time since the
//!   state the client has was taken (so a body not updated for long rises until it is
//!   sent), and falls with its distance from the area's point ([`RELEVANCE_FLOOR`]); an
//!   island's is its most relevant body's. An island left out keeps its old state on
//!   both sides; one larger than what is left of the budget is sent in part, its most
//!   relevant bodies first. The server keeps what each client will have for every tick
//!   sent, to code against it once acknowledged.
//! - **Entity mapping.** Each replicated body gets a net id, never reused; clients map
//!   net ids to their own objects (seed 000 §Entity Mapping).
//!
//! From clients it takes clock requests (answered at once with its clock) and input
//! histories. A packet is checked whole before anything in it is applied: decoding
//! validates every field, and every action must name a body the client owns; a bad
//! packet is dropped and counted and the connection goes on. A token bucket per client
//! drops packets beyond [`ServerDesc::packet_rate`] before decoding, so a flood costs the
//! server a counter, not its tick. Input frames are buffered and applied at the step of
//! their time stamp plus the input delay (the playout-delay buffer of seed 000 §Playout
//! delay); frames the history resends are applied once, by sequence number.
//!
//! **The input delay adapts both ways.** Each new frame's lateness (its arrival on the
//! server's clock minus its time stamp, the client's estimate of the server's clock)
//! is kept, the last [`LATENESS_KEPT`] per client. A client needs the largest of them
//! plus one step; the delay is the most any client needs (so every client's inputs
//! land with the same relative timing) and never below [`ServerDesc::input_delay`].
//! - It **rises** at once, before the frame that raised it is scheduled, so no frame
//!   is ever scheduled for a step already past.
//! - It **falls** only when every client needs less than the delay minus
//!   [`DELAY_HYSTERESIS`], by one step every [`DELAY_FALL_PERIOD`] seconds: frames
//!   come a snapshot interval (two steps or more) apart, so one step less never puts
//!   a frame before the one sent ahead of it; a client's frames are also never
//!   scheduled before its previous one.
//!
//! The hysteresis keeps it from flapping: between needing more than the delay and
//! needing less than the delay minus the hysteresis, it holds. It is more than one
//! update interval (33 ms at 30 updates/s), the lateness a single lost packet adds to
//! the frame the next packet brings; the 128 frames kept are about 4 s of input at 30
//! frames/s, so a loss now and then keeps the delay where it is.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::body::{BodyId, MotionType};
use crate::joint::{JointDesc, JointId};
use crate::math::{Vec3, length};
use crate::world::World;

use super::config::{BodyState, Codec};
use super::error::WireError;
use super::joints::JointSpawn;
use super::message::{Action, ClientMessage, MAX_TIME, NetMotion, ServerMessage, Spawn};
use super::shapes::{SHAPE_PART_BYTES, ShapeDef};
use super::snapshot::SnapshotState;
use super::transport::Channel;

/// A body's relevance is `(RELEVANCE_FLOOR + change) * (1 + age / AGE_TICKS) / (1 +
/// distance)`: `change` how far, metres, the client's copy is from the server's
/// position, `age` the steps since the state the client has was taken, `distance` from
/// the area's point. The floor keeps a body whose change is below a millimetre
/// (quantization noise of a body at rest) from never being sent.
pub const RELEVANCE_FLOOR: f32 = 0.001;

/// The steps of staleness that double a body's relevance (half a second at 60 steps/s).
pub const AGE_TICKS: f32 = 30.0;

/// Below this many bits left, no body fits (an unchanged-rotation position delta alone
/// is more).
const SMALLEST_BODY_BITS: i64 = 16;

/// The most spawns (and the most despawns) one reliable world message carries.
pub const WORLD_CHUNK: usize = 256;

/// New input frames per client whose lateness the input delay follows.
pub const LATENESS_KEPT: usize = 128;

/// How far below the input delay every client's need must be before it falls, seconds.
pub const DELAY_HYSTERESIS: f64 = 0.04;

/// Seconds between two one-step falls of the input delay.
pub const DELAY_FALL_PERIOD: f64 = 0.25;

/// One input action applied to the world, as [`Server::take_applied`] reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppliedInput {
    /// The client that sent it.
    pub client: ClientId,
    /// Its frame's sequence number.
    pub seq: u32,
    /// Its place in the frame.
    pub index: u32,
    /// Its frame's time stamp (server clock, as the client estimated it).
    pub time: f64,
    /// The server time it was scheduled for: the time stamp plus the input delay when
    /// it arrived (later only to keep the client's frames in order).
    pub at: f64,
    /// The step it was applied before: the first whose start time is at or after `at`,
    /// unless it came late.
    pub tick: u32,
}

/// A client's id on the server, given by the transport (a renet client id, a node of
/// the simulated network).
pub type ClientId = u32;

/// The server's own settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerDesc {
    /// Each client's budget, bytes per second of snapshots (the reliable channel is not
    /// counted against it).
    pub bandwidth: u32,
    /// Packets per second a client may send before the rest are dropped unread.
    pub packet_rate: f64,
    /// Packets a client may send at once (the bucket's size).
    pub packet_burst: f64,
    /// The least delay, seconds after its time stamp, at which an input frame is
    /// applied (the server raises it to its clients' latencies).
    pub input_delay: f64,
    /// Snapshots kept per client to code against once acknowledged.
    pub baselines: usize,
}

impl Default for ServerDesc {
    fn default() -> Self {
        ServerDesc {
            bandwidth: 32_000,
            packet_rate: 120.0,
            packet_burst: 30.0,
            input_delay: 0.05,
            baselines: 32,
        }
    }
}

/// What the server counted for one client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Bytes of snapshots sent.
    pub snapshot_bytes: u64,
    /// Bytes of reliable world messages sent.
    pub world_bytes: u64,
    /// Snapshots sent.
    pub snapshots: u64,
    /// Packets accepted.
    pub accepted: u64,
    /// Packets refused by validation (decoding, ownership, times).
    pub invalid: u64,
    /// Packets dropped unread for exceeding the packet rate.
    pub flooded: u64,
    /// Actions applied to the world.
    pub actions_applied: u64,
    /// Input frames that came after their step had passed (applied at the next step).
    pub late_frames: u64,
}

#[derive(Clone, Copy, Debug)]
struct Replicated {
    body: BodyId,
    shape_id: u32,
    motion: NetMotion,
    friction: f32,
    restitution: f32,
    material: u16,
}

#[derive(Clone, Copy, Debug)]
struct ReplicatedJoint {
    id: JointId,
    desc: JointDesc,
    spawn: JointSpawn,
}

#[derive(Debug)]
struct Slot {
    point: Vec3,
    radius: f32,
    known: BTreeSet<u32>,
    /// The surface (friction and restitution bits, material) last sent of each body in
    /// `known`: one changed since is sent again as a spawn of the same net id.
    surfaces: BTreeMap<u32, (u32, u32, u16)>,
    joints_known: BTreeSet<u32>,
    shapes_sent: BTreeSet<u32>,
    owned: BTreeSet<u32>,
    owned_unsent: Vec<u32>,
    /// What the client will have for each tick sent, with the tick each body's state
    /// was taken at.
    sent: VecDeque<(SnapshotState, Vec<u32>)>,
    acked: Option<u32>,
    last_seq: u32,
    /// Arrival minus time stamp of the last [`LATENESS_KEPT`] new input frames.
    lateness: VecDeque<f64>,
    /// When the client's last frame was scheduled.
    last_at: f64,
    tokens: f64,
    /// Bits the last snapshots spent under (positive) or over (negative) the budget,
    /// carried into the next so the stream keeps to the budget on average.
    carry: i64,
    refilled: f64,
    stats: ClientStats,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    at: f64,
    client: ClientId,
    seq: u32,
    index: u32,
    time: f64,
    action: Action,
}

/// Why the server refused a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerError {
    /// No client with this id is connected.
    UnknownClient(ClientId),
    /// A client with this id is already connected.
    DuplicateClient(ClientId),
    /// The body is not replicated (removed from the world).
    NotReplicated(BodyId),
    /// An area of interest needs a finite point and a positive finite radius.
    InvalidArea {
        /// The radius given.
        radius: f32,
    },
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::UnknownClient(id) => {
                write!(f, "client: expected a connected client id, got {id}")
            }
            ServerError::DuplicateClient(id) => write!(
                f,
                "client: expected a new client id, got {id}, already connected"
            ),
            ServerError::NotReplicated(b) => {
                write!(f, "body: expected a replicated body, got {b:?}")
            }
            ServerError::InvalidArea { radius } => write!(
                f,
                "area: expected a finite point and a positive finite radius, got radius {radius}"
            ),
        }
    }
}

impl std::error::Error for ServerError {}

/// The authoritative server (see the [module header](self)).
#[derive(Debug)]
pub struct Server {
    codec: Codec,
    desc: ServerDesc,
    world: World,
    tick: u32,
    net_of: BTreeMap<BodyId, u32>,
    replicated: BTreeMap<u32, Replicated>,
    next_net_id: u32,
    /// Each shape's definition and its coded bytes, shape id `i + 1` at `i`.
    shapes: Vec<(ShapeDef, Vec<u8>)>,
    joint_net: BTreeMap<JointId, u32>,
    joints: BTreeMap<u32, ReplicatedJoint>,
    next_joint_id: u32,
    clients: BTreeMap<ClientId, Slot>,
    pending: Vec<Pending>,
    outgoing: Vec<(ClientId, Channel, Vec<u8>)>,
    unknown_packets: u64,
    input_delay: f64,
    last_fall: f64,
    applied: Option<Vec<AppliedInput>>,
}

mod stream;

impl Server {
    /// A server owning `world`; every body and joint in it (and every one created
    /// later) is replicated.
    #[must_use]
    pub fn new(world: World, codec: Codec, desc: ServerDesc) -> Server {
        let mut server = Server {
            codec,
            desc,
            world,
            tick: 0,
            net_of: BTreeMap::new(),
            replicated: BTreeMap::new(),
            next_net_id: 1,
            shapes: Vec::new(),
            joint_net: BTreeMap::new(),
            joints: BTreeMap::new(),
            next_joint_id: 1,
            clients: BTreeMap::new(),
            pending: Vec::new(),
            outgoing: Vec::new(),
            unknown_packets: 0,
            input_delay: 0.0,
            last_fall: 0.0,
            applied: None,
        };
        server.input_delay = server.desc.input_delay;
        server.sync_replication();
        server
    }

    /// The world.
    #[must_use]
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, to create and remove bodies (replicated at the next snapshot).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The codec.
    #[must_use]
    pub fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Steps taken.
    #[must_use]
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// The net id of a replicated body.
    #[must_use]
    pub fn net_id(&self, body: BodyId) -> Option<u32> {
        self.net_of.get(&body).copied()
    }

    /// The body of a net id.
    #[must_use]
    pub fn body(&self, net_id: u32) -> Option<BodyId> {
        self.replicated.get(&net_id).map(|r| r.body)
    }

    /// The delay at which input frames are applied now, seconds after their time stamp.
    #[must_use]
    pub fn input_delay(&self) -> f64 {
        self.input_delay
    }

    /// Starts (or stops, dropping what was kept) keeping a log of every input action
    /// applied, for [`take_applied`](Self::take_applied).
    pub fn record_applied(&mut self, on: bool) {
        self.applied = on.then(Vec::new);
    }

    /// The input actions applied since the last call, in the order applied (empty
    /// unless [`record_applied`](Self::record_applied) is on).
    pub fn take_applied(&mut self) -> Vec<AppliedInput> {
        self.applied
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The net id of a replicated joint.
    #[must_use]
    pub fn joint_net_id(&self, joint: JointId) -> Option<u32> {
        self.joint_net.get(&joint).copied()
    }

    /// Packets from ids that are not connected clients.
    #[must_use]
    pub fn unknown_packets(&self) -> u64 {
        self.unknown_packets
    }

    /// What was counted for `client`.
    #[must_use]
    pub fn stats(&self, client: ClientId) -> Option<ClientStats> {
        self.clients.get(&client).map(|s| s.stats)
    }

    /// Connects `client` with an area of interest.
    ///
    /// # Errors
    /// [`ServerError::DuplicateClient`], [`ServerError::InvalidArea`].
    pub fn add_client(
        &mut self,
        client: ClientId,
        point: Vec3,
        radius: f32,
    ) -> Result<(), ServerError> {
        if self.clients.contains_key(&client) {
            return Err(ServerError::DuplicateClient(client));
        }
        Self::check_area(point, radius)?;
        self.clients.insert(
            client,
            Slot {
                point,
                radius,
                known: BTreeSet::new(),
                surfaces: BTreeMap::new(),
                joints_known: BTreeSet::new(),
                shapes_sent: BTreeSet::new(),
                owned: BTreeSet::new(),
                owned_unsent: Vec::new(),
                sent: VecDeque::new(),
                acked: None,
                last_seq: 0,
                lateness: VecDeque::new(),
                last_at: f64::NEG_INFINITY,
                tokens: self.desc.packet_burst,
                carry: 0,
                refilled: f64::NEG_INFINITY,
                stats: ClientStats::default(),
            },
        );
        Ok(())
    }

    /// Disconnects `client`; its pending inputs are dropped.
    pub fn remove_client(&mut self, client: ClientId) {
        self.clients.remove(&client);
        self.pending.retain(|p| p.client != client);
    }

    fn check_area(point: Vec3, radius: f32) -> Result<(), ServerError> {
        if !(point.is_finite() && radius.is_finite() && radius > 0.0) {
            return Err(ServerError::InvalidArea { radius });
        }
        Ok(())
    }

    /// Moves `client`'s area of interest.
    ///
    /// # Errors
    /// [`ServerError::UnknownClient`], [`ServerError::InvalidArea`].
    pub fn set_interest(
        &mut self,
        client: ClientId,
        point: Vec3,
        radius: f32,
    ) -> Result<(), ServerError> {
        Self::check_area(point, radius)?;
        let slot = self
            .clients
            .get_mut(&client)
            .ok_or(ServerError::UnknownClient(client))?;
        slot.point = point;
        slot.radius = radius;
        Ok(())
    }

    /// Gives `client` the right to push `body` with its inputs; returns its net id.
    ///
    /// # Errors
    /// [`ServerError::UnknownClient`], [`ServerError::NotReplicated`].
    pub fn grant(&mut self, client: ClientId, body: BodyId) -> Result<u32, ServerError> {
        self.sync_replication();
        let net_id = self.net_id(body).ok_or(ServerError::NotReplicated(body))?;
        let slot = self
            .clients
            .get_mut(&client)
            .ok_or(ServerError::UnknownClient(client))?;
        if slot.owned.insert(net_id) {
            slot.owned_unsent.push(net_id);
        }
        Ok(net_id)
    }

    /// Takes a datagram from `client` that arrived at the server's clock `now`.
    pub fn receive(&mut self, client: ClientId, _channel: Channel, bytes: &[u8], now: f64) {
        let Some(slot) = self.clients.get_mut(&client) else {
            self.unknown_packets += 1;
            return;
        };
        // The token bucket, before any decoding.
        if slot.refilled.is_finite() {
            slot.tokens = (slot.tokens + (now - slot.refilled).max(0.0) * self.desc.packet_rate)
                .min(self.desc.packet_burst);
        }
        slot.refilled = now;
        if slot.tokens < 1.0 {
            slot.stats.flooded += 1;
            return;
        }
        slot.tokens -= 1.0;
        match Self::validate(&self.codec, slot, bytes, now) {
            Ok(msg) => {
                slot.stats.accepted += 1;
                match msg {
                    ClientMessage::TimeReq { id } => {
                        let res = ServerMessage::TimeRes {
                            id,
                            server_time: now,
                        };
                        self.outgoing
                            .push((client, Channel::Unreliable, res.encode(&self.codec)));
                    }
                    ClientMessage::Update { ack, inputs } => {
                        if slot.acked.is_none_or(|a| ack > a)
                            && slot.sent.iter().any(|(s, _)| s.tick == ack)
                        {
                            slot.acked = Some(ack);
                        }
                        let rate = f64::from(self.codec.config().tick_rate);
                        let now_tick = f64::from(self.tick) / rate;
                        for frame in &inputs {
                            if frame.seq > slot.last_seq {
                                if slot.lateness.len() == LATENESS_KEPT {
                                    slot.lateness.pop_front();
                                }
                                slot.lateness.push_back(now - frame.time);
                            }
                        }
                        // Rises at once, before these frames are scheduled.
                        if let Some(need) = Self::need(slot, rate) {
                            self.input_delay = self.input_delay.max(need);
                        }
                        for frame in inputs {
                            if frame.seq <= slot.last_seq {
                                continue;
                            }
                            slot.last_seq = frame.seq;
                            let at = (frame.time + self.input_delay).max(slot.last_at);
                            slot.last_at = at;
                            if at < now_tick {
                                slot.stats.late_frames += 1;
                            }
                            for (index, action) in frame.actions.into_iter().enumerate() {
                                self.pending.push(Pending {
                                    at,
                                    client,
                                    seq: frame.seq,
                                    index: index as u32,
                                    time: frame.time,
                                    action,
                                });
                            }
                        }
                    }
                }
            }
            Err(_) => slot.stats.invalid += 1,
        }
    }

    /// Decodes and checks a client packet whole: fields, ownership of every action, and
    /// time stamps within 10 s of the server's clock.
    fn validate(
        codec: &Codec,
        slot: &Slot,
        bytes: &[u8],
        now: f64,
    ) -> Result<ClientMessage, WireError> {
        let msg = ClientMessage::decode(bytes, codec)?;
        if let ClientMessage::Update { inputs, .. } = &msg {
            for frame in inputs {
                if (frame.time - now).abs() > 10.0 {
                    return Err(WireError::FloatOutOfRange {
                        field: "input.time",
                        max: (now + 10.0).min(MAX_TIME),
                        actual: frame.time,
                    });
                }
                for a in &frame.actions {
                    if !slot.owned.contains(&a.body) {
                        return Err(WireError::NotOwned { net_id: a.body });
                    }
                }
            }
        }
        Ok(msg)
    }

    /// Steps the world up to the server's clock `now` (seconds since it started), one
    /// fixed step at a time, and prepares the snapshots of the steps that send one.
    pub fn advance(&mut self, now: f64) {
        let rate = f64::from(self.codec.config().tick_rate);
        while f64::from(self.tick + 1) / rate <= now {
            self.step_once();
        }
    }

    /// The datagrams to send, in the order made.
    pub fn drain_outgoing(&mut self) -> Vec<(ClientId, Channel, Vec<u8>)> {
        std::mem::take(&mut self.outgoing)
    }

    /// What `slot` needs of the input delay: its latest frames' largest lateness plus
    /// one step; `None` before any frame.
    fn need(slot: &Slot, rate: f64) -> Option<f64> {
        let worst = slot.lateness.iter().copied().reduce(f64::max)?;
        Some(worst + 1.0 / rate)
    }

    /// Lowers the input delay by one step when every client has needed less than it
    /// minus the hysteresis, at most once per [`DELAY_FALL_PERIOD`].
    fn lower_input_delay(&mut self, now: f64) {
        if now - self.last_fall < DELAY_FALL_PERIOD {
            return;
        }
        self.last_fall = now;
        let rate = f64::from(self.codec.config().tick_rate);
        let need = self
            .clients
            .values()
            .filter_map(|s| Self::need(s, rate))
            .fold(self.desc.input_delay, f64::max);
        if need < self.input_delay - DELAY_HYSTERESIS {
            self.input_delay = (self.input_delay - 1.0 / rate).max(need);
        }
    }

    fn step_once(&mut self) {
        let rate = f64::from(self.codec.config().tick_rate);
        let now = f64::from(self.tick) / rate;
        self.lower_input_delay(now);
        // The playout-delay buffer: every action due by this step, in a fixed order.
        let (mut due, rest): (Vec<Pending>, Vec<Pending>) =
            self.pending.drain(..).partition(|p| p.at <= now);
        self.pending = rest;
        due.sort_by(|a, b| {
            a.at.total_cmp(&b.at)
                .then(a.client.cmp(&b.client))
                .then(a.seq.cmp(&b.seq))
                .then(a.index.cmp(&b.index))
        });
        for p in due {
            let Some(rep) = self.replicated.get(&p.action.body) else {
                continue;
            };
            if self.world.apply_impulse(rep.body, p.action.impulse).is_ok()
                && let Some(slot) = self.clients.get_mut(&p.client)
            {
                slot.stats.actions_applied += 1;
                if let Some(log) = &mut self.applied {
                    log.push(AppliedInput {
                        client: p.client,
                        seq: p.seq,
                        index: p.index,
                        time: p.time,
                        at: p.at,
                        tick: self.tick,
                    });
                }
            }
        }
        self.world.step(self.codec.dt());
        self.tick += 1;
        if self
            .tick
            .is_multiple_of(self.codec.config().snapshot_interval)
        {
            self.sync_replication();
            self.send_snapshots();
        }
    }
}
