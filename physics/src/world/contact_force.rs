//! Contact force events (Rapier's `ContactForceEvent`): a body with a contact force
//! threshold has each of its contacts report, after every step in which the contact
//! pushed with an average normal force above the threshold, the pair's total normal and
//! friction impulses over that step ([`ContactForceEvent`]). Set the threshold with
//! [`BodyDesc::contact_force_threshold`](crate::body::BodyDesc::contact_force_threshold)
//! or [`World::set_contact_force_threshold`]; a pair uses the lower of its two bodies'
//! thresholds, and `f32::INFINITY` (the default) reports nothing.
//!
//! The events are in [`World::events`] (`forces`, sorted by body ids) after each step,
//! and in the event queue as [`EventKind::ContactForce`](crate::event_queue::EventKind::ContactForce).
//! A world where no body has a threshold tallies nothing and looks for no events (the
//! contact bundles are a little larger either way: `benches/RESULTS.md`).
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! world.create_body(&BodyDesc::fixed(Shape::cuboid(Vec3::new(5.0, 0.5, 5.0))?, -Vec3::Y * 0.5))?;
//! // A 1 kg ball dropped from 1.25 m lands at 5 m/s; its weight is 9.81 N.
//! let ball = world.create_body(
//!     &BodyDesc::dynamic(Shape::sphere(0.1)?, Vec3::new(0.0, 1.35, 0.0))
//!         .density(1.0 / (4.0 / 3.0 * std::f32::consts::PI * 0.001))
//!         .contact_force_threshold(100.0),
//! )?;
//! let mut impacts = Vec::new();
//! for _ in 0..120 {
//!     world.step(1.0 / 60.0);
//!     impacts.extend(world.events().forces.iter().copied());
//! }
//! assert_eq!(impacts.len(), 1, "the landing alone pushes harder than 100 N");
//! assert_eq!(impacts[0].body_b, ball);
//! // It stops a 5 m/s fall (restitution 0): about m v = 5 N·s, plus a step's weight.
//! assert!((impacts[0].normal_impulse - 5.0).abs() < 0.5, "{:?}", impacts[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::BodyId;
use crate::error::PhysicsError;
#[cfg(doc)]
use crate::events::ContactForceEvent;
use crate::world::World;

/// Checks a contact force threshold: newtons, >= 0 (`f32::INFINITY` turns events off).
pub(crate) fn validate_threshold(newtons: f32) -> Result<(), PhysicsError> {
    if newtons >= 0.0 {
        Ok(())
    } else {
        Err(PhysicsError::InvalidBodySetting {
            field: "contact_force_threshold",
            value: newtons,
            expected: "a force in newtons >= 0 (f32::INFINITY for no events)",
        })
    }
}

impl World {
    /// Sets the newtons above which `id`'s contacts report force events, from the next
    /// step on (see the [module docs](crate::world::contact_force)); `f32::INFINITY`
    /// turns them off.
    ///
    /// # Errors
    /// [`PhysicsError::StaleBodyId`] if `id` is not a live body;
    /// [`PhysicsError::InvalidBodySetting`] if `newtons` is negative or NaN.
    pub fn set_contact_force_threshold(
        &mut self,
        id: BodyId,
        newtons: f32,
    ) -> Result<(), PhysicsError> {
        self.bodies.get(id)?;
        validate_threshold(newtons)?;
        let bodies = &mut self.bodies;
        let body = &mut bodies.bodies[id.index() as usize];
        bodies.force_reporters -= u32::from(body.contact_force_threshold.is_finite());
        bodies.force_reporters += u32::from(newtons.is_finite());
        body.contact_force_threshold = newtons;
        Ok(())
    }

    /// The newtons above which `id`'s contacts report force events (`f32::INFINITY`:
    /// none).
    ///
    /// # Errors
    /// [`PhysicsError::StaleBodyId`] if `id` is not a live body.
    pub fn contact_force_threshold(&self, id: BodyId) -> Result<f32, PhysicsError> {
        Ok(self.bodies.get(id)?.contact_force_threshold)
    }
}
