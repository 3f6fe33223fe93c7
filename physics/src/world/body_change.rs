//! A body's motion type, shape and presence changed at runtime (issue 30, item 1): the
//! changes that move a body between sets, trees and islands. Each keeps the body's id and
//! its joints, wakes what it must, and is a change of the world's structure (a dynamic
//! snapshot saved before it no longer restores; full snapshots carry the new state).
//!
//! **Motion type.** A body made dynamic gets its mass from the source it was made with
//! (density and shape, a mass, or full properties, and its centre-of-mass offset); one
//! made kinematic or fixed loses it. Its hot record moves to the static set (fixed) or the
//! awake set (moving), its proxy to the matching tree, and each of its contacts is asked
//! again (two fixed bodies never touch). Its island and every body it touches or is
//! jointed to wake: a door turned dynamic swings on its hinge at the next step, and a
//! crate resting on a platform that becomes fixed keeps resting on it.
//!
//! **Shape.** Any shape replaces the old one, with the mass recomputed for a dynamic body
//! (its origin stays, its centre of mass moves with the shape) and the proxy refitted to
//! the new box. Contacts stay: the narrow phase computes their manifolds afresh at the
//! next step (their pair caches are cleared) and carries impulses over by feature id, so
//! a crouching capsule keeps its ground contact and its warm start; a pair whose boxes
//! no longer meet ends as usual. A compound's children are added, removed or replaced
//! through the same path: a new compound is built from the edited list, its tree with it.
//!
//! **Enable and disable** (Edyn's `disabled_tag`). A disabled body keeps its id, pose,
//! velocities and joints, but takes no part in the step: its hot record waits in the
//! static set (which no step visits), its proxy leaves the broad phase (queries miss it),
//! its contacts end (with end events), and joints to it are not solved (their other
//! bodies move freely). Enabling it puts it back in its set and tree; its pairs form again
//! at the next step.

use crate::body::{AWAKE_SET, BodyId, MotionType, STATIC_SET, mass};
use crate::collision::broad_phase::{BroadPhaseProxy, ProxyKind};
use crate::contact::PairCache;
use crate::dynamics::island;
use crate::error::PhysicsError;
use crate::math::{Mat3A, Vec3A};
use crate::shape::{CompoundChild, Shape, ShapeKind};
use crate::world::{World, snapshot};

impl World {
    /// Changes a body's motion type (see the module docs). A half-space cannot move
    /// ([`PhysicsError::InfiniteShapeOnMovingBody`]); a body made dynamic needs a mass
    /// source that gives one (the errors of `create_body`: a positive density for
    /// [`MassSpec::FromShape`](crate::body::mass::MassSpec), ...). An error changes
    /// nothing. A body made fixed stops; one made kinematic keeps its velocities.
    pub fn set_motion_type(
        &mut self,
        id: BodyId,
        motion_type: MotionType,
    ) -> Result<(), PhysicsError> {
        let b = self.bodies.get(id)?;
        if b.motion_type == motion_type {
            return Ok(());
        }
        if motion_type != MotionType::Fixed
            && b.has_shape()
            && b.shape.kind() == ShapeKind::HalfSpace
        {
            return Err(PhysicsError::InfiniteShapeOnMovingBody);
        }
        let mass = if motion_type == MotionType::Dynamic {
            let shape = b.has_shape().then_some(&b.shape);
            Some(mass::resolve(
                shape,
                b.density,
                b.mass_spec,
                b.center_of_mass_offset.into(),
            )?)
        } else {
            None
        };
        let slot = id.index();
        self.wake_around(slot);
        self.new_look(slot);
        let b = &mut self.bodies.bodies[slot as usize];
        b.motion_type = motion_type;
        b.sleep_time = 0.0;
        let (m, local_center, inv_inertia) = match mass {
            Some(mp) => (mp.mass, mp.center_of_mass, mp.inertia.inverse()),
            None => (0.0, Vec3A::ZERO, Mat3A::ZERO),
        };
        b.mass = m;
        b.local_center = local_center;
        let disabled = b.disabled;
        let locks = b.locked_axes;
        let sim = self.bodies.sim_mut(id)?;
        sim.inv_mass = if m > 0.0 { 1.0 / m } else { 0.0 };
        sim.inv_inertia_local = inv_inertia;
        sim.local_center = local_center;
        sim.center = sim.transform.transform_point(local_center);
        sim.center0 = sim.center;
        sim.velocity_carry = Vec3A::ZERO;
        if motion_type == MotionType::Fixed {
            sim.linear_velocity = Vec3A::ZERO;
            sim.angular_velocity = Vec3A::ZERO;
        } else if motion_type == MotionType::Dynamic {
            // Its locks bind it from now on (a kinematic body ignored them).
            sim.linear_velocity = locks.free_linear(sim.linear_velocity);
            sim.angular_velocity = locks.free_angular(sim.angular_velocity);
        }
        if !disabled {
            self.bodies.move_to_set(slot, home_set(motion_type));
            self.place_proxy(slot);
        }
        self.structure = snapshot::dynamic::new_structure();
        self.refilter_body(id, false);
        Ok(())
    }

