//! The world's per-body API for mass properties and persistent forces (issue 13): kept
//! out of `world/mod.rs` so that file stays one concept (the world's parts and its step).

use crate::body::mass::{self, MassSpec};
use crate::body::{BodyId, LockedAxes, MotionType, validate_position, validate_vector};
use crate::dynamics::island;
use crate::error::PhysicsError;
use crate::math::{Mat3A, Quat, Vec3, Vec3A, cross};
use crate::world::World;

impl World {
    /// The centre of mass in the body's local frame (zero for static and kinematic
    /// bodies, which have no mass).
    pub fn local_center_of_mass(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.get(id)?.local_center.into())
    }

    /// The inverse inertia tensor about the centre of mass, in the body's local axes
    /// (zero unless the body is dynamic).
    pub fn inverse_inertia_local(&self, id: BodyId) -> Result<Mat3A, PhysicsError> {
        Ok(self.bodies.sim(id)?.inv_inertia_local)
    }

    /// The inverse inertia tensor about the centre of mass, in world axes at the body's
    /// current rotation: `R I⁻¹ Rᵀ`.
    pub fn inverse_inertia_world(&self, id: BodyId) -> Result<Mat3A, PhysicsError> {
        Ok(self.bodies.sim(id)?.inv_inertia_world())
    }

    /// The inertia tensor (kg·m²) about the centre of mass in local axes, or `None` for a
    /// body that is not dynamic (its inertia is infinite).
    pub fn inertia_local(&self, id: BodyId) -> Result<Option<Mat3A>, PhysicsError> {
        if self.bodies.get(id)?.motion_type != MotionType::Dynamic {
            return Ok(None);
        }
        Ok(Some(self.bodies.sim(id)?.inv_inertia_local.inverse()))
    }

    /// The inertia tensor about the centre of mass in world axes (`None` unless dynamic).
    pub fn inertia_world(&self, id: BodyId) -> Result<Option<Mat3A>, PhysicsError> {
        let Some(local) = self.inertia_local(id)? else {
            return Ok(None);
        };
        let r = Mat3A::from_quat(self.bodies.sim(id)?.transform.rotation);
        Ok(Some(r * local * r.transpose()))
    }

    /// The principal moments of inertia (ascending) and the rotation from the principal
    /// axes to the body's local axes (`None` unless dynamic). In world axes the principal
    /// frame is `rotation(id) * axes`.
    pub fn principal_inertia(&self, id: BodyId) -> Result<Option<(Vec3, Quat)>, PhysicsError> {
        Ok(self.inertia_local(id)?.map(mass::principal_axes))
    }

    /// Replaces a dynamic body's mass properties (a new mass keeping the shape's inertia
    /// distribution, or full properties), with an optional centre-of-mass offset. The
    /// body's origin stays where it is; its centre of mass moves with the new properties
    /// and its velocities are kept. An error changes nothing.
    pub fn set_mass_properties(
        &mut self,
        id: BodyId,
        spec: MassSpec,
        center_of_mass_offset: Vec3,
    ) -> Result<(), PhysicsError> {
        let b = self.bodies.get(id)?;
        if b.motion_type != MotionType::Dynamic {
            return Err(PhysicsError::WrongMotionType);
        }
        let shape = b.has_shape().then_some(&b.shape);
        // Density only matters for `MassSpec::FromShape`: the body's own.
        let mp = mass::resolve(shape, b.density, spec, center_of_mass_offset)?;
        let inv_inertia = mp.inertia.inverse();
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        self.structure = crate::world::snapshot::dynamic::new_structure();
        let b = self.bodies.get_mut(id)?;
        b.mass_spec = spec;
        b.center_of_mass_offset = center_of_mass_offset.into();
        b.mass = mp.mass;
        b.local_center = mp.center_of_mass;
        let sim = self.bodies.sim_mut(id)?;
        sim.inv_mass = 1.0 / mp.mass;
        sim.inv_inertia_local = inv_inertia;
        sim.local_center = mp.center_of_mass;
        sim.center = sim.transform.transform_point(mp.center_of_mass);
        sim.center0 = sim.center;
        Ok(())
    }

    /// Whether the body has a collision shape (bodies made with `BodyDesc::shapeless` or
    /// `BodyDesc::anchor` have none).
    pub fn has_shape(&self, id: BodyId) -> Result<bool, PhysicsError> {
        Ok(self.bodies.get(id)?.has_shape())
    }

    /// Sets a force (N) at the centre of mass that acts every step until changed (a
    /// thruster, wind). Unlike [`World::add_force`] it is not cleared by the step. Wakes
    /// the body. A non-finite force is an error and changes nothing.
    pub fn set_constant_force(&mut self, id: BodyId, force: Vec3) -> Result<(), PhysicsError> {
        validate_vector(force)?;
        self.require_dynamic_body(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        self.bodies.get_mut(id)?.constant_force = Vec3A::from(force);
        Ok(())
    }

    /// Sets a torque (N·m) that acts every step until changed. Wakes the body.
    pub fn set_constant_torque(&mut self, id: BodyId, torque: Vec3) -> Result<(), PhysicsError> {
        validate_vector(torque)?;
        self.require_dynamic_body(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        self.bodies.get_mut(id)?.constant_torque = Vec3A::from(torque);
        Ok(())
    }

    /// The body's constant force (zero unless set).
    pub fn constant_force(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.get(id)?.constant_force.into())
    }

    /// The body's constant torque (zero unless set).
    pub fn constant_torque(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.get(id)?.constant_torque.into())
    }

    /// Locks world axes of the body from the next step on (see [`LockedAxes`]; they bind
    /// dynamic bodies only). A dynamic body's velocity loses its locked components now,
    /// and it is woken. Like other settings changed by hand, a dynamic snapshot's restore
    /// does not undo it.
    pub fn set_locked_axes(&mut self, id: BodyId, axes: LockedAxes) -> Result<(), PhysicsError> {
        let b = self.bodies.get_mut(id)?;
        b.locked_axes = axes;
        if b.motion_type != MotionType::Dynamic {
            return Ok(());
        }
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let sim = self.bodies.sim_mut(id)?;
        sim.linear_velocity = axes.free_linear(sim.linear_velocity);
        sim.angular_velocity = axes.free_angular(sim.angular_velocity);
        sim.velocity_carry = axes.free_linear(sim.velocity_carry);
        Ok(())
    }

    /// The body's locked axes (empty unless set).
    pub fn locked_axes(&self, id: BodyId) -> Result<LockedAxes, PhysicsError> {
        Ok(self.bodies.get(id)?.locked_axes)
    }

    fn require_dynamic_body(&self, id: BodyId) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.motion_type != MotionType::Dynamic {
            return Err(PhysicsError::WrongMotionType);
        }
        Ok(())
    }
}

