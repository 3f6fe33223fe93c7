//! GJK (Gilbert, Johnson, Keerthi 1988; termination tests after van den Bergen 2003):
//! distance and closest points between two convex cores.
//!
//! Shapes are "core + convex radius" (Jolt, seed 004): GJK runs on the cores and the
//! radii are added afterwards, so spheres and capsules (a point or a segment with a
//! radius) get exact distances in a few iterations, and penetration (EPA) is only needed
//! when the cores themselves overlap.
//!
//! Everything runs in A's local frame (B placed relative to A), so precision does not
//! depend on how far from the world origin the pair is. The simplex keeps, per vertex,
//! the two support points it came from; the barycentric weights of the closest point
//! then give the closest points on each core. The closest point on a simplex is found by
//! Voronoi regions (Ericson, "Real-Time Collision Detection", 5.1.5-5.1.6), with
//! degenerate (flat) tetrahedra handled by testing all their faces.
//!
//! Termination: the gap between the upper bound |v| and the lower bound v·w/|v| is below
//! a tolerance; or the new support point is already in the simplex; or the closest point
//! stopped getting closer (numerical noise: the previous simplex is restored so the
//! closest points stay consistent); or an iteration cap.

use arrayvec::ArrayVec;

use crate::math::{Isometry, Vec3A};
use crate::support::ConvexSupport;

/// Iteration cap. GJK on polytopes terminates in a handful of iterations; curved shapes
/// converge linearly and reach the tolerance within 20-30.
const MAX_ITERATIONS: usize = 48;

/// Two convex shapes seen through their cores, B placed in A's local frame.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    pub a: &'a dyn ConvexSupport,
    pub b: &'a dyn ConvexSupport,
    /// B's frame relative to A's.
    pub b_in_a: Isometry,
    /// Extra radius swept around A's core (used by EPA to make the origin strictly
    /// interior); zero for GJK.
    pub inflate_a: f32,
}

impl Pair<'_> {
    /// A support point of the Minkowski difference `A - B` along `d` (A's frame).
    #[inline]
    pub fn support(&self, d: Vec3A) -> Vertex {
        let mut pa = self.a.support_core(d);
        if self.inflate_a > 0.0 {
            pa += d.normalize_or_zero() * self.inflate_a;
        }
        let pb = self.b_in_a.transform_point(
            self.b
                .support_core(self.b_in_a.inverse_transform_vector(-d)),
        );
        Vertex {
            w: pa - pb,
            a: pa,
            b: pb,
        }
    }

    /// A length that sets the scale of the tolerances: the size of the pair.
    pub fn scale(&self) -> f32 {
        let ea = (self.a.support_core(Vec3A::X) - self.a.support_core(-Vec3A::X)).length();
        1.0 + ea + self.b_in_a.translation.length()
    }
}

/// A vertex of the simplex: a point of `A - B` and the points of A and B it came from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Vertex {
    pub w: Vec3A,
    pub a: Vec3A,
    pub b: Vec3A,
}

/// A simplex of up to four vertices with the barycentric weights of its closest point.
#[derive(Clone, Debug, Default)]
pub(crate) struct Simplex {
    pub verts: ArrayVec<Vertex, 4>,
    pub weights: ArrayVec<f32, 4>,
}

impl Simplex {
    /// The closest point (weighted sum of `w`).
    pub fn point(&self) -> Vec3A {
        self.weighted(|v| v.w)
    }

    /// The closest points on A and on B.
    pub fn points(&self) -> (Vec3A, Vec3A) {
        (self.weighted(|v| v.a), self.weighted(|v| v.b))
    }

    fn weighted(&self, f: impl Fn(&Vertex) -> Vec3A) -> Vec3A {
        self.verts
            .iter()
            .zip(&self.weights)
            .map(|(v, &t)| f(v) * t)
            .sum()
    }

    fn set(&mut self, verts: &[Vertex], weights: &[f32]) {
        self.verts.clear();
        self.verts.extend(verts.iter().copied());
        self.weights.clear();
        self.weights.extend(weights.iter().copied());
    }

