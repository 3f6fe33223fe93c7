//! The client: a mirror [`World`] of the bodies, shapes and joints the server streams to
//! it, shown through a [`Presentation`] between received snapshots at a playout delay
//! that follows the measured jitter.
//!
//! The client keeps the last [`KEPT`] snapshot states it rebuilt, by tick, to decode the
//! next (each is coded against one of them) and to present. It acknowledges the newest
//! in every update it sends, with its input history: the last
//! [`NetConfig::input_history`](super::NetConfig::input_history) frames, each stamped with
//! the server's clock as the client estimates it ([`ClockSync`]), resent in every packet
//! so a lost packet loses no input.
//!
//! **The mirror.** Every body spawned in view is a body of the client's own [`World`]
//! ([`world`](Client::world)), with the replicated shape (every kind: hulls, compounds,
//! meshes, heightfields, half-spaces, each built once per shape id), friction,
//! restitution and material id (sent again when the server changes them), and every
//! joint enabled on the server between bodies in view is one of its joints (kind,
//! frames, bodies mapped through the net ids; one disabled or broken leaves the view and
//! comes back under its net id when enabled again), so a game ray-casts and
//! queries the mirror as it would its own world. Static bodies are fixed; the others
//! are **kinematic mirrors**: their poses come from the snapshot stream, never from a
//! local simulation, so the mirror shows exactly the server's quantized poses (a
//! simulated mirror corrected at each snapshot would add its own prediction error,
//! which only pays once the client extrapolates, the next slice of issue 32). The
//! mirror's joints are created disabled: with both bodies posed from the stream there
//! is nothing for them to solve; they are there to be read.
//!
//! **Presentation.** For each snapshot, its lateness is the server clock at its arrival
//! (as estimated) minus its tick's time. The client shows the world at the server's
//! clock minus the playout delay: the 95th percentile of the last 64 latenesses plus one
//! snapshot interval, so the snapshot after the one shown has almost always arrived
//! (one lost snapshot is bridged by interpolating across its neighbours). Each time the
//! presentation time passes the snapshot the mirror holds, the mirror steps to the next
//! snapshot after it ([`World::move_kinematic`] to each body's pose, one step of the
//! snapshots' time apart) and a [`Presentation`] records it, the snapshot before it
//! being the presentation's previous record; a pose is then the presentation's
//! interpolation at the presentation time's fraction between the two snapshots
//! ([`pose`](Client::pose)), carried on along the same line for at most 100 ms when
//! the next snapshot has not come.
//!
//! **Dead reckoning.** Under a tight budget the server updates a body only every so
//! many snapshots, and a snapshot that leaves it out holds the state of the baseline it
//! was coded against (older, with 100 ms of latency, than what the snapshots since may
//! have brought). So the client keeps, per moving body, the last few states the server
//! *sent* (those differing from their snapshot's baseline), each taken exactly at its
//! snapshot's tick, lost snapshots or not. When the mirror steps to a snapshot, it poses
//! each body from the newest state sent at or before that tick, extrapolated to the
//! tick for at most
//! [`NetConfig::dead_reckoning_horizon`](super::NetConfig::dead_reckoning_horizon):
//! the position along the received linear velocity, plus gravity's `g t² / 2` when the
//! body was falling (its last two states' vertical velocities differ by gravity's
//! `g dt` within half, or, with one state, it moved along gravity faster than 0.5 m/s either way); a body not
//! falling (in contact, sliding, resting) keeps its linear velocity less any part
//! along gravity, so it never sinks below its received height. The rotation turns by
//! the received angular velocity over the elapsed time (an axis-angle quaternion
//! through [`math::sin_cos`](crate::math::sin_cos) and
//! [`math::quat_mul`](crate::math::quat_mul)). A body received at rest (both velocities
//! under 2 cm/s and 0.02 rad/s, which every sleeping body is) stands where it is. When
//! a fresh state arrives, the presentation's interpolation between the extrapolated
//! record and the fresh one blends the shown pose to it over one snapshot interval
//! rather than snapping.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::body::{BodyDesc, BodyId};
use crate::game::Presentation;
use crate::joint::{JointDesc, JointId};
use crate::material::MaterialId;
use crate::math::{Isometry, Quat, Vec3, length, quat_mul, quat_normalize, sin_cos};
use crate::settings::WorldDesc;
use crate::shape::Shape;
use crate::world::World;

