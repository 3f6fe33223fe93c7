//! Joints: constraints between two bodies (or a body and the world) that the solver
//! keeps, coloured in the same constraint graph as contacts.
//!
//! A joint holds two frames, one fixed in each body (`frame_a` in body A's local space,
//! `frame_b` in body B's, or in world space when B is the world). Every joint type says
//! which relative motions of the two frames it removes; the axis conventions follow Jolt:
//! a frame's local X axis is the hinge axis, the slider axis, the cone's and the twist's
//! axis, and its local Y axis is the reference from which hinge angles are measured.
//!
//! | type | removes | limits, springs, motors |
//! |---|---|---|
//! | [`JointKind::Ball`] | relative translation of the anchors | – |
//! | [`JointKind::Fixed`] | all relative motion | – |
//! | [`JointKind::Hinge`] | all but the rotation about X | angle limit, spring, motor |
//! | [`JointKind::Slider`] | all but the translation along X | distance limit, spring, motor |
//! | [`JointKind::Distance`] | the anchors' distance outside `[min, max]` | spring |
//! | [`JointKind::Cone`] | translation; swing of X beyond a cone | – |
//! | [`JointKind::SwingTwist`] | as the cone, plus twist about X beyond a range | – |
//! | [`JointKind::SixDof`] | per axis (3 linear, 3 angular): free, limited or locked | motors |
//!
//! The data lives here; the math lives with the solver stage (`dynamics/solver/joint.rs`), as
//! contacts' does. Storage is a slot array with generations, like bodies: a stale
//! [`JointId`] is an error, never another joint.

pub mod state;

use crate::body::BodyId;
use crate::error::PhysicsError;
use crate::math::quat_length;
use crate::math::{Isometry, Quat, Vec3, Vec3A};

pub use state::JointState;

/// A handle to a joint: slot index plus generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointId {
    index: u32,
    generation: u32,
}

/// `joint 2 (generation 0)`: the slot index and the generation, as error messages show
/// an id.
impl std::fmt::Display for JointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "joint {} (generation {})", self.index, self.generation)
    }
}

impl JointId {
    /// The id of slot `index` at `generation` (for restoring saved state).
    pub(crate) fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The slot index (dense, reused after removal).
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's generation when this id was issued.
    #[must_use]
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// A range `[lower, upper]` an axis may move in (metres or radians).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisLimit {
    /// Lowest position.
    pub lower: f32,
    /// Highest position.
    pub upper: f32,
}

impl AxisLimit {
    fn is_valid(&self) -> bool {
        self.lower.is_finite() && self.upper.is_finite() && self.lower <= self.upper
    }
}

/// A spring pulling an axis toward `rest`, given as a frequency and a damping ratio
/// (Box2D's and Jolt's soft constraints): the stiffness scales with the bodies' masses,
/// so the same numbers behave the same for light and heavy bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// Natural frequency in Hz (> 0).
    pub hertz: f32,
    /// Damping ratio (0: undamped, 1: critical).
    pub damping_ratio: f32,
    /// Position the spring pulls toward (m or rad).
    pub rest: f32,
}

impl Spring {
    fn is_valid(&self) -> bool {
        self.hertz.is_finite()
            && self.hertz > 0.0
            && self.damping_ratio.is_finite()
            && self.damping_ratio >= 0.0
            && self.rest.is_finite()
    }
}

/// A motor driving one axis, with a force (N) or torque (N·m) limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Motor {
    /// Drives the axis's speed (m/s or rad/s) toward `speed`.
    Velocity {
        /// Target speed.
        speed: f32,
        /// Largest force or torque the motor applies (>= 0).
        max_force: f32,
    },
    /// Drives the axis's position toward `target` like a spring of `hertz` and
    /// `damping_ratio`, never pushing harder than `max_force`.
    Position {
        /// Target position (m or rad).
        target: f32,
        /// Frequency of the drive (> 0).
        hertz: f32,
        /// Damping ratio of the drive.
        damping_ratio: f32,
        /// Largest force or torque the motor applies (>= 0).
        max_force: f32,
    },
}

impl Motor {
    fn is_valid(&self) -> bool {
        match *self {
            Motor::Velocity { speed, max_force } => {
                speed.is_finite() && max_force.is_finite() && max_force >= 0.0
            }
            Motor::Position {
                target,
                hertz,
                damping_ratio,
                max_force,
            } => {
                target.is_finite()
                    && Spring {
                        hertz,
                        damping_ratio,
                        rest: 0.0,
                    }
                    .is_valid()
                    && max_force.is_finite()
                    && max_force >= 0.0
            }
        }
    }
}

