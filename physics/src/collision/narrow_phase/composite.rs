//! Composite shapes in the narrow phase: compounds, triangle meshes and heightfields.
//!
//! A composite never collides as a whole. The routine finds its parts near the other
//! shape (compound children through the compound's tree, triangles through the mesh's
//! tree or the heightfield's grid, each queried with the other shape's box in the
//! composite's frame, grown by the margin), collides each part with the other shape
//! through [`collide`] (so a compound child meets a mesh through the same path), and
//! merges the parts' manifolds into one manifold per body pair:
//!
//! - the normal is the normal of the deepest part point (the one the solver must resolve
//!   first); part points whose normal is within 60° of it are kept, their separations
//!   measured along it (`sep · cos`, which only ever makes a speculative point look
//!   closer, never farther), others are dropped for this step;
//! - the usual reduction keeps four of them (deepest first, then area);
//! - feature ids are mixed with the part index, so a point keeps its id (and its warm
//!   start) while the same part touches, and ids stay unique in the manifold.
//!
//! One manifold per pair is what the contact and solver code take today. Its cost is in
//! sharp concave corners (a box wedged in a V): one side's points are dropped until that
//! side becomes the deepest. Level geometry is mostly gentle, where all parts share the
//! normal to within a few degrees.
//!
//! Before a triangle reaches GJK, two exact culls drop the ones A cannot touch: A's own
//! local box grown by the margin against the triangle's vertices (`BoxCull`), then A's
//! support point against the triangle's plane (`facing`). Both only skip triangles GJK
//! would find farther than the margin, so the results are those of GJK on every triangle.
//! A heightfield triangle's active edges are computed only for a contact on an edge.
//!
//! Triangles (`collide_triangle`) add internal-edge handling: GJK/EPA may answer with an
//! edge or vertex normal where two coplanar triangles meet (a "ghost" edge), which would
//! make a sliding box bump or catch. When the closest feature of the triangle is an
//! inactive edge or a vertex with only inactive edges (see `shape::TriangleMesh`), or the
//! triangle's interior, the manifold is rebuilt along the face normal instead (Jolt's
//! active edges).
//!
//! Not supported (no manifold, documented in `pair_routine`): mesh or heightfield against
//! a mesh, heightfield or half-space. They are static level geometry; kinematic ones do
//! not push each other.

use arrayvec::ArrayVec;

use crate::geometry::support::{ConvexSupport, SupportFace};
use crate::math::{Isometry, Mat3A, Vec3A};
use crate::shape::{Shape, Triangle, fill_active_edges, for_each_triangle_lazy};

use super::clip::{ClipFace, MAX_CLIPPED, clip_faces};
use super::collide;
use super::convex::{self, world_face};
use super::manifold::{ContactManifold, WorldPoint, feature};

/// Part points kept before the final reduction.
const MAX_GATHERED: usize = 32;

/// Part normals farther than this from the chosen normal (cos 60°) are dropped.
const MIN_PART_COS: f32 = 0.5;

/// Part points closer than this (m) on A are one point.
const SAME_POINT: f32 = 1e-3;

/// Barycentric coordinate below which a point counts as on an edge.
const EDGE_EPS: f32 = 1e-3;

/// The world points of every part manifold, with their normals and their parts'
/// material ids (A's, B's).
struct Gather {
    points: ArrayVec<(WorldPoint, Vec3A, [Option<u32>; 2]), MAX_GATHERED>,
}

/// A part's material id as the manifold reports it: 0 means "the body's own material".
fn part_material(id: u32) -> Option<u32> {
    (id != 0).then_some(id)
}

impl Gather {
    fn new() -> Self {
        Gather {
            points: ArrayVec::new(),
        }
    }

