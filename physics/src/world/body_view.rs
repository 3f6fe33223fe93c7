//! A read-only view of one body: check the id once, then read without a `?` per getter.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let id = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::new(0.0, 5.0, 0.0)))?;
//! world.step(1.0 / 60.0);
//! let body = world.body(id)?;
//! assert!(body.position().y < 5.0 && body.linear_velocity().y < 0.0);
//! assert_eq!(body.motion_type(), MotionType::Dynamic);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::{Body, BodyId, BodySim, FIRST_SLEEPING_SET, MotionQuality, MotionType};
use crate::error::PhysicsError;
use crate::geometry::aabb::Aabb;
use crate::material::MaterialId;
use crate::math::{Isometry, Quat, Vec3};
use crate::shape::Shape;
use crate::world::World;

/// A live body, borrowed from its world (see [`World::body`]).
#[derive(Clone, Copy)]
pub struct BodyRef<'w> {
    id: BodyId,
    body: &'w Body,
    sim: &'w BodySim,
}

impl std::fmt::Debug for BodyRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyRef")
            .field("id", &self.id)
            .field("position", &self.position())
            .field("motion_type", &self.motion_type())
            .finish()
    }
}

impl World {
    /// A view of the body `id`, or [`PhysicsError::StaleBodyId`] if it was removed.
    pub fn body(&self, id: BodyId) -> Result<BodyRef<'_>, PhysicsError> {
        Ok(BodyRef {
            id,
            body: self.bodies.get(id)?,
            sim: self.bodies.sim(id)?,
        })
    }

    /// Every live body, in body order (ascending [`BodyId::index`]), without allocating.
    ///
    /// ```
    /// use joule_physics::prelude::*;
    ///
    /// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
    /// let a = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::ZERO))?;
    /// let b = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::X))?;
    /// let ids: Vec<BodyId> = world.bodies().map(|body| body.id()).collect();
    /// assert_eq!(ids, [a, b]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn bodies(&self) -> BodyIter<'_> {
        BodyIter {
            world: self,
            slot: 0,
            left: self.bodies.len(),
        }
    }

    /// How many times the body was moved by hand: [`set_position`](World::set_position),
    /// [`set_rotation`](World::set_rotation), [`set_transform`](World::set_transform), or
    /// a snapshot [`restore`](World::restore)d over this world. It starts at 0 and wraps.
    ///
    /// A presentation that interpolates between two steps compares it (and the id, whose
    /// generation changes when a slot is reused) to show a teleport as a jump rather than
    /// a smear across the scene.
    pub fn teleport_count(&self, id: BodyId) -> Result<u32, PhysicsError> {
        Ok(self.bodies.get(id)?.teleports)
    }
}

/// The live bodies of a world in body order: see [`World::bodies`].
#[derive(Clone, Debug)]
pub struct BodyIter<'w> {
    world: &'w World,
    slot: usize,
    left: usize,
}

impl<'w> Iterator for BodyIter<'w> {
    type Item = BodyRef<'w>;

    fn next(&mut self) -> Option<BodyRef<'w>> {
        let all = &self.world.bodies;
        while let Some(body) = all.bodies.get(self.slot) {
            let index = self.slot as u32;
            self.slot += 1;
            if body.alive {
                self.left -= 1;
                return Some(BodyRef {
                    id: all.id_of(index),
                    body,
                    sim: all.sim_of(index),
                });
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for BodyIter<'_> {}

impl BodyRef<'_> {
    /// The body's id.
    #[must_use]
    pub fn id(&self) -> BodyId {
        self.id
    }

    /// Position of the body's origin.
    #[must_use]
    pub fn position(&self) -> Vec3 {
        self.sim.transform.translation.into()
    }

    /// Orientation.
    #[must_use]
    pub fn rotation(&self) -> Quat {
        self.sim.transform.rotation
    }

    /// Pose of the body's origin.
    #[must_use]
    pub fn transform(&self) -> Isometry {
        self.sim.transform
    }

    /// World position of the centre of mass.
    #[must_use]
    pub fn center_of_mass(&self) -> Vec3 {
        self.sim.center.into()
    }

    /// Linear velocity of the centre of mass (m/s).
    #[must_use]
    pub fn linear_velocity(&self) -> Vec3 {
        self.sim.linear_velocity.into()
    }

    /// Angular velocity (rad/s, world axes).
    #[must_use]
    pub fn angular_velocity(&self) -> Vec3 {
        self.sim.angular_velocity.into()
    }

    /// Static, kinematic or dynamic.
    #[must_use]
    pub fn motion_type(&self) -> MotionType {
        self.body.motion_type
    }

    /// Mass in kg (0 for static and kinematic bodies).
    #[must_use]
    pub fn mass(&self) -> f32 {
        self.body.mass
    }

    /// Whether the body sleeps.
    #[must_use]
    pub fn is_sleeping(&self) -> bool {
        self.body.set >= FIRST_SLEEPING_SET
    }

    /// Whether the body is a sensor.
    #[must_use]
    pub fn is_sensor(&self) -> bool {
        self.body.is_sensor
    }

    /// The collision shape.
    #[must_use]
    pub fn shape(&self) -> &Shape {
        &self.body.shape
    }

    /// The world bounding box of the shape.
    #[must_use]
    pub fn aabb(&self) -> Aabb {
        self.body.shape.world_aabb(&self.sim.transform)
    }

    /// Friction coefficient.
    #[must_use]
    pub fn friction(&self) -> f32 {
        self.body.friction
    }

    /// Restitution.
    #[must_use]
    pub fn restitution(&self) -> f32 {
        self.body.restitution
    }

    /// Material id.
    #[must_use]
    pub fn material(&self) -> MaterialId {
        self.body.material
    }

    /// Tunnelling protection.
    #[must_use]
    pub fn motion_quality(&self) -> MotionQuality {
        self.body.motion_quality
    }

    /// The world axes the body may not move along or turn about (see
    /// [`LockedAxes`](crate::body::LockedAxes)).
    #[must_use]
    pub fn locked_axes(&self) -> crate::body::LockedAxes {
        self.body.locked_axes
    }

    /// The user data given at creation.
    #[must_use]
    pub fn user_data(&self) -> u64 {
        self.body.user_data
    }

    /// How many times the body was moved by hand (see [`World::teleport_count`]).
    #[must_use]
    pub fn teleport_count(&self) -> u32 {
        self.body.teleports
    }
}