use super::clock::ClockSync;
use super::config::{BodyState, Codec};
use super::error::WireError;
use super::joints::JointSpawn;
use super::message::{Action, ClientMessage, InputFrame, NetMotion, ServerMessage, Spawn};
use super::shapes::ShapeDef;
use super::snapshot::SnapshotState;
use super::transport::Channel;

/// Snapshot states a client keeps.
pub const KEPT: usize = 32;

/// The longest a presented pose is carried on past the newest snapshot, seconds.
pub const MAX_EXTRAPOLATION: f64 = 0.1;

/// A body the server has spawned in this client's view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MirrorBody {
    /// The mirror body in [`Client::world`].
    pub body: BodyId,
    /// Its shape's id.
    pub shape_id: u32,
    /// How it moves on the server (the mirror's own body is fixed or kinematic).
    pub motion: NetMotion,
    /// Its state when spawned.
    pub spawn: BodyState,
}

/// What a client counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCounts {
    /// Snapshots rebuilt.
    pub snapshots: u64,
    /// Packets refused by validation.
    pub invalid: u64,
    /// Snapshots coded against a baseline no longer held.
    pub unknown_baseline: u64,
    /// Snapshots older than the ones held, or duplicates.
    pub stale: u64,
    /// Shape definitions refused (a bad part, or a definition that failed decoding or
    /// the shape's constructor), also counted in `invalid`.
    pub invalid_shapes: u64,
    /// Steps the mirror world took (one per snapshot presented).
    pub mirror_steps: u64,
}

