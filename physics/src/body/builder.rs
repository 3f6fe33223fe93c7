//! Builder-style setters on [`BodyDesc`], so a body is one expression (Rapier's
//! `RigidBodyBuilder`, Jolt's `BodyCreationSettings`):
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ball = world.create_body(
//!     &BodyDesc::dynamic(Shape::sphere(0.25)?, Vec3::new(0.0, 2.0, 0.0))
//!         .linear_velocity(Vec3::new(3.0, 0.0, 0.0))
//!         .restitution(0.8)
//!         .user_data(7),
//! )?;
//! assert_eq!(world.body(ball)?.user_data(), 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The setters only store values; [`World::create_body`](crate::world::World::create_body)
//! validates them all and refuses bad ones with a typed error, as with a literal.

use crate::body::filter::{CollisionFilter, ObjectLayer};
use crate::body::{BodyDesc, LockedAxes, MotionQuality, MotionType};
use crate::material::MaterialId;
use crate::math::{Quat, Vec3};
use crate::shape::Shape;

impl BodyDesc {
    /// Replaces the shape.
    #[must_use]
    pub fn shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// Sets the motion type.
    #[must_use]
    pub fn motion_type(mut self, motion_type: MotionType) -> Self {
        self.motion_type = motion_type;
        self
    }

    /// Sets the position of the body's origin.
    #[must_use]
    pub fn position(mut self, position: Vec3) -> Self {
        self.position = position;
        self
    }

    /// Sets the orientation (a unit quaternion).
    #[must_use]
    pub fn rotation(mut self, rotation: Quat) -> Self {
        self.rotation = rotation;
        self
    }

    /// Sets the initial linear velocity (m/s).
    #[must_use]
    pub fn linear_velocity(mut self, v: Vec3) -> Self {
        self.linear_velocity = v;
        self
    }

    /// Sets the initial angular velocity (rad/s, world axes).
    #[must_use]
    pub fn angular_velocity(mut self, w: Vec3) -> Self {
        self.angular_velocity = w;
        self
    }

    /// Sets the density (kg/m³) that gives a dynamic body its mass.
    #[must_use]
    pub fn density(mut self, density: f32) -> Self {
        self.density = density;
        self
    }

    /// Sets the friction coefficient (>= 0).
    #[must_use]
    pub fn friction(mut self, friction: f32) -> Self {
        self.friction = friction;
        self
    }

    /// Sets the restitution (0 = no bounce, 1 = elastic).
    #[must_use]
    pub fn restitution(mut self, restitution: f32) -> Self {
        self.restitution = restitution;
        self
    }

    /// Sets the rolling and spinning resistance lengths (m; see
    /// [`BodyDesc::rolling_friction`]).
    #[must_use]
    pub fn rolling_friction(mut self, rolling: f32, spinning: f32) -> Self {
        self.rolling_friction = rolling;
        self.spinning_friction = spinning;
        self
    }

    /// Sets the material id (the key of the world's pair tables).
    #[must_use]
    pub fn material(mut self, material: MaterialId) -> Self {
        self.material = material;
        self
    }

    /// Sets linear and angular damping (1/s).
    #[must_use]
    pub fn damping(mut self, linear: f32, angular: f32) -> Self {
        self.linear_damping = linear;
        self.angular_damping = angular;
        self
    }

    /// Scales gravity for this body (0 floats, 1 is normal).
    #[must_use]
    pub fn gravity_scale(mut self, scale: f32) -> Self {
        self.gravity_scale = scale;
        self
    }

    /// Reports a contact force event for each step in which a contact of this body pushes
    /// with an average normal force above `newtons` (see
    /// [`BodyDesc::contact_force_threshold`](field@BodyDesc::contact_force_threshold)).
    #[must_use]
    pub fn contact_force_threshold(mut self, newtons: f32) -> Self {
        self.contact_force_threshold = newtons;
        self
    }

    /// Makes the body a sensor: it reports overlaps and never pushes.
    #[must_use]
    pub fn sensor(mut self, is_sensor: bool) -> Self {
        self.is_sensor = is_sensor;
        self
    }

    /// Sets the object layer.
    #[must_use]
    pub fn layer(mut self, layer: ObjectLayer) -> Self {
        self.layer = layer;
        self
    }

    /// Sets the group/mask filter.
    #[must_use]
    pub fn filter(mut self, filter: CollisionFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Whether the body may fall asleep.
    #[must_use]
    pub fn allow_sleep(mut self, allow: bool) -> Self {
        self.allow_sleep = allow;
        self
    }

    /// Sets the tunnelling protection ([`MotionQuality::LinearCast`] for fast bodies).
    #[must_use]
    pub fn motion_quality(mut self, quality: MotionQuality) -> Self {
        self.motion_quality = quality;
        self
    }

    /// Locks world axes of a dynamic body: it never translates along or rotates about
    /// them, not even by rounding ([`LockedAxes`]: `LockedAxes::ROTATION` for a capsule
    /// that never tips, `LockedAxes::PLANE_XY` for a 2D game).
    #[must_use]
    pub fn locked_axes(mut self, axes: LockedAxes) -> Self {
        self.locked_axes = axes;
        self
    }

    /// Sets the user data (an entity id, say), returned by
    /// [`BodyRef::user_data`](crate::world::body_view::BodyRef::user_data).
    #[must_use]
    pub fn user_data(mut self, data: u64) -> Self {
        self.user_data = data;
        self
    }
}
