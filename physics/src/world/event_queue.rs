//! Events that wait for the user: every step's contact, sensor and sleep events appended
//! to one queue until [`World::drain_events`] takes them, so stepping twice between reads
//! loses nothing (Rapier's event collector, Jolt's contact listener buffered).
//!
//! [`World::events`] still shows the last step's events alone; the queue is for code that
//! does not read after every step (a game's fixed-step loop running several steps a
//! frame). Contact, sensor and sleep events share one shape, [`Event`], ordered by step
//! and then as each step orders them (by body ids), so the queue is deterministic.
//!
//! The queue is off until [`World::set_event_queue`] turns it on: an undrained queue
//! would otherwise grow in a program that never reads it.
//!
//! ```
//! use joule_physics::prelude::*;
//! use joule_physics::event_queue::EventKind;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! world.set_event_queue(true);
//! world.create_body(&BodyDesc::fixed(Shape::cuboid(Vec3::new(5.0, 0.5, 5.0))?, -Vec3::Y * 0.5))?;
//! world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y))?;
//! for _ in 0..60 {
//!     world.step(1.0 / 60.0); // no reads in between
//! }
//! let begins = world.drain_events().filter(|e| e.kind == EventKind::ContactBegin).count();
//! assert_eq!(begins, 1, "the landing was kept until drained");
//! assert_eq!(world.drain_events().count(), 0, "draining empties the queue");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::BodyId;
use crate::events::ContactEventKind;
use crate::math::Vec3;
use crate::world::World;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// Two bodies' surfaces started touching (see [`ContactEventKind::Begin`]); the
    /// event carries the point, normal and approach speed.
    ContactBegin,
    /// Two bodies still touch (only with `WorldDesc::report_persist_events`).
    ContactPersist,
    /// Two bodies stopped touching (or one was removed).
    ContactEnd,
    /// A contact pushed harder than its bodies' force threshold over the step (see
    /// [`ContactForceEvent`](crate::events::ContactForceEvent)); the event carries the
    /// normal and the step's total normal and friction impulses.
    ContactForce,
    /// `body_b` entered the sensor `body_a`.
    SensorBegin,
    /// `body_b` left the sensor `body_a`.
    SensorEnd,
    /// `body_a` fell asleep (`body_b` is the same body).
    Sleep,
    /// `body_a` woke up (`body_b` is the same body).
    Wake,
}

/// One queued event: the same shape for contacts, sensors and sleep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// The world's step count after the step that produced it.
    pub step: u64,
    /// What happened.
    pub kind: EventKind,
    /// Contacts: the lower id. Sensors: the sensor. Sleep: the body.
    pub body_a: BodyId,
    /// Contacts: the higher id. Sensors: the visitor. Sleep: the body again.
    pub body_b: BodyId,
    /// `ContactBegin`: where the surfaces met (see
    /// [`ContactEvent::point`](crate::events::ContactEvent::point)); zero for the other
    /// kinds.
    pub point: Vec3,
    /// `ContactBegin`: the normal from `body_a` towards `body_b`; zero for the others.
    pub normal: Vec3,
    /// `ContactBegin`: how fast the surfaces approached (m/s, see
    /// [`ContactEvent::approach_speed`](crate::events::ContactEvent::approach_speed)); zero
    /// for the others.
    pub approach_speed: f32,
    /// `ContactForce`: the pair's total normal impulse over the step (N·s); zero for the
    /// other kinds.
    pub normal_impulse: f32,
    /// `ContactForce`: the pair's total friction impulse over the step (N·s) on
    /// `body_b`; zero for the other kinds.
    pub friction_impulse: Vec3,
}

impl Event {
    /// An event with no contact point (sensors, sleep).
    fn plain(step: u64, kind: EventKind, body_a: BodyId, body_b: BodyId) -> Self {
        Self {
            step,
            kind,
            body_a,
            body_b,
            point: Vec3::ZERO,
            normal: Vec3::ZERO,
            approach_speed: 0.0,
            normal_impulse: 0.0,
            friction_impulse: Vec3::ZERO,
        }
    }
}

/// The queue's storage (a `World` part).
#[derive(Clone, Debug, Default)]
pub(crate) struct EventQueue {
    pub enabled: bool,
    pub events: Vec<Event>,
}

impl World {
    /// Turns the event queue on or off (off by default). Turning it off empties it.
    pub fn set_event_queue(&mut self, on: bool) {
        self.event_queue.enabled = on;
        if !on {
            self.event_queue.events.clear();
        }
    }

    /// The events queued since the last drain, oldest first.
    #[must_use]
    pub fn queued_events(&self) -> &[Event] {
        &self.event_queue.events
    }

    /// Takes every queued event, oldest first, and empties the queue (its memory is
    /// kept for the next steps).
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.event_queue.events.drain(..)
    }

    /// Appends the last step's events to the queue when it is on.
    pub(crate) fn queue_step_events(&mut self) {
        if !self.event_queue.enabled {
            return;
        }
        let step = self.step_count;
        let out = &mut self.event_queue.events;
        out.extend(self.events.contacts.iter().map(|e| Event {
            step,
            kind: match e.kind {
                ContactEventKind::Begin => EventKind::ContactBegin,
                ContactEventKind::Persist => EventKind::ContactPersist,
                ContactEventKind::End => EventKind::ContactEnd,
            },
            body_a: e.body_a,
            body_b: e.body_b,
            point: e.point,
            normal: e.normal,
            approach_speed: e.approach_speed,
            normal_impulse: 0.0,
            friction_impulse: Vec3::ZERO,
        }));
        out.extend(self.events.forces.iter().map(|e| Event {
            normal: e.normal,
            normal_impulse: e.normal_impulse,
            friction_impulse: e.friction_impulse,
            ..Event::plain(step, EventKind::ContactForce, e.body_a, e.body_b)
        }));
        out.extend(self.events.sensors.iter().map(|e| {
            let kind = if e.begin {
                EventKind::SensorBegin
            } else {
                EventKind::SensorEnd
            };
            Event::plain(step, kind, e.sensor, e.visitor)
        }));
        out.extend(self.sleep_events.iter().map(|e| {
            let kind = if e.asleep {
                EventKind::Sleep
            } else {
                EventKind::Wake
            };
            Event::plain(step, kind, e.body, e.body)
        }));
    }
}
