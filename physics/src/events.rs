//! Events delivered after a step, in a deterministic order.
//!
//! Contact events are produced by the serial pass over contacts (id order) and then
//! sorted by the two body ids, so their order depends on nothing but the bodies involved.
//! Sensor events likewise. The buffers are reused step to step (no allocation once warm).

use crate::body::BodyId;
use crate::math::Vec3;

/// What happened to a contact this step. A contact's surfaces touch while one of its
/// points is within [`TOUCHING_SEPARATION`](crate::contact::TOUCHING_SEPARATION) (5.5
/// mm) or pushed in the step before (a collision resolved across a speculative
/// gap, such as a bounce): speculative points that only wait, a few centimetres from
/// the surface, begin nothing (see [`crate::contact_view`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContactEventKind {
    /// The bodies' surfaces started touching.
    Begin,
    /// The bodies were touching last step and still are.
    Persist,
    /// The bodies' surfaces stopped touching (or the contact was destroyed, or one of
    /// the bodies was removed).
    End,
}

/// A contact begin/persist/end between two non-sensor bodies.
///
/// A begin also says where and how hard the surfaces met (Box2D v3's hit events): the
/// point, the normal and the approach speed. The approach speed is the relative normal
/// speed the solver saw at the start of the step that brought the surfaces together (for
/// a landing caught by speculative points, the step before the begin), carried to the
/// instant of touch under gravity over the gap they had then (a 1 m drop at 60 Hz reads
/// within 0.5 % of `sqrt(2 g h)`; the start-of-step speed alone was 4 % low), or the
/// approach at the begin itself where that is faster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactEvent {
    /// Begin, persist or end.
    pub kind: ContactEventKind,
    /// The body with the lower id.
    pub body_a: BodyId,
    /// The body with the higher id.
    pub body_b: BodyId,
    /// Begin: the world position of the deepest point, midway between the surfaces.
    /// Zero for persist and end.
    pub point: Vec3,
    /// Begin: the world unit normal from `body_a` towards `body_b`. Zero for persist
    /// and end.
    pub normal: Vec3,
    /// Begin: how fast the surfaces approached along the normal (m/s, >= 0). Zero for
    /// persist and end.
    pub approach_speed: f32,
}

impl ContactEvent {
    /// The end of the contact between `body_a` and `body_b`.
    pub(crate) fn end(body_a: BodyId, body_b: BodyId) -> Self {
        Self {
            kind: ContactEventKind::End,
            body_a,
            body_b,
            point: Vec3::ZERO,
            normal: Vec3::ZERO,
            approach_speed: 0.0,
        }
    }
}

/// A contact that pushed harder than its bodies' force threshold in the last step
/// (Rapier's `ContactForceEvent`): reported for every step in which the pair's average
/// normal force, [`normal_impulse`](Self::normal_impulse) divided by the step, exceeds the
/// lower of the two bodies' [`contact_force_threshold`](crate::body::BodyDesc::contact_force_threshold)s.
///
/// The impulses are the solver's totals over the step's substeps, bounces included: a
/// box of mass `m` resting on the ground reports `m g dt`, a ball that lands at speed `v`
/// with restitution `e` about `m (1 + e) v` (plus its weight over the step). A landing
/// that speculative points stop a few centimetres short reports its force in the step
/// that stopped it, which can be the step before its begin event (see [`ContactEvent`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactForceEvent {
    /// The body with the lower id.
    pub body_a: BodyId,
    /// The body with the higher id.
    pub body_b: BodyId,
    /// The contact's world unit normal, from `body_a` towards `body_b`.
    pub normal: Vec3,
    /// The pair's total normal impulse over the step (N·s, >= 0), on `body_b` along
    /// `normal` (`body_a` gets the opposite).
    pub normal_impulse: f32,
    /// The pair's total friction impulse over the step (N·s), on `body_b`, across the
    /// normal (`body_a` gets the opposite).
    pub friction_impulse: Vec3,
    /// The average normal force over the step (N): `normal_impulse / dt`, what the
    /// threshold is compared with.
    pub normal_force: f32,
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
    /// Contact force events, sorted by (body_a, body_b).
    pub forces: Vec<ContactForceEvent>,
}

impl Events {
    /// Empties the buffers, keeping their capacity.
    pub fn clear(&mut self) {
        self.contacts.clear();
        self.sensors.clear();
        self.forces.clear();
    }

    /// Puts both buffers in their documented order.
    pub fn sort(&mut self) {
        self.contacts
            .sort_unstable_by_key(|e| (e.body_a, e.body_b, e.kind));
        self.sensors
            .sort_unstable_by_key(|e| (e.sensor, e.visitor, !e.begin));
        self.forces.sort_unstable_by_key(|e| (e.body_a, e.body_b));
    }
}
