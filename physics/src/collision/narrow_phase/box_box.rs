//! Box–box by the separating axis theorem (Gottschalk's OBB test; the reference/incident
//! face clipping of Box2D's polygon manifolds carried to 3D, as in ODE's `dBoxBox`).
//!
//! All work happens in A's frame. The 15 candidate axes are A's 3 face normals, B's 3
//! face normals and the 9 cross products of their edge directions (parallel pairs are
//! skipped: their face axes cover them). Each axis gives a signed separation of the
//! boxes' projections; any axis beyond the margin means no contact. The axis of largest
//! separation (least penetration) is the contact normal, with two tolerances that keep
//! resting stacks stable:
//!
//! - B's face axis must beat A's by `FACE_ABS + FACE_REL·|s|`, so two faces that tie
//!   (stacked boxes) do not swap roles from step to step (which would change every
//!   feature id and lose the warm start);
//! - an edge axis must beat the best face axis by `EDGE_ABS + EDGE_REL·|s|`: nearly
//!   parallel edges give cross products that are ill-conditioned and would otherwise
//!   replace a 4-point face manifold by a wobbling single point.
//!
//! A face axis is turned into a manifold by clipping the incident face (B's face most
//! anti-parallel to the reference normal) against the reference face: up to 8 points,
//! reduced to 4. An edge axis gives one point between the two supporting edges. Feature
//! ids name the reference face, the incident face and the clipped feature (see
//! `clip.rs`), or the two edges, so a resting box gives the same ids every frame.

use crate::math::cross;
use arrayvec::ArrayVec;

use crate::math::{Isometry, Mat3A, Vec3A};
use crate::shape::Cuboid;

use super::capsule::closest_segments;
use super::clip::{ClipFace, MAX_CLIPPED, clip_faces};
use super::manifold::{ContactManifold, WorldPoint, feature};

const FACE_ABS: f32 = 5e-4;
const FACE_REL: f32 = 0.02;
const EDGE_ABS: f32 = 1e-3;
const EDGE_REL: f32 = 0.05;

/// Face `f` (axis `f / 2`, outward sign `+` for even `f`) of a box with half extents `h`
/// whose axes are `axes` and centre `c`: corners counter-clockwise seen from outside.
fn box_face(c: Vec3A, axes: &[Vec3A; 3], h: Vec3A, f: usize) -> [Vec3A; 4] {
    let k = f / 2;
    let s = if f.is_multiple_of(2) { 1.0 } else { -1.0 };
    let (u, v) = ((k + 1) % 3, (k + 2) % 3);
    let centre = c + axes[k] * (s * h[k]);
    let (eu, ev) = (axes[u] * h[u], axes[v] * h[v]);
    let quad = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    let mut out = [Vec3A::ZERO; 4];
    for (m, o) in out.iter_mut().enumerate() {
        // Reversed on the negative side so the winding stays counter-clockwise.
        let (a, b) = if s > 0.0 { quad[m] } else { quad[3 - m] };
        *o = centre + eu * a + ev * b;
    }
    out
}

/// The face of a box (axes `axes`) whose outward normal is most aligned with `dir`.
fn most_aligned_face(axes: &[Vec3A; 3], dir: Vec3A) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (k, ax) in axes.iter().enumerate() {
        let d = ax.dot(dir);
        if d.abs() > best.1 {
            best = (2 * k + usize::from(d < 0.0), d.abs());
        }
    }
    best.0
}

