//! Events delivered after a step, in a deterministic order.
//!
//! Contact events are produced by the serial pass over contacts (id order) and then
//! sorted by the two body ids, so their order depends on nothing but the bodies involved.
//! Sensor events likewise. The buffers are reused step to step (no allocation once warm).

use crate::body::BodyId;

/// What happened to a contact this step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContactEventKind {
    /// The bodies started touching.
    Begin,
    /// The bodies were touching last step and still are.
    Persist,
    /// The bodies stopped touching (or one of them was removed).
    End,
}

/// A contact begin/persist/end between two non-sensor bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContactEvent {
    /// Begin, persist or end.
    pub kind: ContactEventKind,
    /// The body with the lower id.
    pub body_a: BodyId,
    /// The body with the higher id.
    pub body_b: BodyId,
}

/// A body entering or leaving a sensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SensorEvent {
    /// True when the visitor started overlapping the sensor, false when it left.
    pub begin: bool,
    /// The sensor body.
    pub sensor: BodyId,
    /// The other body.
    pub visitor: BodyId,
}

/// The event buffers of one step.
#[derive(Clone, Debug, Default)]
pub struct Events {
    /// Contact events, sorted by (body_a, body_b, kind).
    pub contacts: Vec<ContactEvent>,
    /// Sensor events, sorted by (sensor, visitor).
    pub sensors: Vec<SensorEvent>,
}

impl Events {
    /// Empties the buffers, keeping their capacity.
    pub fn clear(&mut self) {
        self.contacts.clear();
        self.sensors.clear();
    }

    /// Puts both buffers in their documented order.
    pub fn sort(&mut self) {
        self.contacts
            .sort_unstable_by_key(|e| (e.body_a, e.body_b, e.kind));
        self.sensors
            .sort_unstable_by_key(|e| (e.sensor, e.visitor, !e.begin));
    }
}