/// A drive turning a cone or swing-twist joint's frame B toward an orientation relative
/// to frame A, with a torque limit: powered ragdolls, Jolt's drive-to-pose. Set with
/// [`World::set_joint_drive`](crate::world::World::set_joint_drive); it acts on all three
/// rotation axes at once, before the joint's limits (which still hold).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OrientationDrive {
    /// A damped spring toward `target` (frame B's orientation in frame A's axes, as
    /// [`JointState::rotation`] reads it), as a frequency and a damping ratio: the
    /// error decays as the damped oscillator's does (at `damping_ratio` 1, as
    /// `(1 + ωt) e^(-ωt)` with `ω = 2π hertz`, never overshooting), whatever the bodies'
    /// inertia.
    Spring {
        /// Target orientation of frame B relative to frame A (a unit quaternion).
        target: Quat,
        /// Frequency (Hz, > 0).
        hertz: f32,
        /// Damping ratio (>= 0; 1 is critical).
        damping_ratio: f32,
        /// Largest torque the drive applies (N·m, >= 0).
        max_torque: f32,
    },
    /// Drives body B's angular velocity relative to body A toward `angular_velocity`
    /// (rad/s, in frame A's axes).
    Velocity {
        /// Target relative angular velocity, frame A's axes.
        angular_velocity: Vec3,
        /// Largest torque the drive applies (N·m, >= 0).
        max_torque: f32,
    },
}

impl OrientationDrive {
    /// Checks every value, naming the first bad one.
    pub(crate) fn validate(&self) -> Result<(), PhysicsError> {
        let bad = |field: &'static str, value: f32, expected: &'static str| {
            Err(PhysicsError::InvalidJointSetting {
                field,
                value,
                expected,
            })
        };
        let max_torque = match *self {
            OrientationDrive::Spring {
                target,
                hertz,
                damping_ratio,
                max_torque,
            } => {
                for (i, c) in target.to_array().into_iter().enumerate() {
                    if !c.is_finite() {
                        const FIELDS: [&str; 4] = ["target.x", "target.y", "target.z", "target.w"];
                        return bad(FIELDS[i], c, "finite");
                    }
                }
                let len = target.length();
                if (len - 1.0).abs() > 1e-3 {
                    return bad("target (its length)", len, "a unit quaternion (length 1)");
                }
                if !(hertz.is_finite() && hertz > 0.0) {
                    return bad("hertz", hertz, "finite and > 0");
                }
                if !(damping_ratio.is_finite() && damping_ratio >= 0.0) {
                    return bad("damping_ratio", damping_ratio, "finite and >= 0");
                }
                max_torque
            }
            OrientationDrive::Velocity {
                angular_velocity,
                max_torque,
            } => {
                for (i, c) in angular_velocity.to_array().into_iter().enumerate() {
                    if !c.is_finite() {
                        const FIELDS: [&str; 3] = [
                            "angular_velocity.x",
                            "angular_velocity.y",
                            "angular_velocity.z",
                        ];
                        return bad(FIELDS[i], c, "finite");
                    }
                }
                max_torque
            }
        };
        if !(max_torque.is_finite() && max_torque >= 0.0) {
            return bad("max_torque", max_torque, "finite and >= 0");
        }
        Ok(())
    }
}

/// The extras of one free axis of a hinge or slider.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AxisDrive {
    /// Range the axis may move in.
    pub limit: Option<AxisLimit>,
    /// Spring toward a rest position.
    pub spring: Option<Spring>,
    /// Motor.
    pub motor: Option<Motor>,
}

impl AxisDrive {
    fn is_valid(&self) -> bool {
        self.limit.is_none_or(|l| l.is_valid())
            && self.spring.is_none_or(|s| s.is_valid())
            && self.motor.is_none_or(|m| m.is_valid())
    }
}

/// How a six-DOF joint treats one axis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Dof {
    /// Moves freely.
    #[default]
    Free,
    /// Held at 0.
    Locked,
    /// Held within a range.
    Limited(AxisLimit),
}

/// Settings of a six-DOF joint. Axes are frame A's X, Y, Z; angular positions are the
/// twist about X and the two swing angles of X toward Y and Z (Jolt's decomposition).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SixDof {
    /// Translation along X, Y, Z.
    pub linear: [Dof; 3],
    /// Rotation about X (twist), Y and Z (swing).
    pub angular: [Dof; 3],
    /// Motors of the linear axes.
    pub linear_motors: [Option<Motor>; 3],
    /// Motors of the angular axes.
    pub angular_motors: [Option<Motor>; 3],
}

