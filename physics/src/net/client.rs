//! The client: a mirror of the bodies the server streams to it, shown by interpolation
//! between received snapshots at a playout delay that follows the measured jitter.
//!
//! The client keeps the last [`KEPT`] snapshot states it rebuilt, by tick, to decode the
//! next (each is coded against one of them) and to interpolate. It acknowledges the
//! newest in every update it sends, with its input history: the last
//! [`NetConfig::input_history`](super::NetConfig::input_history) frames, each stamped with
//! the server's clock as the client estimates it ([`ClockSync`]), resent in every packet
//! so a lost packet loses no input.
//!
//! **Playout delay.** For each snapshot, its lateness is the server clock at its arrival
//! (as estimated) minus its tick's time. The client shows the world at the server's
//! clock minus the playout delay: the 95th percentile of the last 64 latenesses plus one
//! snapshot interval, so the snapshot after the one shown has almost always arrived
//! (one lost snapshot is bridged by interpolating across its neighbours). A body the
//! newest snapshot has not reached yet is carried forward by its velocity for up to
//! 100 ms.
//!
//! Interpolation here is between received snapshots, not between the last two steps of
//! a local [`World`](crate::world::World) as [`Presentation`](crate::game::Presentation)
//! does: the client has no world stepping in lockstep with the server, and its samples
//! arrive at irregular times.

use std::collections::{BTreeMap, VecDeque};

use crate::math::{Isometry, Vec3, slerp};

use super::clock::ClockSync;
use super::config::{BodyState, Codec};
use super::error::WireError;
use super::message::{Action, ClientMessage, InputFrame, NetMotion, ServerMessage, ShapeDef};
use super::snapshot::SnapshotState;
use super::transport::Channel;

/// Snapshot states a client keeps.
pub const KEPT: usize = 32;

/// A body the server has spawned in this client's view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MirrorBody {
    /// Its shape.
    pub shape: ShapeDef,
    /// How it moves.
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

/// A client of a [`Server`](super::server::Server) (see the [module header](self)).
#[derive(Debug)]
pub struct Client {
    codec: Codec,
    clock: ClockSync,
    states: VecDeque<SnapshotState>,
    shapes: BTreeMap<u32, ShapeDef>,
    bodies: BTreeMap<u32, MirrorBody>,
    owned: Vec<u32>,
    next_seq: u32,
    history: VecDeque<InputFrame>,
    actions: Vec<Action>,
    lateness: VecDeque<f64>,
    playout_delay: f64,
    last_update: f64,
    counts: ClientCounts,
}

impl Client {
    /// A client; `seed` seeds its clock requests' ids.
    #[must_use]
    pub fn new(codec: Codec, seed: u64) -> Client {
        let interval =
            f64::from(codec.config().snapshot_interval) / f64::from(codec.config().tick_rate);
        Client {
            codec,
            clock: ClockSync::new(seed),
            states: VecDeque::with_capacity(KEPT),
            shapes: BTreeMap::new(),
            bodies: BTreeMap::new(),
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
        let decoded = ServerMessage::decode(bytes, &self.codec, |tick| {
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
            ServerMessage::Snapshot(s) => self.take_snapshot(s, now),
            ServerMessage::World {
                shapes,
                spawns,
                despawns,
                owned,
            } => {
                // Checked whole first: every spawn's shape known here or before.
                let known =
                    |id: u32| self.shapes.contains_key(&id) || shapes.iter().any(|&(s, _)| s == id);
                if spawns.iter().any(|s| !known(s.shape_id)) {
                    self.counts.invalid += 1;
                    return;
                }
                self.shapes.extend(shapes);
                for id in despawns {
                    self.bodies.remove(&id);
                }
                for s in spawns {
                    self.bodies.insert(
                        s.net_id,
                        MirrorBody {
                            shape: self.shapes[&s.shape_id],
                            motion: s.motion,
                            spawn: s.state,
                        },
                    );
                }
                for id in owned {
                    if let Err(i) = self.owned.binary_search(&id) {
                        self.owned.insert(i, id);
                    }
                }
            }
            ServerMessage::TimeRes { id, server_time } => {
                self.clock.on_response(id, server_time, now);
            }
        }
    }

    fn take_snapshot(&mut self, s: SnapshotState, now: f64) {
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
        let at = self.states.partition_point(|h| h.tick < s.tick);
        self.states.insert(at, s);
        if self.states.len() > KEPT {
            self.states.pop_front();
        }
        self.counts.snapshots += 1;
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
    /// update (ack and input history) once per snapshot interval.
    pub fn update(&mut self, now: f64) -> Vec<(Channel, Vec<u8>)> {
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

    /// The pose of body `net_id` at server time `t`, interpolated between the snapshots
    /// around it; `None` for a body not in view.
    #[must_use]
    pub fn pose_at(&self, net_id: u32, t: f64) -> Option<Isometry> {
        let body = self.bodies.get(&net_id)?;
        let dt = f64::from(self.codec.dt());
        let tick = t / dt;
        let after = self.states.partition_point(|s| f64::from(s.tick) <= tick);
        let before = (0..after).rev().find_map(|i| {
            let s = &self.states[i];
            s.get(net_id).map(|b| (s.tick, *b))
        });
        let next = (after..self.states.len()).find_map(|i| {
            let s = &self.states[i];
            s.get(net_id).map(|b| (s.tick, *b))
        });
        let c = &self.codec;
        let pose = |s: &BodyState| (c.position(s), c.rotation(s));
        let (p, q) = match (before, next) {
            (Some((ta, a)), Some((tb, b))) => {
                let alpha = ((tick - f64::from(ta)) / f64::from(tb - ta)) as f32;
                let (pa, qa) = pose(&a);
                let (pb, qb) = pose(&b);
                (pa.lerp(pb, alpha), slerp(qa, qb, alpha))
            }
            (Some((ta, a)), None) => {
                let ahead = ((tick - f64::from(ta)) * dt).min(0.1) as f32;
                let (pa, qa) = pose(&a);
                (pa + c.linear_velocity(&a) * ahead, qa)
            }
            (None, Some((_, b))) => pose(&b),
            (None, None) => pose(&body.spawn),
        };
        Some(Isometry {
            translation: p.into(),
            rotation: q,
        })
    }

    /// The pose of body `net_id` as shown at local time `now`.
    #[must_use]
    pub fn pose(&self, net_id: u32, now: f64) -> Option<Isometry> {
        let t = self.presentation_time(now)?;
        self.pose_at(net_id, t)
    }
}