/// Why a client refused a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The body is not one this client owns.
    NotOwned(u32),
    /// The impulse had a NaN or infinite component, or one larger than
    /// [`NetConfig::max_impulse`](super::NetConfig::max_impulse).
    InvalidImpulse,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotOwned(id) => {
                write!(f, "body: expected a net id this client owns, got {id}")
            }
            ClientError::InvalidImpulse => {
                write!(f, "impulse: expected finite components within max_impulse")
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// A state of a moving body the server sent (rather than carried over from the
/// baseline), with the tick it was taken at.
#[derive(Clone, Copy, Debug)]
struct Received {
    tick: u32,
    state: BodyState,
}

/// Sent states kept per body, newest last: enough to find, for the snapshot the mirror
/// steps to (a playout delay behind the newest), the newest sent at or before it.
const RECEIVED_KEPT: usize = 8;

/// Linear speed (m/s) under which a received body counts as at rest.
const REST_SPEED: f32 = 0.02;
/// Angular speed (rad/s) under which a received body counts as at rest.
const REST_SPIN: f32 = 0.02;

/// A definition arriving in parts.
#[derive(Debug)]
struct Assembly {
    shape_id: u32,
    total: u32,
    data: Vec<u8>,
}

/// A client of a [`Server`](super::server::Server) (see the [module header](self)).
#[derive(Debug)]
pub struct Client {
    codec: Codec,
    clock: ClockSync,
    states: VecDeque<SnapshotState>,
    shapes: BTreeMap<u32, (ShapeDef, Shape)>,
    assembly: Option<Assembly>,
    bodies: BTreeMap<u32, MirrorBody>,
    net_ids: BTreeMap<BodyId, u32>,
    joints: BTreeMap<u32, JointId>,
    received: BTreeMap<u32, VecDeque<Received>>,
    world: World,
    presentation: Presentation,
    /// The ticks of the presentation's previous and latest records.
    shown: (Option<u32>, Option<u32>),
    owned: Vec<u32>,
    next_seq: u32,
    history: VecDeque<InputFrame>,
    actions: Vec<Action>,
    lateness: VecDeque<f64>,
    playout_delay: f64,
    last_update: f64,
    counts: ClientCounts,
}

mod mirror;

impl Client {
    /// A client; `seed` seeds its clock requests' ids.
    ///
    /// # Panics
    /// Never in practice: the mirror world's job system has no worker threads to start.
    #[must_use]
    pub fn new(codec: Codec, seed: u64) -> Client {
        let interval =
            f64::from(codec.config().snapshot_interval) / f64::from(codec.config().tick_rate);
        let jobs = joule_jobs::JobSystem::new(0).expect("no worker threads to start");
        let desc = WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        };
        Client {
            codec,
            clock: ClockSync::new(seed),
            states: VecDeque::with_capacity(KEPT),
            shapes: BTreeMap::new(),
            assembly: None,
            bodies: BTreeMap::new(),
            net_ids: BTreeMap::new(),
            joints: BTreeMap::new(),
            received: BTreeMap::new(),
            world: World::new(desc, jobs),
            presentation: Presentation::new(),
            shown: (None, None),
            owned: Vec::new(),
            next_seq: 1,
            history: VecDeque::new(),
            actions: Vec::new(),
            lateness: VecDeque::new(),
            playout_delay: 0.1 + interval,
            last_update: f64::NEG_INFINITY,
            counts: ClientCounts::default(),
        }
    }

    /// The clock synchronization.
    #[must_use]
    pub fn clock(&self) -> &ClockSync {
        &self.clock
    }

    /// What was counted.
    #[must_use]
    pub fn counts(&self) -> ClientCounts {
        self.counts
    }

    /// The bodies in view, by net id.
    #[must_use]
    pub fn bodies(&self) -> &BTreeMap<u32, MirrorBody> {
        &self.bodies
    }

    /// The mirror world: every body and joint in view (see the [module header](self)).
    #[must_use]
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The mirror's presentation: its last two records are the snapshots around the
    /// presentation time.
    #[must_use]
    pub fn presentation(&self) -> &Presentation {
        &self.presentation
    }

    /// The net id of a mirror body (for a ray hit on the mirror world).
    #[must_use]
    pub fn net_id(&self, body: BodyId) -> Option<u32> {
        self.net_ids.get(&body).copied()
    }

    /// The joints in view: net id to the mirror world's joint.
    #[must_use]
    pub fn joints(&self) -> &BTreeMap<u32, JointId> {
        &self.joints
    }

    /// A shape definition received, by shape id.
    #[must_use]
    pub fn shape_def(&self, shape_id: u32) -> Option<&ShapeDef> {
        self.shapes.get(&shape_id).map(|(d, _)| d)
    }

    /// The bodies this client may push.
    #[must_use]
    pub fn owned(&self) -> &[u32] {
        &self.owned
    }

    /// The current playout delay, seconds.
    #[must_use]
    pub fn playout_delay(&self) -> f64 {
        self.playout_delay
    }

    /// The newest snapshot state rebuilt: every body's state at its tick, exactly as the
    /// server quantized it.
    #[must_use]
    pub fn latest_state(&self) -> Option<&SnapshotState> {
        self.states.back()
    }

    /// The newest snapshot tick rebuilt (0 before any).
    #[must_use]
    pub fn newest_tick(&self) -> u32 {
        self.states.back().map_or(0, |s| s.tick)
    }

    /// Takes a datagram from the server that arrived at local time `now`.
    pub fn receive(&mut self, _channel: Channel, bytes: &[u8], now: f64) {
        let states = &self.states;
        let mut base_tick = 0;
        let decoded = ServerMessage::decode(bytes, &self.codec, |tick| {
            base_tick = tick;
            states.iter().find(|s| s.tick == tick)
        });
        let msg = match decoded {
            Ok(m) => m,
            Err(WireError::UnknownBaseline { .. }) => {
                self.counts.unknown_baseline += 1;
                return;
            }
            Err(_) => {
                self.counts.invalid += 1;
                return;
            }
        };
        match msg {
            ServerMessage::Snapshot(s) => self.take_snapshot(s, base_tick, now),
            ServerMessage::World {
                spawns,
                despawns,
                owned,
                joints,
                joint_despawns,
            } => {
                if !self.world_message_fits(&spawns, &despawns, &joints, &joint_despawns) {
                    self.counts.invalid += 1;
                    return;
                }
                self.apply_world(spawns, &despawns, joints, &joint_despawns);
                for id in owned {
                    if let Err(i) = self.owned.binary_search(&id) {
                        self.owned.insert(i, id);
                    }
                }
            }
            ServerMessage::ShapePart {
                shape_id,
                total,
                offset,
                data,
            } => self.take_shape_part(shape_id, total, offset, data),
            ServerMessage::TimeRes { id, server_time } => {
                self.clock.on_response(id, server_time, now);
            }
        }
    }

    /// Takes a decoded snapshot coded against the state at `base_tick` (0: none).
    fn take_snapshot(&mut self, s: SnapshotState, base_tick: u32, now: f64) {
        if self.states.iter().any(|h| h.tick == s.tick)
            || (self.states.len() == KEPT && s.tick < self.states[0].tick)
        {
            self.counts.stale += 1;
            return;
        }
        let dt = f64::from(self.codec.dt());
        if let Some(server_now) = self.clock.server_time(now) {
            if self.lateness.len() == 64 {
                self.lateness.pop_front();
            }
            self.lateness.push_back(server_now - f64::from(s.tick) * dt);
            let mut sorted: Vec<f64> = self.lateness.iter().copied().collect();
            sorted.sort_by(f64::total_cmp);
            let p95 = sorted[(sorted.len() * 95 / 100).min(sorted.len() - 1)];
            let interval = f64::from(self.codec.config().snapshot_interval) * dt;
            self.playout_delay = p95.max(0.0) + interval;
        }
        self.note_sent(&s, base_tick);
        let at = self.states.partition_point(|h| h.tick < s.tick);
        self.states.insert(at, s);
        if self.states.len() > KEPT {
            self.states.pop_front();
        }
        self.counts.snapshots += 1;
    }

    /// Records the states snapshot `s` sent: those that differ from its baseline's (the
    /// others are the baseline's, older than what a later snapshot may have brought).
    fn note_sent(&mut self, s: &SnapshotState, base_tick: u32) {
        let base = self.states.iter().find(|h| h.tick == base_tick);
        for &(id, state) in &s.bodies {
            if base.and_then(|b| b.get(id)) == Some(&state) {
                continue;
            }
            let kept = self.received.entry(id).or_default();
            let at = kept.partition_point(|r| r.tick < s.tick);
            if kept.get(at).is_some_and(|r| r.tick == s.tick) {
                continue;
            }
            kept.insert(
                at,
                Received {
                    tick: s.tick,
                    state,
                },
            );
            if kept.len() > RECEIVED_KEPT {
                kept.pop_front();
            }
        }
    }

    /// Queues an impulse on an owned body for the next input frame.
    ///
    /// # Errors
    /// [`ClientError::NotOwned`], [`ClientError::InvalidImpulse`].
    pub fn push(&mut self, body: u32, impulse: Vec3) -> Result<(), ClientError> {
        if self.owned.binary_search(&body).is_err() {
            return Err(ClientError::NotOwned(body));
        }
        let max = self.codec.config().max_impulse;
        if !impulse.is_finite() || impulse.abs().max_element() > max {
            return Err(ClientError::InvalidImpulse);
        }
        self.actions.push(Action { body, impulse });
        Ok(())
    }

    /// The datagrams to send at local time `now`: a clock request when one is due, and an
    /// update (ack and input history) once per snapshot interval. It first steps the
    /// mirror to the presentation time ([`present`](Self::present)).
    pub fn update(&mut self, now: f64) -> Vec<(Channel, Vec<u8>)> {
        self.present(now);
        let mut out = Vec::new();
        if let Some(id) = self.clock.poll(now) {
            out.push((Channel::Unreliable, ClientMessage::TimeReq { id }.encode()));
        }
        let interval = f64::from(self.codec.config().snapshot_interval)
            / f64::from(self.codec.config().tick_rate);
        if now - self.last_update < interval {
            return out;
        }
        self.last_update = now;
        if let Some(server_now) = self.clock.server_time(now)
            && !self.actions.is_empty()
        {
            let frame = InputFrame {
                seq: self.next_seq,
                time: server_now.max(0.0),
                actions: std::mem::take(&mut self.actions),
            };
            self.next_seq += 1;
            self.history.push_back(frame);
        }
        // A frame is resent in every update until the history is full or it is a second
        // old, by which time the server has long applied it or it has been refused late.
        if let Some(server_now) = self.clock.server_time(now) {
            self.history.retain(|f| server_now - f.time < 1.0);
        }
        {
            while self.history.len() > self.codec.config().input_history as usize {
                self.history.pop_front();
            }
        }
        let msg = ClientMessage::Update {
            ack: self.newest_tick(),
            inputs: self.history.iter().cloned().collect(),
        };
        out.push((Channel::Unreliable, msg.encode()));
        out
    }

    /// The server time the client shows at local time `now`: the server's clock minus
    /// the playout delay (`None` before the clock is synchronized).
    #[must_use]
    pub fn presentation_time(&self, now: f64) -> Option<f64> {
        self.clock.server_time(now).map(|t| t - self.playout_delay)
    }

    /// Steps the mirror to the snapshots around the presentation time of local time
    /// `now` (see the [module header](self)); returns that time (`None` before the clock
    /// is synchronized or any snapshot came). [`update`](Self::update) calls it.
    pub fn present(&mut self, now: f64) -> Option<f64> {
        let t = self.presentation_time(now)?;
        if self.states.is_empty() {
            return None;
        }
        let dt = f64::from(self.codec.dt());
        let tick = t / dt;
        // The first snapshot after the presentation time, or the newest.
        let next = self
            .states
            .partition_point(|s| f64::from(s.tick) <= tick)
            .min(self.states.len() - 1);
        let latest = self.shown.1;
        if latest.is_none_or(|l| self.states[next].tick > l) {
            if next > 0 && latest.is_none_or(|l| self.states[next - 1].tick > l) {
                self.mirror_step(next - 1);
            }
            self.mirror_step(next);
        }
        Some(t)
    }

    /// Moves every moving mirror body to its pose in `states[i]` in one step of the
    /// time since the snapshot shown last, and records it.
    fn mirror_step(&mut self, i: usize) {
        let interval = self.codec.config().snapshot_interval;
        let state = &self.states[i];
        let ticks = self
            .shown
            .1
            .map_or(interval, |l| state.tick.saturating_sub(l).max(1));
        let step = self.codec.dt() * ticks as f32;
        for (&net_id, body) in &self.bodies {
            if body.motion == NetMotion::Static {
                continue;
            }
            // Posed from the newest state the server sent at or before the snapshot,
            // dead-reckoned to it; a body never sent: from the snapshot's state; one the
            // snapshot does not hold either (not sent yet) stays where it is.
            let kept = self.received.get(&net_id);
            let at = kept.map_or(0, |k| k.partition_point(|r| r.tick <= state.tick));
            let target = match (kept, state.get(net_id)) {
                (Some(k), _) if at > 0 => {
                    let before = at.checked_sub(2).map(|b| &k[b]);
                    dead_reckon(&self.codec, &k[at - 1], before, f64::from(state.tick))
                }
                (_, Some(s)) => Isometry::new(self.codec.position(s), self.codec.rotation(s)),
                (_, None) => self
                    .world
                    .transform(body.body)
                    .expect("mirror bodies are live"),
            };
            self.world
                .move_kinematic(body.body, target, step)
                .expect("a kinematic mirror body, a finite pose and step");
        }
        self.world.step(step);
        self.presentation.record(&self.world);
        self.shown = (self.shown.1, Some(state.tick));
        self.counts.mirror_steps += 1;
    }

    /// The pose of body `net_id` at server time `t`, from the mirror's presentation: the
    /// interpolation between the two snapshots it holds at `t`'s fraction between their
    /// ticks; past the later, dead-reckoned from the newest state the server sent of it
    /// (see the [module header](self)), or, for a body never sent, carried on along
    /// the same line for at most [`MAX_EXTRAPOLATION`] (a body spawned since the latest
    /// record: its spawn pose). Meant for `t` near
    /// the presentation time [`present`](Self::present) last stepped to; `None` for a
    /// body not in view.
    #[must_use]
    pub fn pose_at(&self, net_id: u32, t: f64) -> Option<Isometry> {
        let body = self.bodies.get(&net_id)?.body;
        let dt = f64::from(self.codec.dt());
        // Past the latest record, a body the server sent a state of is dead-reckoned
        // from the newest sent at or before `t`.
        let tick = t / dt;
        if let (Some(b), Some(kept)) = (self.shown.1, self.received.get(&net_id))
            && tick > f64::from(b)
        {
            let at = kept.partition_point(|r| f64::from(r.tick) <= tick);
            if at > 0 {
                let before = at.checked_sub(2).map(|i| &kept[i]);
                return Some(dead_reckon(&self.codec, &kept[at - 1], before, tick));
            }
        }
        let alpha = match self.shown {
            (Some(a), Some(b)) if b > a => {
                let span = f64::from(b - a);
                let most = 1.0 + MAX_EXTRAPOLATION / dt / span;
                ((tick - f64::from(a)) / span).min(most) as f32
            }
            _ => 1.0,
        };
        // A body spawned since the presentation's latest record stands at its spawn pose.
        self.presentation
            .pose(body, alpha)
            .or_else(|_| self.world.transform(body))
            .ok()
    }

    /// The pose of body `net_id` as shown at local time `now` (after
    /// [`present`](Self::present) or [`update`](Self::update) at `now`).
    #[must_use]
    pub fn pose(&self, net_id: u32, now: f64) -> Option<Isometry> {
        let t = self.presentation_time(now)?;
        self.pose_at(net_id, t)
    }
}

