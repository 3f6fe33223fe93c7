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
//! Voronoi regions (Ericson, "Real-Time Collision Detection", 5.1.5-5.1.6), solved in
//! f64: the closest point of a sliver simplex whose vertices are about the pair's size
//! apart, a few millimetres from the origin, is lost to cancellation in f32 (GJK then
//! stopped early with its normal off by up to 0.1 rad on a cylinder's rim).
//!
//! Termination: the gap between the upper bound |v| and the lower bound v·w/|v| is below
//! a tolerance; or the new support point is already in the simplex; or the closest point
//! stopped getting closer (numerical noise: the previous simplex is restored so the
//! closest points stay consistent); or an iteration cap.

use glam::DVec3;

use crate::geometry::support::ConvexSupport;
use crate::math::{Isometry, Vec3A};

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
    /// The length the tolerances scale with: about the size of the smaller shape
    /// (a box resting on a 30 m ground needs millimetre tolerances, not centimetre).
    pub scale: f32,
}

impl<'a> Pair<'a> {
    /// The pair of `a` and `b` with B at `b_in_a` in A's frame, not inflated.
    pub fn new(a: &'a dyn ConvexSupport, b: &'a dyn ConvexSupport, b_in_a: Isometry) -> Self {
        let extent =
            |s: &dyn ConvexSupport| (s.support_core(Vec3A::X) - s.support_core(-Vec3A::X)).length();
        let size = extent(a).min(extent(b)) + 2.0 * a.convex_radius().min(b.convex_radius());
        Pair {
            a,
            b,
            b_in_a,
            inflate_a: 0.0,
            scale: 0.05 + size,
        }
    }
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
}

/// A vertex of the simplex: a point of `A - B` and the points of A and B it came from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Vertex {
    pub w: Vec3A,
    pub a: Vec3A,
    pub b: Vec3A,
}

/// The vertices (by index) and weights of a closest point on a sub-simplex.
#[derive(Clone, Copy, Debug)]
struct Sub<const N: usize> {
    n: usize,
    idx: [usize; N],
    w: [f64; N],
}

impl<const N: usize> Sub<N> {
    fn one(i: usize) -> Self {
        let mut s = Sub {
            n: 1,
            idx: [0; N],
            w: [0.0; N],
        };
        s.idx[0] = i;
        s.w[0] = 1.0;
        s
    }

    fn two(i: usize, j: usize, t: f64) -> Self {
        let mut s = Sub {
            n: 2,
            idx: [0; N],
            w: [0.0; N],
        };
        s.idx[..2].copy_from_slice(&[i, j]);
        s.w[..2].copy_from_slice(&[1.0 - t, t]);
        s
    }

    fn point(&self, p: &[DVec3]) -> DVec3 {
        (0..self.n).map(|k| p[self.idx[k]] * self.w[k]).sum()
    }
}

/// A simplex of up to four vertices with the barycentric weights of its closest point,
/// in fixed arrays (GJK copies it every iteration).
///
/// The weights and an f64 copy of each `w` serve the sub-simplex solve: it subtracts
/// nearly equal products of coordinates about the pair's size to find a point a few
/// millimetres from the origin, which f32 cannot resolve on slivers (GJK then stopped
/// early with its closest points off).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Simplex {
    verts: [Vertex; 4],
    wd: [DVec3; 4],
    weights: [f64; 4],
    len: usize,
}

impl Simplex {
    /// The vertices.
    pub fn verts(&self) -> &[Vertex] {
        &self.verts[..self.len]
    }

    /// Adds a vertex (weights are set by the next solve).
    pub fn push(&mut self, v: Vertex) {
        self.verts[self.len] = v;
        self.wd[self.len] = v.w.as_dvec3();
        self.len += 1;
    }

    /// The closest point (weighted sum of `w`).
    pub fn point(&self) -> Vec3A {
        (0..self.len)
            .map(|k| self.wd[k] * self.weights[k])
            .sum::<DVec3>()
            .as_vec3a()
    }

    /// The closest points on A and on B.
    pub fn points(&self) -> (Vec3A, Vec3A) {
        let at = |f: fn(&Vertex) -> Vec3A| {
            (0..self.len)
                .map(|k| f(&self.verts[k]).as_dvec3() * self.weights[k])
                .sum::<DVec3>()
                .as_vec3a()
        };
        (at(|v| v.a), at(|v| v.b))
    }