    /// Adds part manifold `m` (local points in `ia`'s and `ib`'s frames) tagged `part`,
    /// whose sides have the material ids `materials`.
    fn add(
        &mut self,
        m: &ContactManifold,
        ia: &Isometry,
        ib: &Isometry,
        part: u32,
        materials: [Option<u32>; 2],
    ) {
        for p in &m.points {
            let w = WorldPoint {
                on_a: ia.transform_point(p.local_a),
                on_b: ib.transform_point(p.local_b),
                separation: p.separation,
                feature: p.feature ^ part.wrapping_add(1).wrapping_mul(0x9e37_79b9),
            };
            if self.points.try_push((w, m.normal, materials)).is_err() {
                // Full: replace the shallowest point if this one is deeper.
                let (k, worst) =
                    self.points
                        .iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |best, (k, q)| {
                            if q.0.separation > best.1 {
                                (k, q.0.separation)
                            } else {
                                best
                            }
                        });
                if w.separation < worst {
                    self.points[k] = (w, m.normal, materials);
                }
            }
        }
    }

    /// Merges into `out` (see the module docs). Returns whether any point was kept.
    fn finish(self, ia: &Isometry, ib: &Isometry, out: &mut ContactManifold) -> bool {
        out.clear();
        let Some(deepest) = self
            .points
            .iter()
            .min_by(|x, y| x.0.separation.total_cmp(&y.0.separation))
        else {
            return false;
        };
        let (n, materials) = (deepest.1, deepest.2);
        let mut kept = ArrayVec::<WorldPoint, MAX_GATHERED>::new();
        for (p, pn, _) in &self.points {
            let c = pn.dot(n);
            if c < MIN_PART_COS {
                continue;
            }
            let mut p = *p;
            p.separation *= c;
            // Two parts touching at one spot (a point on a shared edge seen by both
            // triangles) give one contact point, not two that split its impulse.
            match kept
                .iter_mut()
                .find(|q| (q.on_a - p.on_a).length_squared() < SAME_POINT * SAME_POINT)
            {
                Some(q) if p.separation < q.separation => *q = p,
                Some(_) => {}
                None => kept.push(p),
            }
        }
        out.set_from_world(n, ia, ib, &kept);
        // Mixed ids may collide in rare cases; keep them unique (deterministically).
        for k in 1..out.points.len() {
            while out.points[..k]
                .iter()
                .any(|q| q.feature == out.points[k].feature)
            {
                out.points[k].feature = out.points[k].feature.wrapping_add(1);
            }
        }
        // The part with the deepest point decides the materials (one friction and
        // restitution per manifold, as the solver has).
        out.materials = materials;
        !out.points.is_empty()
    }
}

/// Manifold of `a` against `b` where at least one is composite; `out` as for
/// [`collide`]. Returns false for the unsupported pairs.
pub(crate) fn collide_composite(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Compound(c), _) => {
            let b_in_a = b
                .world_aabb(&ia.inverse().mul_isometry(ib))
                .expanded(margin);
            let mut gather = Gather::new();
            let mut part = ContactManifold::default();
            c.query(&b_in_a, |k| {
                let child = &c.children()[k as usize];
                let child_iso = ia.mul_isometry(&child.pose);
                if collide(&child.shape, &child_iso, b, ib, margin, &mut part) {
                    let materials = [part_material(child.material), part.materials[1]];
                    gather.add(&part, &child_iso, ib, k, materials);
                }
                true
            });
            gather.finish(ia, ib, out)
        }
        (_, Shape::Compound(_)) | (Shape::TriangleMesh(_) | Shape::HeightField(_), _) => {
            let hit = collide_composite(b, ib, a, ia, margin, out);
            out.flip();
            hit
        }
        (_, Shape::TriangleMesh(_) | Shape::HeightField(_)) => {
            let Some(convex) = a.as_convex() else {
                return false;
            };
            let sphere = match a {
                Shape::Sphere(s) => Some(s.radius),
                _ => None,
            };
            let a_in_b = a
                .world_aabb(&ib.inverse().mul_isometry(ia))
                .expanded(margin);
            let cull = BoxCull::new(a, ia, ib, margin);
            let mut gather = Gather::new();
            let mut part = ContactManifold::default();
            for_each_triangle_lazy(b, &a_in_b, |t, tri| {
                let Some(_v) = cull.inside_box(&tri) else {
                    return true;
                };
                let Some(face_ab) = facing(convex, ia, &tri, ib, margin) else {
                    return true;
                };
                let edges = |tri: &Triangle| active_edges(b, t, tri);
                let hit = match sphere {
                    Some(r) => sphere_triangle_with(r, ia, &tri, ib, margin, &mut part, edges),
                    None => {
                        let faced = Faced { tri: &tri, face_ab };
                        collide_triangle_with(convex, ia, faced, ib, margin, &mut part, edges)
                    }
                };
                if hit {
                    gather.add(&part, ia, ib, t, [None, part_material(tri.material)]);
                }
                true
            });
            gather.finish(ia, ib, out)
        }
        _ => false,
    }
}

