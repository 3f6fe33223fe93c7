//! GJK (Gilbert, Johnson, Keerthi 1988) distance between two convex cores, and EPA
//! (van den Bergen 2001) penetration depth when the cores overlap.
//!
//! Shapes are handled as "core + convex radius" (Jolt, seed 004): GJK runs on the cores
//! and the radii are added afterwards, so rounded shapes (spheres, capsules) keep exact
//! distances and EPA is only needed when cores truly overlap. Everything works in world
//! space on the Minkowski difference `A - B`, with barycentric weights kept per simplex
//! vertex so the closest points on each shape can be recovered.

use arrayvec::ArrayVec;

use crate::math::{Isometry, Vec3A};
use crate::support::ConvexSupport;

/// A convex shape placed in the world.
#[derive(Clone, Copy)]
pub(crate) struct Placed<'a> {
    pub shape: &'a dyn ConvexSupport,
    pub iso: &'a Isometry,
}

impl Placed<'_> {
    #[inline]
    pub fn support_core(&self, dir: Vec3A) -> Vec3A {
        let local = self
            .shape
            .support_core(self.iso.inverse_transform_vector(dir));
        self.iso.transform_point(local)
    }
}

#[derive(Clone, Copy, Debug)]
struct Vertex {
    /// Point of the Minkowski difference `a - b`.
    w: Vec3A,
    a: Vec3A,
    b: Vec3A,
}

fn support(a: &Placed, b: &Placed, d: Vec3A) -> Vertex {
    let pa = a.support_core(d);
    let pb = b.support_core(-d);
    Vertex {
        w: pa - pb,
        a: pa,
        b: pb,
    }
}

/// GJK's answer.
#[derive(Clone, Debug)]
pub(crate) struct Distance {
    /// Distance between the cores (0 when they overlap).
    pub distance: f32,
    /// Closest point on A's core.
    pub point_a: Vec3A,
    /// Closest point on B's core.
    pub point_b: Vec3A,
    /// Whether the cores overlap.
    pub overlap: bool,
}

/// Closest point to the origin on the simplex; reduces the simplex to the supporting
/// sub-simplex and returns the barycentric weights of the kept vertices.
fn closest(simplex: &mut ArrayVec<Vertex, 4>) -> (Vec3A, ArrayVec<f32, 4>) {
    let mut weights = ArrayVec::new();
    match simplex.len() {
        1 => {
            weights.push(1.0);
            (simplex[0].w, weights)
        }
        2 => {
            let (a, b) = (simplex[0].w, simplex[1].w);
            let ab = b - a;
            let denom = ab.length_squared();
            let t = if denom > 0.0 {
                (-a.dot(ab) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            if t <= 0.0 {
                simplex.truncate(1);
                weights.push(1.0);
                (a, weights)
            } else if t >= 1.0 {
                simplex.remove(0);
                weights.push(1.0);
                (b, weights)
            } else {
                weights.push(1.0 - t);
                weights.push(t);
                (a + ab * t, weights)
            }
        }
        3 => closest_triangle(simplex),
        _ => closest_tetrahedron(simplex),
    }
}

/// Ericson, "Real-Time Collision Detection", 5.1.5, with the origin as the query point.
fn closest_triangle(s: &mut ArrayVec<Vertex, 4>) -> (Vec3A, ArrayVec<f32, 4>) {
    let (a, b, c) = (s[0].w, s[1].w, s[2].w);
    let (ab, ac, ap) = (b - a, c - a, -a);
    let mut w = ArrayVec::new();
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        *s = [s[0]].into_iter().collect();
        w.push(1.0);
        return (a, w);
    }
    let bp = -b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        *s = [s[1]].into_iter().collect();
        w.push(1.0);
        return (b, w);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        *s = [s[0], s[1]].into_iter().collect();
        w.push(1.0 - v);
        w.push(v);
        return (a + ab * v, w);
    }
    let cp = -c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        *s = [s[2]].into_iter().collect();
        w.push(1.0);
        return (c, w);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let v = d2 / (d2 - d6);
        *s = [s[0], s[2]].into_iter().collect();
        w.push(1.0 - v);
        w.push(v);
        return (a + ac * v, w);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let v = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        *s = [s[1], s[2]].into_iter().collect();
        w.push(1.0 - v);
        w.push(v);
        return (b + (c - b) * v, w);
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let ww = vc * denom;
    w.push(1.0 - v - ww);
    w.push(v);
    w.push(ww);
    (a + ab * v + ac * ww, w)
}