impl World {
    /// Adds a force (N) at the centre of mass, applied during the next step.
    pub fn add_force(&mut self, id: BodyId, force: Vec3) -> Result<(), PhysicsError> {
        validate_vector(force)?;
        self.require_dynamic(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        self.bodies.get_mut(id)?.force += Vec3A::from(force);
        Ok(())
    }

    /// Adds a torque (N·m), applied during the next step.
    pub fn add_torque(&mut self, id: BodyId, torque: Vec3) -> Result<(), PhysicsError> {
        validate_vector(torque)?;
        self.require_dynamic(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        self.bodies.get_mut(id)?.torque += Vec3A::from(torque);
        Ok(())
    }

    /// Applies an impulse (N·s) at the centre of mass: changes the velocity at once.
    pub fn apply_impulse(&mut self, id: BodyId, impulse: Vec3) -> Result<(), PhysicsError> {
        validate_vector(impulse)?;
        self.require_dynamic(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let locks = self.dynamic_locks(id)?;
        let sim = self.bodies.sim_mut(id)?;
        sim.linear_velocity += locks.free_linear(sim.inv_mass * Vec3A::from(impulse));
        Ok(())
    }

    /// Applies an impulse at a world point: changes linear and angular velocity at once.
    pub fn apply_impulse_at(
        &mut self,
        id: BodyId,
        impulse: Vec3,
        point: Vec3,
    ) -> Result<(), PhysicsError> {
        validate_vector(impulse)?;
        validate_position(point)?;
        self.require_dynamic(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let locks = self.dynamic_locks(id)?;
        let sim = self.bodies.sim_mut(id)?;
        let j = Vec3A::from(impulse);
        sim.linear_velocity += locks.free_linear(sim.inv_mass * j);
        let r = Vec3A::from(point) - sim.center;
        sim.angular_velocity += locks.project_angular(sim.inv_inertia_world()) * cross(r, j);
        Ok(())
    }

    fn require_dynamic(&self, id: BodyId) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.motion_type != MotionType::Dynamic {
            return Err(PhysicsError::WrongMotionType);
        }
        Ok(())
    }
}