/// Extra distance (m) a triangle must lie beyond [`BoxCull`]'s box before it is culled:
/// covers the rounding of the transform into A's frame, so the cull only ever skips
/// triangles that GJK would find farther than the margin (the results stay bit-identical).
const CULL_SLACK: f32 = 1e-3;

/// Cheap separating-axis cull on A's own axes: A's local bounding box (exact along its
/// axes for boxes, capsules, cylinders and hulls) grown by the margin, against the
/// triangle's vertices in A's frame. A triangle wholly beyond one face of that box is
/// farther from A than the margin along that axis, so no contact can come of it. This is
/// what leaves the triangles around a resting box (whose planes it touches, so `facing`
/// keeps them) out of GJK. (The triangle's edge normals as further axes were measured
/// too: the GJK calls they save cost as much as the three support calls they take.)
struct BoxCull {
    /// B's frame to A's: rotation as a matrix (three columns), then translation.
    rot: Mat3A,
    shift: Vec3A,
    lo: Vec3A,
    hi: Vec3A,
}

impl BoxCull {
    fn new(a: &Shape, ia: &Isometry, ib: &Isometry, margin: f32) -> Self {
        let b_in_a = ia.inverse().mul_isometry(ib);
        let local = a.local_aabb();
        let grow = Vec3A::splat(margin + CULL_SLACK);
        BoxCull {
            rot: Mat3A::from_quat(b_in_a.rotation),
            shift: b_in_a.translation,
            lo: local.min - grow,
            hi: local.max + grow,
        }
    }

    /// The triangle's vertices (given in B's frame) in A's frame, or none when the
    /// triangle lies wholly outside the grown box.
    fn inside_box(&self, tri: &Triangle) -> Option<[Vec3A; 3]> {
        let v = tri.vertices.map(|v| self.rot * v + self.shift);
        let lo = v[0].min(v[1]).min(v[2]);
        let hi = v[0].max(v[1]).max(v[2]);
        (!(lo.cmpgt(self.hi).any() || hi.cmplt(self.lo).any())).then_some(v)
    }
}

/// Triangle `t` of `shape`'s active edges (a heightfield's come from its neighbours,
/// computed only when the internal-edge rule asks for them; a mesh's were stored at build).
fn active_edges(shape: &Shape, t: u32, tri: &Triangle) -> u8 {
    let mut tri = *tri;
    fill_active_edges(shape, t, &mut tri);
    tri.active
}

/// A convex shape against one triangle (in B's frame), with internal-edge handling; the
/// triangle's `active` edges are used.
#[cfg(test)]
fn collide_triangle(
    a: &dyn ConvexSupport,
    ia: &Isometry,
    tri: &Triangle,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let face_ab = face_normal_towards_b(ia, tri, ib);
    collide_triangle_with(a, ia, Faced { tri, face_ab }, ib, margin, out, |t| t.active)
}

/// A triangle (in B's frame) and its face normal from `face_normal_towards_b`, computed
/// once for the cull and the contact.
#[derive(Clone, Copy)]
struct Faced<'t> {
    tri: &'t Triangle,
    face_ab: Vec3A,
}

/// `collide_triangle` with the triangle's active edges from `edges`, called only when
/// the contact lies on an edge or vertex (most contacts of a body resting on a surface
/// take the face normal and never need them).
fn collide_triangle_with(
    a: &dyn ConvexSupport,
    ia: &Isometry,
    faced: Faced<'_>,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
    edges: impl FnOnce(&Triangle) -> u8,
) -> bool {
    let Faced { tri, face_ab } = faced;
    if !convex::collide_convex(a, ia, tri, ib, margin, out) || out.points.is_empty() {
        return false;
    }
    if out.normal.dot(face_ab) > 0.9999 {
        return true;
    }
    let deepest = out
        .points
        .iter()
        .min_by(|x, y| x.separation.total_cmp(&y.separation))
        .expect("at least one point");
    let bary = tri.barycentric(deepest.local_b);
    if on_active_edge(bary, || edges(tri)) {
        return true;
    }
    along_face(a, ia, tri, ib, face_ab, margin, out)
}

