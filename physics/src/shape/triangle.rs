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
use crate::math::cross;

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
        cross(b - a, c - a).normalize_or_zero()
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

    /// Watertight ray test (Woop, Benthin and Wald 2013: a ray through an edge or vertex
    /// shared with another triangle hits at least one of them), both sides. The normal
    /// faces the ray's origin.
    #[must_use]
    pub fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let fraction = WatertightRay::new(o, d)?.hit(&self.vertices, max)?;
        Some(ShapeRayHit {
            fraction,
            normal: self.normal_against(d).into(),
        })
    }

    /// The unit normal on the side a ray along `d` comes from.
    pub(crate) fn normal_against(&self, d: Vec3A) -> Vec3A {
        let n = self.normal();
        if n.dot(d) > 0.0 { -n } else { n }
    }
}

/// A ray prepared for the watertight ray–triangle test of Woop, Benthin and Wald,
/// "Watertight Ray/Triangle Intersection" (JCGT 2(1), 2013).
///
/// The triangle is moved to the ray's origin and sheared so the ray runs along +z of a
/// 2D frame (its dominant axis), where the test is three 2D edge functions of the
/// vertices. The idea that makes it watertight: a vertex's sheared coordinates depend
/// only on the vertex and the ray, so two triangles sharing an edge compute that edge's
/// function from the same numbers, in the opposite order, and get exactly opposite
/// values (floating-point subtraction is antisymmetric). A ray through the shared edge
/// sees 0 on both sides and hits both triangles; a ray beside it sees one sign and hits
/// exactly one. Möller–Trumbore computes each triangle's barycentrics from its own
/// edges and can lose the ray on both sides of an edge or at a vertex. An edge function
/// rounded to exactly 0 is recomputed in `f64`, where the products of `f32`s are exact
/// and the sign of their difference is right.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatertightRay {
    origin: Vec3A,
    /// The sheared frame's x, y and z axes (z: the ray's dominant axis).
    axes: [usize; 3],
    /// `(d_x / d_z, d_y / d_z, 1 / d_z)` in the sheared frame's axes.
    shear: Vec3A,
}

impl WatertightRay {
    /// The ray `o + t d`; `None` when `d` is zero or not finite.
    pub(crate) fn new(o: Vec3A, d: Vec3A) -> Option<WatertightRay> {
        let a = d.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        if !(d.is_finite() && o.is_finite()) || d[kz] == 0.0 {
            return None;
        }
        let (mut kx, mut ky) = ((kz + 1) % 3, (kz + 2) % 3);
        // Keep the winding of the sheared triangle (the paper's swap).
        if d[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        Some(WatertightRay {
            origin: o,
            axes: [kx, ky, kz],
            shear: Vec3A::new(d[kx] / d[kz], d[ky] / d[kz], 1.0 / d[kz]),
        })
    }

    /// The fraction `t` in `[0, max]` where the ray meets the closed triangle
    /// `vertices` from either side, if it does.
    pub(crate) fn hit(&self, vertices: &[Vec3A; 3], max: f32) -> Option<f32> {
        let [kx, ky, kz] = self.axes;
        let s = self.shear;
        let rel = vertices.map(|v| v - self.origin);
        let xy = rel.map(|p| (p[kx] - s.x * p[kz], p[ky] - s.y * p[kz]));
        let [(ax, ay), (bx, by), (cx, cy)] = xy;
        let mut u = cx * by - cy * bx;
        let mut v = ax * cy - ay * cx;
        let mut w = bx * ay - by * ax;
        if u == 0.0 || v == 0.0 || w == 0.0 {
            let edge = |px: f32, py: f32, qx: f32, qy: f32| {
                (f64::from(px) * f64::from(qy) - f64::from(py) * f64::from(qx)) as f32
            };
            u = edge(cx, cy, bx, by);
            v = edge(ax, ay, cx, cy);
            w = edge(bx, by, ax, ay);
        }
        if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
            return None;
        }
        let det = u + v + w;
        if det == 0.0 {
            // The ray lies in the triangle's plane: it grazes it, which is no hit.
            return None;
        }
        let z = rel.map(|p| s.z * p[kz]);
        let t = (u * z[0] + v * z[1] + w * z[2]) / det;
        (0.0..=max).contains(&t).then_some(t)
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
        assert_eq!(down.normal, crate::math::Vec3::Y);
        let up = tri()
            .cast_ray(Vec3A::new(0.25, -1.0, 0.25), Vec3A::Y, 10.0)
            .expect("hits from below");
        assert_eq!(up.normal, -crate::math::Vec3::Y);
        assert!(
            tri()
                .cast_ray(Vec3A::new(0.75, 2.0, 0.75), -Vec3A::Y, 10.0)
                .is_none()
        );
    }

    #[test]
    fn rays_through_a_shared_edge_or_vertex_hit_a_side() {
        // A bumpy fan of six triangles around a centre vertex: a ray aimed at the centre
        // or at any point of a spoke (an edge shared by two triangles), from any of a
        // spread of directions, hits at least one of them.
        let centre = Vec3A::new(0.3, 0.1, -0.2);
        let ring: Vec<Vec3A> = (0..6)
            .map(|k| {
                let a = k as f32 * std::f32::consts::TAU / 6.0 + 0.1;
                centre + Vec3A::new(a.cos(), 0.3 * (3.0 * a).sin(), a.sin())
            })
            .collect();
        let fan: Vec<[Vec3A; 3]> = (0..6)
            .map(|k| [centre, ring[(k + 1) % 6], ring[k]])
            .collect();
        let mut state = 1u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32
        };
        for n in 0..30_000 {
            let spoke = ring[n % 6] - centre;
            let target = if n % 7 == 0 {
                centre
            } else {
                centre + spoke * (0.02 + 0.96 * next())
            };
            let d = Vec3A::new(next() - 0.5, -1.0, next() - 0.5) * (0.1 + 3.0 * next());
            let o = target - d * (0.5 + next());
            let ray = WatertightRay::new(o, d).expect("non-zero direction");
            let hits = fan.iter().filter(|t| ray.hit(t, 10.0).is_some()).count();
            assert!(hits >= 1, "ray {o} + t {d} slipped through at {target}");
        }
    }

    #[test]
    fn barycentric_of_corners() {
        let b = tri().barycentric(Vec3A::X);
        assert!((b[2] - 1.0).abs() < 1e-6 && b[0].abs() < 1e-6 && b[1].abs() < 1e-6);
    }
}
