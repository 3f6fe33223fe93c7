//! The world at runtime (issue 30, items 2 and 3): gravity, the layer table and the solver
//! settings changed between steps, and kinematic bodies driven to a target pose.
//!
//! The settings live in [`WorldDesc`](crate::settings::WorldDesc), which the step reads
//! afresh every step and full snapshots carry, so a change applies from the next step and
//! a snapshot taken after it restores it. A dynamic snapshot leaves settings alone (they
//! are the game's input, like a material); a new layer table is a new filter, so it
//! changes the world's structure as an exclusion does.
//!
//! `move_kinematic` inverts the position integrator rather than the exponential map: each
//! substep turns a body by the normalised quaternion `1 + h ω / 2`, a turn of
//! `2 atan(h |ω| / 2)` about `ω`, so `n` substeps of `h = dt / n` turn it by
//! `θ = 2 n atan(h |ω| / 2)`, and the angular speed that lands on an angle `θ` is
//! `|ω| = (2 / h) tan(θ / 2n)`. The body then reaches the target to f32 rounding, not
//! only to the integrator's error.

use crate::body::filter::LayerTable;
use crate::body::{BodyId, FIRST_SLEEPING_SET, MotionType, validate_position, validate_rotation};
use crate::collision::pipeline;
use crate::dynamics::island;
use crate::dynamics::solver::SolverSettings;
use crate::error::PhysicsError;
use crate::math::{Isometry, Quat, Vec3, Vec3A};
use crate::math::{quat_mul, quat_normalize};
use crate::world::{World, snapshot};

impl World {
    /// The gravity acceleration (m/s²).
    #[must_use]
    pub fn gravity(&self) -> Vec3 {
        self.desc.gravity
    }

    /// Sets the gravity acceleration (m/s²), applied from the next step. A component that
    /// is not finite is refused with [`PhysicsError::InvalidWorldSetting`].
    ///
    /// A change wakes every sleeping body: a body asleep on a slope or against a wall is
    /// at rest only under the old gravity, and would otherwise hang until something
    /// touched it (Box2D and Jolt leave them asleep; a game turning gravity sideways
    /// expects the pile to fall). Setting the gravity it already has wakes nothing.
    pub fn set_gravity(&mut self, gravity: Vec3) -> Result<(), PhysicsError> {
        if let Some(bad) = gravity.to_array().into_iter().find(|x| !x.is_finite()) {
            return Err(PhysicsError::InvalidWorldSetting {
                field: "gravity",
                value: bad,
                expected: "finite components",
            });
        }
        if gravity == self.desc.gravity {
            return Ok(());
        }
        self.desc.gravity = gravity;
        for set in FIRST_SLEEPING_SET..self.bodies.sets.len() as u32 {
            // A free set is empty and already on the free list.
            if !self.bodies.sets[set as usize].sims.is_empty() {
                island::wake_set(&mut self.bodies, set, &mut self.sleep_events);
            }
        }
        Ok(())
    }

    /// The object-layer table the broad phase filters new pairs with.
    #[must_use]
    pub fn layer_table(&self) -> &LayerTable {
        &self.desc.layers
    }

    /// Replaces the object-layer table. A table too small for a body's layer is refused
    /// with [`PhysicsError::InvalidLayer`] (naming the lowest such layer) and changes
    /// nothing.
    ///
    /// Existing pairs are asked again at once: a contact between layers the new table
    /// refuses ends now, with an `End` event (as [`set_pair_filter`](Self::set_pair_filter)
    /// and [`exclude_pair`](Self::exclude_pair) end theirs), walked in contact-id order so
    /// the events come out the same every run. Pairs it newly accepts are looked for at the
    /// next step: every dynamic body on a layer that gained a partner is queued for the
    /// broad phase as if it had moved, so two bodies already overlapping start colliding
    /// at the next step rather than when one of them next leaves its broad-phase box.
    ///
    /// Like an exclusion, the change is one of the world's structure: a dynamic snapshot
    /// saved before it no longer restores (full snapshots carry the table).
    pub fn set_layer_table(&mut self, layers: LayerTable) -> Result<(), PhysicsError> {
        let too_high = self
            .bodies
            .bodies
            .iter()
            .filter(|b| b.alive && b.layer >= layers.count())
            .map(|b| b.layer)
            .min();
        if let Some(layer) = too_high {
            return Err(PhysicsError::InvalidLayer(layer));
        }
        let old = std::mem::replace(&mut self.desc.layers, layers);
        self.structure = snapshot::dynamic::new_structure();
        for c in 0..self.contacts.contacts.len() as u32 {
            let contact = &self.contacts.contacts[c as usize];
            let (a, b) = (contact.body_a, contact.body_b);
            // A free slot still holds its last pair; the pair map names live contacts only.
            let live = self.contacts.find(a, b) == Some(c);
            let (la, lb) = (
                self.bodies.bodies[a as usize].layer,
                self.bodies.bodies[b as usize].layer,
            );
            if live && !self.desc.layers.collides(la, lb) {
                pipeline::remove_contact(&mut self.contacts, c, &mut self.events);
            }
        }
        let n = self.desc.layers.count();
        let gained: Vec<bool> = (0..n)
            .map(|a| (0..n).any(|b| self.desc.layers.collides(a, b) && !old.collides(a, b)))
            .collect();
        for body in &self.bodies.bodies {
            let wanted = body.alive
                && body.motion_type == MotionType::Dynamic
                && gained[body.layer as usize];
            if let (true, Some(proxy)) = (wanted, body.proxy) {
                self.broad_phase.touch_proxy(proxy);
            }
        }
        Ok(())
    }