    /// Replaces a body's shape (see the module docs): a dynamic body's mass follows the
    /// new shape (by its mass source), the proxy is refitted, contacts are kept and their
    /// manifolds recomputed at the next step. A half-space on a moving body
    /// ([`PhysicsError::InfiniteShapeOnMovingBody`]) or a shape that gives no mass is
    /// refused and changes nothing. A body made without a shape gets one (and a proxy).
    pub fn set_shape(&mut self, id: BodyId, shape: Shape) -> Result<(), PhysicsError> {
        let b = self.bodies.get(id)?;
        if b.motion_type != MotionType::Fixed && shape.kind() == ShapeKind::HalfSpace {
            return Err(PhysicsError::InfiniteShapeOnMovingBody);
        }
        let mass = if b.motion_type == MotionType::Dynamic {
            Some(mass::resolve(
                Some(&shape),
                b.density,
                b.mass_spec,
                b.center_of_mass_offset.into(),
            )?)
        } else {
            None
        };
        let slot = id.index();
        island::wake_body(&mut self.bodies, slot, &mut self.sleep_events);
        self.new_look(slot);
        let b = &mut self.bodies.bodies[slot as usize];
        b.shape = shape;
        b.shapeless = false;
        if let Some(mp) = mass {
            b.mass = mp.mass;
            b.local_center = mp.center_of_mass;
            let sim = self.bodies.sim_mut(id)?;
            sim.inv_mass = 1.0 / mp.mass;
            sim.inv_inertia_local = mp.inertia.inverse();
            sim.local_center = mp.center_of_mass;
            sim.center = sim.transform.transform_point(mp.center_of_mass);
            sim.center0 = sim.center;
        }
        if !self.bodies.bodies[slot as usize].disabled {
            self.place_proxy(slot);
        }
        for c in self.contacts.contacts_of(slot) {
            let c = &mut self.contacts.contacts[c as usize];
            // Recompute at the next step even if the bodies did not move; the parts the
            // old shape touched no longer name anything.
            c.cache = PairCache::EMPTY;
            c.manifold.materials = [None, None];
        }
        self.remix_body(slot);
        self.structure = snapshot::dynamic::new_structure();
        Ok(())
    }

    /// Adds a child to a compound body's shape (see [`World::set_shape`]); returns its
    /// index (the last). [`PhysicsError::NotACompound`] unless the body's shape is a
    /// compound; the child is checked as `Shape::compound` checks it.
    pub fn add_compound_child(
        &mut self,
        id: BodyId,
        child: CompoundChild,
    ) -> Result<usize, PhysicsError> {
        let mut children = self.compound_children(id)?;
        children.push(child);
        let index = children.len() - 1;
        self.set_shape(id, Shape::compound(children)?)?;
        Ok(index)
    }

    /// Removes child `index` of a compound body's shape; the children after it move down
    /// by one. Removing the last child is refused (a compound is never empty).
    pub fn remove_compound_child(&mut self, id: BodyId, index: usize) -> Result<(), PhysicsError> {
        let mut children = self.compound_children(id)?;
        check_child(index, children.len())?;
        children.remove(index);
        self.set_shape(id, Shape::compound(children)?)
    }

    /// Replaces child `index` of a compound body's shape.
    pub fn replace_compound_child(
        &mut self,
        id: BodyId,
        index: usize,
        child: CompoundChild,
    ) -> Result<(), PhysicsError> {
        let mut children = self.compound_children(id)?;
        check_child(index, children.len())?;
        children[index] = child;
        self.set_shape(id, Shape::compound(children)?)
    }

    fn compound_children(&self, id: BodyId) -> Result<Vec<CompoundChild>, PhysicsError> {
        let b = self.bodies.get(id)?;
        match &b.shape {
            Shape::Compound(c) if b.has_shape() => Ok(c.children().to_vec()),
            _ => Err(PhysicsError::NotACompound(id)),
        }
    }

