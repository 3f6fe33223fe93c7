//! The joint part of the user's surface that reads where a joint stands and changes
//! what drives it at runtime (issue 30, item 6): [`World::joint_state`], orientation
//! drives on cone and swing-twist joints, and a hinge's or slider's motor and limits.
//! (Enabling and disabling: [`World::set_joint_enabled`].)

use crate::dynamics::solver::joint::twist_swing_angles;
use crate::error::PhysicsError;
use crate::joint::{AxisLimit, JointId, JointKind, JointState, Motor, OrientationDrive};
use crate::math::{self, Vec3A};
use crate::world::World;

/// A kind's name in errors.
fn kind_name(kind: &JointKind) -> &'static str {
    match kind {
        JointKind::Ball => "ball",
        JointKind::Fixed => "fixed",
        JointKind::Hinge(_) => "hinge",
        JointKind::Slider(_) => "slider",
        JointKind::Distance { .. } => "distance",
        JointKind::Cone { .. } => "cone",
        JointKind::SwingTwist { .. } => "swing-twist",
        JointKind::SixDof(_) => "six-DOF",
    }
}

fn bad(field: &'static str, value: f32, expected: &'static str) -> PhysicsError {
    PhysicsError::InvalidJointSetting {
        field,
        value,
        expected,
    }
}

fn validate_motor(m: &Motor) -> Result<(), PhysicsError> {
    let max_force = match *m {
        Motor::Velocity { speed, max_force } => {
            if !speed.is_finite() {
                return Err(bad("motor.speed", speed, "finite"));
            }
            max_force
        }
        Motor::Position {
            target,
            hertz,
            damping_ratio,
            max_force,
        } => {
            if !target.is_finite() {
                return Err(bad("motor.target", target, "finite"));
            }
            if !(hertz.is_finite() && hertz > 0.0) {
                return Err(bad("motor.hertz", hertz, "finite and > 0"));
            }
            if !(damping_ratio.is_finite() && damping_ratio >= 0.0) {
                return Err(bad("motor.damping_ratio", damping_ratio, "finite and >= 0"));
            }
            max_force
        }
    };
    if !(max_force.is_finite() && max_force >= 0.0) {
        return Err(bad("motor.max_force", max_force, "finite and >= 0"));
    }
    Ok(())
}

fn validate_limit(l: &AxisLimit, lowest: f32, highest: f32) -> Result<(), PhysicsError> {
    if !(l.lower.is_finite() && l.lower >= lowest) {
        return Err(bad(
            "limit.lower",
            l.lower,
            "finite, within the axis's range",
        ));
    }
    if !(l.upper.is_finite() && l.upper <= highest) {
        return Err(bad(
            "limit.upper",
            l.upper,
            "finite, within the axis's range",
        ));
    }
    if l.lower > l.upper {
        return Err(bad("limit.lower", l.lower, "at most limit.upper"));
    }
    Ok(())
}

impl World {
    /// Where the joint stands now: frame B relative to frame A (hinge angle and speed,
    /// slider position and speed, swing and twist; see [`JointState`]), measured as the
    /// solver measures its limits, springs and motors. A stale id is an error.
    pub fn joint_state(&self, id: JointId) -> Result<JointState, PhysicsError> {
        let j = self.joints.get(id)?;
        let (fa, fb) = self.joint_frames(id)?;
        let sb = self.bodies.sim_of(j.body_b);
        let (va, wa, ca) = match j.body_a {
            Some(a) => {
                let s = self.bodies.sim_of(a);
                (s.linear_velocity, s.angular_velocity, s.center)
            }
            None => (Vec3A::ZERO, Vec3A::ZERO, fa.translation),
        };
        let (qa, qb) = (fa.rotation, fb.rotation);
        let inv = qa.conjugate();
        let d = fb.translation - fa.translation;
        let anchor_va = va + wa.cross(fa.translation - ca);
        let anchor_vb = sb.linear_velocity + sb.angular_velocity.cross(fb.translation - sb.center);
        let rotation = (inv * qb).normalize();
        let (x_a, y_a, x_b, y_b) = (qa * Vec3A::X, qa * Vec3A::Y, qb * Vec3A::X, qb * Vec3A::Y);
        let [twist, swing_y, swing_z] = twist_swing_angles(rotation);
        Ok(JointState {
            rotation,
            offset: (inv * d).into(),
            linear_velocity: (inv * (anchor_vb - anchor_va - wa.cross(d))).into(),
            angular_velocity: (inv * (sb.angular_velocity - wa)).into(),
            hinge_angle: math::atan2(y_a.cross(y_b).dot(x_a), y_a.dot(y_b)),
            swing: math::atan2(x_a.cross(x_b).length(), x_a.dot(x_b)),
            twist,
            swing_yz: [swing_y, swing_z],
        })
    }