fn closest_tetrahedron(s: &mut ArrayVec<Vertex, 4>) -> (Vec3A, ArrayVec<f32, 4>) {
    let pts = [s[0], s[1], s[2], s[3]];
    let faces = [[0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2], [1, 3, 2, 0]];
    let mut best: Option<(f32, ArrayVec<Vertex, 4>, Vec3A, ArrayVec<f32, 4>)> = None;
    let mut inside = true;
    for f in faces {
        let (a, b, c, d) = (pts[f[0]].w, pts[f[1]].w, pts[f[2]].w, pts[f[3]].w);
        let n = (b - a).cross(c - a);
        // Origin and the opposite vertex on different sides: the origin is outside here.
        let so = (-a).dot(n);
        let sd = (d - a).dot(n);
        if so * sd < 0.0 {
            inside = false;
            let mut tri: ArrayVec<Vertex, 4> =
                [pts[f[0]], pts[f[1]], pts[f[2]]].into_iter().collect();
            let (p, w) = closest_triangle(&mut tri);
            let d2 = p.length_squared();
            if best.as_ref().is_none_or(|b| d2 < b.0) {
                best = Some((d2, tri, p, w));
            }
        }
    }
    if inside {
        let mut w = ArrayVec::new();
        w.extend([0.25; 4]);
        return (Vec3A::ZERO, w);
    }
    let (_, tri, p, w) = best.expect("origin outside some face");
    *s = tri;
    (p, w)
}

/// GJK distance between the cores of `a` and `b`.
pub(crate) fn distance(a: &Placed, b: &Placed) -> (Distance, ArrayVec<[Vec3A; 3], 4>) {
    let mut dir = a.iso.translation - b.iso.translation;
    if dir.length_squared() < 1e-12 {
        dir = Vec3A::X;
    }
    let mut simplex: ArrayVec<Vertex, 4> = ArrayVec::new();
    simplex.push(support(a, b, -dir));
    let (mut v, mut weights) = closest(&mut simplex);
    let scale = 1.0 + dir.length();
    let rel_eps = 1e-6;
    for _ in 0..64 {
        let vv = v.length_squared();
        if vv <= 1e-12 * scale * scale {
            break;
        }
        let w = support(a, b, -v);
        // No progress towards the origin: v is (within tolerance) the closest point.
        if vv - v.dot(w.w) <= rel_eps * vv.max(1e-12) {
            break;
        }
        if simplex
            .iter()
            .any(|s| (s.w - w.w).length_squared() < 1e-14 * scale * scale)
        {
            break;
        }
        simplex.push(w);
        let (nv, nw) = closest(&mut simplex);
        if simplex.len() == 4 && nv == Vec3A::ZERO {
            v = nv;
            weights = nw;
            break;
        }
        // Monotone: the new closest point must be closer; if not, numerical noise.
        if nv.length_squared() >= vv {
            break;
        }
        v = nv;
        weights = nw;
    }
    let mut pa = Vec3A::ZERO;
    let mut pb = Vec3A::ZERO;
    for (s, w) in simplex.iter().zip(&weights) {
        pa += s.a * *w;
        pb += s.b * *w;
    }
    let dist = v.length();
    let overlap = dist <= 1e-6 * scale;
    let raw = simplex.iter().map(|s| [s.w, s.a, s.b]).collect();
    (
        Distance {
            distance: if overlap { 0.0 } else { dist },
            point_a: pa,
            point_b: pb,
            overlap,
        },
        raw,
    )
}

/// EPA's answer: the penetration normal (from A to B) and depth of the cores, with the
/// deepest points on each core.
#[derive(Clone, Debug)]
pub(crate) struct Penetration {
    pub normal: Vec3A,
    pub depth: f32,
    pub point_a: Vec3A,
    pub point_b: Vec3A,
}

#[derive(Clone, Copy)]
struct EpaFace {
    v: [usize; 3],
    n: Vec3A,
    d: f32,
}

