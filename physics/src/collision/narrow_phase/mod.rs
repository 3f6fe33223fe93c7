//! The narrow phase: contact manifolds for pairs of shapes.
//!
//! Dispatch is a pair table over [`ShapeKind`]s. Entries exist for `kind(a) <= kind(b)`
//! in `ShapeKind`'s order; the other order is served by swapping the shapes and flipping
//! the result, so each routine is written once. A new shape kind (compound, mesh,
//! heightfield) adds a row to [`pair_routine`]: a compound would loop over its children
//! and call [`collide`] on each.
//!
//! | pair | routine | file |
//! |---|---|---|
//! | sphere–sphere, sphere–box, sphere–capsule | closest point + radii | `sphere.rs` |
//! | capsule–capsule, box–capsule | closest segment points, face clipping, SAT when deep | `capsule.rs` |
//! | box–box | 15-axis SAT + reference/incident face clipping | `box_box.rs` |
//! | anything–half-space | lowest vertices / support face against the plane | `half_space.rs` |
//! | everything else (cylinders, hulls) | GJK/EPA on the cores + face clipping | `convex.rs`, `gjk.rs`, `epa.rs`, `clip.rs` |
//! | compound–anything, convex–mesh, convex–heightfield | parts through the shape's tree or grid, one merged manifold, internal-edge handling | `composite.rs` |
//!
//! Composite shapes are dispatched before the table. Pairs that never collide: two
//! half-spaces, and a mesh or heightfield against a mesh, heightfield or half-space
//! (static level geometry; a compound's children do meet all three).
//!
//! Every routine reports the normal from A to B (world, unit), points on both surfaces in
//! each body's frame, signed separations (speculative points up to `margin` apart are
//! kept, farther pairs give no manifold) and feature ids that stay equal while the same
//! features touch (`manifold.rs`). Nothing allocates: candidates and polytopes live in
//! fixed-size arrays on the stack.

mod box_box;
mod capsule;
mod clip;
mod composite;
mod convex;
mod epa;
mod gjk;
mod half_space;
mod manifold;
mod sphere;

pub(crate) use composite::collide_each_part;
pub use gjk::{ClosestPoints, closest_points};
pub use manifold::{ContactManifold, ContactPoint, MAX_MANIFOLD_POINTS, reduce_contact_points};

use crate::geometry::support::ConvexSupport;
use crate::math::Isometry;
use crate::shape::{Shape, ShapeKind};

/// Default speculative margin (m): pairs closer than this get contact points with a
/// positive separation, so the solver can stop them before they touch.
pub const DEFAULT_MARGIN: f32 = 0.02;

/// A pair routine: shapes in the table's order, poses, margin, output.
pub type PairFn = fn(&Shape, &Isometry, &Shape, &Isometry, f32, &mut ContactManifold) -> bool;

/// Adapters from `Shape`s to the typed routines. A mismatch is a broken table.
macro_rules! typed_pair {
    ($name:ident, $va:ident, $vb:ident, $routine:path) => {
        fn $name(
            a: &Shape,
            ia: &Isometry,
            b: &Shape,
            ib: &Isometry,
            margin: f32,
            out: &mut ContactManifold,
        ) -> bool {
            match (a, b) {
                (Shape::$va(a), Shape::$vb(b)) => $routine(a, ia, b, ib, margin, out),
                _ => unreachable!("pair table entry does not match the shapes' kinds"),
            }
        }
    };
}

typed_pair!(sphere_sphere, Sphere, Sphere, sphere::sphere_sphere);
typed_pair!(sphere_box, Sphere, Box, sphere::sphere_box);
typed_pair!(sphere_capsule, Sphere, Capsule, sphere::sphere_capsule);
typed_pair!(box_box, Box, Box, box_box::box_box);
typed_pair!(box_capsule, Box, Capsule, capsule::box_capsule);
typed_pair!(capsule_capsule, Capsule, Capsule, capsule::capsule_capsule);

