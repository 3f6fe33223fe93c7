//! A body's settings changed at runtime (issue 30, item 1): read back as a [`BodyDesc`],
//! and set one at a time, each checked first (a refused value changes nothing and names
//! its field, what it must be and what came) and applied where it matters at once.
//!
//! | setter | applies | also |
//! |---|---|---|
//! | `set_friction`, `set_restitution` | its contacts are mixed anew now | |
//! | `set_gravity_scale`, `set_damping` | from the next step | wakes the body |
//! | `set_motion_quality`, `set_allow_sleep` | from the next step | wakes the body |
//! | `set_sensor` | its contacts end now (with end events); pairs form anew at the next step as sensor or solid | wakes it and what it touched |
//! | `set_layer`, `set_collision_filter` | its contacts are asked again now: those the filters refuse end (with end events); pairs they newly accept form at the next step | wakes it and what it touched |
//!
//! The filter setters ask the same questions the broad phase asks a new pair (the layer
//! table, group and mask, the exclusion list and the user's pair filter, the motion
//! types), so "stop colliding now" needs no contact modifier: a crate whose mask stops
//! matching the floor's group loses its floor contact in the call and falls through in
//! the next step. Like an exclusion, a new filter or sensor flag is a change of the
//! world's structure (a dynamic snapshot saved before it no longer restores; full
//! snapshots carry every field).

use crate::body::filter::{CollisionFilter, ObjectLayer};
use crate::body::{BodyDesc, BodyId, MotionQuality};
use crate::collision::pipeline;
use crate::dynamics::island;
use crate::error::PhysicsError;
use crate::world::{World, snapshot};

/// Refuses a value that is not finite and >= 0.
fn non_negative(field: &'static str, value: f32) -> Result<(), PhysicsError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(PhysicsError::InvalidBodySetting {
            field,
            value,
            expected: "finite and >= 0",
        })
    }
}

impl World {
    /// Everything a [`BodyDesc`] holds, read back from a live body: its shape, motion
    /// type, pose and velocities now, its mass source (density, mass or properties, and
    /// centre-of-mass offset) as given, and every setting as it stands after any setter.
    /// Creating a body from it in an empty world gives a body in the same state. Whether
    /// the body is enabled is not part of a description: see
    /// [`is_enabled`](World::is_enabled).
    pub fn body_desc(&self, id: BodyId) -> Result<BodyDesc, PhysicsError> {
        let b = self.bodies.get(id)?;
        let sim = self.bodies.sim(id)?;
        Ok(BodyDesc {
            shape: b.shape.clone(),
            motion_type: b.motion_type,
            position: sim.transform.translation.into(),
            rotation: sim.transform.rotation,
            linear_velocity: sim.linear_velocity.into(),
            angular_velocity: sim.angular_velocity.into(),
            density: b.density,
            mass: b.mass_spec,
            center_of_mass_offset: b.center_of_mass_offset.into(),
            shapeless: b.shapeless,
            friction: b.friction,
            restitution: b.restitution,
            rolling_friction: b.rolling_friction,
            spinning_friction: b.spinning_friction,
            material: b.material,
            linear_damping: b.linear_damping,
            angular_damping: b.angular_damping,
            gravity_scale: b.gravity_scale,
            max_linear_speed: b.max_linear_speed,
            max_angular_speed: b.max_angular_speed,
            is_sensor: b.is_sensor,
            layer: b.layer,
            filter: b.filter,
            allow_sleep: b.allow_sleep,
            motion_quality: b.motion_quality,
            locked_axes: b.locked_axes,
            contact_force_threshold: b.contact_force_threshold,
            user_data: b.user_data,
        })
    }

    /// Sets a body's friction coefficient (finite, >= 0); its contacts are mixed anew at
    /// once. Refused with [`PhysicsError::InvalidBodySetting`] otherwise.
    pub fn set_friction(&mut self, id: BodyId, friction: f32) -> Result<(), PhysicsError> {
        non_negative("friction", friction)?;
        self.bodies.get_mut(id)?.friction = friction;
        self.new_look(id.index());
        self.remix_body(id.index());
        Ok(())
    }

    /// Sets a body's restitution (in [0, 1]); its contacts are mixed anew at once.
    /// Refused with [`PhysicsError::InvalidBodySetting`] otherwise.
    pub fn set_restitution(&mut self, id: BodyId, restitution: f32) -> Result<(), PhysicsError> {
        if !(0.0..=1.0).contains(&restitution) {
            return Err(PhysicsError::InvalidBodySetting {
                field: "restitution",
                value: restitution,
                expected: "in [0, 1]",
            });
        }
        self.bodies.get_mut(id)?.restitution = restitution;
        self.new_look(id.index());
        self.remix_body(id.index());
        Ok(())
    }

    /// Sets how much of the world's gravity acts on a body (finite; 0 floats, negative
    /// rises), from the next step. Wakes it.
    pub fn set_gravity_scale(&mut self, id: BodyId, scale: f32) -> Result<(), PhysicsError> {
        if !scale.is_finite() {
            return Err(PhysicsError::InvalidBodySetting {
                field: "gravity_scale",
                value: scale,
                expected: "finite",
            });
        }
        self.bodies.get_mut(id)?.gravity_scale = scale;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        Ok(())
    }

