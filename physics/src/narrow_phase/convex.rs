//! The general convex pair: GJK/EPA for the normal and depth, then face clipping for a
//! multi-point manifold (Jolt's approach, seed 004). Also used with a normal found by SAT
//! (box–box), and for any convex shape against a half-space.

use arrayvec::ArrayVec;

use crate::math::{Isometry, Vec3A};
use crate::support::{ConvexSupport, SupportFace};

use super::gjk::{self, Placed};
use super::manifold::{ContactManifold, WorldPoint};

/// Most candidate points clipping may produce before reduction.
const MAX_CLIPPED: usize = 64;

/// A world-space polygon vertex with the feature it came from.
#[derive(Clone, Copy, Debug)]
struct Tagged {
    p: Vec3A,
    tag: u32,
}

fn world_face(shape: &dyn ConvexSupport, iso: &Isometry, dir_world: Vec3A, out: &mut SupportFace) {
    shape.support_face(iso.inverse_transform_vector(dir_world), out);
    for p in out.iter_mut() {
        *p = iso.transform_point(*p);
    }
}

/// Clips `poly` against the plane `n · x <= d`, tagging new points with `edge_tag`.
fn clip_plane(
    poly: &[Tagged],
    n: Vec3A,
    d: f32,
    edge_tag: u32,
    out: &mut ArrayVec<Tagged, MAX_CLIPPED>,
) {
    out.clear();
    let count = poly.len();
    if count == 0 {
        return;
    }
    for i in 0..count {
        let a = poly[i];
        let b = poly[(i + 1) % count];
        let da = n.dot(a.p) - d;
        let db = n.dot(b.p) - d;
        if da <= 0.0 && out.len() < MAX_CLIPPED {
            out.push(a);
        }
        if (da < 0.0) != (db < 0.0) && count > 1 && out.len() < MAX_CLIPPED {
            let t = da / (da - db);
            out.push(Tagged {
                p: a.p + (b.p - a.p) * t,
                tag: 0x8000 | (edge_tag << 8) | (a.tag & 0xff),
            });
        }
        if count == 2 {
            // A segment: visit its one edge once.
            if db <= 0.0 && out.len() < MAX_CLIPPED {
                out.push(b);
            }
            break;
        }
    }
}

/// Builds the manifold of two faces touching along `normal` (from A to B). The reference
/// face is A's when it is a polygon (B's if `prefer_b` and B's is one), else B's; the other face is clipped to the reference
/// face's side planes and its points kept where the separation is within `margin`.
/// Returns false when clipping leaves no point (the caller falls back to one point).
#[allow(clippy::too_many_arguments)]
pub(crate) fn clip_faces(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    normal: Vec3A,
    margin: f32,
    feature_base: u32,
    prefer_b: bool,
    out: &mut ContactManifold,
) -> bool {
    let mut face_a = SupportFace::new();
    let mut face_b = SupportFace::new();
    world_face(a, iso_a, normal, &mut face_a);
    world_face(b, iso_b, -normal, &mut face_b);
    let a_is_ref = if prefer_b && face_b.len() >= 3 {
        false
    } else {
        face_a.len() >= 3 || face_b.len() < 3
    };
    let (reference, incident) = if a_is_ref {
        (&face_a, &face_b)
    } else {
        (&face_b, &face_a)
    };
    if reference.len() < 2 || incident.is_empty() {
        return false;
    }
    // Outward normal of the reference face (towards the other shape).
    let ref_n = if a_is_ref { normal } else { -normal };

    let mut poly: ArrayVec<Tagged, MAX_CLIPPED> = incident
        .iter()
        .enumerate()
        .map(|(i, &p)| Tagged { p, tag: i as u32 })
        .collect();
    let mut tmp = ArrayVec::<Tagged, MAX_CLIPPED>::new();
    if reference.len() >= 3 {
        // Side planes through each reference edge, facing outward from the face.
        let c = reference.iter().copied().sum::<Vec3A>() / reference.len() as f32;
        for i in 0..reference.len() {
            let (p, q) = (reference[i], reference[(i + 1) % reference.len()]);
            let mut side = (q - p).cross(ref_n).normalize_or_zero();
            if side.dot(c - p) > 0.0 {
                side = -side;
            }
            clip_plane(&poly, side, side.dot(p), i as u32, &mut tmp);
            std::mem::swap(&mut poly, &mut tmp);
            if poly.is_empty() {
                return false;
            }
        }
    } else {
        // A segment reference (capsule or cylinder side): clip to its extent.
        let (p, q) = (reference[0], reference[1]);
        let axis = (q - p).normalize_or_zero();
        clip_plane(&poly, -axis, -axis.dot(p), 0, &mut tmp);
        std::mem::swap(&mut poly, &mut tmp);
        clip_plane(&poly, axis, axis.dot(q), 1, &mut tmp);
        std::mem::swap(&mut poly, &mut tmp);
    }

    // Reference plane (through the reference face's deepest point along its normal).
    let ref_d = reference
        .iter()
        .map(|p| ref_n.dot(*p))
        .fold(f32::MIN, f32::max);
    let mut pts = ArrayVec::<WorldPoint, MAX_CLIPPED>::new();
    for t in &poly {
        // Distance of the incident point above the reference plane.
        let sep = ref_n.dot(t.p) - ref_d;
        if sep > margin {
            continue;
        }
        let on_ref = t.p - ref_n * sep;
        let (on_a, on_b) = if a_is_ref {
            (on_ref, t.p)
        } else {
            (t.p, on_ref)
        };
        pts.push(WorldPoint {
            on_a,
            on_b,
            separation: sep,
            feature: feature_base | u32::from(!a_is_ref) << 24 | t.tag,
        });
    }
    if pts.is_empty() {
        return false;
    }
    out.set_from_world(normal, iso_a, iso_b, &pts);
    true
}

