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
//! Voronoi regions (Ericson, "Real-Time Collision Detection", 5.1.5-5.1.6); a
//! tetrahedron that does not clearly contain the origin hands over to the best of its
//! four faces (all four: on slivers the signs that pick the visible faces are noise).
//!
//! Termination: the gap between the upper bound |v| and the lower bound v·w/|v| is below
//! a tolerance; or the new support point is already in the simplex; or the closest point
//! stopped getting closer (numerical noise: the previous simplex is restored so the
//! closest points stay consistent); or an iteration cap.

use arrayvec::ArrayVec;

use glam::DVec3;

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
    /// In f64: the sub-simplex solve subtracts nearly equal products of coordinates
    /// about the pair's size to find a point a few millimetres from the origin, which
    /// f32 cannot resolve on slivers (GJK then stops early, its closest points off).
    pub weights: ArrayVec<f64, 4>,
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
            .map(|(v, &t)| f(v).as_dvec3() * t)
            .sum::<DVec3>()
            .as_vec3a()
    }

    fn set(&mut self, verts: &[Vertex], weights: &[f64]) {
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
                let (s, t) = closest_on_segment(v[0].w.as_dvec3(), v[1].w.as_dvec3());
                match s {
                    Region::Vertex(i) => self.set(&[v[i]], &[1.0]),
                    _ => self.set(&v, &[1.0 - t, t]),
                }
            }
            3 => {
                let (idx, w) = closest_on_triangle([0, 1, 2].map(|i| v[i].w.as_dvec3()));
                let sub: ArrayVec<Vertex, 3> = idx.iter().map(|&i| v[i]).collect();
                self.set(&sub, &w);
            }
            _ => self.solve_tetrahedron(),
        }
        self.point()
    }

    fn solve_tetrahedron(&mut self) {
        let v = self.verts.clone();
        let p = [0, 1, 2, 3].map(|i| v[i].w.as_dvec3());
        // Barycentric weights of the origin by Cramer's rule: the signed volume with the
        // origin in place of vertex i, over the whole volume (one shared determinant, so
        // the weights are consistent and sum to 1).
        let vol = |a: DVec3, b: DVec3, c: DVec3, d: DVec3| (b - a).cross(c - a).dot(d - a);
        let total = vol(p[0], p[1], p[2], p[3]);
        let o = DVec3::ZERO;
        let parts = [
            vol(o, p[1], p[2], p[3]),
            vol(p[0], o, p[2], p[3]),
            vol(p[0], p[1], o, p[3]),
            vol(p[0], p[1], p[2], o),
        ];
        let edge = (1..4)
            .map(|i| (p[i] - p[0]).length())
            .chain([
                (p[2] - p[1]).length(),
                (p[3] - p[1]).length(),
                (p[3] - p[2]).length(),
            ])
            .fold(0.0, f64::max);
        // The vertices carry f32 rounding (~1e-7 relative): below 1e-5 L^3 the sign of
        // the volume means nothing.
        let flat = total.abs() <= 1e-5 * edge * edge * edge;
        if !flat && parts.iter().all(|&x| x / total >= 0.0) {
            let w: ArrayVec<f64, 4> = parts.iter().map(|&x| x / total).collect();
            self.set(&v, &w);
            return;
        }
        // Otherwise the closest point is on the boundary: the closest of the four faces'
        // closest points. (Only faces the origin sees can hold it, but on slivers, with
        // one short edge, the signs that say which faces those are are noise; testing
        // all four is always right.)
        let faces = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];
        let mut best: Option<(f64, ArrayVec<usize, 3>, ArrayVec<f64, 3>)> = None;
        for f in faces {
            let (idx, w) = closest_on_triangle([p[f[0]], p[f[1]], p[f[2]]]);
            let q: DVec3 = idx.iter().zip(&w).map(|(&k, &t)| p[f[k]] * t).sum();
            let d = q.length_squared();
            if best.as_ref().is_none_or(|b| d < b.0) {
                let idx = idx.iter().map(|&k| f[k]).collect();
                best = Some((d, idx, w));
            }
        }
        let (_, idx, w) = best.expect("four faces");
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
fn closest_on_segment(a: DVec3, b: DVec3) -> (Region, f64) {
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

/// `n / d` clamped to [0, 1]; 0 when `d` is not positive. The denominators below are
/// squared edge lengths, zero only for coincident vertices.
fn ratio(n: f64, d: f64) -> f64 {
    if d > 0.0 {
        (n / d).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Closest point to the origin on triangle `p`: indices of the supporting vertices and
/// their weights (Ericson 5.1.5). A degenerate triangle falls back to its best edge.
fn closest_on_triangle(p: [DVec3; 3]) -> (ArrayVec<usize, 3>, ArrayVec<f64, 3>) {
    let (a, b, c) = (p[0], p[1], p[2]);
    let (ab, ac) = (b - a, c - a);
    let one = |i: usize| ([i].into_iter().collect(), [1.0].into_iter().collect());
    let two = |i: usize, j: usize, t: f64| {
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
        return two(0, 1, ratio(d1, d1 - d3));
    }
    let d5 = ab.dot(-c);
    let d6 = ac.dot(-c);
    if d6 >= 0.0 && d5 <= d6 {
        return one(2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return two(0, 2, ratio(d2, d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return two(1, 2, ratio(d4 - d3, (d4 - d3) + (d5 - d6)));
    }
    let sum = va + vb + vc;
    if sum <= f64::MIN_POSITIVE || !sum.is_finite() {
        // Collinear vertices: the closest of the three edges.
        let mut best = (f64::MAX, 0, 1, 0.0);
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
        // Upper bound |v| minus lower bound v·w/|v|, times |v|: stop when the bounds are
        // within 1e-5 relative or 1e-6 of the pair's size (f32 rounding of the support
        // points; asking for less makes GJK chase noise into degenerate simplices).
        let gap = vv - v.dot(w.w);
        if gap <= 1e-5 * vv + 1e-6 * scale * vv.sqrt() {
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
        if nvv >= vv || nvv.is_nan() {
            // No progress (or NaN): numerical noise. Keep the previous, consistent
            // simplex.
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

/// Distance between the cores under which GJK's answer is not used and EPA runs
/// instead. GJK stops when its bounds agree within ~1e-6 of the pair's size, which
/// leaves its closest points a lateral error of about sqrt(2 d tolerance) on a curved
/// core (a cylinder's rim), so the direction `-v / |v|` is noise when the distance `d`
/// is tiny even though `|v|` is right. EPA on cores inflated by twice this distance
/// finds the least-overlap direction globally instead.
pub(crate) fn overlap_tolerance(scale: f32) -> f32 {
    1e-3 * scale
}

/// How much EPA inflates A's core: twice the overlap tolerance, so cores that GJK
/// calls overlapping are at least that much inside each other once inflated.
pub(crate) fn epa_inflation(scale: f32) -> f32 {
    2.0 * overlap_tolerance(scale)
}

/// GJK on the cores, then the radii; EPA (see `epa.rs`) when the cores overlap or
/// nearly touch (see [`overlap_tolerance`]).
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
            DVec3::new(-1.0, -1.0, 1.0),
            DVec3::new(1.0, -1.0, 1.0),
            DVec3::new(0.0, 1.0, 1.0),
        ]);
        assert_eq!(idx.len(), 3);
        let q = DVec3::new(-1.0, -1.0, 1.0) * w[0]
            + DVec3::new(1.0, -1.0, 1.0) * w[1]
            + DVec3::new(0.0, 1.0, 1.0) * w[2];
        assert!((q - DVec3::Z).length() < 1e-12, "{q}");
        // Collinear "triangle": falls back to an edge, no NaN.
        let (_, w) = closest_on_triangle([
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::new(3.0, 1.0, 0.0),
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
        // A sliver from a cylinder–hull pair: two vertices 1 cm apart, edges of 1 m, the
        // origin 3 mm from its plane (projecting inside it). The distance must be the
        // plane distance, computed here in f64 directly; the f32 solve was 1e-5 off,
        // which made GJK stop early with its normal 0.1 rad off.
        let tri = [
            Vec3A::new(-0.66626936, 0.07106379, 0.17589426),
            Vec3A::new(0.29676655, -0.028030217, -0.08084741),
            Vec3A::new(0.3080499, -0.028030217, -0.08129603),
        ];
        let mut s = Simplex::default();
        for p in tri {
            s.verts.push(Vertex {
                w: p,
                a: p,
                b: Vec3A::ZERO,
            });
        }
        let got = s.solve().length() as f64;
        let [a, b, c] = tri.map(|p| p.as_dvec3());
        let n = (b - a).cross(c - a).normalize();
        let exact = n.dot(a).abs();
        assert_eq!(s.verts.len(), 3, "the origin projects inside");
        assert!((got - exact).abs() < 1e-8, "{got} vs {exact}");
    }
}
