//! Locked axes: a dynamic body that may not translate along, or rotate about, some world
//! axes (Avian's `LockedAxes`, Jolt's allowed degrees of freedom, Box2D's
//! `fixedRotation`): a capsule character that never tips, a 2D game in a plane.
//!
//! The axes are **world** axes, as in Avian and Jolt. How the lock is kept exact:
//!
//! - The solver sees the body's inverse mass as `m⁻¹ P_t` and its world inverse inertia
//!   as `P_r I⁻¹ P_r`, where `P_t` and `P_r` are the diagonal projections that zero the
//!   locked translation and rotation axes. Contacts and joints therefore never push
//!   along a locked axis (their effective masses are formed with the projected values),
//!   and the locked velocity components, which start at zero, stay exactly zero: each
//!   impulse adds an exact `0` to them.
//! - The integrator zeroes the locked velocity components after gravity, forces,
//!   damping and the gyroscopic term, and the step writes the locked coordinates of the
//!   centre of mass and of the origin back unchanged, so not even rounding moves them.
//! - With all three rotations locked, the orientation is never touched (the quaternion
//!   keeps its bits).
//!
//! Locking only some rotations locks the components of the *world* angular velocity:
//! a body locked about X and Y turns only about world Z. Its quaternion's X and Y
//! components stay at their start values when it starts turned about Z only (the 2D
//! case, [`LockedAxes::PLANE_XY`]); a body that starts tilted keeps its tilt and turns
//! about the world Z axis, which changes those components as the tilted frame turns.
//!
//! Locks apply to dynamic bodies: a kinematic body moves as its velocity says and a fixed
//! one never moves.

use bitflags::bitflags;

use crate::math::{Mat3A, Vec3A};

bitflags! {
    /// Which world axes a dynamic body may not translate along or rotate about (see the
    /// module docs: world axes, exact to the bit).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct LockedAxes: u8 {
        /// No translation along world X.
        const TRANSLATION_X = 1 << 0;
        /// No translation along world Y.
        const TRANSLATION_Y = 1 << 1;
        /// No translation along world Z.
        const TRANSLATION_Z = 1 << 2;
        /// No rotation about world X.
        const ROTATION_X = 1 << 3;
        /// No rotation about world Y.
        const ROTATION_Y = 1 << 4;
        /// No rotation about world Z.
        const ROTATION_Z = 1 << 5;
        /// No translation at all.
        const TRANSLATION = Self::TRANSLATION_X.bits()
            | Self::TRANSLATION_Y.bits()
            | Self::TRANSLATION_Z.bits();
        /// No rotation at all (Box2D's `fixedRotation`): a character's capsule.
        const ROTATION = Self::ROTATION_X.bits() | Self::ROTATION_Y.bits() | Self::ROTATION_Z.bits();
        /// A 2D body in the XY plane: no translation along Z, no rotation about X or Y.
        const PLANE_XY = Self::TRANSLATION_Z.bits() | Self::ROTATION_X.bits() | Self::ROTATION_Y.bits();
    }
}

impl LockedAxes {
    /// Per translation axis, whether it is locked.
    #[must_use]
    pub fn translation_locked(self) -> [bool; 3] {
        [
            self.contains(Self::TRANSLATION_X),
            self.contains(Self::TRANSLATION_Y),
            self.contains(Self::TRANSLATION_Z),
        ]
    }

    /// Per rotation axis, whether it is locked.
    #[must_use]
    pub fn rotation_locked(self) -> [bool; 3] {
        [
            self.contains(Self::ROTATION_X),
            self.contains(Self::ROTATION_Y),
            self.contains(Self::ROTATION_Z),
        ]
    }

    /// Whether some translation axis is locked.
    #[must_use]
    pub fn locks_translation(self) -> bool {
        self.intersects(Self::TRANSLATION)
    }

    /// Whether some rotation axis is locked.
    #[must_use]
    pub fn locks_rotation(self) -> bool {
        self.intersects(Self::ROTATION)
    }

    /// `v` with its locked translation components zeroed (exact zeros, whatever `v`).
    #[must_use]
    #[inline]
    pub(crate) fn free_linear(self, v: Vec3A) -> Vec3A {
        keep(self.translation_locked(), v)
    }

    /// `w` with its locked rotation components zeroed.
    #[must_use]
    #[inline]
    pub(crate) fn free_angular(self, w: Vec3A) -> Vec3A {
        keep(self.rotation_locked(), w)
    }

    /// 1 along free translation axes and 0 along locked ones: the diagonal of `P_t`.
    #[must_use]
    pub(crate) fn linear_axes(self) -> Vec3A {
        self.free_linear(Vec3A::ONE)
    }

    /// `P_r m P_r` for a world-axes matrix (an inverse inertia): the locked rotation
    /// axes' rows and columns zeroed, exactly.
    #[must_use]
    pub(crate) fn project_angular(self, m: Mat3A) -> Mat3A {
        if !self.locks_rotation() {
            return m;
        }
        let p = |c: Vec3A| self.free_angular(c);
        let [x, y, z] = self.rotation_locked();
        let col = |locked: bool, c: Vec3A| if locked { Vec3A::ZERO } else { p(c) };
        Mat3A::from_cols(col(x, m.x_axis), col(y, m.y_axis), col(z, m.z_axis))
    }

    /// The locked coordinates of `old` with the free ones of `new`: the step writes
    /// positions back through this, so a locked coordinate keeps its bits.
    #[must_use]
    #[inline]
    pub(crate) fn keep_locked(self, old: Vec3A, new: Vec3A) -> Vec3A {
        let [x, y, z] = self.translation_locked();
        Vec3A::new(
            if x { old.x } else { new.x },
            if y { old.y } else { new.y },
            if z { old.z } else { new.z },
        )
    }
}

fn keep([x, y, z]: [bool; 3], v: Vec3A) -> Vec3A {
    Vec3A::new(
        if x { 0.0 } else { v.x },
        if y { 0.0 } else { v.y },
        if z { 0.0 } else { v.z },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_zeroes_rows_and_columns_of_locked_axes() {
        let m = Mat3A::from_cols(
            Vec3A::new(1.0, 2.0, 3.0),
            Vec3A::new(2.0, 5.0, 6.0),
            Vec3A::new(3.0, 6.0, 9.0),
        );
        let p = LockedAxes::ROTATION_X.project_angular(m);
        assert_eq!(p.x_axis, Vec3A::ZERO);
        assert_eq!(p.y_axis, Vec3A::new(0.0, 5.0, 6.0));
        assert_eq!(p.z_axis, Vec3A::new(0.0, 6.0, 9.0));
        assert_eq!(LockedAxes::ROTATION.project_angular(m), Mat3A::ZERO);
        assert_eq!(LockedAxes::TRANSLATION.project_angular(m), m);
        let v = Vec3A::new(f32::INFINITY, -2.0, 3.0);
        assert_eq!(
            LockedAxes::PLANE_XY.free_linear(v),
            Vec3A::new(f32::INFINITY, -2.0, 0.0)
        );
        assert_eq!(
            LockedAxes::PLANE_XY.free_angular(v),
            Vec3A::new(0.0, 0.0, 3.0)
        );
        assert_eq!(
            LockedAxes::TRANSLATION_Y.keep_locked(Vec3A::ONE, Vec3A::splat(2.0)),
            Vec3A::new(2.0, 1.0, 2.0)
        );
    }
}