    /// The solver settings the next step uses.
    #[must_use]
    pub fn solver_settings(&self) -> &SolverSettings {
        &self.desc.solver
    }

    /// Replaces the solver settings, applied from the next step. Each field is checked
    /// first (`substeps` >= 1; `contact_hertz` finite and > 0; `contact_damping_ratio`,
    /// `max_push_out_speed` and `restitution_threshold` finite and >= 0;
    /// `joint_tree_mass_ratio` >= 1, infinity allowed); the first one out of range is
    /// refused with [`PhysicsError::InvalidWorldSetting`] and nothing changes.
    pub fn set_solver_settings(&mut self, settings: SolverSettings) -> Result<(), PhysicsError> {
        validate_solver_settings(&settings)?;
        self.desc.solver = settings;
        Ok(())
    }

    /// Sets a kinematic body's linear and angular velocity so that one step of `dt`
    /// seconds carries it to `target` (Jolt's `MoveKinematic`, Rapier's
    /// `set_next_kinematic_position`), and wakes it. Bodies touching it feel it move:
    /// contacts and friction see its velocity, so a box resting on a platform moved this
    /// way each step rides it (along a circle, to 2 µm in 3 s, and bobbing up and down
    /// as well, to 3 µm). Not yet exact on a turning platform: friction matches the
    /// rider's velocity to the platform's at the contact as it was at the start of the
    /// step, so the rider creeps outward by about `r ω² dt / 2` per second.
    ///
    /// The rotation takes the short way: a target 350° away about an axis is reached by
    /// turning -10°. The velocities stay after the step, as any velocity does: call it
    /// every step with the next pose, or set the velocities to zero to stop. Pass the `dt`
    /// of the step that follows; another `dt` lands elsewhere.
    ///
    /// Errors change nothing: [`PhysicsError::WrongMotionType`] unless the body is
    /// kinematic, [`PhysicsError::InvalidTimeStep`] unless `dt` is finite and positive,
    /// [`PhysicsError::NonFinitePosition`], [`PhysicsError::NonFiniteRotation`] or
    /// [`PhysicsError::NonNormalizedRotation`] for a bad target.
    pub fn move_kinematic(
        &mut self,
        id: BodyId,
        target: Isometry,
        dt: f32,
    ) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.motion_type != MotionType::Kinematic {
            return Err(PhysicsError::WrongMotionType);
        }
        if !(dt.is_finite() && dt > 0.0) {
            return Err(PhysicsError::InvalidTimeStep(dt));
        }
        validate_position(target.translation.into())?;
        validate_rotation(target.rotation)?;
        let substeps = self.desc.solver.substeps.max(1);
        let current = self.bodies.sim(id)?.transform;
        let linear_velocity = (target.translation - current.translation) / dt;
        let angular_velocity = angular_velocity_to(
            current.rotation,
            quat_normalize(target.rotation),
            dt,
            substeps,
        );
        if !(linear_velocity.is_finite() && angular_velocity.is_finite()) {
            // Finite poses whose difference overflows over a tiny `dt`.
            return Err(PhysicsError::NonFiniteVelocity);
        }
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let sim = self.bodies.sim_mut(id)?;
        sim.linear_velocity = linear_velocity;
        sim.angular_velocity = angular_velocity;
        Ok(())
    }
}

/// The angular velocity that `substeps` position substeps of `dt / substeps` turn from
/// `from` to `to` with (see the module docs), by the shortest arc.
fn angular_velocity_to(from: Quat, to: Quat, dt: f32, substeps: u32) -> Vec3A {
    let mut delta = quat_normalize(quat_mul(to, from.conjugate()));
    if delta.w < 0.0 {
        delta = -delta;
    }
    let axis = Vec3A::new(delta.x, delta.y, delta.z);
    let sin_half = axis.length();
    if sin_half == 0.0 {
        return Vec3A::ZERO;
    }
    let angle = 2.0 * sin_half.atan2(delta.w);
    let n = substeps as f32;
    let h = dt / n;
    let speed = (2.0 / h) * (angle / (2.0 * n)).tan();
    axis * (speed / sin_half)
}

fn validate_solver_settings(s: &SolverSettings) -> Result<(), PhysicsError> {
    let bad = |field, value: f32, expected| {
        Err(PhysicsError::InvalidWorldSetting {
            field,
            value,
            expected,
        })
    };
    if s.substeps == 0 {
        return bad("solver.substeps", 0.0, "at least 1");
    }
    if !(s.contact_hertz.is_finite() && s.contact_hertz > 0.0) {
        return bad("solver.contact_hertz", s.contact_hertz, "finite and > 0");
    }
    for (field, value) in [
        ("solver.contact_damping_ratio", s.contact_damping_ratio),
        ("solver.max_push_out_speed", s.max_push_out_speed),
        ("solver.restitution_threshold", s.restitution_threshold),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return bad(field, value, "finite and >= 0");
        }
    }
    if s.joint_tree_mass_ratio.is_nan() || s.joint_tree_mass_ratio < 1.0 {
        return bad(
            "solver.joint_tree_mass_ratio",
            s.joint_tree_mass_ratio,
            ">= 1 (infinity: no tree solved exactly)",
        );
    }
    Ok(())
}