/// Any convex pair, by GJK/EPA plus clipping. Returns whether a manifold was produced.
pub(crate) fn collide_convex(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let pa = Placed {
        shape: a,
        iso: iso_a,
    };
    let pb = Placed {
        shape: b,
        iso: iso_b,
    };
    let (ra, rb) = (a.convex_radius(), b.convex_radius());
    let (dist, simplex) = gjk::distance(&pa, &pb);
    let (normal, separation, point_a, point_b) = if !dist.overlap {
        let sep = dist.distance - ra - rb;
        if sep > margin {
            return false;
        }
        let n = (dist.point_b - dist.point_a) / dist.distance;
        (n, sep, dist.point_a + n * ra, dist.point_b - n * rb)
    } else {
        match gjk::penetration(&pa, &pb, &simplex) {
            Some(p) => (
                p.normal,
                -p.depth - ra - rb,
                p.point_a + p.normal * ra,
                p.point_b - p.normal * rb,
            ),
            None => {
                // Degenerate overlap (touching cores with no volume): push apart along the
                // line between the centres.
                let n = (iso_b.translation - iso_a.translation).normalize_or(Vec3A::Y);
                (n, -ra - rb, dist.point_a + n * ra, dist.point_b - n * rb)
            }
        }
    };
    if clip_faces(a, iso_a, b, iso_b, normal, margin, 0, false, out) {
        return true;
    }
    out.set_from_world(
        normal,
        iso_a,
        iso_b,
        &[WorldPoint {
            on_a: point_a,
            on_b: point_b,
            separation,
            feature: 0,
        }],
    );
    true
}

/// Any convex shape `b` against the half-space `normal · x <= offset` of `a` (in A's
/// frame). The points of B's support face towards the plane within the margin.
pub(crate) fn half_space_vs_convex(
    plane_n: Vec3A,
    offset: f32,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let n = iso_a.transform_vector(plane_n);
    let d = offset + n.dot(iso_a.translation);
    let mut face = SupportFace::new();
    world_face(b, iso_b, -n, &mut face);
    // Rounded shapes report their support point on the full surface already.
    let mut pts = ArrayVec::<WorldPoint, MAX_CLIPPED>::new();
    for (i, &p) in face.iter().enumerate() {
        let sep = n.dot(p) - d;
        if sep <= margin && pts.len() < MAX_CLIPPED {
            pts.push(WorldPoint {
                on_a: p - n * sep,
                on_b: p,
                separation: sep,
                feature: i as u32,
            });
        }
    }
    if pts.is_empty() {
        return false;
    }
    out.set_from_world(n, iso_a, iso_b, &pts);
    true
}
