//! Hooks a game needs inside the step (Rapier's physics hooks, Jolt's
//! `ObjectLayerPairFilter`/`ContactListener::OnContactValidate`).
//!
//! **Pair filter** ([`World::set_pair_filter`]): a function asked, for every candidate
//! pair the broad phase finds (and every pair a CCD cast meets), whether the two bodies
//! may collide; `false` creates no contact. It is called with the lower body id first,
//! in the serial pair pass (in body-id order) and from CCD jobs, so it must be a pure
//! function of its arguments and of data it owns (`Fn + Send + Sync`): then the step
//! stays deterministic at any thread count. It runs after the layer table, the
//! group/mask filter and the exclusion list have accepted the pair.
//!
//! **Contact modifier** ([`World::set_contact_modifier`]): a function called, every step,
//! for every contact that has points (touching or speculative), right after the narrow
//! phase computed them, with a [`ContactModification`]: the two bodies (lower id first),
//! their user data, the world normal (A to B) and points. It may change the friction,
//! restitution and normal the solver uses this step, set a sliding velocity of the
//! surfaces (a conveyor belt), or disable the contact for this step (a one-way platform: the body
//! passes through; the contact reports `End` when disabled and `Begin` when it touches
//! again). It sees the mixed values afresh every step, so what it sets never compounds.
//! It runs in the narrow phase's parallel jobs, so, like the pair filter, it must be a
//! pure function of its arguments and of data it owns (`Fn + Send + Sync`): then the
//! step stays deterministic at any thread count. Sensors are not passed to it.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ground = world.create_body(&BodyDesc::fixed(Shape::cuboid(Vec3::new(5.0, 0.5, 5.0))?, -Vec3::Y * 0.5))?;
//! let ghost = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y).user_data(1))?;
//! // The ghost passes through the ground: refuse that one pair.
//! world.set_pair_filter(move |a, b| !(a == ground && b == ghost));
//! for _ in 0..60 {
//!     world.step(1.0 / 60.0);
//! }
//! assert!(world.body(ghost)?.position().y < 0.0, "it fell through");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`World::set_pair_filter`]: crate::world::World::set_pair_filter
//! [`World::set_contact_modifier`]: crate::world::World::set_contact_modifier

use std::sync::Arc;

use arrayvec::ArrayVec;

use crate::body::{Body, BodyId, BodySim};
use crate::contact::Contact;
use crate::math::{Vec3, Vec3A};

/// A user pair filter, shared with the step's jobs.
#[derive(Clone)]
pub(crate) struct PairFilter(pub Arc<dyn Fn(BodyId, BodyId) -> bool + Send + Sync>);

impl std::fmt::Debug for PairFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairFilter(..)")
    }
}

/// A user contact modifier, shared with the step's jobs.
#[derive(Clone)]
pub(crate) struct ContactModifier(pub Arc<dyn Fn(&mut ContactModification) + Send + Sync>);

impl std::fmt::Debug for ContactModifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContactModifier(..)")
    }
}

/// One contact as the [contact modifier](crate::world::World::set_contact_modifier) sees it this step,
/// and what it may change. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct ContactModification {
    bodies: [BodyId; 2],
    user_data: [u64; 2],
    normal: Vec3,
    points: ArrayVec<(Vec3, f32), 4>,
    friction: f32,
    restitution: f32,
    tangent_velocity: Vec3,
    disabled: bool,
}

impl ContactModification {
    /// The two bodies, lower id first (A, B).
    #[must_use]
    pub fn bodies(&self) -> [BodyId; 2] {
        self.bodies
    }

    /// The bodies' user data (A, B).
    #[must_use]
    pub fn user_data(&self) -> [u64; 2] {
        self.user_data
    }

    /// The world contact normal, unit, from A towards B.
    #[must_use]
    pub fn normal(&self) -> Vec3 {
        self.normal
    }

    /// The world normal pointing away from `body`'s surface, towards the other body
    /// (`None` if `body` is not in this contact): for a one-way platform, whether the
    /// other body is above it is `normal_from(platform)?.y > 0`.
    #[must_use]
    pub fn normal_from(&self, body: BodyId) -> Option<Vec3> {
        if body == self.bodies[0] {
            Some(self.normal)
        } else if body == self.bodies[1] {
            Some(-self.normal)
        } else {
            None
        }
    }