    /// Keeps the vertices of `sub` (in its order) with its weights.
    fn keep<const N: usize>(&mut self, sub: &Sub<N>) {
        let (verts, wd) = (self.verts, self.wd);
        for k in 0..sub.n {
            self.verts[k] = verts[sub.idx[k]];
            self.wd[k] = wd[sub.idx[k]];
            self.weights[k] = sub.w[k];
        }
        self.len = sub.n;
    }

    /// Replaces the simplex by the sub-simplex supporting its closest point to the origin
    /// and sets the weights. Returns the closest point.
    fn solve(&mut self) -> Vec3A {
        match self.len {
            1 => self.weights[0] = 1.0,
            2 => {
                let sub: Sub<2> = closest_on_segment(self.wd[0], self.wd[1]);
                self.keep(&sub);
            }
            3 => {
                let sub = closest_on_triangle([self.wd[0], self.wd[1], self.wd[2]]);
                self.keep(&sub);
            }
            _ => self.solve_tetrahedron(),
        }
        self.point()
    }

    fn solve_tetrahedron(&mut self) {
        let p = self.wd;
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
        let edge2 = [(1, 0), (2, 0), (3, 0), (2, 1), (3, 1), (3, 2)]
            .map(|(i, j)| (p[i] - p[j]).length_squared())
            .into_iter()
            .fold(0.0, f64::max);
        // The vertices carry f32 rounding (~1e-7 relative): below 1e-5 L^3 the sign of
        // the volume means nothing.
        let flat = total.abs() <= 1e-5 * edge2 * edge2.sqrt();
        if !flat && parts.iter().all(|&x| x / total >= 0.0) {
            self.weights = parts.map(|x| x / total);
            return;
        }
        // Otherwise the closest point is on the boundary, on a face the origin sees (the
        // one opposite a negative weight); for a flat tetrahedron, whose signs mean
        // nothing, on any of the four. Take the closest of those faces' closest points.
        let faces = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];
        let mut best: Option<(f64, Sub<3>)> = None;
        for (i, f) in faces.into_iter().enumerate() {
            if !flat && parts[i] / total >= 0.0 {
                continue;
            }
            let mut sub = closest_on_triangle([p[f[0]], p[f[1]], p[f[2]]]);
            for k in 0..sub.n {
                sub.idx[k] = f[sub.idx[k]];
            }
            let d = sub.point(&p).length_squared();
            if best.as_ref().is_none_or(|b| d < b.0) {
                best = Some((d, sub));
            }
        }
        let (_, sub) = best.expect("the origin sees a face of a tetrahedron it is not in");
        self.keep(&sub);
    }
}

