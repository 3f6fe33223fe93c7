//! Math types shared by every part of the engine: glam's SIMD-friendly `Vec3A`,
//! `Quat` and `Mat3A` in f32, plus a rigid transform.

pub use glam::{Mat3A, Quat, Vec2, Vec3, Vec3A};

/// A rigid transform: rotation followed by translation (`p' = rotation * p + translation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isometry {
    /// Translation, applied after the rotation.
    pub translation: Vec3A,
    /// Unit rotation.
    pub rotation: Quat,
}

impl Default for Isometry {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Isometry {
    /// The identity transform.
    pub const IDENTITY: Self = Self {
        translation: Vec3A::ZERO,
        rotation: Quat::IDENTITY,
    };

    /// A transform from a translation and a unit rotation.
    #[must_use]
    pub fn new(translation: Vec3A, rotation: Quat) -> Self {
        Self {
            translation,
            rotation,
        }
    }

    /// A pure translation.
    #[must_use]
    pub fn from_translation(translation: Vec3A) -> Self {
        Self {
            translation,
            rotation: Quat::IDENTITY,
        }
    }

    /// Transforms a point from local to world space.
    #[must_use]
    #[inline]
    pub fn transform_point(&self, p: Vec3A) -> Vec3A {
        self.rotation * p + self.translation
    }

    /// Rotates a direction from local to world space.
    #[must_use]
    #[inline]
    pub fn transform_vector(&self, v: Vec3A) -> Vec3A {
        self.rotation * v
    }

    /// Transforms a world-space point into local space.
    #[must_use]
    #[inline]
    pub fn inverse_transform_point(&self, p: Vec3A) -> Vec3A {
        self.rotation.inverse() * (p - self.translation)
    }

    /// Rotates a world-space direction into local space.
    #[must_use]
    #[inline]
    pub fn inverse_transform_vector(&self, v: Vec3A) -> Vec3A {
        self.rotation.inverse() * v
    }

    /// The inverse transform.
    #[must_use]
    pub fn inverse(&self) -> Self {
        let r = self.rotation.inverse();
        Self {
            translation: -(r * self.translation),
            rotation: r,
        }
    }

    /// `self * other`: applies `other` first, then `self`.
    #[must_use]
    pub fn mul_isometry(&self, other: &Self) -> Self {
        Self {
            translation: self.transform_point(other.translation),
            rotation: self.rotation * other.rotation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_transform() {
        let iso = Isometry::new(
            Vec3A::new(1.0, -2.0, 3.0),
            Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
        );
        let p = Vec3A::new(0.3, 0.4, -5.0);
        let q = iso.inverse().transform_point(iso.transform_point(p));
        assert!((q - p).length() < 1e-5);
        let q2 = iso.inverse_transform_point(iso.transform_point(p));
        assert!((q2 - p).length() < 1e-5);
    }
}
