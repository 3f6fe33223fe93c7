//! EPA, the expanding polytope algorithm (van den Bergen 2001): penetration depth and
//! normal of two overlapping convex cores.
//!
//! EPA needs a polytope inside `A - B` that contains the origin. When GJK ends inside a
//! tetrahedron, that is the start. But GJK's last simplex only touches the origin when
//! the cores merely touch, which is exactly the common resting case for shapes without
//! convex radius. Then EPA runs on a slightly inflated A (its core
//! swept by a sphere of radius `δ`, 0.2% of the pair's size, twice the distance under
//! which GJK hands over): the origin is then at least `δ / 2` deep, a fresh GJK on the inflated pair ends with a simplex enclosing the origin,
//! and a simplex that is still flat (the origin on one of its edges or its face) is grown
//! into a tetrahedron by support points perpendicular to it, which lie at least `δ / 2`
//! away; the origin may then lie on the start's boundary, which EPA handles (that face
//! has distance 0 and is expanded first). Since
//! sweeping by a sphere adds `δ` to the support function in every direction, the depth
//! of the cores is EPA's depth minus `δ`, with the same normal.
//!
//! The polytope lives in fixed arrays (no allocation per call); faces are kept
//! counter-clockwise seen from outside, so the horizon is the set of edges of visible
//! faces whose reverse is not also on a visible face. Rounding can break the polytope
//! when a new point lies barely beyond a face, so each step is checked: the horizon must
//! be one closed loop and the closest face's distance must not decrease (it is the
//! distance to the boundary of a growing convex set). If EPA cannot proceed (storage
//! full, degenerate faces, a failed check), it keeps the last good face; if it cannot even start, the
//! fallback is the least overlap over a few candidate axes (both shapes' face axes and
//! the centre line), like a separating-axis test.

use crate::math::{cross, rotate};
use arrayvec::ArrayVec;

use crate::math::Vec3A;

use super::gjk::{self, Pair, Simplex, Vertex};

const MAX_VERTS: usize = 64;
const MAX_FACES: usize = 2 * MAX_VERTS;
const MAX_HORIZON: usize = 64;
const MAX_ITERATIONS: usize = MAX_VERTS;

#[derive(Clone, Copy, Debug)]
struct Face {
    /// Vertex indices, counter-clockwise seen from outside.
    v: [u8; 3],
    /// Outward unit normal.
    n: Vec3A,
    /// Distance of the face's plane from the origin (`n · v0`).
    d: f32,
}

struct Polytope {
    verts: ArrayVec<Vertex, MAX_VERTS>,
    faces: ArrayVec<Face, MAX_FACES>,
    /// A point strictly inside the polytope (the start's centroid), to orient faces.
    inside: Vec3A,
    /// Squared length below which a face's cross product counts as degenerate.
    tiny: f32,
    /// Squared distance under which two vertices count as one.
    same: f32,
}

impl Polytope {
    /// Adds face (i, j, k) oriented away from `inside`; false if it is degenerate.
    fn add_face(&mut self, i: usize, j: usize, k: usize) -> bool {
        let (a, b, c) = (self.verts[i].w, self.verts[j].w, self.verts[k].w);
        let mut n = cross(b - a, c - a);
        let len2 = n.length_squared();
        if len2 <= self.tiny || self.faces.is_full() {
            return false;
        }
        n /= len2.sqrt();
        let mut v = [i as u8, j as u8, k as u8];
        if n.dot(self.inside - a) > 0.0 {
            n = -n;
            v.swap(1, 2);
        }
        self.faces.push(Face { v, n, d: n.dot(a) });
        true
    }

    fn closest_face(&self) -> Option<Face> {
        self.faces
            .iter()
            .copied()
            .min_by(|x, y| x.d.total_cmp(&y.d))
    }

