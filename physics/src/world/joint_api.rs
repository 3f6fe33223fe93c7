//! The joint part of the user's surface: creating, removing and reading joints.

use crate::body::BodyId;
use crate::dynamics::island;
use crate::error::PhysicsError;
use crate::math::{Isometry, Vec3, Vec3A, rotation_arc};
use crate::world::World;

use crate::joint::{Joint, JointDesc, JointEvent, JointId, JointImpulses, JointKind};

impl World {
    /// Creates a joint. The description is validated first (see
    /// [`PhysicsError::InvalidJoint`]); both bodies must be live. Wakes both bodies; unless
    /// `collide_connected`, the pair stops colliding (as [`World::exclude_pair`]).
    pub fn create_joint(&mut self, desc: &JointDesc) -> Result<JointId, PhysicsError> {
        desc.validate()?;
        if let Some(a) = desc.body_a {
            self.bodies.get(a)?;
        }
        self.bodies.get(desc.body_b)?;
        if let (Some(a), false) = (desc.body_a, desc.collide_connected) {
            self.exclude_pair(a, desc.body_b)?;
        }
        for body in [desc.body_a, Some(desc.body_b)].into_iter().flatten() {
            island::wake_body(&mut self.bodies, body.index(), &mut self.sleep_events);
        }
        self.structure = crate::world::snapshot::dynamic::new_structure();
        Ok(self.joints.insert(Joint {
            generation: 0,
            alive: true,
            enabled: true,
            desc: *desc,
            body_a: desc.body_a.map(|a| a.index()),
            body_b: desc.body_b.index(),
            impulses: JointImpulses::default(),
            force: Vec3A::ZERO,
            torque: Vec3A::ZERO,
            drive: None,
        }))
    }

    /// Removes a joint and wakes its bodies. If it disabled collision between its bodies
    /// and no other joint between them does, they collide again. A stale id is an error.
    pub fn remove_joint(&mut self, id: JointId) -> Result<(), PhysicsError> {
        let joint = self.joints.remove(id)?;
        self.structure = crate::world::snapshot::dynamic::new_structure();
        self.after_joint_removed(&joint);
        Ok(())
    }

    /// Removes the joints of a body that is being removed, reporting each.
    pub(crate) fn remove_joints_of(&mut self, body: BodyId) {
        for index in self.joints.joints_of(body.index()) {
            let id = self.joints.id_of(index);
            let joint = self
                .joints
                .remove(id)
                .expect("joints_of lists live joints only");
            self.joints.events.push(JointEvent::Removed(id));
            self.after_joint_removed(&joint);
        }
    }

    fn after_joint_removed(&mut self, joint: &Joint) {
        let ids = [joint.desc.body_a, Some(joint.desc.body_b)];
        for body in ids.into_iter().flatten() {
            if self.bodies.get(body).is_ok() {
                island::wake_body(&mut self.bodies, body.index(), &mut self.sleep_events);
            }
        }
        let Some(a) = joint.desc.body_a else { return };
        let b = joint.desc.body_b;
        if joint.desc.collide_connected || self.bodies.get(a).is_err() {
            return;
        }
        if self.bodies.get(b).is_err() {
            return;
        }
        let still_excluded = self.joints.joints.iter().any(|j| {
            j.alive
                && !j.desc.collide_connected
                && ((j.desc.body_a == Some(a) && j.desc.body_b == b)
                    || (j.desc.body_a == Some(b) && j.desc.body_b == a))
        });
        if !still_excluded {
            self.include_pair(a, b)
                .expect("both bodies were checked live just above");
        }
    }

    /// Whether `id` names a live joint.
    #[must_use]
    pub fn contains_joint(&self, id: JointId) -> bool {
        self.joints.get(id).is_ok()
    }

