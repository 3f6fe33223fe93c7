//! Box–box by the separating axis theorem (Gottschalk's OBB test, as in Box2D v2.4's 3D
//! cousins and Jolt's box routines): 15 candidate axes (3 + 3 face normals, 9 edge
//! cross products). The axis of least penetration (or largest separation, for speculative
//! contacts) wins, with face axes preferred over edge axes unless an edge axis is clearly
//! better, which keeps resting boxes on stable 4-point face manifolds. A face axis is
//! turned into a manifold by clipping the incident face against the reference face; an
//! edge axis gives one point between the two edges.

use crate::math::{Isometry, Mat3A, Vec3A};
use crate::shape::Cuboid;

use super::convex::clip_faces;
use super::manifold::{ContactManifold, WorldPoint};

/// Edge axes must beat face axes by this much to be chosen (relative and absolute).
const EDGE_REL: f32 = 0.95;
const EDGE_ABS: f32 = 0.01;
/// B's face axis must beat A's by this much to be chosen.
const FACE_REL: f32 = 0.98;
const FACE_ABS: f32 = 0.001;

/// Box A against box B.
pub(crate) fn box_box(
    a: &Cuboid,
    iso_a: &Isometry,
    b: &Cuboid,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let ra = Mat3A::from_quat(iso_a.rotation);
    let rb = Mat3A::from_quat(iso_b.rotation);
    let axes_a = [ra.x_axis, ra.y_axis, ra.z_axis];
    let axes_b = [rb.x_axis, rb.y_axis, rb.z_axis];
    let (ha, hb) = (a.half_extents, b.half_extents);
    let d = iso_b.translation - iso_a.translation;

    let project = |axis: Vec3A| -> f32 {
        let pa = ha.x * axes_a[0].dot(axis).abs()
            + ha.y * axes_a[1].dot(axis).abs()
            + ha.z * axes_a[2].dot(axis).abs();
        let pb = hb.x * axes_b[0].dot(axis).abs()
            + hb.y * axes_b[1].dot(axis).abs()
            + hb.z * axes_b[2].dot(axis).abs();
        d.dot(axis).abs() - pa - pb
    };

    // Best face axis of each box.
    let mut best = [(f32::NEG_INFINITY, Vec3A::ZERO, 0u32); 2];
    for (i, &ax) in axes_a.iter().chain(axes_b.iter()).enumerate() {
        let s = project(ax);
        if s > margin {
            return false;
        }
        let side = i / 3;
        if s > best[side].0 {
            best[side] = (s, ax, i as u32);
        }
    }
    // Prefer A's face unless B's is clearly better: when two faces tie (stacked boxes),
    // flipping between them from step to step would change the feature ids and lose the
    // warm start (Box2D's relative/absolute tolerance).
    let (face_sep, face_axis, face_id) = if best[1].0 > FACE_REL * best[0].0 + FACE_ABS {
        best[1]
    } else {
        best[0]
    };
    // Best edge axis.
    let mut edge_sep = f32::NEG_INFINITY;
    let mut edge = (0usize, 0usize, Vec3A::ZERO);
    for (i, ea) in axes_a.iter().enumerate() {
        for (j, eb) in axes_b.iter().enumerate() {
            let c = ea.cross(*eb);
            let len = c.length();
            if len < 1e-5 {
                continue; // parallel edges: covered by face axes
            }
            let ax = c / len;
            let s = project(ax);
            if s > margin {
                return false;
            }
            if s > edge_sep {
                edge_sep = s;
                edge = (i, j, ax);
            }
        }
    }

    if edge_sep > EDGE_REL * face_sep + EDGE_ABS {
        return edge_contact(ha, iso_a, &axes_a, hb, iso_b, &axes_b, edge, edge_sep, out);
    }
    // Normal from A to B.
    let n = if face_axis.dot(d) < 0.0 {
        -face_axis
    } else {
        face_axis
    };
    if clip_faces(
        a,
        iso_a,
        b,
        iso_b,
        n,
        margin,
        (face_id + 1) << 16,
        face_id >= 3,
        out,
    ) {
        return true;
    }
    false
}

#[allow(clippy::too_many_arguments)]
fn edge_contact(
    ha: Vec3A,
    iso_a: &Isometry,
    axes_a: &[Vec3A; 3],
    hb: Vec3A,
    iso_b: &Isometry,
    axes_b: &[Vec3A; 3],
    (i, j, axis): (usize, usize, Vec3A),
    sep: f32,
    out: &mut ContactManifold,
) -> bool {
    let d = iso_b.translation - iso_a.translation;
    let n = if axis.dot(d) < 0.0 { -axis } else { axis };
    // The supporting edge of A along +n and of B along -n.
    let edge_of = |c: Vec3A, axes: &[Vec3A; 3], h: Vec3A, k: usize, dir: Vec3A| {
        let mut p = c;
        for m in 0..3 {
            if m != k {
                let s = if axes[m].dot(dir) >= 0.0 { 1.0 } else { -1.0 };
                p += axes[m] * (s * h[m]);
            }
        }
        (p - axes[k] * h[k], p + axes[k] * h[k])
    };
    let (p1, q1) = edge_of(iso_a.translation, axes_a, ha, i, n);
    let (p2, q2) = edge_of(iso_b.translation, axes_b, hb, j, -n);
    // Closest points between the two (non-parallel) edge lines, clamped to the edges.
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (aa, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = aa * e - b * b;
    let s = if denom > 1e-12 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let t = ((b * s + f) / e).clamp(0.0, 1.0);
    let (ca, cb) = (p1 + d1 * s, p2 + d2 * t);
    out.set_from_world(
        n,
        iso_a,
        iso_b,
        &[WorldPoint {
            on_a: ca,
            on_b: cb,
            separation: sep,
            feature: 0x00ff_0000 | (i as u32) << 4 | j as u32,
        }],
    );
    true
}
