//! Anything against a half-space (static ground). The shape is A, the half-space B, so
//! the normal (from A to B) is minus the plane's outward normal.
//!
//! A half-space is unbounded, so its contact with a convex shape is the set of the
//! shape's lowest features: the sphere's lowest point; the capsule's two segment ends
//! (two points when it lies flat); a box's corners; a hull's vertices; for other convex
//! shapes (cylinders) the support face towards the plane (a cylinder's cap polygon or
//! side line) plus the support point itself, so the deepest point is never missed
//! between two polygon vertices. Every point within the margin is a candidate, each
//! with its own separation; the manifold reduction keeps four. Feature ids are vertex
//! indices of the shape, so they stay put while the shape rests.

use arrayvec::ArrayVec;

use crate::geometry::support::{ConvexSupport, SupportFace};
use crate::math::{Isometry, Vec3A};
use crate::shape::{Capsule, Cuboid, HalfSpace, Sphere};

use super::clip::MAX_CLIPPED;
use super::manifold::{ContactManifold, WorldPoint, feature};

/// A half-space in world space: `n · x <= d`.
#[derive(Clone, Copy, Debug)]
struct Plane {
    n: Vec3A,
    d: f32,
}

impl Plane {
    fn new(h: &HalfSpace, iso: &Isometry) -> Self {
        let n = iso.transform_vector(h.normal).normalize_or(Vec3A::Y);
        Plane {
            n,
            d: h.offset + n.dot(iso.translation),
        }
    }

    /// The candidate for point `p` on A's surface.
    fn point(&self, p: Vec3A, id: u32) -> WorldPoint {
        let sep = self.n.dot(p) - self.d;
        WorldPoint {
            on_a: p,
            on_b: p - self.n * sep,
            separation: sep,
            feature: feature::simple(feature::HALF_SPACE, id),
        }
    }
}

/// Candidates within the margin; when more arrive than fit, a deeper point replaces the
/// shallowest one kept.
struct Candidates {
    pts: ArrayVec<WorldPoint, MAX_CLIPPED>,
    margin: f32,
}

impl Candidates {
    fn new(margin: f32) -> Self {
        Self {
            pts: ArrayVec::new(),
            margin,
        }
    }

    fn offer(&mut self, p: WorldPoint) {
        if p.separation > self.margin {
            return;
        }
        if self.pts.try_push(p).is_err() {
            let (k, shallowest) = self
                .pts
                .iter()
                .enumerate()
                .max_by(|x, y| x.1.separation.total_cmp(&y.1.separation))
                .expect("full, so not empty");
            if p.separation < shallowest.separation {
                self.pts[k] = p;
            }
        }
    }

    fn finish(
        &self,
        plane: &Plane,
        iso_a: &Isometry,
        iso_b: &Isometry,
        out: &mut ContactManifold,
    ) -> bool {
        if self.pts.is_empty() {
            return false;
        }
        out.set_from_world(-plane.n, iso_a, iso_b, &self.pts);
        true
    }
}

/// Sphere A against half-space B.
pub(crate) fn sphere_half_space(
    a: &Sphere,
    iso_a: &Isometry,
    b: &HalfSpace,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let plane = Plane::new(b, iso_b);
    let mut c = Candidates::new(margin);
    c.offer(plane.point(iso_a.translation - plane.n * a.radius, 0));
    c.finish(&plane, iso_a, iso_b, out)
}

/// Capsule A against half-space B: the two ends of the segment.
pub(crate) fn capsule_half_space(
    a: &Capsule,
    iso_a: &Isometry,
    b: &HalfSpace,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let plane = Plane::new(b, iso_b);
    let mut c = Candidates::new(margin);
    // A zero-length capsule is a sphere: one end.
    let ends = if a.half_height > 0.0 { 2 } else { 1 };
    for (k, y) in [-a.half_height, a.half_height]
        .into_iter()
        .take(ends)
        .enumerate()
    {
        let end = iso_a.transform_point(Vec3A::new(0.0, y, 0.0));
        c.offer(plane.point(end - plane.n * a.radius, k as u32));
    }
    c.finish(&plane, iso_a, iso_b, out)
}

/// Box A against half-space B: the eight corners (id = corner index, bit k set for +x_k).
pub(crate) fn box_half_space(
    a: &Cuboid,
    iso_a: &Isometry,
    b: &HalfSpace,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let plane = Plane::new(b, iso_b);
    let h = a.half_extents;
    let mut c = Candidates::new(margin);
    for k in 0..8u32 {
        let corner = Vec3A::new(
            if k & 1 != 0 { h.x } else { -h.x },
            if k & 2 != 0 { h.y } else { -h.y },
            if k & 4 != 0 { h.z } else { -h.z },
        );
        c.offer(plane.point(iso_a.transform_point(corner), k));
    }
    c.finish(&plane, iso_a, iso_b, out)
}

/// A point cloud (a hull's vertices, in A's frame) against half-space B; ids are the
/// vertex indices (modulo 64).
pub(crate) fn vertices_half_space(
    vertices: &[Vec3A],
    iso_a: &Isometry,
    b: &HalfSpace,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let plane = Plane::new(b, iso_b);
    let mut c = Candidates::new(margin);
    for (k, &v) in vertices.iter().enumerate() {
        c.offer(plane.point(iso_a.transform_point(v), k as u32));
    }
    c.finish(&plane, iso_a, iso_b, out)
}

/// Any convex A against half-space B: A's support face towards the plane and its
/// support point (id 63).
pub(crate) fn convex_half_space(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &HalfSpace,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let plane = Plane::new(b, iso_b);
    let down = iso_a.inverse_transform_vector(-plane.n);
    let mut face = SupportFace::new();
    a.support_face(down, &mut face);
    let mut c = Candidates::new(margin);
    for (k, &p) in face.iter().enumerate() {
        c.offer(plane.point(iso_a.transform_point(p), k as u32));
    }
    let deepest = plane.point(iso_a.transform_point(a.support(down)), 63);
    // The support point is usually one of the face's vertices already.
    let tol = 1e-4 * (1.0 + deepest.separation.abs());
    if c.pts
        .iter()
        .all(|p| p.separation > deepest.separation + tol)
    {
        c.offer(deepest);
    }
    c.finish(&plane, iso_a, iso_b, out)
}
