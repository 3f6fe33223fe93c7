//! Where a joint stands: its frames' relative pose and velocity, measured the way the
//! solver measures its limits, springs and motors (hinge angle, slider position, swing
//! and twist), read by [`World::joint_state`](crate::world::World::joint_state).

use crate::math::{Quat, Vec3};

/// A joint's frames relative to each other, now: frame B seen from frame A, in frame A's
/// axes (its X axis is the hinge, slider, cone and twist axis; its Y axis the hinge
/// angle's reference, as in [`JointKind`](crate::joint::JointKind)).
///
/// Every joint kind gets every field; read the ones its kind has:
///
/// | kind | position | speed |
/// |---|---|---|
/// | hinge | [`hinge_angle`](Self::hinge_angle) | [`hinge_speed`](Self::hinge_speed) |
/// | slider | [`slider_position`](Self::slider_position) | [`slider_speed`](Self::slider_speed) |
/// | cone, swing-twist | [`swing`](Self::swing), [`twist`](Self::twist) | [`angular_velocity`](Self::angular_velocity) |
/// | distance | `offset.length()` | |
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointState {
    /// Frame B's orientation relative to frame A (`q_a⁻¹ q_b`).
    pub rotation: Quat,
    /// Anchor B minus anchor A, in frame A's axes (m).
    pub offset: Vec3,
    /// The rate of change of `offset` as frame A sees it (turning with it), in its axes
    /// (m/s).
    pub linear_velocity: Vec3,
    /// Body B's angular velocity minus body A's, in frame A's axes (rad/s).
    pub angular_velocity: Vec3,
    /// The hinge angle: how far frame B's Y axis has turned about frame A's X axis from
    /// frame A's Y axis, in `[-π, π]` (rad). What a hinge's limit, spring and motor act on.
    pub hinge_angle: f32,
    /// The angle between the two frames' X axes, in `[0, π]` (rad): what a cone's half
    /// angle limits.
    pub swing: f32,
    /// The twist about X of `rotation = swing * twist`, in `[-π, π]` (rad): what a
    /// swing-twist joint's twist range limits.
    pub twist: f32,
    /// The swing's rotation angles about frame A's Y and Z axes (rad), as a six-DOF
    /// joint's angular axes 1 and 2 measure them (a turn about Y tips X toward -Z).
    pub swing_yz: [f32; 2],
}

impl JointState {
    /// A hinge's angular speed about its axis (rad/s): the rate of `hinge_angle`.
    #[must_use]
    pub fn hinge_speed(&self) -> f32 {
        self.angular_velocity.x
    }

    /// A slider's position along its axis (m), what its limit, spring and motor act on.
    #[must_use]
    pub fn slider_position(&self) -> f32 {
        self.offset.x
    }

    /// A slider's speed along its axis (m/s): the rate of `slider_position`.
    #[must_use]
    pub fn slider_speed(&self) -> f32 {
        self.linear_velocity.x
    }
}