/// Box A against box B.
pub(crate) fn box_box(
    a: &Cuboid,
    iso_a: &Isometry,
    b: &Cuboid,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    // B in A's frame.
    let rel = iso_a.inverse().mul_isometry(iso_b);
    let rot = Mat3A::from_quat(rel.rotation);
    let axes_a = [Vec3A::X, Vec3A::Y, Vec3A::Z];
    let axes_b = [rot.x_axis, rot.y_axis, rot.z_axis];
    let (ha, hb) = (a.half_extents, b.half_extents);
    let t = rel.translation;

    // Signed separation along unit axis `l`, and the sign that points from A to B.
    let separation = |l: Vec3A| -> (f32, f32) {
        let ra = ha.dot(l.abs());
        let rb = hb.x * axes_b[0].dot(l).abs()
            + hb.y * axes_b[1].dot(l).abs()
            + hb.z * axes_b[2].dot(l).abs();
        let d = t.dot(l);
        (d.abs() - ra - rb, if d < 0.0 { -1.0 } else { 1.0 })
    };

    let mut face_a = (f32::NEG_INFINITY, 0usize, 1.0f32);
    let mut face_b = (f32::NEG_INFINITY, 0usize, 1.0f32);
    for k in 0..3 {
        let (s, sign) = separation(axes_a[k]);
        if s > margin {
            return false;
        }
        if s > face_a.0 {
            face_a = (s, k, sign);
        }
        let (s, sign) = separation(axes_b[k]);
        if s > margin {
            return false;
        }
        if s > face_b.0 {
            face_b = (s, k, sign);
        }
    }
    let mut edge = (f32::NEG_INFINITY, 0usize, 0usize, Vec3A::ZERO);
    for (i, ea) in axes_a.iter().enumerate() {
        for (j, eb) in axes_b.iter().enumerate() {
            let c = cross(*ea, *eb);
            let len2 = c.length_squared();
            if len2 < 1e-10 {
                continue;
            }
            let l = c / len2.sqrt();
            let (s, sign) = separation(l);
            if s > margin {
                return false;
            }
            if s > edge.0 {
                edge = (s, i, j, l * sign);
            }
        }
    }

    let use_b = face_b.0 > face_a.0 + FACE_ABS + FACE_REL * face_a.0.abs();
    let best_face = if use_b { face_b.0 } else { face_a.0 };
    let edge_wins = edge.0 > best_face + EDGE_ABS + EDGE_REL * best_face.abs();

    if !edge_wins {
        // Reference face and the contact normal (from A to B), in A's frame.
        let (normal, ref_face, ref_pts, inc_face, inc_pts) = if use_b {
            let (_, k, sign) = face_b;
            // B's face pointing towards A, i.e. against the A-to-B direction.
            let ref_face = 2 * k + usize::from(sign > 0.0);
            let normal = axes_b[k] * sign;
            let inc_face = most_aligned_face(&axes_a, normal);
            (
                normal,
                ref_face,
                box_face(t, &axes_b, hb, ref_face),
                inc_face,
                box_face(Vec3A::ZERO, &axes_a, ha, inc_face),
            )
        } else {
            let (_, k, sign) = face_a;
            let ref_face = 2 * k + usize::from(sign < 0.0);
            let normal = axes_a[k] * sign;
            let inc_face = most_aligned_face(&axes_b, -normal);
            (
                normal,
                ref_face,
                box_face(Vec3A::ZERO, &axes_a, ha, ref_face),
                inc_face,
                box_face(t, &axes_b, hb, inc_face),
            )
        };
        let mut pts = ArrayVec::<WorldPoint, MAX_CLIPPED>::new();
        clip_faces(
            normal,
            ClipFace {
                points: &ref_pts,
                id: ref_face as u32,
            },
            use_b,
            ClipFace {
                points: &inc_pts,
                id: inc_face as u32,
            },
            feature::BOX_FACE,
            margin,
            &mut pts,
        );
        if !pts.is_empty() {
            out.set_from_frame_a(normal, iso_a.rotation, &rel, &pts);
            return true;
        }
        // Nothing within the margin over the face: the edges may still be close.
    }
    edge_contact(ha, hb, &axes_b, &rel, edge, margin, iso_a, out)
}

/// One point between A's edge along axis `i` and B's edge along axis `j` that are
/// furthest along the edge axis `n` (from A to B), in A's frame.
#[allow(clippy::too_many_arguments)]
fn edge_contact(
    ha: Vec3A,
    hb: Vec3A,
    axes_b: &[Vec3A; 3],
    rel: &Isometry,
    (_, i, j, n): (f32, usize, usize, Vec3A),
    margin: f32,
    iso_a: &Isometry,
    out: &mut ContactManifold,
) -> bool {
    let t = rel.translation;
    if n == Vec3A::ZERO {
        return false;
    }
    let axes_a = [Vec3A::X, Vec3A::Y, Vec3A::Z];
    // The supporting edge of a box (centre c, axes, half extents h) along axis k in
    // direction dir, and its id (axis and the signs of the two other axes).
    let edge_of = |c: Vec3A, axes: &[Vec3A; 3], h: Vec3A, k: usize, dir: Vec3A| {
        let mut mid = c;
        let mut id = 4 * k as u32;
        for (bit, m) in [(k + 1) % 3, (k + 2) % 3].into_iter().enumerate() {
            let pos = axes[m].dot(dir) >= 0.0;
            let s = if pos { 1.0 } else { -1.0 };
            mid += axes[m] * (s * h[m]);
            id |= u32::from(pos) << bit;
        }
        (mid - axes[k] * h[k], mid + axes[k] * h[k], id)
    };
    let (p1, q1, id_a) = edge_of(Vec3A::ZERO, &axes_a, ha, i, n);
    let (p2, q2, id_b) = edge_of(t, axes_b, hb, j, -n);
    let (_, _, ca, cb) = closest_segments(p1, q1, p2, q2);
    let sep = (cb - ca).dot(n);
    if sep > margin {
        return false;
    }
    // Centred on the closest points, apart by exactly sep * n (when the edges' closest
    // points are clamped to an end, cb - ca is not quite along n).
    let mid = 0.5 * (ca + cb);
    let (ca, cb) = (mid - n * (0.5 * sep), mid + n * (0.5 * sep));
    out.set_from_frame_a(
        n,
        iso_a.rotation,
        rel,
        &[WorldPoint {
            on_a: ca,
            on_b: cb,
            separation: sep,
            feature: feature::pack(feature::BOX_EDGE, false, id_a, id_b, 0, 0, 0),
        }],
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::narrow_phase::clip::polygon_normal;

    #[test]
    fn box_faces_are_counter_clockwise_from_outside() {
        let axes = [Vec3A::X, Vec3A::Y, Vec3A::Z];
        for f in 0..6 {
            let q = box_face(Vec3A::ZERO, &axes, Vec3A::new(1.0, 2.0, 3.0), f);
            let mut outward = Vec3A::ZERO;
            outward[f / 2] = if f % 2 == 0 { 1.0 } else { -1.0 };
            assert!(polygon_normal(&q).dot(outward) > 0.999, "face {f}");
        }
    }
}
