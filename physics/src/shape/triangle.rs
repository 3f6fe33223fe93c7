//! One triangle of a mesh or heightfield, as a convex shape of zero thickness.
//!
//! Composite shapes (meshes, heightfields) never collide as a whole: the narrow phase
//! finds the triangles near the other shape and collides it with each, through this
//! support map. `active` says which edges may produce an edge normal (Jolt's active
//! edges): an edge shared with a coplanar or concave neighbour is inactive, and a contact
//! found on it takes the face normal instead, which is what keeps a box sliding over a
//! flat mesh from catching on the seams between triangles.

use crate::geometry::support::{ConvexSupport, SupportFace};
use crate::math::Vec3A;

use super::ShapeRayHit;

/// Edge `k` runs from vertex `k` to vertex `(k + 1) % 3`; bit `k` of `active` is set when
/// the edge may produce edge contacts.
pub const ALL_EDGES_ACTIVE: u8 = 0b111;

/// A triangle in its composite shape's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// Corners, counter-clockwise seen from the front (the side the normal faces).
    pub vertices: [Vec3A; 3],
    /// Bit `k` set: edge `k` (vertex `k` to `k + 1`) is active.
    pub active: u8,
    /// The triangle's material id (0 where the shape has none).
    pub material: u32,
}

impl Triangle {
    /// The unit front normal (zero for a degenerate triangle, which constructors reject).
    #[must_use]
    pub fn normal(&self) -> Vec3A {
        let [a, b, c] = self.vertices;
        (b - a).cross(c - a).normalize_or_zero()
    }

    /// Barycentric coordinates of `p` (projected onto the plane).
    #[must_use]
    pub fn barycentric(&self, p: Vec3A) -> [f32; 3] {
        let [a, b, c] = self.vertices;
        let (e0, e1, d) = (b - a, c - a, p - a);
        let (d00, d01, d11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
        let (d20, d21) = (d.dot(e0), d.dot(e1));
        let den = d00 * d11 - d01 * d01;
        if den.abs() < f32::MIN_POSITIVE {
            return [1.0, 0.0, 0.0];
        }
        let v = (d11 * d20 - d01 * d21) / den;
        let w = (d00 * d21 - d01 * d20) / den;
        [1.0 - v - w, v, w]
    }

    /// Möller–Trumbore ray test, both sides. The normal faces the ray's origin.
    #[must_use]
    pub fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let [a, b, c] = self.vertices;
        let (e1, e2) = (b - a, c - a);
        let p = d.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-12 {
            return None;
        }
        let inv = 1.0 / det;
        let s = o - a;
        let u = s.dot(p) * inv;
        if !(0.0..=1.0).contains(&u) {
            return None;
        }
        let q = s.cross(e1);
        let v = d.dot(q) * inv;
        if v < 0.0 || u + v > 1.0 {
            return None;
        }
        let t = e2.dot(q) * inv;
        if !(0.0..=max).contains(&t) {
            return None;
        }
        let n = e1.cross(e2).normalize_or_zero();
        let normal = if n.dot(d) > 0.0 { -n } else { n };
        Some(ShapeRayHit {
            fraction: t,
            normal,
        })
    }
}

impl ConvexSupport for Triangle {
    fn support_core(&self, dir: Vec3A) -> Vec3A {
        let [a, b, c] = self.vertices;
        let (da, db, dc) = (a.dot(dir), b.dot(dir), c.dot(dir));
        if da >= db && da >= dc {
            a
        } else if db >= dc {
            b
        } else {
            c
        }
    }

    fn convex_radius(&self) -> f32 {
        0.0
    }

    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        let n = self.normal();
        let c = n.dot(dir);
        // The whole triangle is the face when `dir` is near either side's normal; else
        // the supporting vertex alone (an edge-on view).
        if c >= 0.7 {
            out.extend(self.vertices);
        } else if c <= -0.7 {
            let [a, b, c] = self.vertices;
            out.extend([a, c, b]);
        } else {
            out.push(self.support_core(dir));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> Triangle {
        Triangle {
            vertices: [Vec3A::ZERO, Vec3A::Z, Vec3A::X],
            active: ALL_EDGES_ACTIVE,
            material: 0,
        }
    }

    #[test]
    fn normal_and_ray_from_both_sides() {
        // (Z - 0) x (X - 0) = +Y: counter-clockwise seen from above.
        assert_eq!(tri().normal(), Vec3A::Y);
        let down = tri()
            .cast_ray(Vec3A::new(0.25, 2.0, 0.25), -Vec3A::Y, 10.0)
            .expect("hits from above");
        assert!((down.fraction - 2.0).abs() < 1e-6);
        assert_eq!(down.normal, Vec3A::Y);
        let up = tri()
            .cast_ray(Vec3A::new(0.25, -1.0, 0.25), Vec3A::Y, 10.0)
            .expect("hits from below");
        assert_eq!(up.normal, -Vec3A::Y);
        assert!(
            tri()
                .cast_ray(Vec3A::new(0.75, 2.0, 0.75), -Vec3A::Y, 10.0)
                .is_none()
        );
    }

    #[test]
    fn barycentric_of_corners() {
        let b = tri().barycentric(Vec3A::X);
        assert!((b[2] - 1.0).abs() < 1e-6 && b[0].abs() < 1e-6 && b[1].abs() < 1e-6);
    }
}