    /// The result for face `f`: (depth, normal, point on A, point on B).
    fn result(&self, f: &Face) -> (f32, Vec3A, Vec3A, Vec3A) {
        let [p0, p1, p2] = f.v.map(|i| self.verts[i as usize]);
        let p = f.n * f.d;
        let (e0, e1, e2) = (p1.w - p0.w, p2.w - p0.w, p - p0.w);
        let (d00, d01, d11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
        let (d20, d21) = (e2.dot(e0), e2.dot(e1));
        let denom = d00 * d11 - d01 * d01;
        let (v, w) = if denom > f32::MIN_POSITIVE {
            (
                (d11 * d20 - d01 * d21) / denom,
                (d00 * d21 - d01 * d20) / denom,
            )
        } else {
            (1.0 / 3.0, 1.0 / 3.0)
        };
        let u = 1.0 - v - w;
        // The face normal points out of A - B: B lies on A's +n side, so the contact
        // normal from A to B is +n, and point_a - point_b = depth * n.
        (
            f.d,
            f.n,
            p0.a * u + p1.a * v + p2.a * w,
            p0.b * u + p1.b * v + p2.b * w,
        )
    }
}

/// Penetration of the overlapping cores of `pair` (whose `inflate_a` must be 0), given
/// GJK's last simplex: (depth ≥ about 0, unit normal from A to B, deepest point of A's
/// core, deepest point of B's core), all in A's frame, `point_a - point_b = depth *
/// normal`.
pub(crate) fn penetration(pair: &Pair, gjk_simplex: &Simplex) -> (f32, Vec3A, Vec3A, Vec3A) {
    let scale = pair.scale;
    // GJK ended inside a tetrahedron (the usual overlap): expand it as it is.
    let direct = (gjk_simplex.verts().len() == 4)
        .then(|| expand(pair, gjk_simplex.verts(), scale))
        .flatten();
    let (depth, n, pb) = match direct {
        Some((d, n, _, pb)) => (d, n, pb),
        None => {
            // Touching cores (the origin on a face, edge or vertex of A - B): inflate A.
            let delta = gjk::epa_inflation(scale);
            let inflated = Pair {
                inflate_a: delta,
                ..*pair
            };
            let start = gjk::gjk(&inflated, -pair.b_in_a.translation, 1e-6 * scale);
            match start
                .overlap
                .then(|| expand(&inflated, start.simplex.verts(), scale))
                .flatten()
            {
                Some((d, n, _, pb)) => (d - delta, n, pb),
                None => {
                    let (d, n, _, pb) = axis_fallback(pair);
                    (d, n, pb)
                }
            }
        }
    };
    // B's deepest point is exact up to EPA's tolerance; A's follows from the depth so the
    // pair differs by exactly depth * n (the inflation's support offsets, which vary a
    // little between the face's vertices, would otherwise leak into A's point).
    (depth, n, pb + n * depth, pb)
}

/// EPA from `start` (1 to 4 vertices of `A - B` around the origin).
fn expand(pair: &Pair, start: &[Vertex], scale: f32) -> Option<(f32, Vec3A, Vec3A, Vec3A)> {
    let (tiny, same) = (1e-8 * scale * scale, 1e-6 * scale);
    let mut poly = Polytope {
        verts: start.iter().copied().collect(),
        faces: ArrayVec::new(),
        inside: Vec3A::ZERO,
        tiny: tiny * tiny,
        same: same * same,
    };
    let push_unique = |poly: &mut Polytope, v: Vertex| -> bool {
        let dup = poly
            .verts
            .iter()
            .any(|u| (u.w - v.w).length_squared() <= poly.same);
        if !dup {
            poly.verts.push(v);
        }
        !dup
    };
    // Blow a segment up into a triangle: any direction perpendicular to it.
    if poly.verts.len() == 2 {
        let axis = (poly.verts[1].w - poly.verts[0].w).normalize_or_zero();
        if axis == Vec3A::ZERO {
            return None;
        }
        let u = axis.any_orthonormal_vector();
        let v = pair.support(u);
        if !push_unique(&mut poly, v) {
            return None;
        }
    }
    if poly.verts.len() == 3 {
        // A triangle through the origin: one apex beyond it makes a tetrahedron with the
        // origin on its base (a tetrahedron is always convex; two apexes need not be).
        // Since the origin is at least δ / 2 inside, the apex is that far off the plane.
        let [a, b, c] = [0, 1, 2].map(|i| poly.verts[i].w);
        let n = cross(b - a, c - a).normalize_or_zero();
        if n == Vec3A::ZERO || !push_unique(&mut poly, pair.support(n)) {
            return None;
        }
    }
    if poly.verts.len() != 4 {
        return None;
    }
    poly.inside = poly.verts.iter().map(|v| v.w).sum::<Vec3A>() / 4.0;
    for (i, j, k) in [(0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)] {
        if !poly.add_face(i, j, k) {
            return None;
        }
    }
    // The origin must be inside or on the start (up to GJK's tolerance), or every depth
    // below would be wrong.
    if poly.faces.iter().any(|f| f.d < -1e-5 * scale) {
        return None;
    }

    let mut best = poly.closest_face()?;
    let mut horizon = ArrayVec::<(u8, u8), MAX_HORIZON>::new();
    for _ in 0..MAX_ITERATIONS {
        let next = poly.closest_face()?;
        // The closest face's distance is the distance from the origin to the boundary
        // of a growing convex polytope, so it never decreases; if it does, rounding has
        // broken the polytope (a point barely beyond a face): keep the last good face.
        if next.d < best.d - 1e-6 * scale {
            break;
        }
        best = next;
        let w = pair.support(best.n);
        let gain = w.w.dot(best.n) - best.d;
        // Tight: on a rounded region of radius R the closest face's normal is good to
        // about sqrt(2 tolerance / R).
        if gain <= 2e-6 * scale + 1e-5 * best.d.abs() || poly.verts.is_full() {
            break;
        }
        if !push_unique(&mut poly, w) {
            break;
        }
        let new = poly.verts.len() - 1;
        // Remove the faces the new point sees and collect their outline.
        horizon.clear();
        let mut i = 0;
        let mut overflow = false;
        while i < poly.faces.len() {
            let f = poly.faces[i];
            // A margin below the stopping tolerance, so the closest face is always seen
            // but faces the point only grazes are left alone.
            if f.n.dot(w.w) - f.d > 1e-6 * scale {
                for e in [(f.v[0], f.v[1]), (f.v[1], f.v[2]), (f.v[2], f.v[0])] {
                    if let Some(k) = horizon.iter().position(|&x| x == (e.1, e.0)) {
                        horizon.swap_remove(k);
                    } else if horizon.try_push(e).is_err() {
                        overflow = true;
                    }
                }
                poly.faces.swap_remove(i);
            } else {
                i += 1;
            }
        }
        // The outline of the removed faces must be one closed loop: each vertex starts
        // one edge and ends one. Otherwise the visible set was not a disc (rounding):
        // stop with the last good face.
        let mut starts = [0u8; MAX_VERTS];
        let mut ends = [0u8; MAX_VERTS];
        for &(x, y) in &horizon {
            starts[x as usize] += 1;
            ends[y as usize] += 1;
        }
        if overflow
            || horizon.len() < 3
            || horizon
                .iter()
                .any(|&(x, _)| starts[x as usize] != 1 || ends[x as usize] != 1)
        {
            break;
        }
        for &(x, y) in &horizon {
            if !poly.add_face(x as usize, y as usize, new) {
                // A hole would break the polytope: stop with the best face so far.
                return Some(poly.result(&best));
            }
        }
    }
    Some(poly.result(&best))
}

/// Least overlap over candidate axes: A's and B's face axes and the centre line.
/// Exact for face contacts of boxes, an over-estimate of the depth for edge contacts.
fn axis_fallback(pair: &Pair) -> (f32, Vec3A, Vec3A, Vec3A) {
    let rb = pair.b_in_a.rotation;
    let centre = pair.b_in_a.translation;
    let mut best = (f32::MAX, Vec3A::Y, Vec3A::ZERO);
    let mut consider = |l: Vec3A| {
        let l = l.normalize_or_zero();
        if l == Vec3A::ZERO {
            return;
        }
        for l in [l, -l] {
            let pa = pair.a.support_core(l);
            let pb = pair.support(l).b;
            // Overlap of the projections when B is on A's +l side.
            let depth = l.dot(pa) - l.dot(pb);
            if depth < best.0 {
                best = (depth, l, pa);
            }
        }
    };
    consider(centre);
    for axis in [Vec3A::X, Vec3A::Y, Vec3A::Z] {
        consider(axis);
        consider(rotate(rb, axis));
    }
    let (depth, n, pa) = best;
    (depth, n, pa, pa - n * depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::support::{ConvexSupport, SupportFace};
    use crate::math::{Isometry, Quat};

    /// A box without convex radius, built here so the test does not depend on the
    /// shape module's constructors.
    struct TestBox(Vec3A);
    impl ConvexSupport for TestBox {
        fn support_core(&self, d: Vec3A) -> Vec3A {
            Vec3A::select(d.cmplt(Vec3A::ZERO), -self.0, self.0)
        }
        fn convex_radius(&self) -> f32 {
            0.0
        }
        fn support_face(&self, _d: Vec3A, out: &mut SupportFace) {
            out.clear();
        }
    }

    /// GJK, then EPA from its simplex, as `closest_in_a` does.
    fn depth_of(pair: &Pair) -> (f32, Vec3A, Vec3A, Vec3A) {
        let g = gjk::gjk(pair, -pair.b_in_a.translation, 1e-3 * pair.scale);
        assert!(g.overlap);
        penetration(pair, &g.simplex)
    }

    #[test]
    fn depth_of_boxes_overlapping_along_each_axis() {
        // Unit cubes (half extent 0.5) whose centres are 1 - d apart along an axis
        // overlap by exactly d along that axis (and by more along any other direction).
        let cube = TestBox(Vec3A::splat(0.5));
        for (axis, d) in [(Vec3A::X, 0.1), (Vec3A::Y, 0.3), (-Vec3A::Z, 0.01)] {
            let pair = Pair::new(&cube, &cube, Isometry::from_translation(axis * (1.0 - d)));
            let (depth, n, pa, pb) = depth_of(&pair);
            assert!((depth - d).abs() < 1e-4, "depth {depth} for {d}");
            assert!((n - axis).length() < 1e-3, "normal {n}");
            assert!(((pa - pb) - n * depth).length() < 1e-3);
        }
        // Touching exactly (the resting case): depth 0, no NaN.
        let pair = Pair::new(&cube, &cube, Isometry::from_translation(Vec3A::Y));
        let (depth, n, _, _) = depth_of(&pair);
        assert!(depth.abs() < 1e-4 && (n - Vec3A::Y).length() < 1e-3);
        // Coincident centres, rotated: depth is the smallest width, 1.0 for unit cubes
        // against a 45-degree rotated copy along the common axis z.
        let pair = Pair::new(
            &cube,
            &cube,
            Isometry::new(
                Vec3A::ZERO,
                Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
            ),
        );
        let (depth, n, _, _) = depth_of(&pair);
        assert!((depth - 1.0).abs() < 1e-3, "depth {depth}");
        assert!(n.z.abs() > 0.999 && n.is_finite());
    }
}