/// Cheap cull: A wholly on its side of the triangle's plane, farther than the margin,
/// cannot touch the triangle (most triangles under a body resting on terrain). Returns
/// the triangle's face normal towards B (`face_normal_towards_b`) when A may touch it,
/// none when it cannot.
fn facing(
    a: &dyn ConvexSupport,
    ia: &Isometry,
    tri: &Triangle,
    ib: &Isometry,
    margin: f32,
) -> Option<Vec3A> {
    let face_ab = face_normal_towards_b(ia, tri, ib);
    let local_n = ia.inverse_transform_vector(face_ab);
    let plane = ib.transform_point(tri.vertices[0]);
    ((plane - ia.transform_point(a.support(local_n))).dot(face_ab) <= margin).then_some(face_ab)
}

/// Whether a point with barycentric coordinates `bary` lies on an edge (edge k runs from
/// vertex k to k + 1: the coordinate of vertex k + 2 vanishes on it) that `edges()` marks
/// active; `edges` is called only for a point on an edge. Second: whether it is on an edge.
fn on_active_edge(bary: [f32; 3], edges: impl FnOnce() -> u8) -> bool {
    on_edge_and_active(bary, edges).1
}

/// (on an edge, on an active edge) for [`on_active_edge`].
fn on_edge_and_active(bary: [f32; 3], edges: impl FnOnce() -> u8) -> (bool, bool) {
    let mut edge_bits = 0u8;
    for k in 0..3 {
        if bary[(k + 2) % 3] < EDGE_EPS {
            edge_bits |= 1 << k;
        }
    }
    if edge_bits == 0 {
        return (false, false);
    }
    (true, edges() & edge_bits != 0)
}

/// A sphere of radius `r` (A) against one triangle: the closest point on the triangle
/// in closed form (Ericson, Real-Time Collision Detection §5.1.5) instead of GJK, the
/// same internal-edge rule as [`collide_triangle`]; the triangle's `active` edges are used.
#[cfg(test)]
fn sphere_triangle(
    r: f32,
    ia: &Isometry,
    tri: &Triangle,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    sphere_triangle_with(r, ia, tri, ib, margin, out, |t| t.active)
}

/// `sphere_triangle` with the active edges from `edges`, called only for a closest
/// point on an edge.
fn sphere_triangle_with(
    r: f32,
    ia: &Isometry,
    tri: &Triangle,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
    edges: impl FnOnce(&Triangle) -> u8,
) -> bool {
    out.clear();
    let c = ib.inverse_transform_point(ia.translation);
    let mut n = tri.normal();
    let mut dist = n.dot(c - tri.vertices[0]);
    if dist < 0.0 {
        n = -n;
        dist = -dist;
    }
    if dist - r > margin {
        return false;
    }
    let (q, bary) = closest_on_triangle(c, tri);
    let d = c - q;
    let len = d.length();
    if len - r > margin {
        return false;
    }
    let (on_edge, active) = on_edge_and_active(bary, || edges(tri));
    let (out_n, q, sep) = if on_edge && active && len > 1e-6 {
        (d / len, q, len - r)
    } else {
        // The face normal. A closest point on an inactive edge or vertex means the centre
        // is over a neighbour, which carries the contact (or over nothing: none).
        let p = c - n * dist;
        if on_edge && tri.barycentric(p).iter().any(|&b| b < -EDGE_EPS) {
            return false;
        }
        (n, p, dist - r)
    };
    let normal = -ib.transform_vector(out_n);
    let on_b = ib.transform_point(q);
    out.set_single(
        normal,
        ia,
        ib,
        WorldPoint {
            on_a: ia.translation + normal * r,
            on_b,
            separation: sep,
            feature: feature::simple(feature::TRIANGLE, 0),
        },
    );
    true
}

/// The point of `tri` closest to `p`, with its barycentric coordinates.
fn closest_on_triangle(p: Vec3A, tri: &Triangle) -> (Vec3A, [f32; 3]) {
    let [a, b, c] = tri.vertices;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, [0.0, 1.0 - w, w]);
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + ab * v + ac * w, [1.0 - v - w, v, w])
}