/// Sent state `r` carried on to `tick`, `before` being the state sent before it (see
/// the [module header](self)).
fn dead_reckon(codec: &Codec, r: &Received, before: Option<&Received>, tick: f64) -> Isometry {
    let config = codec.config();
    let (p0, q0) = (codec.position(&r.state), codec.rotation(&r.state));
    let (v, w) = (
        codec.linear_velocity(&r.state),
        codec.angular_velocity(&r.state),
    );
    let dt = codec.dt();
    let t =
        (((tick - f64::from(r.tick)) * f64::from(dt)) as f32).min(config.dead_reckoning_horizon);
    if t <= 0.0 || (length(v.into()) < REST_SPEED && length(w.into()) < REST_SPIN) {
        return Isometry::new(p0, q0);
    }
    let g = config.gravity;
    let g_len = length(g.into());
    let down = if g_len > 0.0 { g / g_len } else { Vec3::ZERO };
    let fall = |v: Vec3| v.x * down.x + v.y * down.y + v.z * down.z;
    let falling = match before {
        Some(b) if b.tick < r.tick => {
            let span = (r.tick - b.tick) as f32 * dt;
            let dv = fall(v) - fall(codec.linear_velocity(&b.state));
            (dv - g_len * span).abs() <= 0.5 * g_len * span
        }
        _ => fall(v).abs() > 0.5,
    };
    let position = if falling {
        p0 + v * t + g * (0.5 * t * t)
    } else {
        p0 + (v - down * fall(v).max(0.0)) * t
    };
    let turn = w * t;
    let angle = length(turn.into());
    let rotation = if angle > 0.0 {
        let (s, c) = sin_cos(0.5 * angle);
        let axis = turn / angle * s;
        quat_normalize(quat_mul(Quat::from_xyzw(axis.x, axis.y, axis.z, c), q0))
    } else {
        q0
    };
    Isometry::new(position, rotation)
}