/// Closest point to the origin on segment `ab`.
fn closest_on_segment<const N: usize>(a: DVec3, b: DVec3) -> Sub<N> {
    let ab = b - a;
    let denom = ab.length_squared();
    if denom <= 0.0 {
        return Sub::one(0);
    }
    let t = -a.dot(ab) / denom;
    if t <= 0.0 {
        Sub::one(0)
    } else if t >= 1.0 {
        Sub::one(1)
    } else {
        Sub::two(0, 1, t)
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

/// Closest point to the origin on triangle `p` (Ericson 5.1.5). A degenerate triangle
/// falls back to its best edge.
fn closest_on_triangle(p: [DVec3; 3]) -> Sub<3> {
    let (a, b, c) = (p[0], p[1], p[2]);
    let (ab, ac) = (b - a, c - a);
    let d1 = ab.dot(-a);
    let d2 = ac.dot(-a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return Sub::one(0);
    }
    let d3 = ab.dot(-b);
    let d4 = ac.dot(-b);
    if d3 >= 0.0 && d4 <= d3 {
        return Sub::one(1);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return Sub::two(0, 1, ratio(d1, d1 - d3));
    }
    let d5 = ab.dot(-c);
    let d6 = ac.dot(-c);
    if d6 >= 0.0 && d5 <= d6 {
        return Sub::one(2);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return Sub::two(0, 2, ratio(d2, d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return Sub::two(1, 2, ratio(d4 - d3, (d4 - d3) + (d5 - d6)));
    }
    let sum = va + vb + vc;
    if sum <= f64::MIN_POSITIVE || !sum.is_finite() {
        // Collinear vertices: the closest of the three edges.
        let mut best: Option<(f64, Sub<3>)> = None;
        for (i, j) in [(0, 1), (0, 2), (1, 2)] {
            let mut sub: Sub<3> = closest_on_segment(p[i], p[j]);
            for k in 0..sub.n {
                sub.idx[k] = [i, j][sub.idx[k]];
            }
            let d = sub.point(&p).length_squared();
            if best.as_ref().is_none_or(|b| d < b.0) {
                best = Some((d, sub));
            }
        }
        return best.expect("three edges").1;
    }
    let (v, w) = (vb / sum, vc / sum);
    Sub {
        n: 3,
        idx: [0, 1, 2],
        w: [1.0 - v - w, v, w],
    }
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
    let scale = pair.scale;
    let dir = if start.length_squared() > 1e-20 {
        start
    } else {
        Vec3A::X
    };
    let mut simplex = Simplex::default();
    simplex.push(pair.support(-dir));
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
            .verts()
            .iter()
            .any(|s| (s.w - w.w).length_squared() <= 1e-12 * scale * scale)
        {
            break;
        }
        let saved = simplex;
        simplex.push(w);
        let nv = simplex.solve();
        let nvv = nv.length_squared();
        if nvv >= vv || nvv.is_nan() {
            // No progress (or NaN): numerical noise. Keep the previous, consistent
            // simplex.
            simplex = saved;
            break;
        }
        v = nv;
        if simplex.verts().len() == 4 {
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
    let start = -pair.b_in_a.translation;
    let res = gjk(pair, start, overlap_tolerance(pair.scale));
    if !res.overlap {
        let (pa, pb) = res.simplex.points();
        let dist = res.v.length();
        let n = -res.v / dist;
        let sep = dist - ra - rb;
        return (sep, n, pa + n * ra, pb - n * rb);
    }
    let (depth, n, pa, pb) = super::epa::penetration(pair, &res.simplex);
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
    let pair = Pair::new(a, b, iso_a.inverse().mul_isometry(iso_b));
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
        let sub = closest_on_triangle([
            DVec3::new(-1.0, -1.0, 1.0),
            DVec3::new(1.0, -1.0, 1.0),
            DVec3::new(0.0, 1.0, 1.0),
        ]);
        assert_eq!(sub.n, 3);
        let w = sub.w;
        let q = DVec3::new(-1.0, -1.0, 1.0) * w[0]
            + DVec3::new(1.0, -1.0, 1.0) * w[1]
            + DVec3::new(0.0, 1.0, 1.0) * w[2];
        assert!((q - DVec3::Z).length() < 1e-12, "{q}");
        // Collinear "triangle": falls back to an edge, no NaN.
        let sub = closest_on_triangle([
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::new(3.0, 1.0, 0.0),
        ]);
        let q = sub.point(&[
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::new(3.0, 1.0, 0.0),
        ]);
        assert!((q - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-12, "{q}");
        // A flat tetrahedron (all in z = 1) never claims to contain the origin.
        let mut s = Simplex::default();
        for p in [
            Vec3A::new(-1.0, -1.0, 1.0),
            Vec3A::new(1.0, -1.0, 1.0),
            Vec3A::new(0.0, 1.0, 1.0),
            Vec3A::new(0.0, 0.0, 1.0),
        ] {
            s.push(Vertex {
                w: p,
                a: p,
                b: Vec3A::ZERO,
            });
        }
        let v = s.solve();
        assert!((v - Vec3A::Z).length() < 1e-6, "{v}");
        assert!(s.verts().len() < 4);
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
            s.push(Vertex {
                w: p,
                a: p,
                b: Vec3A::ZERO,
            });
        }
        let got = s.solve().length() as f64;
        let [a, b, c] = tri.map(|p| p.as_dvec3());
        let n = (b - a).cross(c - a).normalize();
        let exact = n.dot(a).abs();
        assert_eq!(s.verts().len(), 3, "the origin projects inside");
        assert!((got - exact).abs() < 1e-8, "{got} vs {exact}");
    }
}
