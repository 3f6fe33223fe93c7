//! The engine's error type: every way a caller's input can be refused, and how to fix it.

use std::fmt;

use crate::body::BodyId;
use crate::joint::JointId;
use crate::shape::ShapeError;

/// Why the world refused a request. Nothing is created or changed when one is returned.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PhysicsError {
    /// A position or translation had a NaN or infinite component. Check the math that
    /// produced it (a division by zero, an uninitialised value).
    NonFinitePosition,
    /// A rotation had a NaN or infinite component. Build rotations with glam's
    /// constructors (`Quat::from_axis_angle`, ...) from finite angles.
    NonFiniteRotation,
    /// A rotation was not a unit quaternion (|q| differs from 1 by more than 1e-3). Call
    /// `normalize()` on it first.
    NonNormalizedRotation,
    /// A linear or angular velocity, force, torque or impulse had a NaN or infinite
    /// component.
    NonFiniteVelocity,
    /// The shape was invalid (negative size, degenerate hull, ...); the inner error says
    /// which and how to fix it.
    InvalidShape(ShapeError),
    /// A dynamic body needs a positive, finite density (or mass) so it has a mass. Give
    /// `BodyDesc::density` a positive value, or make the body static or kinematic.
    NonPositiveDensity,
    /// A half-space (infinite plane) shape was given to a moving body. Half-spaces are for
    /// static ground only; use a large box for a moving floor.
    InfiniteShapeOnMovingBody,
    /// The id refers to a body that was removed (or never existed in this world): the slot
    /// may have been reused by another body. Drop stale ids when you remove bodies.
    StaleBodyId(BodyId),
    /// A material value was out of range: friction must be finite and >= 0, restitution in
    /// [0, 1], rolling and spinning lengths finite and >= 0, damping finite and >= 0,
    /// gravity scale finite, speed limits > 0. `field` names it as `BodyDesc` (or the
    /// material struct) spells it.
    InvalidMaterial {
        /// The value, as `BodyDesc` spells it (`"friction"`, `"restitution"`,
        /// `"linear_damping"`, ...).
        field: &'static str,
        /// The value given.
        value: f32,
        /// What it must be.
        expected: &'static str,
    },
    /// The body's object layer is not below `WorldDesc::layers.count()`. Add the layer to
    /// the table or use an existing one.
    InvalidLayer(u16),
    /// The world already holds `u32::MAX - 1` bodies.
    TooManyBodies,
    /// The operation needs a moving body (dynamic or kinematic) and the body is static,
    /// or needs a dynamic body and it is not (forces, impulses).
    WrongMotionType,
    /// Mass properties set by the user were invalid: the mass must be finite and > 0, the
    /// inertia tensor symmetric and positive definite, the centre of mass (and its offset)
    /// finite. A dynamic body without a shape needs `MassSpec::Properties`; `MassSpec::Mass`
    /// needs a shape whose inertia it can scale.
    InvalidMassProperties,
    /// A joint description was invalid: a frame with a non-finite or non-unit part, a
    /// limit whose lower end lies above its upper end, a spring or motor with a
    /// non-positive frequency or a negative force limit, an angle out of range, a negative
    /// break threshold, or the same body on both sides. Fix the named value.
    InvalidJoint {
        /// The value, as `JointDesc` spells it (`"frame_a"`, `"break_force"`, `"kind"`,
        /// ...; `"anchor"` or `"axis"` for `World::joint_frames_at`).
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The id refers to a joint that was removed (or broke and was removed, or never
    /// existed in this world). Drop stale joint ids when you remove joints or bodies.
    StaleJointId(JointId),
    /// `World::restore_dynamic` was given a snapshot that does not fit the world: it is
    /// empty, comes from another world, or the structure changed since it was saved (a
    /// body or joint created or removed, new mass properties, a joint of another kind,
    /// an exclusion, a fixed body moved by hand, a full restore). Save a new one after
    /// such a change, or restore a full snapshot (`World::restore`) instead.
    SnapshotStructureChanged,
    /// A presentation was asked for a body that is not in the last step it recorded: the
    /// body was created after that step (it appears once the next step is recorded) or
    /// removed before it. Read the world for a body the presentation has not seen yet.
    NotPresented(BodyId),
    /// A fixed step was given a time step that is not finite and positive, or a cap of
    /// zero steps per frame. Use a step such as `1.0 / 60.0` and a cap of at least 1.
    InvalidFixedStep {
        /// The time step given, in seconds.
        dt: f32,
        /// The cap given on steps per frame.
        max_steps_per_frame: u32,
    },
    /// A world setting passed to a runtime setter (`World::set_gravity`,
    /// `World::set_solver_settings`) was out of range; `field` names it, `expected` says
    /// what it must be. Fix that field; the world keeps its old settings.
    InvalidWorldSetting {
        /// The setting, as `WorldDesc` spells it (`"gravity"`, `"solver.substeps"`).
        field: &'static str,
        /// The value given (a component that is not finite, for a vector).
        value: f32,
        /// What the setting must be.
        expected: &'static str,
    },
    /// A value passed to a body setter (`World::set_friction`, `World::set_damping`,
    /// `World::set_gravity_scale`, ...) was out of range; `field` names it as `BodyDesc`
    /// spells it, `expected` says what it must be. Fix that value; the body keeps its
    /// old one.
    InvalidBodySetting {
        /// The field, as `BodyDesc` spells it (`"friction"`, `"linear_damping"`).
        field: &'static str,
        /// The value given.
        value: f32,
        /// What the field must be.
        expected: &'static str,
    },
    /// A joint setting passed to a runtime setter (`World::set_joint_drive`,
    /// `World::set_joint_motor`, `World::set_joint_limits`) was out of range; `field`
    /// names it, `expected` says what it must be. Fix that field; the joint keeps its
    /// old settings.
    InvalidJointSetting {
        /// The setting's field (`"hertz"`, `"max_torque"`, `"limit.lower"`).
        field: &'static str,
        /// The value given.
        value: f32,
        /// What the field must be.
        expected: &'static str,
    },
    /// `World::create_bodies` refused a batch because the description at `index` was
    /// refused with `error`; no body of the batch was created. Fix that description.
    InvalidBatchBody {
        /// Position of the refused description in the batch.
        index: usize,
        /// Why it was refused.
        error: Box<PhysicsError>,
    },
    /// A compound child was added, removed or replaced on a body whose shape is not a
    /// compound (or that has no shape). Give it a compound with `World::set_shape` first.
    NotACompound(BodyId),
    /// A compound child index was not below the compound's child count. Read the count
    /// from the body's shape (`Compound::children`).
    CompoundChildOutOfRange {
        /// The index given.
        index: usize,
        /// The compound's number of children.
        count: usize,
    },
    /// A joint setter was called on a joint of a kind that has no such setting (a motor
    /// on a ball joint, a drive on a hinge). `expected` lists the kinds that have it.
    WrongJointKind {
        /// The setter called.
        setting: &'static str,
        /// The kinds that have the setting.
        expected: &'static str,
        /// The joint's kind.
        found: &'static str,
    },
    /// `World::move_kinematic` was given a time step that is not finite and positive.
    /// Pass the `dt` of the step that follows, such as `1.0 / 60.0`.
    InvalidTimeStep(f32),
}

impl fmt::Display for PhysicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PhysicsError::NonFinitePosition => write!(
                f,
                "position: expected finite components, got a NaN or infinite one"
            ),
            PhysicsError::NonFiniteRotation => write!(
                f,
                "rotation: expected finite components, got a NaN or infinite one"
            ),
            PhysicsError::NonNormalizedRotation => write!(
                f,
                "rotation: expected a unit quaternion (length 1 within 1e-3), got another \
                 length (call normalize() on it)"
            ),
            PhysicsError::NonFiniteVelocity => write!(
                f,
                "velocity, force, torque or impulse: expected finite components, got a NaN \
                 or infinite one"
            ),
            PhysicsError::InvalidShape(e) => write!(f, "shape: {e}"),
            PhysicsError::NonPositiveDensity => write!(
                f,
                "density (or mass): expected a finite value > 0 for a dynamic body, got zero, \
                 a negative or a non-finite one"
            ),
            PhysicsError::InfiniteShapeOnMovingBody => write!(
                f,
                "shape: expected a finite shape for a moving body, got a half-space (static \
                 bodies only)"
            ),
            PhysicsError::StaleBodyId(id) => write!(
                f,
                "body id: expected a live body of this world, got {id}, which was removed \
                 or never existed"
            ),
            PhysicsError::InvalidMaterial {
                field,
                value,
                expected,
            } => write!(f, "{field}: expected {expected}, got {value}"),
            PhysicsError::InvalidLayer(l) => write!(
                f,
                "layer: expected an object layer below WorldDesc::layers.count(), got {l}"
            ),
            PhysicsError::TooManyBodies => write!(
                f,
                "body count: expected fewer than {} bodies, the world is full",
                u32::MAX - 1
            ),
            PhysicsError::WrongMotionType => write!(
                f,
                "motion type: expected a moving body (dynamic for forces and impulses), got a \
                 static or kinematic one"
            ),
            PhysicsError::InvalidMassProperties => write!(
                f,
                "mass properties: expected mass > 0, a symmetric positive definite inertia \
                 and a finite centre of mass (a shapeless dynamic body needs \
                 MassSpec::Properties), got values out of range"
            ),
            PhysicsError::InvalidJoint { field, expected } => {
                write!(f, "joint {field}: expected {expected}")
            }
            PhysicsError::StaleJointId(id) => write!(
                f,
                "joint id: expected a live joint of this world, got {id}, which was removed \
                 or never existed"
            ),
            PhysicsError::SnapshotStructureChanged => write!(
                f,
                "dynamic snapshot: taken from another world structure (empty, another \
                 world, or bodies or joints created or removed since), expected this one's"
            ),
            PhysicsError::NotPresented(id) => write!(
                f,
                "presented body: expected a body of the last recorded step, got {id}, which \
                 was created after it or removed before it"
            ),
            PhysicsError::InvalidFixedStep {
                dt,
                max_steps_per_frame,
            } => write!(
                f,
                "fixed step: dt {dt} s and {max_steps_per_frame} steps per frame, expected a \
                 finite dt > 0 and at least 1 step per frame"
            ),
            PhysicsError::InvalidWorldSetting {
                field,
                value,
                expected,
            } => write!(f, "world setting {field}: expected {expected}, got {value}"),
            PhysicsError::InvalidBodySetting {
                field,
                value,
                expected,
            } => write!(f, "{field}: expected {expected}, got {value}"),
            PhysicsError::InvalidBatchBody { index, error } => {
                write!(f, "body {index} of the batch: {error}")
            }
            PhysicsError::NotACompound(id) => {
                write!(f, "shape of {id}: expected a compound, got another shape")
            }
            PhysicsError::CompoundChildOutOfRange { index, count } => write!(
                f,
                "compound child index: expected below the child count {count}, got {index}"
            ),
            PhysicsError::InvalidJointSetting {
                field,
                value,
                expected,
            } => write!(f, "joint setting {field}: expected {expected}, got {value}"),
            PhysicsError::WrongJointKind {
                setting,
                expected,
                found,
            } => write!(
                f,
                "joint {setting}: expected a {expected} joint, got a {found} joint"
            ),
            PhysicsError::InvalidTimeStep(dt) => {
                write!(f, "dt: expected a finite time step > 0 s, got {dt}")
            }
        }
    }
}

impl std::error::Error for PhysicsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PhysicsError::InvalidShape(e) => Some(e),
            PhysicsError::InvalidBatchBody { error, .. } => Some(error.as_ref()),
            _ => None,
        }
    }
}

impl From<ShapeError> for PhysicsError {
    fn from(e: ShapeError) -> Self {
        PhysicsError::InvalidShape(e)
    }
}
