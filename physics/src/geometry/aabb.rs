//! Axis-aligned bounding boxes.

use crate::math::Vec3A;

/// An axis-aligned bounding box given by its minimum and maximum corners.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: Vec3A,
    /// Maximum corner.
    pub max: Vec3A,
}

impl Aabb {
    /// A box that contains nothing; growing it by any point gives that point.
    pub const EMPTY: Self = Self {
        min: Vec3A::splat(f32::INFINITY),
        max: Vec3A::splat(f32::NEG_INFINITY),
    };

    /// A box from its corners (each a `Vec3` or a `Vec3A`).
    #[must_use]
    #[inline]
    pub fn new(min: impl Into<Vec3A>, max: impl Into<Vec3A>) -> Self {
        Self {
            min: min.into(),
            max: max.into(),
        }
    }

    /// A box centred at `center` with half extents `half` (each a `Vec3` or a `Vec3A`).
    #[must_use]
    #[inline]
    pub fn from_center_half_extents(center: impl Into<Vec3A>, half: impl Into<Vec3A>) -> Self {
        let (center, half): (Vec3A, Vec3A) = (center.into(), half.into());
        Self {
            min: center - half,
            max: center + half,
        }
    }

    /// Whether the two boxes overlap (touching counts).
    #[must_use]
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Whether `other` lies entirely inside `self`.
    #[must_use]
    #[inline]
    pub fn contains(&self, other: &Self) -> bool {
        self.min.cmple(other.min).all() && other.max.cmple(self.max).all()
    }

    /// The smallest box holding both.
    #[must_use]
    #[inline]
    pub fn union(&self, other: &Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The box grown by `margin` on every side.
    #[must_use]
    #[inline]
    pub fn expanded(&self, margin: f32) -> Self {
        Self {
            min: self.min - Vec3A::splat(margin),
            max: self.max + Vec3A::splat(margin),
        }
    }

    /// The box grown to include `p`.
    #[must_use]
    #[inline]
    pub fn including(&self, p: Vec3A) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// Centre point.
    #[must_use]
    #[inline]
    pub fn center(&self) -> Vec3A {
        (self.min + self.max) * 0.5
    }

    /// Half extents.
    #[must_use]
    #[inline]
    pub fn half_extents(&self) -> Vec3A {
        (self.max - self.min) * 0.5
    }

    /// Surface area, the cost measure of the dynamic tree.
    #[must_use]
    #[inline]
    pub fn surface_area(&self) -> f32 {
        let d = self.max - self.min;
        2.0 * (d.x * d.y + d.y * d.z + d.z * d.x)
    }

    /// Whether both corners are finite and `min <= max`.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.min.is_finite() && self.max.is_finite() && self.min.cmple(self.max).all()
    }

    /// Slab test of the ray `origin + t * dir` for `t` in `[0, max_t]`; returns the entry `t`.
    #[must_use]
    pub fn ray_hit(&self, origin: Vec3A, inv_dir: Vec3A, max_t: f32) -> Option<f32> {
        let t1 = (self.min - origin) * inv_dir;
        let t2 = (self.max - origin) * inv_dir;
        let tmin = t1.min(t2).max_element().max(0.0);
        let tmax = t1.max(t2).min_element().min(max_t);
        (tmin <= tmax).then_some(tmin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_and_contain() {
        let a = Aabb::new(Vec3A::ZERO, Vec3A::ONE);
        let b = Aabb::new(Vec3A::splat(0.5), Vec3A::splat(2.0));
        let c = Aabb::new(Vec3A::splat(1.5), Vec3A::splat(2.0));
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&c));
        assert!(a.union(&c).contains(&b));
        assert!(!a.contains(&b));
        assert_eq!(a.surface_area(), 6.0);
    }

    #[test]
    fn ray_slab() {
        let a = Aabb::new(Vec3A::splat(-1.0), Vec3A::ONE);
        let dir = Vec3A::X;
        let t = a.ray_hit(Vec3A::new(-3.0, 0.0, 0.0), dir.recip(), 10.0);
        assert_eq!(t, Some(2.0));
        assert_eq!(
            a.ray_hit(Vec3A::new(-3.0, 2.0, 0.0), dir.recip(), 10.0),
            None
        );
    }
}