/// The triangle's face normal in world space, pointing from A into the triangle (from the
/// side A's origin is on, so triangles are two-sided).
fn face_normal_towards_b(ia: &Isometry, tri: &Triangle, ib: &Isometry) -> Vec3A {
    let n = tri.normal();
    let a_local = ib.inverse_transform_point(ia.translation);
    let towards_a = if n.dot(a_local - tri.vertices[0]) >= 0.0 {
        n
    } else {
        -n
    };
    -ib.transform_vector(towards_a)
}

/// The manifold of `a` against the triangle's plane along world normal `n` (A to B):
/// A's support face clipped to the triangle; none when nothing of it lies over the
/// triangle.
fn along_face(
    a: &dyn ConvexSupport,
    ia: &Isometry,
    tri: &Triangle,
    ib: &Isometry,
    n: Vec3A,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let mut face_a = SupportFace::new();
    let id_a = world_face(a, ia, n, &mut face_a);
    let mut face_b = SupportFace::new();
    face_b.extend(tri.vertices.map(|v| ib.transform_point(v)));
    let mut pts = ArrayVec::<WorldPoint, MAX_CLIPPED>::new();
    clip_faces(
        n,
        ClipFace {
            points: &face_b,
            id: 0,
        },
        true,
        ClipFace {
            points: &face_a,
            id: id_a,
        },
        feature::TRIANGLE,
        margin,
        &mut pts,
    );
    // Nothing of A's face lies over this triangle: the neighbour across the inactive
    // edge (which exists, or the edge would be active) carries the contact.
    if pts.is_empty() {
        return false;
    }
    out.set_from_world(n, ia, ib, &pts);
    true
}