/// What a joint constrains (see the module table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// Ball and socket: the two anchors coincide.
    Ball,
    /// Welds the two frames together.
    Fixed,
    /// A revolute joint about frame X, its angle measured from frame A's Y axis.
    Hinge(AxisDrive),
    /// A prismatic joint along frame A's X axis.
    Slider(AxisDrive),
    /// Keeps the anchors' distance within `[min, max]` (rigid when equal), with an
    /// optional spring toward `spring.rest`.
    Distance {
        /// Shortest distance (>= 0).
        min: f32,
        /// Longest distance (>= min).
        max: f32,
        /// Spring on the distance.
        spring: Option<Spring>,
    },
    /// A ball joint whose frame-B X axis stays within `half_angle` of frame A's X axis.
    Cone {
        /// Cone half angle in radians, in `[0, π]`.
        half_angle: f32,
    },
    /// A cone plus a limit on the twist about X.
    SwingTwist {
        /// Cone half angle in radians.
        swing_half_angle: f32,
        /// Twist range in radians, within `[-π, π]`.
        twist: AxisLimit,
    },
    /// Per-axis free, limited or locked, with motors.
    SixDof(SixDof),
}

impl JointKind {
    /// Whether every value is in range: limits with `lower <= upper`, springs and motors
    /// with a frequency > 0 and force limits >= 0, angles within `[0, π]` (twists within
    /// `[-π, π]`). [`World::create_joint`](crate::world::World::create_joint) refuses a
    /// kind that is not.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        let angle = |a: f32| a.is_finite() && (0.0..=std::f32::consts::PI).contains(&a);
        match self {
            JointKind::Ball | JointKind::Fixed => true,
            JointKind::Hinge(d) | JointKind::Slider(d) => d.is_valid(),
            JointKind::Distance { min, max, spring } => {
                min.is_finite()
                    && max.is_finite()
                    && *min >= 0.0
                    && min <= max
                    && spring.is_none_or(|s| s.is_valid())
            }
            JointKind::Cone { half_angle } => angle(*half_angle),
            JointKind::SwingTwist {
                swing_half_angle,
                twist,
            } => {
                angle(*swing_half_angle)
                    && twist.is_valid()
                    && twist.lower >= -std::f32::consts::PI
                    && twist.upper <= std::f32::consts::PI
            }
            JointKind::SixDof(s) => {
                let dof_ok = |d: &Dof| match d {
                    Dof::Limited(l) => l.is_valid(),
                    _ => true,
                };
                s.linear.iter().chain(&s.angular).all(dof_ok)
                    && s.linear_motors
                        .iter()
                        .chain(&s.angular_motors)
                        .all(|m| m.is_none_or(|m| m.is_valid()))
            }
        }
    }
}

/// Describes a joint for [`World::create_joint`](crate::world::World::create_joint).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointDesc {
    /// What the joint constrains.
    pub kind: JointKind,
    /// The first body (the parent: positions, angles and motor speeds are B's relative
    /// to A), or `None` for a fixed frame in the world.
    pub body_a: Option<BodyId>,
    /// The second body.
    pub body_b: BodyId,
    /// The joint frame in body A's local space (origin: the anchor; world space when
    /// `body_a` is `None`).
    pub frame_a: Isometry,
    /// The joint frame in body B's local space.
    pub frame_b: Isometry,
    /// Whether the two bodies still collide with each other (default: no).
    pub collide_connected: bool,
    /// The joint breaks (is disabled, and a [`JointEvent::Broken`] reported) when its
    /// constraint force exceeds this (N). Default: never.
    pub break_force: f32,
    /// As `break_force`, for the constraint torque (N·m).
    pub break_torque: f32,
    /// Free for the user.
    pub user_data: u64,
}

