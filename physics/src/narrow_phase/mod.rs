//! The narrow phase: contact manifolds for pairs of shapes.
//!
//! Dispatch is a pair table over [`ShapeKind`]s (open to compounds, meshes and
//! heightfields later): each entry is a routine and whether the pair must be swapped to
//! reach it. Dedicated routines where they are faster or more stable:
//!
//! | pair | routine |
//! |---|---|
//! | sphere–sphere, sphere–capsule, box–sphere, capsule–capsule | closed-form closest points (`round.rs`) |
//! | box–box | separating axes + face clipping (`box_box.rs`) |
//! | half-space–anything | support face against the plane (`convex.rs`) |
//! | capsule–box and every other convex pair | GJK/EPA on the cores + face clipping (`convex.rs`, `gjk.rs`) |
//!
//! Every routine reports the normal from A to B, points on both surfaces in each body's
//! frame, signed separations (speculative points up to `margin` apart are kept) and
//! feature ids that stay equal while the same features touch.

mod box_box;
mod convex;
mod gjk;
mod manifold;
mod round;

pub use manifold::{ContactManifold, ContactPoint};

use crate::math::Isometry;
use crate::shape::{Shape, ShapeKind};
use crate::support::ConvexSupport;

/// Default speculative margin (m).
pub const DEFAULT_MARGIN: f32 = 0.02;

type PairFn = fn(&Shape, &Isometry, &Shape, &Isometry, f32, &mut ContactManifold) -> bool;

fn sphere_sphere(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Sphere(a), Shape::Sphere(b)) => round::sphere_sphere(a, ia, b, ib, m, out),
        _ => unreachable!("pair table mismatch"),
    }
}

fn sphere_capsule(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Sphere(a), Shape::Capsule(b)) => round::sphere_capsule(a, ia, b, ib, m, out),
        _ => unreachable!("pair table mismatch"),
    }
}

fn box_sphere(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Box(a), Shape::Sphere(b)) => round::box_sphere(a, ia, b, ib, m, out),
        _ => unreachable!("pair table mismatch"),
    }
}

fn capsule_capsule(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Capsule(a), Shape::Capsule(b)) => round::capsule_capsule(a, ia, b, ib, m, out),
        _ => unreachable!("pair table mismatch"),
    }
}

fn box_box(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b) {
        (Shape::Box(a), Shape::Box(b)) => box_box::box_box(a, ia, b, ib, m, out),
        _ => unreachable!("pair table mismatch"),
    }
}

fn half_space_any(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a, b.as_convex()) {
        (Shape::HalfSpace(h), Some(cb)) => {
            convex::half_space_vs_convex(h.normal, h.offset, ia, cb, ib, m, out)
        }
        _ => false,
    }
}

fn convex_convex(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    m: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a.as_convex(), b.as_convex()) {
        (Some(ca), Some(cb)) => convex::collide_convex(ca, ia, cb, ib, m, out),
        _ => false,
    }
}

/// The routine for `(a, b)` in that order, if the table has one.
fn entry(a: ShapeKind, b: ShapeKind) -> Option<PairFn> {
    use ShapeKind::*;
    Some(match (a, b) {
        (Sphere, Sphere) => sphere_sphere,
        (Sphere, Capsule) => sphere_capsule,
        (Box, Sphere) => box_sphere,
        (Capsule, Capsule) => capsule_capsule,
        (Box, Box) => box_box,
        (HalfSpace, HalfSpace) => return None,
        (HalfSpace, _) => half_space_any,
        (_, HalfSpace) => return None,
        (Sphere, Box) | (Capsule, Sphere) => return None,
        _ => convex_convex,
    })
}

/// Computes the manifold of `a` (at `iso_a`) against `b` (at `iso_b`) into `out`.
/// Returns true when it has at least one point (touching, or within `margin`).
pub fn collide(
    a: &Shape,
    iso_a: &Isometry,
    b: &Shape,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    if let Some(f) = entry(a.kind(), b.kind()) {
        return f(a, iso_a, b, iso_b, margin, out) && !out.points.is_empty();
    }
    if let Some(f) = entry(b.kind(), a.kind()) {
        let hit = f(b, iso_b, a, iso_a, margin, out) && !out.points.is_empty();
        if hit {
            out.flip();
        }
        return hit;
    }
    false
}

/// Manifold of two convex support maps (no pair table; GJK/EPA and clipping).
pub fn collide_convex(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    convex::collide_convex(a, iso_a, b, iso_b, margin, out)
}