/// Like [`collide_composite`] without the merge: calls `f(part, manifold)` for each part
/// of `b` (a compound's child, a mesh's or heightfield's triangle; 0 for any other
/// shape) that `a` touches or comes within `margin` of, each with its own normal (from A
/// to B), in the order the tree or grid visits them. `a` must be convex (other query
/// shapes report nothing). Triangles get the same internal-edge handling as in a step.
pub(crate) fn collide_each_part(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    margin: f32,
    part: &mut ContactManifold,
    f: &mut dyn FnMut(u32, &ContactManifold),
) {
    let Some(convex) = a.as_convex() else {
        return;
    };
    match b {
        Shape::Compound(c) => {
            let a_in_b = a
                .world_aabb(&ib.inverse().mul_isometry(ia))
                .expanded(margin);
            c.query(&a_in_b, |k| {
                let child = &c.children()[k as usize];
                let child_iso = ib.mul_isometry(&child.pose);
                if collide(a, ia, &child.shape, &child_iso, margin, part) {
                    f(k, part);
                }
                true
            });
        }
        Shape::TriangleMesh(_) | Shape::HeightField(_) => {
            let sphere = match a {
                Shape::Sphere(s) => Some(s.radius),
                _ => None,
            };
            let a_in_b = a
                .world_aabb(&ib.inverse().mul_isometry(ia))
                .expanded(margin);
            for_each_triangle_lazy(b, &a_in_b, |t, tri| {
                let Some(face_ab) = facing(convex, ia, &tri, ib, margin) else {
                    return true;
                };
                part.clear();
                let edges = |tri: &Triangle| active_edges(b, t, tri);
                let hit = match sphere {
                    Some(r) => sphere_triangle_with(r, ia, &tri, ib, margin, part, edges),
                    None => {
                        let faced = Faced { tri: &tri, face_ab };
                        collide_triangle_with(convex, ia, faced, ib, margin, part, edges)
                    }
                };
                if hit && !part.points.is_empty() {
                    f(t, part);
                }
                true
            });
        }
        _ => {
            if collide(a, ia, b, ib, margin, part) {
                f(0, part);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The internal-edge rule on one triangle. On a whole flat mesh the merge above
    //! already hides ghost normals (the deepest part's face normal wins and part normals
    //! more than 60° off it are dropped), which is why `tests/behaviour/ghost_collisions.rs` passes
    //! with this rule switched off; these tests check the rule itself, for the cases the
    //! merge does not cover (a body whose only nearby part is the triangle beyond a seam,
    //! part normals within 60° of the deepest one).

    use super::*;
    use crate::math::{Quat, Vec3};
    use crate::shape::ALL_EDGES_ACTIVE;

    /// The triangle (0,0,0), (0,0,1), (1,0,0), facing +y; edge 0 lies on x = 0.
    fn triangle(active: u8) -> Triangle {
        Triangle {
            vertices: [
                Vec3A::ZERO,
                Vec3A::new(0.0, 0.0, 1.0),
                Vec3A::new(1.0, 0.0, 0.0),
            ],
            active,
            material: 0,
        }
    }

    const EDGE0_INACTIVE: u8 = ALL_EDGES_ACTIVE & !1;

    #[test]
    fn a_sphere_beside_an_inactive_edge_gets_no_edge_normal() {
        // Centre 5 cm beyond edge 0, 10 cm up, radius 15 cm: it touches the edge itself.
        let ia = Isometry::new(Vec3A::new(-0.05, 0.1, 0.5), Quat::IDENTITY);
        let mut out = ContactManifold::default();
        // Active (a real border of the mesh): the edge's own normal, tilted 26.6° from
        // the face's (atan(0.05 / 0.1)).
        assert!(sphere_triangle(
            0.15,
            &ia,
            &triangle(ALL_EDGES_ACTIVE),
            &Isometry::IDENTITY,
            0.02,
            &mut out
        ));
        let tilt = out.normal.dot(-Vec3A::Y).acos().to_degrees();
        assert!((tilt - 26.57).abs() < 0.1, "edge normal tilted {tilt}°");
        // Inactive (a seam with a coplanar neighbour): no contact from this triangle,
        // the neighbour under the centre carries it with the face normal.
        assert!(!sphere_triangle(
            0.15,
            &ia,
            &triangle(EDGE0_INACTIVE),
            &Isometry::IDENTITY,
            0.02,
            &mut out
        ));
    }

    #[test]
    fn a_box_edge_beyond_an_inactive_edge_gets_the_face_normal() {
        // A 0.4 m cube turned 30° about z, its lowest edge (along z) 10 cm beyond edge 0
        // and 5 cm below the plane (over the neighbour), its bottom face rising across
        // edge 0 to 7.7 mm above it. Convex-vs-triangle alone finds the cube's tilted
        // face against the edge, 6.7 mm apart: a ghost normal 30° off the floor's. With
        // edge 0 inactive the triangle reports the face normal, as a flat floor would.
        let cube = Shape::cuboid(Vec3::splat(0.2)).unwrap();
        let convex = cube.as_convex().unwrap();
        let rot = Quat::from_rotation_z(30f32.to_radians());
        // The cube's lowest edge, relative to its centre: the lower of the two bottom
        // corners in the x-y plane.
        let corners = [Vec3A::new(0.2, -0.2, 0.0), Vec3A::new(-0.2, -0.2, 0.0)].map(|c| rot * c);
        let low = if corners[0].y < corners[1].y {
            corners[0]
        } else {
            corners[1]
        };
        let centre = Vec3A::new(-0.1, -0.05, 0.5) - Vec3A::new(low.x, low.y, 0.0);
        let ia = Isometry::new(centre, rot);
        let mut raw = ContactManifold::default();
        assert!(convex::collide_convex(
            convex,
            &ia,
            &triangle(ALL_EDGES_ACTIVE),
            &Isometry::IDENTITY,
            0.02,
            &mut raw
        ));
        let raw_tilt = raw.normal.dot(-Vec3A::Y).acos().to_degrees();
        assert!(
            (raw_tilt - 30.0).abs() < 1.0,
            "the ghost normal is the cube's face: {raw_tilt}°"
        );
        let mut out = ContactManifold::default();
        assert!(collide_triangle(
            convex,
            &ia,
            &triangle(ALL_EDGES_ACTIVE),
            &Isometry::IDENTITY,
            0.02,
            &mut out
        ));
        assert!(
            out.normal.dot(-Vec3A::Y) < 0.99,
            "an active edge keeps the edge contact"
        );
        assert!(collide_triangle(
            convex,
            &ia,
            &triangle(EDGE0_INACTIVE),
            &Isometry::IDENTITY,
            0.02,
            &mut out
        ));
        assert!(
            out.normal.dot(-Vec3A::Y) > 0.9999,
            "face normal with the edge inactive: {}",
            out.normal
        );
        // Its points are where the cube's face lies over the triangle, above the plane.
        assert!(
            out.points
                .iter()
                .all(|p| p.separation > 0.0 && p.separation < 0.02)
        );
    }
}