    /// Replaces the normal the solver pushes along this step (unit, A towards B; a
    /// non-finite or zero vector is ignored, others are normalised): a ramp that should
    /// push straight up, a wheel that should not feel a seam. The points and their
    /// separations stay as the narrow phase found them.
    pub fn set_normal(&mut self, n: Vec3) {
        if n.is_finite()
            && let Some(unit) = n.try_normalize()
        {
            self.normal = unit;
        }
    }

    /// The contact points (world, midway between the surfaces) and their separations
    /// (negative: penetration; positive: a speculative point not touching yet).
    #[must_use]
    pub fn points(&self) -> &[(Vec3, f32)] {
        &self.points
    }

    /// The friction coefficient the solver will use (the mixed value unless changed).
    #[must_use]
    pub fn friction(&self) -> f32 {
        self.friction
    }

    /// Sets this step's friction coefficient. A negative or non-finite value is ignored
    /// (the mixed value stays): a modifier cannot corrupt the solver.
    pub fn set_friction(&mut self, friction: f32) {
        if friction.is_finite() && friction >= 0.0 {
            self.friction = friction;
        }
    }

    /// The restitution the solver will use.
    #[must_use]
    pub fn restitution(&self) -> f32 {
        self.restitution
    }

    /// Sets this step's restitution; values outside `[0, 1]` or NaN are ignored.
    pub fn set_restitution(&mut self, restitution: f32) {
        if (0.0..=1.0).contains(&restitution) {
            self.restitution = restitution;
        }
    }

    /// The sliding velocity friction drives B's surface to, relative to A's (zero unless
    /// set).
    #[must_use]
    pub fn tangent_velocity(&self) -> Vec3 {
        self.tangent_velocity
    }

    /// Sets the velocity B's surface should slide at relative to A's, in the contact's
    /// tangent plane (the part along the normal is dropped); friction drives towards it
    /// within its usual bound. Non-finite values are ignored.
    pub fn set_tangent_velocity(&mut self, v: Vec3) {
        if v.is_finite() {
            self.tangent_velocity = v - self.normal * v.dot(self.normal);
        }
    }

    /// A conveyor belt: `body`'s surface moves at `v` (world) while the body itself does
    /// not, so the other body is carried at up to `v` by friction. Does nothing when
    /// `body` is not in this contact or `v` is not finite.
    pub fn set_surface_velocity(&mut self, body: BodyId, v: Vec3) {
        if body == self.bodies[0] {
            self.set_tangent_velocity(v);
        } else if body == self.bodies[1] {
            self.set_tangent_velocity(-v);
        }
    }

    /// Disables the contact for this step: the solver ignores it and it counts as not
    /// touching (events and islands too).
    pub fn disable(&mut self) {
        self.disabled = true;
    }

    /// Whether [`disable`](Self::disable) was called.
    #[must_use]
    pub fn is_disabled(&self) -> bool {
        self.disabled
    }
}

/// Runs `modify` on contact `c` (non-sensor, with points) and applies what it set;
/// returns whether the contact still touches.
pub(crate) fn modify_contact(
    modify: &ContactModifier,
    ba: &Body,
    bb: &Body,
    sa: &BodySim,
    sb: &BodySim,
    c: &mut Contact,
) -> bool {
    let normal = c.manifold.normal;
    let points = super::world_points(c, sa, sb)
        .map(|(p, s)| (Vec3::from(p), s))
        .collect();
    let mut m = ContactModification {
        bodies: [c.id_a, c.id_b],
        user_data: [ba.user_data, bb.user_data],
        normal: Vec3::from(normal),
        points,
        friction: c.solve_friction,
        restitution: c.solve_restitution,
        tangent_velocity: Vec3::ZERO,
        disabled: false,
    };
    (modify.0)(&mut m);
    c.solve_friction = m.friction;
    c.solve_restitution = m.restitution;
    c.tangent_velocity = Vec3A::from(m.tangent_velocity);
    c.solve_normal = Vec3A::from(m.normal);
    !m.disabled
}