    /// Replaces the simplex by the sub-simplex supporting its closest point to the origin
    /// and sets the weights. Returns the closest point.
    fn solve(&mut self) -> Vec3A {
        let v = self.verts.clone();
        match v.len() {
            1 => self.set(&v, &[1.0]),
            2 => {
                let (s, t) = closest_on_segment(v[0].w, v[1].w);
                match s {
                    Region::Vertex(i) => self.set(&[v[i]], &[1.0]),
                    _ => self.set(&v, &[1.0 - t, t]),
                }
            }
            3 => {
                let (idx, w) = closest_on_triangle([v[0].w, v[1].w, v[2].w]);
                let sub: ArrayVec<Vertex, 3> = idx.iter().map(|&i| v[i]).collect();
                self.set(&sub, &w);
            }
            _ => self.solve_tetrahedron(),
        }
        self.point()
    }

    fn solve_tetrahedron(&mut self) {
        let v = self.verts.clone();
        let p = [v[0].w, v[1].w, v[2].w, v[3].w];
        // Signed volumes: the origin is inside when it is on the inner side of all four
        // faces, i.e. each face's volume with the origin has the sign of the whole.
        let vol = |a: Vec3A, b: Vec3A, c: Vec3A, d: Vec3A| (b - a).cross(c - a).dot(d - a);
        let total = vol(p[0], p[1], p[2], p[3]);
        let faces = [[1, 2, 3, 0], [0, 3, 2, 1], [0, 1, 3, 2], [0, 2, 1, 3]];
        let scale = (p[1] - p[0])
            .length_squared()
            .max((p[2] - p[0]).length_squared())
            .max((p[3] - p[0]).length_squared());
        let flat = total.abs() <= 1e-9 * scale * scale.sqrt();
        if !flat {
            let mut bary = [0.0f32; 4];
            let mut inside = true;
            for f in faces {
                // Volume with the origin replacing the opposite vertex f[3].
                let part = vol(p[f[0]], p[f[1]], p[f[2]], Vec3A::ZERO);
                let own = vol(p[f[0]], p[f[1]], p[f[2]], p[f[3]]);
                let t = part / own;
                if t < 0.0 {
                    inside = false;
                }
                bary[f[3]] = t;
            }
            if inside {
                let sum: f32 = bary.iter().sum();
                let w: ArrayVec<f32, 4> = bary.iter().map(|b| b / sum).collect();
                self.set(&v, &w);
                return;
            }
        }
        // Outside (or flat): the closest point lies on a face the origin can see (for a
        // flat tetrahedron, on any face); take the closest of those.
        let mut best: Option<(f32, ArrayVec<usize, 3>, ArrayVec<f32, 3>)> = None;
        for f in faces {
            if !flat {
                let part = vol(p[f[0]], p[f[1]], p[f[2]], Vec3A::ZERO);
                let own = vol(p[f[0]], p[f[1]], p[f[2]], p[f[3]]);
                if part / own >= 0.0 {
                    continue;
                }
            }
            let (idx, w) = closest_on_triangle([p[f[0]], p[f[1]], p[f[2]]]);
            let q: Vec3A = idx.iter().zip(&w).map(|(&i, &t)| p[f[i]] * t).sum();
            let d = q.length_squared();
            if best.as_ref().is_none_or(|b| d < b.0) {
                let idx = idx.iter().map(|&i| f[i]).collect();
                best = Some((d, idx, w));
            }
        }
        let (_, idx, w) = best.expect("a tetrahedron has a face the origin sees");
        let sub: ArrayVec<Vertex, 3> = idx.iter().map(|&i| v[i]).collect();
        self.set(&sub, &w);
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Region {
    Vertex(usize),
    Edge,
}

/// Closest point to the origin on segment `ab`: the region and the parameter `t`.
fn closest_on_segment(a: Vec3A, b: Vec3A) -> (Region, f32) {
    let ab = b - a;
    let denom = ab.length_squared();
    if denom <= 0.0 {
        return (Region::Vertex(0), 0.0);
    }
    let t = -a.dot(ab) / denom;
    if t <= 0.0 {
        (Region::Vertex(0), 0.0)
    } else if t >= 1.0 {
        (Region::Vertex(1), 1.0)
    } else {
        (Region::Edge, t)
    }
}

/// Closest point to the origin on triangle `p`: indices of the supporting vertices and
/// their weights (Ericson 5.1.5). A degenerate triangle falls back to its best edge.
fn closest_on_triangle(p: [Vec3A; 3]) -> (ArrayVec<usize, 3>, ArrayVec<f32, 3>) {
    let (a, b, c) = (p[0], p[1], p[2]);
    let (ab, ac) = (b - a, c - a);
    let one = |i: usize| ([i].into_iter().collect(), [1.0].into_iter().collect());
    let two = |i: usize, j: usize, t: f32| {
        (
            [i, j].into_iter().collect(),
            [1.0 - t, t].into_iter().collect(),
        )
    };
    let d1 = ab.dot(-a);
    let d2 = ac.dot(-a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return one(0);
    }
    let d3 = ab.dot(-b);
    let d4 = ac.dot(-b);
    if d3 >= 0.0 && d4 <= d3 {
        return one(1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return two(0, 1, d1 / (d1 - d3));
    }
    let d5 = ab.dot(-c);
    let d6 = ac.dot(-c);
    if d6 >= 0.0 && d5 <= d6 {
        return one(2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return two(0, 2, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return two(1, 2, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let sum = va + vb + vc;
    if sum <= f32::MIN_POSITIVE || !sum.is_finite() {
        // Collinear vertices: the closest of the three edges.
        let mut best = (f32::MAX, 0, 1, 0.0);
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            let (r, t) = closest_on_segment(p[i], p[j]);
            let t = match r {
                Region::Vertex(0) => 0.0,
                Region::Vertex(_) => 1.0,
                Region::Edge => t,
            };
            let d = (p[i] + (p[j] - p[i]) * t).length_squared();
            if d < best.0 {
                best = (d, i, j, t);
            }
        }
        return two(best.1, best.2, best.3);
    }
    let (v, w) = (vb / sum, vc / sum);
    (
        [0, 1, 2].into_iter().collect(),
        [1.0 - v - w, v, w].into_iter().collect(),
    )
}

/// How GJK ended.
#[derive(Clone, Debug)]
pub(crate) struct GjkResult {
    /// The final simplex; its closest point is `v`.
    pub simplex: Simplex,
    /// Closest point of `A - B` to the origin found (zero vector when overlapping).
    pub v: Vec3A,
    /// Whether the cores overlap (|v| below the tolerance).
    pub overlap: bool,
}

/// Runs GJK on `pair`, starting from direction `start` (any non-zero vector; the centre
/// offset is a good guess). `overlap_tolerance` is the distance under which the cores
/// count as overlapping.
pub(crate) fn gjk(pair: &Pair, start: Vec3A, overlap_tolerance: f32) -> GjkResult {
    let scale = pair.scale();
    let dir = if start.length_squared() > 1e-20 {
        start
    } else {
        Vec3A::X
    };
    let mut simplex = Simplex::default();
    simplex.verts.push(pair.support(-dir));
    let mut v = simplex.solve();
    let tol2 = overlap_tolerance * overlap_tolerance;
    for _ in 0..MAX_ITERATIONS {
        let vv = v.length_squared();
        if vv <= tol2 {
            return GjkResult {
                simplex,
                v,
                overlap: true,
            };
        }
        let w = pair.support(-v);
        // Upper bound |v| minus lower bound v·w/|v|, times |v|.
        let gap = vv - v.dot(w.w);
        if gap <= 1e-5 * vv + 1e-10 * scale * scale {
            break;
        }
        if simplex
            .verts
            .iter()
            .any(|s| (s.w - w.w).length_squared() <= 1e-12 * scale * scale)
        {
            break;
        }
        let saved = simplex.clone();
        simplex.verts.push(w);
        let nv = simplex.solve();
        let nvv = nv.length_squared();
        if nvv >= vv {
            // No progress: numerical noise. Keep the previous, consistent simplex.
            simplex = saved;
            break;
        }
        v = nv;
        if simplex.verts.len() == 4 {
            // The origin is inside the tetrahedron.
            return GjkResult {
                simplex,
                v: Vec3A::ZERO,
                overlap: true,
            };
        }
    }
    let overlap = v.length_squared() <= tol2;
    GjkResult {
        simplex,
        v,
        overlap,
    }
}

/// Distance and closest points between two convex shapes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoints {
    /// Signed distance between the full shapes (cores plus convex radii): positive when
    /// apart, negative when they overlap (then the penetration depth, by EPA).
    pub separation: f32,
    /// World-space unit normal from A towards B (the direction in which moving B by
    /// `-separation` makes the shapes just touch).
    pub normal: Vec3A,
    /// The point of A's surface furthest along the normal towards B (world).
    pub point_a: Vec3A,
    /// The point of B's surface (world); `point_b - point_a = separation * normal`.
    pub point_b: Vec3A,
}

/// Distance between the cores under which they count as overlapping (then EPA runs).
pub(crate) fn overlap_tolerance(scale: f32) -> f32 {
    1e-5 * scale
}

/// GJK on the cores, then the radii; EPA (see `epa.rs`) when the cores overlap.
/// Results in A's frame: (separation, normal, point on A, point on B).
pub(crate) fn closest_in_a(pair: &Pair) -> (f32, Vec3A, Vec3A, Vec3A) {
    let (ra, rb) = (pair.a.convex_radius(), pair.b.convex_radius());
    let scale = pair.scale();
    let start = -pair.b_in_a.translation;
    let res = gjk(pair, start, overlap_tolerance(scale));
    if !res.overlap {
        let (pa, pb) = res.simplex.points();
        let dist = res.v.length();
        let n = -res.v / dist;
        let sep = dist - ra - rb;
        return (sep, n, pa + n * ra, pb - n * rb);
    }
    let (depth, n, pa, pb) = super::epa::penetration(pair);
    (-depth - ra - rb, n, pa + n * ra, pb - n * rb)
}

/// Signed distance, normal and closest points of two convex shapes under two poses:
/// GJK on the cores with the convex radii added after, EPA when the cores overlap.
/// Never NaN: coincident shapes get some unit normal and their overlap along it.
#[must_use]
pub fn closest_points(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
) -> ClosestPoints {
    let pair = Pair {
        a,
        b,
        b_in_a: iso_a.inverse().mul_isometry(iso_b),
        inflate_a: 0.0,
    };
    let (separation, n, pa, pb) = closest_in_a(&pair);
    ClosestPoints {
        separation,
        normal: iso_a.transform_vector(n),
        point_a: iso_a.transform_point(pa),
        point_b: iso_a.transform_point(pb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_and_tetrahedron_closest_points() {
        // Triangle in the plane z = 1 around the z axis: closest point (0, 0, 1).
        let (idx, w) = closest_on_triangle([
            Vec3A::new(-1.0, -1.0, 1.0),
            Vec3A::new(1.0, -1.0, 1.0),
            Vec3A::new(0.0, 1.0, 1.0),
        ]);
        assert_eq!(idx.len(), 3);
        let q = Vec3A::new(-1.0, -1.0, 1.0) * w[0]
            + Vec3A::new(1.0, -1.0, 1.0) * w[1]
            + Vec3A::new(0.0, 1.0, 1.0) * w[2];
        assert!((q - Vec3A::Z).length() < 1e-6, "{q}");
        // Collinear "triangle": falls back to an edge, no NaN.
        let (_, w) = closest_on_triangle([
            Vec3A::new(1.0, 1.0, 0.0),
            Vec3A::new(2.0, 1.0, 0.0),
            Vec3A::new(3.0, 1.0, 0.0),
        ]);
        assert!(w.iter().all(|x| x.is_finite()));
        // A flat tetrahedron (all in z = 1) never claims to contain the origin.
        let mut s = Simplex::default();
        for p in [
            Vec3A::new(-1.0, -1.0, 1.0),
            Vec3A::new(1.0, -1.0, 1.0),
            Vec3A::new(0.0, 1.0, 1.0),
            Vec3A::new(0.0, 0.0, 1.0),
        ] {
            s.verts.push(Vertex {
                w: p,
                a: p,
                b: Vec3A::ZERO,
            });
        }
        let v = s.solve();
        assert!((v - Vec3A::Z).length() < 1e-6, "{v}");
        assert!(s.verts.len() < 4);
    }
}