/// Any convex shape against a half-space (B).
fn any_half_space(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let Shape::HalfSpace(h) = b else {
        unreachable!("pair table entry does not match the shapes' kinds")
    };
    match a {
        Shape::Sphere(s) => half_space::sphere_half_space(s, ia, h, ib, margin, out),
        Shape::Box(c) => half_space::box_half_space(c, ia, h, ib, margin, out),
        Shape::Capsule(c) => half_space::capsule_half_space(c, ia, h, ib, margin, out),
        Shape::ConvexHull(hull) => {
            half_space::vertices_half_space(hull.vertices(), ia, h, ib, margin, out)
        }
        other => match other.as_convex() {
            Some(c) => half_space::convex_half_space(c, ia, h, ib, margin, out),
            None => false,
        },
    }
}

/// Two convex shapes through GJK/EPA and face clipping.
fn convex_convex(
    a: &Shape,
    ia: &Isometry,
    b: &Shape,
    ib: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    match (a.as_convex(), b.as_convex()) {
        (Some(ca), Some(cb)) => convex::collide_convex(ca, ia, cb, ib, margin, out),
        _ => false,
    }
}

/// The routine for shapes of kinds `(a, b)` in that order, if the table has one. Entries
/// exist for `a <= b` only; two half-spaces never collide.
#[must_use]
pub fn pair_routine(a: ShapeKind, b: ShapeKind) -> Option<PairFn> {
    use ShapeKind::{
        Box, Capsule, Compound, ConvexHull, Cylinder, HalfSpace, HeightField, Sphere, TriangleMesh,
    };
    let f: PairFn = match (a, b) {
        (Sphere, Sphere) => sphere_sphere,
        (Sphere, Box) => sphere_box,
        (Sphere, Capsule) => sphere_capsule,
        (Box, Box) => box_box,
        (Box, Capsule) => box_capsule,
        (Capsule, Capsule) => capsule_capsule,
        (Sphere | Box | Capsule | Cylinder | ConvexHull, Cylinder | ConvexHull) => convex_convex,
        (Sphere | Box | Capsule | Cylinder | ConvexHull, HalfSpace) => any_half_space,
        (HalfSpace, HalfSpace) => return None,
        (Box | Capsule | Cylinder | ConvexHull | HalfSpace, _) => return None,
        // Composite shapes go through `composite::collide_composite`, not the table.
        (Compound | TriangleMesh | HeightField, _) | (_, Compound | TriangleMesh | HeightField) => {
            return None;
        }
    };
    Some(f)
}

/// Computes the manifold of `a` (at `iso_a`) against `b` (at `iso_b`) into `out`, with
/// the normal from A to B. Returns true when the manifold has at least one point (the
/// shapes touch or are closer than `margin`); `out.points` is empty otherwise.
pub fn collide(
    a: &Shape,
    iso_a: &Isometry,
    b: &Shape,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let hit = if a.is_composite() || b.is_composite() {
        composite::collide_composite(a, iso_a, b, iso_b, margin, out)
    } else if let Some(f) = pair_routine(a.kind(), b.kind()) {
        f(a, iso_a, b, iso_b, margin, out)
    } else if let Some(f) = pair_routine(b.kind(), a.kind()) {
        let hit = f(b, iso_b, a, iso_a, margin, out);
        out.flip();
        hit
    } else {
        false
    };
    if !hit {
        out.clear();
    }
    hit && !out.points.is_empty()
}

/// Manifold of two convex shapes seen only through their support maps (GJK/EPA on the
/// cores, then face clipping); the general path of [`collide`], for shapes the table
/// does not know yet.
pub fn collide_convex(
    a: &dyn ConvexSupport,
    iso_a: &Isometry,
    b: &dyn ConvexSupport,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    convex::collide_convex(a, iso_a, b, iso_b, margin, out) && !out.points.is_empty()
}
