//! The general convex pair (Jolt's approach, seed 004): GJK on the cores (EPA when they
//! overlap) gives the normal, the separation and the closest points; then the support
//! faces of both shapes along the normal are clipped against each other for a
//! multi-point manifold.
//!
//! Face clipping is only trusted when it is consistent with GJK/EPA:
//! - the reference face must be within ~45° of the contact normal (a box corner on a
//!   face: the face is the reference; two edges crossing: no face qualifies, one point);
//! - no clipped point may be deeper than GJK/EPA's separation by more than a tolerance
//!   (the minimum translation distance bounds every point's depth along the normal),
//!   and points slightly deeper (a reference plane a little tilted from the normal)
//!   are clamped to it;
//! - if no clipped point comes within 0.5 mm + 1 % of GJK/EPA's depth (a polygonal cap
//!   inscribed in a round rim), GJK/EPA's point is added so the deepest point is never
//!   lost.
//!
//! Otherwise the manifold is GJK/EPA's single point. Feature ids: the clipped features
//! (`clip.rs`) with each face named by its dominant local axis, or a fixed id for the
//! single point.

use arrayvec::ArrayVec;

use crate::geometry::support::{ConvexSupport, SupportFace};
use crate::math::{Isometry, Vec3A};

use super::clip::{ClipFace, MAX_CLIPPED, clip_faces, polygon_normal};
use super::gjk::{self, Pair};
use super::manifold::{ContactManifold, WorldPoint, feature};

/// A reference face must be at least this aligned with the normal (cos 45°).
const MIN_REFERENCE_COS: f32 = 0.7;

/// The support face of `shape` along world direction `dir`, in world space, and a face
/// id from the dominant axis of the local direction.
pub(super) fn world_face(
    shape: &dyn ConvexSupport,
    iso: &Isometry,
    dir: Vec3A,
    out: &mut SupportFace,
) -> u32 {
    let local = iso.inverse_transform_vector(dir);
    shape.support_face(local, out);
    for p in out.iter_mut() {
        *p = iso.transform_point(*p);
    }
    let a = local.abs();
    let k = if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    };
    2 * k + u32::from(local[k as usize] < 0.0)
}

/// How well a face can serve as the reference for outward direction `out_dir`: the
/// cosine between its plane normal and `out_dir` (polygons only).
fn reference_quality(face: &[Vec3A], out_dir: Vec3A) -> f32 {
    if face.len() < 3 {
        return f32::NEG_INFINITY;
    }
    polygon_normal(face).dot(out_dir)
}

/// Any convex pair, by GJK/EPA plus face clipping. Returns whether a manifold with at
/// least one point was produced.
pub(crate) fn collide_convex(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let pair = Pair::new(a, b, iso_a.inverse().mul_isometry(iso_b));
    let (sep, n, pa, pb) = gjk::closest_in_a(&pair);
    if sep > margin {
        return false;
    }
    let normal = iso_a.transform_vector(n);
    let single = WorldPoint {
        on_a: iso_a.transform_point(pa),
        on_b: iso_a.transform_point(pb),
        separation: sep,
        feature: feature::pack(feature::CONVEX, false, 63, 63, 3, 63, 63),
    };

    let mut face_a = SupportFace::new();
    let mut face_b = SupportFace::new();
    let id_a = world_face(a, iso_a, normal, &mut face_a);
    let id_b = world_face(b, iso_b, -normal, &mut face_b);
    let qa = reference_quality(&face_a, normal);
    let qb = reference_quality(&face_b, -normal);
    // Prefer A on ties so the roles do not swap between frames.
    let ref_is_b = if qa.max(qb) >= MIN_REFERENCE_COS {
        qb > qa + 1e-3
    } else if face_a.len() == 2 && face_b.len() == 2 {
        // Two segments (capsule or cylinder sides): clip B's against A's ends.
        false
    } else {
        out.set_single(normal, iso_a, iso_b, single);
        return true;
    };
    let (reference, incident) = if ref_is_b {
        (
            ClipFace {
                points: &face_b,
                id: id_b,
            },
            ClipFace {
                points: &face_a,
                id: id_a,
            },
        )
    } else {
        (
            ClipFace {
                points: &face_a,
                id: id_a,
            },
            ClipFace {
                points: &face_b,
                id: id_b,
            },
        )
    };
    let mut pts = ArrayVec::<WorldPoint, MAX_CLIPPED>::new();
    clip_faces(
        normal,
        reference,
        ref_is_b,
        incident,
        feature::CONVEX,
        margin,
        &mut pts,
    );
    let tol = 2e-3 + 0.05 * sep.abs();
    let deepest = pts
        .iter()
        .map(|p| p.separation)
        .fold(f32::INFINITY, f32::min);
    if pts.is_empty() || deepest < sep - tol {
        out.set_single(normal, iso_a, iso_b, single);
        return true;
    }
    // The overlap along the normal bounds every point's depth; a tilted reference plane
    // can measure a little more, so clamp (keeping B's point, moving A's).
    for p in &mut pts {
        if p.separation < sep {
            p.separation = sep;
            p.on_a = p.on_b - normal * sep;
        }
    }
    // Clipping missed the deepest point (a polygonal cap inscribed in a round rim):
    // add GJK/EPA's.
    if deepest > sep + 5e-4 + 0.01 * sep.abs() && pts.try_push(single).is_err() {
        let last = pts.len() - 1;
        pts[last] = single;
    }
    out.set_from_world(normal, iso_a, iso_b, &pts);
    true
}