/// Expanding polytope: penetration of overlapping cores, starting from GJK's simplex.
pub(crate) fn penetration(a: &Placed, b: &Placed, start: &[[Vec3A; 3]]) -> Option<Penetration> {
    let mut verts: Vec<Vertex> = start.iter().map(|&[w, a, b]| Vertex { w, a, b }).collect();
    // Grow the start to a tetrahedron that contains the origin.
    let dirs = [
        Vec3A::X,
        Vec3A::Y,
        Vec3A::Z,
        -Vec3A::X,
        -Vec3A::Y,
        -Vec3A::Z,
    ];
    let mut k = 0;
    while verts.len() < 4 && k < dirs.len() {
        let v = support(a, b, dirs[k]);
        if verts.iter().all(|u| (u.w - v.w).length_squared() > 1e-12) {
            let ok = match verts.len() {
                1 => true,
                2 => {
                    (v.w - verts[0].w)
                        .cross(verts[1].w - verts[0].w)
                        .length_squared()
                        > 1e-12
                }
                _ => {
                    let n = (verts[1].w - verts[0].w).cross(verts[2].w - verts[0].w);
                    n.dot(v.w - verts[0].w).abs() > 1e-9
                }
            };
            if ok {
                verts.push(v);
            }
        }
        k += 1;
    }
    if verts.len() < 4 {
        return None;
    }
    let make = |verts: &[Vertex], i: usize, j: usize, k: usize| -> Option<EpaFace> {
        let n = (verts[j].w - verts[i].w).cross(verts[k].w - verts[i].w);
        let len = n.length();
        if len < 1e-12 {
            return None;
        }
        let n = n / len;
        Some(EpaFace {
            v: [i, j, k],
            n,
            d: n.dot(verts[i].w),
        })
    };
    let mut faces: Vec<EpaFace> = Vec::with_capacity(64);
    for f in [[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]] {
        let mut face = make(&verts, f[0], f[1], f[2])?;
        // Orient outward (away from the fourth vertex).
        let other = (0..4).find(|x| !f.contains(x)).expect("tetrahedron");
        if face.n.dot(verts[other].w) - face.d > 0.0 {
            face = make(&verts, f[0], f[2], f[1])?;
        }
        faces.push(face);
    }
    // The origin must be inside the start tetrahedron (cores overlap).
    if faces.iter().any(|f| f.d < -1e-6) {
        return None;
    }
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for _ in 0..64 {
        let f = *faces.iter().min_by(|x, y| x.d.total_cmp(&y.d))?;
        let v = support(a, b, f.n);
        let gain = v.w.dot(f.n) - f.d;
        if gain <= 1e-4 * (1.0 + f.d.abs()) {
            return Some(finish(&verts, &f));
        }
        let vi = verts.len();
        verts.push(v);
        edges.clear();
        let mut i = 0;
        while i < faces.len() {
            let g = faces[i];
            if g.n.dot(v.w) - g.d > 0.0 {
                for e in [(g.v[0], g.v[1]), (g.v[1], g.v[2]), (g.v[2], g.v[0])] {
                    if let Some(pos) = edges.iter().position(|&x| x == (e.1, e.0)) {
                        edges.swap_remove(pos);
                    } else {
                        edges.push(e);
                    }
                }
                faces.swap_remove(i);
            } else {
                i += 1;
            }
        }
        for &(x, y) in &edges {
            if let Some(face) = make(&verts, x, y, vi) {
                faces.push(face);
            }
        }
        if faces.is_empty() {
            return Some(finish(&verts, &f));
        }
    }
    let f = *faces.iter().min_by(|x, y| x.d.total_cmp(&y.d))?;
    Some(finish(&verts, &f))
}

fn finish(verts: &[Vertex], f: &EpaFace) -> Penetration {
    // Barycentric coordinates of the origin's projection on the face.
    let (p0, p1, p2) = (verts[f.v[0]], verts[f.v[1]], verts[f.v[2]]);
    let p = f.n * f.d;
    let (v0, v1, v2) = (p1.w - p0.w, p2.w - p0.w, p - p0.w);
    let (d00, d01, d11) = (v0.dot(v0), v0.dot(v1), v1.dot(v1));
    let (d20, d21) = (v2.dot(v0), v2.dot(v1));
    let denom = d00 * d11 - d01 * d01;
    let (v, w) = if denom.abs() > 1e-20 {
        (
            (d11 * d20 - d01 * d21) / denom,
            (d00 * d21 - d01 * d20) / denom,
        )
    } else {
        (1.0 / 3.0, 1.0 / 3.0)
    };
    let u = 1.0 - v - w;
    // The face normal points out of A - B: translating A by -depth * n separates the
    // shapes, so B lies on A's +n side and the contact normal from A to B is +n.
    Penetration {
        normal: f.n,
        depth: f.d,
        point_a: p0.a * u + p1.a * v + p2.a * w,
        point_b: p0.b * u + p1.b * v + p2.b * w,
    }
}