    /// Sets a body's linear and angular damping (1/s, finite and >= 0 each), from the
    /// next step. Wakes it. The first bad value is refused with
    /// [`PhysicsError::InvalidBodySetting`] and neither changes.
    pub fn set_damping(
        &mut self,
        id: BodyId,
        linear: f32,
        angular: f32,
    ) -> Result<(), PhysicsError> {
        non_negative("linear_damping", linear)?;
        non_negative("angular_damping", angular)?;
        let b = self.bodies.get_mut(id)?;
        b.linear_damping = linear;
        b.angular_damping = angular;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        Ok(())
    }

    /// A body's linear and angular damping (1/s).
    pub fn damping(&self, id: BodyId) -> Result<(f32, f32), PhysicsError> {
        let b = self.bodies.get(id)?;
        Ok((b.linear_damping, b.angular_damping))
    }

    /// A body's gravity scale.
    pub fn gravity_scale(&self, id: BodyId) -> Result<f32, PhysicsError> {
        Ok(self.bodies.get(id)?.gravity_scale)
    }

    /// Sets a body's tunnelling protection (CCD), from the next step. A body without a
    /// shape has nothing to sweep and stays [`MotionQuality::Discrete`]. Wakes it.
    pub fn set_motion_quality(
        &mut self,
        id: BodyId,
        quality: MotionQuality,
    ) -> Result<(), PhysicsError> {
        let b = self.bodies.get_mut(id)?;
        if b.has_shape() {
            b.motion_quality = quality;
        }
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        Ok(())
    }

    /// Whether a body may fall asleep. Forbidding it wakes the body (and its island) now;
    /// allowing it starts its rest timer afresh.
    pub fn set_allow_sleep(&mut self, id: BodyId, allow: bool) -> Result<(), PhysicsError> {
        self.bodies.get_mut(id)?.allow_sleep = allow;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        Ok(())
    }

    /// Whether a body may fall asleep.
    pub fn allows_sleep(&self, id: BodyId) -> Result<bool, PhysicsError> {
        Ok(self.bodies.get(id)?.allow_sleep)
    }

    /// Makes a body a sensor (it reports overlaps and never pushes) or a solid one. Its
    /// contacts end at once (with end events; a contact's kind is fixed when it forms)
    /// and form anew, of the new kind, at the next step. Wakes it and what it touched.
    pub fn set_sensor(&mut self, id: BodyId, is_sensor: bool) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.is_sensor == is_sensor {
            return Ok(());
        }
        self.bodies.get_mut(id)?.is_sensor = is_sensor;
        self.new_look(id.index());
        self.structure = snapshot::dynamic::new_structure();
        self.refilter_body(id, true);
        Ok(())
    }

    /// A body's object layer.
    pub fn layer(&self, id: BodyId) -> Result<ObjectLayer, PhysicsError> {
        Ok(self.bodies.get(id)?.layer)
    }

    /// Moves a body to another object layer (below the layer table's count, else
    /// [`PhysicsError::InvalidLayer`]). Its contacts are asked again at once (see the
    /// module docs): those the new layer refuses end now; pairs it accepts form at the
    /// next step.
    pub fn set_layer(&mut self, id: BodyId, layer: ObjectLayer) -> Result<(), PhysicsError> {
        if layer >= self.desc.layers.count() {
            return Err(PhysicsError::InvalidLayer(layer));
        }
        if self.bodies.get(id)?.layer == layer {
            return Ok(());
        }
        self.bodies.get_mut(id)?.layer = layer;
        self.structure = snapshot::dynamic::new_structure();
        self.refilter_body(id, false);
        Ok(())
    }

    /// A body's group and mask bits.
    pub fn collision_filter(&self, id: BodyId) -> Result<CollisionFilter, PhysicsError> {
        Ok(self.bodies.get(id)?.filter)
    }

    /// Sets a body's group and mask bits. Its contacts are asked again at once (see the
    /// module docs): those the new bits refuse end now; pairs they accept form at the
    /// next step.
    pub fn set_collision_filter(
        &mut self,
        id: BodyId,
        filter: CollisionFilter,
    ) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.filter == filter {
            return Ok(());
        }
        self.bodies.get_mut(id)?.filter = filter;
        self.structure = snapshot::dynamic::new_structure();
        self.refilter_body(id, false);
        Ok(())
    }

    /// Notes that the look of the body in slot `slot` changed (see `Body::revision`).
    pub(super) fn new_look(&mut self, slot: u32) {
        let b = &mut self.bodies.bodies[slot as usize];
        b.revision = b.revision.wrapping_add(1);
    }

    /// Asks the pair filters again for every contact of the live body `id`, in contact-id
    /// order (so events come out the same every run): a contact they refuse, or every
    /// contact when `drop_all`, ends now with its end event, and its other body wakes
    /// (it may have rested on this one). The body wakes and its proxy is queued for the
    /// broad phase, so pairs the filters now accept form at the next step even if
    /// nothing moves.
    pub(crate) fn refilter_body(&mut self, id: BodyId, drop_all: bool) {
        let slot = id.index();
        for c in self.contacts.contacts_of(slot) {
            let (a, b) = {
                let c = &self.contacts.contacts[c as usize];
                (c.body_a, c.body_b)
            };
            let allowed = !drop_all
                && pipeline::pair_allowed(&self.bodies, &self.exclusions, &self.desc.layers, a, b);
            if !allowed {
                let other = if a == slot { b } else { a };
                island::wake_body(&mut self.bodies, other, &mut self.sleep_events);
                pipeline::remove_contact(&mut self.contacts, c, &mut self.events);
            }
        }
        island::wake_body(&mut self.bodies, slot, &mut self.sleep_events);
        if let Some(proxy) = self.bodies.bodies[slot as usize].proxy {
            self.broad_phase.touch_proxy(proxy);
        }
    }
}
