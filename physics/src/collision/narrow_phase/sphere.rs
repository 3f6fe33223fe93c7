//! Sphere pairs: sphere–sphere, sphere–box and sphere–capsule, all closed form.
//!
//! A sphere touches anything at one point, so each routine finds the closest point of
//! the other shape to the sphere's centre, then steps out by the radius. When the centre
//! is inside the other shape (deep penetration), the normal is the shortest way out: the
//! nearest box face, or any direction perpendicular to a capsule's axis. Coincident
//! centres get a fixed, deterministic normal (+Y, or a perpendicular of the capsule
//! axis), never NaN. The one point always has the same feature id, so a rolling sphere
//! keeps its warm start.

use crate::math::{Isometry, Vec3A};
use crate::shape::{Capsule, Cuboid, Sphere};

use super::manifold::{ContactManifold, WorldPoint, feature};

/// One point between a sphere (centre `ca`, radius `ra`) and a rounded feature (the
/// point `cb` swept by radius `rb`), world space. `fallback` is the normal used when the
/// two centres coincide.
#[allow(clippy::too_many_arguments)]
pub(crate) fn round_point(
    ca: Vec3A,
    ra: f32,
    cb: Vec3A,
    rb: f32,
    fallback: Vec3A,
    feature: u32,
    margin: f32,
    iso_a: &Isometry,
    iso_b: &Isometry,
    out: &mut ContactManifold,
) -> bool {
    let d = cb - ca;
    let dist = d.length();
    let sep = dist - ra - rb;
    if sep > margin {
        return false;
    }
    let n = if dist > 1e-9 { d / dist } else { fallback };
    out.set_single(
        n,
        iso_a,
        iso_b,
        WorldPoint {
            on_a: ca + n * ra,
            on_b: cb - n * rb,
            separation: sep,
            feature,
        },
    );
    true
}

/// Sphere A against sphere B.
pub(crate) fn sphere_sphere(
    a: &Sphere,
    iso_a: &Isometry,
    b: &Sphere,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    round_point(
        iso_a.translation,
        a.radius,
        iso_b.translation,
        b.radius,
        Vec3A::Y,
        feature::simple(feature::SPHERE, 0),
        margin,
        iso_a,
        iso_b,
        out,
    )
}

/// Sphere A against box B: the closest point of the box to the sphere's centre.
pub(crate) fn sphere_box(
    a: &Sphere,
    iso_a: &Isometry,
    b: &Cuboid,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let h = b.half_extents;
    let c = iso_b.inverse_transform_point(iso_a.translation);
    let q = c.clamp(-h, h);
    let r = a.radius;
    // In B's frame: `n` from the sphere towards the box, the box's surface point, the
    // separation.
    let d = c - q;
    let dist = d.length();
    let (n, on_box, sep) = if dist > 1e-9 {
        (-d / dist, q, dist - r)
    } else {
        // Centre inside: leave through the nearest face (lowest axis on ties).
        let gap = h - c.abs();
        let k = if gap.x <= gap.y && gap.x <= gap.z {
            0
        } else if gap.y <= gap.z {
            1
        } else {
            2
        };
        let mut f = Vec3A::ZERO;
        f[k] = if c[k] < 0.0 { -1.0 } else { 1.0 };
        let mut on = c;
        on[k] = f[k] * h[k];
        (-f, on, -gap[k] - r)
    };
    if sep > margin {
        return false;
    }
    let n = iso_b.transform_vector(n);
    out.set_single(
        n,
        iso_a,
        iso_b,
        WorldPoint {
            on_a: iso_a.translation + n * r,
            on_b: iso_b.transform_point(on_box),
            separation: sep,
            feature: feature::simple(feature::SPHERE, 1),
        },
    );
    true
}

/// The world-space segment of a capsule's core.
pub(crate) fn capsule_segment(c: &Capsule, iso: &Isometry) -> (Vec3A, Vec3A) {
    let axis = iso.transform_vector(Vec3A::new(0.0, c.half_height, 0.0));
    (iso.translation - axis, iso.translation + axis)
}

/// The point of segment `pq` closest to `x`, and its parameter in [0, 1].
pub(crate) fn closest_on_segment(x: Vec3A, p: Vec3A, q: Vec3A) -> (Vec3A, f32) {
    let pq = q - p;
    let len2 = pq.length_squared();
    let t = if len2 > 0.0 {
        ((x - p).dot(pq) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p + pq * t, t)
}

/// Sphere A against capsule B: the closest point of B's segment, then two radii.
pub(crate) fn sphere_capsule(
    a: &Sphere,
    iso_a: &Isometry,
    b: &Capsule,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let (p, q) = capsule_segment(b, iso_b);
    let (c, _) = closest_on_segment(iso_a.translation, p, q);
    let axis = iso_b.transform_vector(Vec3A::Y);
    round_point(
        iso_a.translation,
        a.radius,
        c,
        b.radius,
        axis.any_orthonormal_vector(),
        feature::simple(feature::SPHERE, 2),
        margin,
        iso_a,
        iso_b,
        out,
    )
}
