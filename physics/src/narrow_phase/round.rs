//! Dedicated routines for rounded shapes: sphere–sphere, sphere–box, sphere–capsule and
//! capsule–capsule. Each is a closest-point computation between a point or a segment and
//! the other shape, then the radii; all closed form, no iteration.

use crate::math::{Isometry, Vec3A};
use crate::shape::{Capsule, Cuboid, Sphere};

use super::manifold::{ContactManifold, WorldPoint};

#[allow(clippy::too_many_arguments)]
fn one_point(
    out: &mut ContactManifold,
    iso_a: &Isometry,
    iso_b: &Isometry,
    n: Vec3A,
    on_a: Vec3A,
    on_b: Vec3A,
    separation: f32,
    feature: u32,
) -> bool {
    out.set_from_world(
        n,
        iso_a,
        iso_b,
        &[WorldPoint {
            on_a,
            on_b,
            separation,
            feature,
        }],
    );
    true
}

/// Two points at distance `d` apart, one on each of two spheres (radii ra, rb).
#[allow(clippy::too_many_arguments)]
fn points_with_radii(
    out: &mut ContactManifold,
    iso_a: &Isometry,
    iso_b: &Isometry,
    ca: Vec3A,
    ra: f32,
    cb: Vec3A,
    rb: f32,
    margin: f32,
    feature: u32,
) -> bool {
    out.clear();
    let d = cb - ca;
    let dist = d.length();
    let sep = dist - ra - rb;
    if sep > margin {
        return false;
    }
    // Coincident centres: any normal works; pick +Y (up) for a stable choice.
    let n = if dist > 1e-9 { d / dist } else { Vec3A::Y };
    one_point(out, iso_a, iso_b, n, ca + n * ra, cb - n * rb, sep, feature)
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
    points_with_radii(
        out,
        iso_a,
        iso_b,
        iso_a.translation,
        a.radius,
        iso_b.translation,
        b.radius,
        margin,
        0,
    )
}

fn segment(c: &Capsule, iso: &Isometry) -> (Vec3A, Vec3A) {
    let axis = iso.transform_vector(Vec3A::new(0.0, c.half_height, 0.0));
    (iso.translation - axis, iso.translation + axis)
}

fn closest_on_segment(p: Vec3A, a: Vec3A, b: Vec3A) -> (Vec3A, f32) {
    let ab = b - a;
    let len2 = ab.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t, t)
}

/// Sphere A against capsule B.
pub(crate) fn sphere_capsule(
    a: &Sphere,
    iso_a: &Isometry,
    b: &Capsule,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let (p, q) = segment(b, iso_b);
    let (c, _) = closest_on_segment(iso_a.translation, p, q);
    points_with_radii(
        out,
        iso_a,
        iso_b,
        iso_a.translation,
        a.radius,
        c,
        b.radius,
        margin,
        0,
    )
}

/// Box A against sphere B: the closest point of the box to the sphere's centre.
pub(crate) fn box_sphere(
    a: &Cuboid,
    iso_a: &Isometry,
    b: &Sphere,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let h = a.half_extents;
    let c = iso_a.inverse_transform_point(iso_b.translation);
    let q = c.clamp(-h, h);
    let (n_local, on_box, sep, feature) = if q == c {
        // Centre inside the box: leave through the nearest face.
        let gap = h - c.abs();
        let axis = if gap.x <= gap.y && gap.x <= gap.z {
            0
        } else if gap.y <= gap.z {
            1
        } else {
            2
        };
        let mut n = Vec3A::ZERO;
        n[axis] = if c[axis] < 0.0 { -1.0 } else { 1.0 };
        let mut on = c;
        on[axis] = n[axis] * h[axis];
        (
            n,
            on,
            -gap[axis] - b.radius,
            axis as u32 * 2 + u32::from(n[axis] < 0.0),
        )
    } else {
        let d = c - q;
        let dist = d.length();
        (d / dist, q, dist - b.radius, 6)
    };
    if sep > margin {
        return false;
    }
    let n = iso_a.transform_vector(n_local);
    let on_a = iso_a.transform_point(on_box);
    one_point(
        out,
        iso_a,
        iso_b,
        n,
        on_a,
        iso_b.translation - n * b.radius,
        sep,
        feature,
    )
}

/// Closest points between segments p1q1 and p2q2 (Ericson, 5.1.9): (s, t, c1, c2).
fn closest_segments(p1: Vec3A, q1: Vec3A, p2: Vec3A, q2: Vec3A) -> (f32, f32, Vec3A, Vec3A) {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    let eps = 1e-12;
    let (s, t);
    if a <= eps && e <= eps {
        return (0.0, 0.0, p1, p2);
    }
    if a <= eps {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e <= eps {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let mut ss = if denom > eps {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut tt = (b * ss + f) / e;
            if tt < 0.0 {
                tt = 0.0;
                ss = (-c / a).clamp(0.0, 1.0);
            } else if tt > 1.0 {
                tt = 1.0;
                ss = ((b - c) / a).clamp(0.0, 1.0);
            }
            s = ss;
            t = tt;
        }
    }
    (s, t, p1 + d1 * s, p2 + d2 * t)
}

/// Capsule A against capsule B. Nearly parallel overlapping segments give two points
/// (the overlap's ends), so a capsule lying on another does not roll on one point.
pub(crate) fn capsule_capsule(
    a: &Capsule,
    iso_a: &Isometry,
    b: &Capsule,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    out.clear();
    let (p1, q1) = segment(a, iso_a);
    let (p2, q2) = segment(b, iso_b);
    let (_, _, c1, c2) = closest_segments(p1, q1, p2, q2);
    let d = c2 - c1;
    let dist = d.length();
    let sep = dist - a.radius - b.radius;
    if sep > margin {
        return false;
    }
    let n = if dist > 1e-9 {
        d / dist
    } else {
        // Crossing axes: the normal is perpendicular to both.
        (q1 - p1).cross(q2 - p2).normalize_or(Vec3A::Y)
    };
    let (da, db) = ((q1 - p1).normalize_or_zero(), (q2 - p2).normalize_or_zero());
    if da.dot(db).abs() > 0.998 && da != Vec3A::ZERO {
        // Parallel: project B's segment onto A's and keep the overlap's two ends.
        let t0 = (p2 - p1).dot(da);
        let t1 = (q2 - p1).dot(da);
        let len = (q1 - p1).length();
        let (lo, hi) = (t0.min(t1).max(0.0), t0.max(t1).min(len));
        if hi - lo > 1e-4 {
            let mut pts = arrayvec::ArrayVec::<WorldPoint, 2>::new();
            for (k, t) in [lo, hi].into_iter().enumerate() {
                let on_axis_a = p1 + da * t;
                let (on_axis_b, _) = closest_on_segment(on_axis_a, p2, q2);
                let s = (on_axis_b - on_axis_a).dot(n) - a.radius - b.radius;
                pts.push(WorldPoint {
                    on_a: on_axis_a + n * a.radius,
                    on_b: on_axis_b - n * b.radius,
                    separation: s,
                    feature: 1 + k as u32,
                });
            }
            out.set_from_world(n, iso_a, iso_b, &pts);
            return true;
        }
    }
    one_point(
        out,
        iso_a,
        iso_b,
        n,
        c1 + n * a.radius,
        c2 - n * b.radius,
        sep,
        0,
    )
}