    /// Sets (or with `None` removes) the orientation drive of a cone or swing-twist
    /// joint, from the next step on; the joint's cone and twist limits still hold. Wakes
    /// its bodies. An invalid value is a [`PhysicsError::InvalidJointSetting`] naming it,
    /// another kind of joint a [`PhysicsError::WrongJointKind`]; either changes nothing.
    pub fn set_joint_drive(
        &mut self,
        id: JointId,
        drive: Option<OrientationDrive>,
    ) -> Result<(), PhysicsError> {
        let j = self.joints.get(id)?;
        if !matches!(
            j.desc.kind,
            JointKind::Cone { .. } | JointKind::SwingTwist { .. }
        ) {
            return Err(PhysicsError::WrongJointKind {
                setting: "orientation drive",
                expected: "cone or swing-twist",
                found: kind_name(&j.desc.kind),
            });
        }
        if let Some(d) = &drive {
            d.validate()?;
        }
        let j = self.joints.get_mut(id)?;
        let variant = |d: &Option<OrientationDrive>| d.as_ref().map(std::mem::discriminant);
        if variant(&j.drive) != variant(&drive) {
            j.impulses.rows[3..6].fill(0.0);
        }
        j.drive = drive;
        self.set_joint_kind(id, self.joints.get(id)?.desc.kind)
    }

    /// The joint's orientation drive (`None` unless set).
    pub fn joint_drive(&self, id: JointId) -> Result<Option<OrientationDrive>, PhysicsError> {
        Ok(self.joints.get(id)?.drive)
    }

    /// Sets (or with `None` removes) a hinge's or slider's motor, from the next step on
    /// (a new target or speed, a new force limit). Wakes its bodies. Errors as
    /// [`World::set_joint_drive`].
    pub fn set_joint_motor(
        &mut self,
        id: JointId,
        motor: Option<Motor>,
    ) -> Result<(), PhysicsError> {
        if let Some(m) = &motor {
            validate_motor(m)?;
        }
        let mut kind = self.joints.get(id)?.desc.kind;
        match &mut kind {
            JointKind::Hinge(d) | JointKind::Slider(d) => d.motor = motor,
            other => {
                return Err(PhysicsError::WrongJointKind {
                    setting: "motor",
                    expected: "hinge or slider",
                    found: kind_name(other),
                });
            }
        }
        self.set_joint_kind(id, kind)
    }

    /// Sets (or with `None` removes) the limit of a hinge's angle or a slider's position,
    /// or a swing-twist joint's twist range (`None`: the whole turn), from the next step
    /// on. Wakes its bodies. Errors as [`World::set_joint_drive`].
    pub fn set_joint_limits(
        &mut self,
        id: JointId,
        limit: Option<AxisLimit>,
    ) -> Result<(), PhysicsError> {
        let mut kind = self.joints.get(id)?.desc.kind;
        let pi = std::f32::consts::PI;
        match &mut kind {
            JointKind::Hinge(d) | JointKind::Slider(d) => {
                if let Some(l) = &limit {
                    validate_limit(l, f32::MIN, f32::MAX)?;
                }
                d.limit = limit;
            }
            JointKind::SwingTwist { twist, .. } => {
                let l = limit.unwrap_or(AxisLimit {
                    lower: -pi,
                    upper: pi,
                });
                validate_limit(&l, -pi, pi)?;
                *twist = l;
            }
            other => {
                return Err(PhysicsError::WrongJointKind {
                    setting: "limits",
                    expected: "hinge, slider or swing-twist",
                    found: kind_name(other),
                });
            }
        }
        self.set_joint_kind(id, kind)
    }
}