    /// Whether a body takes part in the step (true unless disabled with
    /// [`set_enabled`](Self::set_enabled)).
    pub fn is_enabled(&self, id: BodyId) -> Result<bool, PhysicsError> {
        Ok(!self.bodies.get(id)?.disabled)
    }

    /// Disables a body (`false`) or enables it again (`true`); see the module docs.
    /// Disabling ends its contacts (with end events) and wakes what it touched and what
    /// it is jointed to; enabling wakes it and them, and its pairs form at the next step.
    pub fn set_enabled(&mut self, id: BodyId, enabled: bool) -> Result<(), PhysicsError> {
        let b = self.bodies.get(id)?;
        if b.disabled != enabled {
            return Ok(());
        }
        let slot = id.index();
        self.wake_around(slot);
        self.new_look(slot);
        if enabled {
            let b = &mut self.bodies.bodies[slot as usize];
            b.disabled = false;
            b.sleep_time = 0.0;
            let set = home_set(b.motion_type);
            self.bodies.move_to_set(slot, set);
            self.place_proxy(slot);
        } else {
            self.refilter_body(id, true);
            if let Some(proxy) = self.bodies.bodies[slot as usize].proxy.take() {
                self.broad_phase.destroy_proxy(proxy);
            }
            self.bodies.move_to_set(slot, STATIC_SET);
            self.bodies.bodies[slot as usize].disabled = true;
        }
        self.structure = snapshot::dynamic::new_structure();
        Ok(())
    }

    /// Wakes the island of the body in slot `slot` and of every body it touches or is
    /// jointed to.
    fn wake_around(&mut self, slot: u32) {
        island::wake_body(&mut self.bodies, slot, &mut self.sleep_events);
        for c in self.contacts.contacts_of(slot) {
            let c = &self.contacts.contacts[c as usize];
            let other = if c.body_a == slot { c.body_b } else { c.body_a };
            island::wake_body(&mut self.bodies, other, &mut self.sleep_events);
        }
        for j in self.joints.joints_of(slot) {
            let j = &self.joints.joints[j as usize];
            for other in [j.body_a, Some(j.body_b)].into_iter().flatten() {
                island::wake_body(&mut self.bodies, other, &mut self.sleep_events);
            }
        }
    }

    /// Gives the enabled body in slot `slot` the proxy its shape and motion type call for:
    /// none without a shape; else one in the static or moving tree with its current box,
    /// made anew when it had none or was in the other tree (its contacts then name the new
    /// one), refitted otherwise. Either way it is queued for the pair search.
    fn place_proxy(&mut self, slot: u32) {
        let b = &self.bodies.bodies[slot as usize];
        if !b.has_shape() {
            return;
        }
        let kind = if b.motion_type == MotionType::Fixed {
            ProxyKind::Static
        } else {
            ProxyKind::Moving
        };
        let aabb = b.shape.world_aabb(&self.bodies.sim_of(slot).transform);
        let old = b.proxy;
        let proxy = match old {
            Some(p) if p.kind == kind => {
                self.broad_phase.refit_proxy(p, aabb, Vec3A::ZERO);
                return;
            }
            Some(p) => {
                self.broad_phase.destroy_proxy(p);
                self.broad_phase.create_proxy(aabb, slot, kind)
            }
            None => self.broad_phase.create_proxy(aabb, slot, kind),
        };
        self.bodies.bodies[slot as usize].proxy = Some(proxy);
        self.rename_proxy(slot, proxy);
    }

    /// Points the contacts of the body in slot `slot` at its new proxy.
    fn rename_proxy(&mut self, slot: u32, proxy: BroadPhaseProxy) {
        for c in self.contacts.contacts_of(slot) {
            let c = &mut self.contacts.contacts[c as usize];
            if c.body_a == slot {
                c.proxy_a = proxy;
            } else {
                c.proxy_b = proxy;
            }
        }
    }
}

/// The set an enabled body of this motion type lives in when awake.
fn home_set(motion_type: MotionType) -> u32 {
    if motion_type == MotionType::Fixed {
        STATIC_SET
    } else {
        AWAKE_SET
    }
}

fn check_child(index: usize, count: usize) -> Result<(), PhysicsError> {
    if index < count {
        Ok(())
    } else {
        Err(PhysicsError::CompoundChildOutOfRange { index, count })
    }
}