    /// The live joints (broken ones included until removed), in slot order.
    pub fn joint_ids(&self) -> impl Iterator<Item = JointId> + '_ {
        (0..self.joints.joints.len() as u32)
            .filter(|&i| self.joints.joints[i as usize].alive)
            .map(|i| self.joints.id_of(i))
    }

    /// Number of live joints (broken ones included until removed).
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joints.count
    }

    /// The joint's description as created (with its kind as last set).
    pub fn joint_desc(&self, id: JointId) -> Result<JointDesc, PhysicsError> {
        Ok(self.joints.get(id)?.desc)
    }

    /// Replaces the joint's kind (to change a limit, spring or motor); validated like
    /// [`World::create_joint`]. Wakes its bodies.
    pub fn set_joint_kind(&mut self, id: JointId, kind: JointKind) -> Result<(), PhysicsError> {
        let mut desc = self.joints.get(id)?.desc;
        desc.kind = kind;
        desc.validate()?;
        let j = self.joints.get_mut(id)?;
        if std::mem::discriminant(&j.desc.kind) != std::mem::discriminant(&kind) {
            j.impulses = JointImpulses::default();
            // Saved impulses of the old kind mean nothing to the new one.
            self.structure = crate::world::snapshot::dynamic::new_structure();
        }
        j.desc.kind = kind;
        if !matches!(kind, JointKind::Cone { .. } | JointKind::SwingTwist { .. }) {
            // Only these kinds have an orientation drive.
            j.drive = None;
        }
        self.wake_joint(id)
    }

    /// Whether the joint is solved (false once broken or disabled).
    pub fn is_joint_enabled(&self, id: JointId) -> Result<bool, PhysicsError> {
        Ok(self.joints.get(id)?.enabled)
    }

    /// Enables or disables a joint (a broken joint can be enabled again). Wakes its bodies.
    pub fn set_joint_enabled(&mut self, id: JointId, enabled: bool) -> Result<(), PhysicsError> {
        let j = self.joints.get_mut(id)?;
        j.enabled = enabled;
        j.impulses = JointImpulses::default();
        self.wake_joint(id)
    }

    fn wake_joint(&mut self, id: JointId) -> Result<(), PhysicsError> {
        let j = self.joints.get(id)?;
        let (a, b) = (j.body_a, j.body_b);
        if let Some(a) = a {
            island::wake_body(&mut self.bodies, a, &mut self.sleep_events);
        }
        island::wake_body(&mut self.bodies, b, &mut self.sleep_events);
        Ok(())
    }

    /// The constraint force (N) the joint applied to body B in the last substep of the
    /// last step, in world axes (body A received its opposite). Times the step's `dt`
    /// it is the impulse the joint applied over the step.
    pub fn joint_force(&self, id: JointId) -> Result<Vec3, PhysicsError> {
        Ok(self.joints.get(id)?.force.into())
    }

    /// The constraint torque (N·m) the joint applied to body B about its anchor in the
    /// last substep of the last step, in world axes.
    pub fn joint_torque(&self, id: JointId) -> Result<Vec3, PhysicsError> {
        Ok(self.joints.get(id)?.torque.into())
    }

    /// The joint's frames in world space now: A's and B's (for debug drawing; the
    /// anchors are their translations).
    pub fn joint_frames(&self, id: JointId) -> Result<(Isometry, Isometry), PhysicsError> {
        let j = self.joints.get(id)?;
        let fb = self
            .bodies
            .sim_of(j.body_b)
            .transform
            .mul_isometry(&j.desc.frame_b);
        let fa = match j.body_a {
            Some(a) => self
                .bodies
                .sim_of(a)
                .transform
                .mul_isometry(&j.desc.frame_a),
            None => j.desc.frame_a,
        };
        Ok((fa, fb))
    }

    /// Joint events since the last step started: breaks in the step, removals with
    /// bodies since, in order.
    #[must_use]
    pub fn joint_events(&self) -> &[JointEvent] {
        &self.joints.events
    }

    /// The local frames of a joint whose anchor is the world point `anchor` and whose X
    /// axis (hinge, slider, twist axis) is the world direction `axis`, for the bodies'
    /// current poses (`body_a: None`: the world). Pass them to [`JointDesc::new`].
    pub fn joint_frames_at(
        &self,
        body_a: Option<BodyId>,
        body_b: BodyId,
        anchor: Vec3,
        axis: Vec3,
    ) -> Result<(Isometry, Isometry), PhysicsError> {
        let axis = axis.try_normalize().ok_or(PhysicsError::InvalidJoint {
            field: "axis",
            expected: "a finite, non-zero direction",
        })?;
        if !anchor.is_finite() {
            return Err(PhysicsError::InvalidJoint {
                field: "anchor",
                expected: "a finite point",
            });
        }
        let world = Isometry::new(anchor, rotation_arc(Vec3::X, axis));
        let local = |id: BodyId| -> Result<Isometry, PhysicsError> {
            Ok(self
                .bodies
                .sim(id)?
                .transform
                .inverse()
                .mul_isometry(&world))
        };
        let fb = local(body_b)?;
        let fa = match body_a {
            Some(a) => local(a)?,
            None => world,
        };
        Ok((fa, fb))
    }
}