impl JointDesc {
    /// A joint of `kind` between `body_a` (or the world) and `body_b` with the given
    /// local frames; it disables collision between the pair and never breaks.
    #[must_use]
    pub fn new(
        kind: JointKind,
        body_a: Option<BodyId>,
        body_b: BodyId,
        frame_a: Isometry,
        frame_b: Isometry,
    ) -> Self {
        Self {
            kind,
            body_a,
            body_b,
            frame_a,
            frame_b,
            collide_connected: false,
            break_force: f32::INFINITY,
            break_torque: f32::INFINITY,
            user_data: 0,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), PhysicsError> {
        let frame_ok = |f: &Isometry| {
            f.translation.is_finite()
                && f.rotation.is_finite()
                && (quat_length(f.rotation) - 1.0).abs() <= 1e-3
        };
        let invalid = |field, expected| Err(PhysicsError::InvalidJoint { field, expected });
        const FRAME: &str = "a finite translation and a unit rotation";
        const THRESHOLD: &str = "a force >= 0 (f32::INFINITY: never breaks)";
        if !frame_ok(&self.frame_a) {
            return invalid("frame_a", FRAME);
        }
        if !frame_ok(&self.frame_b) {
            return invalid("frame_b", FRAME);
        }
        if !self.kind.is_valid() {
            return invalid(
                "kind",
                "limits with lower <= upper, springs and motors with a frequency > 0 and \
                 force limits >= 0, angles in range",
            );
        }
        if self.break_force.is_nan() || self.break_force < 0.0 {
            return invalid("break_force", THRESHOLD);
        }
        if self.break_torque.is_nan() || self.break_torque < 0.0 {
            return invalid("break_torque", THRESHOLD);
        }
        if self.body_a == Some(self.body_b) {
            return invalid("body_b", "a body other than body_a");
        }
        Ok(())
    }
}

/// What happened to a joint, reported after the step (or the call) that did it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JointEvent {
    /// Its force or torque passed the break threshold: it is disabled (it stays in the
    /// world; remove it or enable it again).
    Broken(JointId),
    /// It was removed because one of its bodies was removed.
    Removed(JointId),
}

/// Accumulated impulses of a joint's rows, kept between steps for warm starting. The
/// solver stage defines the meaning of each slot per joint type.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct JointImpulses {
    /// The point (3 rows) constraint.
    pub point: Vec3A,
    /// The angular lock (3 rows) constraint.
    pub angular: Vec3A,
    /// One-dimensional rows (alignment, limits, motors), by slot.
    pub rows: [f32; ROWS],
}

/// Most one-dimensional rows a joint uses (six-DOF: 6 axes x lower and upper limit, 6
/// motors).
pub(crate) const ROWS: usize = 18;

/// A stored joint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Joint {
    pub generation: u32,
    pub alive: bool,
    /// False once broken (or disabled by the user): not solved, keeps no island together.
    pub enabled: bool,
    pub desc: JointDesc,
    /// Slot index of body A, if any.
    pub body_a: Option<u32>,
    /// Slot index of body B.
    pub body_b: u32,
    pub impulses: JointImpulses,
    /// Constraint force (N) and torque (N·m) on body B in the last step, world axes.
    pub force: Vec3A,
    pub torque: Vec3A,
    /// The orientation drive of a cone or swing-twist joint (set by the user).
    pub drive: Option<OrientationDrive>,
}

/// Every joint of a world, plus the joint events of the last step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Joints {
    pub joints: Vec<Joint>,
    pub free: Vec<u32>,
    pub events: Vec<JointEvent>,
    /// Live joints.
    pub count: usize,
}

impl Joints {
    pub fn get(&self, id: JointId) -> Result<&Joint, PhysicsError> {
        self.joints
            .get(id.index as usize)
            .filter(|j| j.alive && j.generation == id.generation)
            .ok_or(PhysicsError::StaleJointId(id))
    }

    pub fn get_mut(&mut self, id: JointId) -> Result<&mut Joint, PhysicsError> {
        self.joints
            .get_mut(id.index as usize)
            .filter(|j| j.alive && j.generation == id.generation)
            .ok_or(PhysicsError::StaleJointId(id))
    }

    pub fn id_of(&self, index: u32) -> JointId {
        JointId::new(index, self.joints[index as usize].generation)
    }

    /// Stores a joint in a free slot (lowest first, so reuse is deterministic).
    pub fn insert(&mut self, mut joint: Joint) -> JointId {
        self.count += 1;
        joint.alive = true;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.joints[index as usize];
            joint.generation = slot.generation.wrapping_add(1);
            *slot = joint;
            JointId::new(index, slot.generation)
        } else {
            joint.generation = 0;
            self.joints.push(joint);
            JointId::new(self.joints.len() as u32 - 1, 0)
        }
    }

    pub fn remove(&mut self, id: JointId) -> Result<Joint, PhysicsError> {
        self.get(id)?;
        let slot = &mut self.joints[id.index as usize];
        let old = slot.clone();
        slot.alive = false;
        self.count -= 1;
        self.free.push(id.index);
        // Highest first in the list, so `pop` reuses the lowest free slot.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        Ok(old)
    }

    /// Slot indices of the live joints attached to body slot `body`, in slot order.
    pub fn joints_of(&self, body: u32) -> Vec<u32> {
        (0..self.joints.len() as u32)
            .filter(|&i| {
                let j = &self.joints[i as usize];
                j.alive && (j.body_a == Some(body) || j.body_b == body)
            })
            .collect()
    }
}
