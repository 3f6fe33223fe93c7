//! Capsule pairs: capsule–capsule and box–capsule, closed form on the capsule's segment.
//!
//! A capsule is a segment swept by a radius, so both routines work on the segment and
//! subtract the radius at the end.
//!
//! - Capsule–capsule: closest points of two segments (Ericson, "Real-Time Collision
//!   Detection", 5.1.9). Nearly parallel segments that overlap give two points, the ends
//!   of the overlap, so a capsule lying on another does not roll on one point.
//! - Box–capsule: first the exact closest points of the segment and the box, by
//!   minimising the squared distance, a convex piecewise quadratic in the segment
//!   parameter whose pieces start where the segment crosses a slab plane of the box (at
//!   most 6 breakpoints). If the segment is outside the box and closest to a face, the
//!   segment is clipped to that face's rectangle: a capsule lying on a box gets two
//!   points. If the segment enters the box (deep penetration), a separating-axis test
//!   over the 3 face axes and the 3 edge axes (segment × box edge) gives the normal
//!   (face axes preferred within a tolerance), then the same face clipping, or one
//!   point between the segment and the box edge.

use crate::math::cross;
use crate::math::normalize;
use arrayvec::ArrayVec;

use crate::math::{Isometry, Vec3A};
use crate::shape::{Capsule, Cuboid};

use super::manifold::{ContactManifold, WorldPoint, feature};
use super::sphere::{capsule_segment, closest_on_segment};

/// Closest points of segments `p1q1` and `p2q2`: (s, t, point on the first, point on
/// the second). Degenerate (point) segments are handled; parallel segments return one
/// of the closest pairs.
pub(crate) fn closest_segments(
    p1: Vec3A,
    q1: Vec3A,
    p2: Vec3A,
    q2: Vec3A,
) -> (f32, f32, Vec3A, Vec3A) {
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
            // Parallel segments: any s works; 0 is as good as any.
            let mut ss = if denom > eps * a * e {
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

/// Cosine above which two capsule axes count as parallel (about 3.6°).
const PARALLEL_COS: f32 = 0.998;

/// Capsule A against capsule B.
pub(crate) fn capsule_capsule(
    a: &Capsule,
    iso_a: &Isometry,
    b: &Capsule,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let (p1, q1) = capsule_segment(a, iso_a);
    let (p2, q2) = capsule_segment(b, iso_b);
    let (_, _, c1, c2) = closest_segments(p1, q1, p2, q2);
    let (ra, rb) = (a.radius, b.radius);
    let d = c2 - c1;
    let dist = d.length();
    let sep = dist - ra - rb;
    if sep > margin {
        return false;
    }
    let (da, db) = ((q1 - p1).normalize_or_zero(), (q2 - p2).normalize_or_zero());
    let n = if dist > 1e-9 {
        d / dist
    } else {
        // The axes cross: the normal is perpendicular to both (or to the one axis).
        let c = cross(da, db).normalize_or_zero();
        if c != Vec3A::ZERO {
            // From A towards B as far as the centres tell.
            if c.dot(iso_b.translation - iso_a.translation) < 0.0 {
                -c
            } else {
                c
            }
        } else if da != Vec3A::ZERO {
            da.any_orthonormal_vector()
        } else {
            Vec3A::Y
        }
    };
    if da != Vec3A::ZERO && db != Vec3A::ZERO && da.dot(db).abs() > PARALLEL_COS {
        // Project B's segment on A's axis and keep the overlap's two ends.
        let len = (q1 - p1).length();
        let (t0, t1) = ((p2 - p1).dot(da), (q2 - p1).dot(da));
        let (lo, hi) = (t0.min(t1).max(0.0), t0.max(t1).min(len));
        if hi - lo > 1e-4 * (1.0 + len) {
            let mut pts = ArrayVec::<WorldPoint, 2>::new();
            for (k, t) in [lo, hi].into_iter().enumerate() {
                let on_axis_a = p1 + da * t;
                let (on_axis_b, _) = closest_on_segment(on_axis_a, p2, q2);
                let s = (on_axis_b - on_axis_a).dot(n) - ra - rb;
                if s <= margin {
                    let on_a = on_axis_a + n * ra;
                    pts.push(WorldPoint {
                        on_a,
                        on_b: on_a + n * s,
                        separation: s,
                        feature: feature::simple(feature::CAPSULE, 1 + k as u32),
                    });
                }
            }
            if !pts.is_empty() {
                out.set_from_world(n, iso_a, iso_b, &pts);
                return true;
            }
        }
    }
    out.set_single(
        n,
        iso_a,
        iso_b,
        WorldPoint {
            on_a: c1 + n * ra,
            on_b: c2 - n * rb,
            separation: sep,
            feature: feature::simple(feature::CAPSULE, 0),
        },
    );
    true
}

/// Squared distance from `x` to the box `[-h, h]`.
fn box_distance2(x: Vec3A, h: Vec3A) -> f32 {
    (x - x.clamp(-h, h)).length_squared()
}

/// Exact closest point of segment `p + t d` (t in [0, 1]) to the box `[-h, h]`:
/// (t, squared distance). Ties go to the smallest t.
pub(crate) fn segment_box_closest(p: Vec3A, d: Vec3A, h: Vec3A) -> (f32, f32) {
    let mut ts = ArrayVec::<f32, 8>::new();
    ts.extend([0.0, 1.0]);
    for i in 0..3 {
        if d[i] != 0.0 {
            for s in [-h[i], h[i]] {
                let t = (s - p[i]) / d[i];
                if t > 0.0 && t < 1.0 {
                    ts.push(t);
                }
            }
        }
    }
    ts.sort_unstable_by(f32::total_cmp);
    let mut best = (0.0, box_distance2(p, h));
    for w in ts.windows(2) {
        let (t0, t1) = (w[0], w[1]);
        let mid = p + d * (0.5 * (t0 + t1));
        // On this piece each axis is below, inside or above its slab throughout, so the
        // squared distance is a*t^2 + b*t + c with these coefficients.
        let (mut a, mut b) = (0.0, 0.0);
        for i in 0..3 {
            let off = if mid[i] > h[i] {
                p[i] - h[i]
            } else if mid[i] < -h[i] {
                p[i] + h[i]
            } else {
                continue;
            };
            a += d[i] * d[i];
            b += 2.0 * d[i] * off;
        }
        let t = if a > 0.0 {
            (-b / (2.0 * a)).clamp(t0, t1)
        } else {
            t0
        };
        for t in [t, t1] {
            let f = box_distance2(p + d * t, h);
            if f < best.1 {
                best = (t, f);
            }
        }
    }
    best
}

/// Points of segment `p + t d` over box face `k` with outward sign `s` (normal `n`, in
/// the box frame): the segment clipped to the face's rectangle, at its two ends, each
/// with its own height above the face minus the radius `r`. Appends those within
/// `margin` to `out` as (point on the box face, point on the capsule, separation, end).
#[allow(clippy::too_many_arguments)]
fn face_points(
    p: Vec3A,
    d: Vec3A,
    h: Vec3A,
    k: usize,
    s: f32,
    r: f32,
    margin: f32,
    out: &mut ArrayVec<(Vec3A, Vec3A, f32, u32), 2>,
) {
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for i in [(k + 1) % 3, (k + 2) % 3] {
        if d[i].abs() < 1e-12 {
            if p[i].abs() > h[i] {
                return;
            }
            continue;
        }
        let (a, b) = ((-h[i] - p[i]) / d[i], (h[i] - p[i]) / d[i]);
        lo = lo.max(a.min(b));
        hi = hi.min(a.max(b));
    }
    if lo > hi {
        return;
    }
    let mut n = Vec3A::ZERO;
    n[k] = s;
    // Two ends unless the clipped piece is a point (a crossing, or a zero-length capsule).
    let ends: &[(f32, u32)] = if (hi - lo) * d.length() > 1e-6 {
        &[(lo, 0), (hi, 1)]
    } else {
        &[(lo, 0)]
    };
    for &(t, end) in ends {
        let x = p + d * t;
        let height = s * x[k] - h[k];
        let sep = height - r;
        if sep <= margin {
            out.push((x - n * height, x - n * r, sep, end));
        }
    }
}

/// Box A against capsule B.
pub(crate) fn box_capsule(
    a: &Cuboid,
    iso_a: &Isometry,
    b: &Capsule,
    iso_b: &Isometry,
    margin: f32,
    out: &mut ContactManifold,
) -> bool {
    let h = a.half_extents;
    let r = b.radius;
    let b_in_a = iso_a.inverse().mul_isometry(iso_b);
    let axis = b_in_a.transform_vector(Vec3A::new(0.0, b.half_height, 0.0));
    let p = b_in_a.translation - axis;
    let d = axis * 2.0;
    let (t, dist2) = segment_box_closest(p, d, h);
    let size = 1.0 + h.max_element() + b.half_height;
    let mut face_pts = ArrayVec::new();
    // (normal in A's frame, face axis or None, single point on A, on B, separation).
    let (n, face, single) = if dist2 > (1e-6 * size) * (1e-6 * size) {
        let x = p + d * t;
        let c = x.clamp(-h, h);
        let dist = dist2.sqrt();
        let sep = dist - r;
        if sep > margin {
            return false;
        }
        let n = (x - c) / dist;
        let outside = (x.abs() - h).cmpgt(Vec3A::ZERO);
        let face = match outside.bitmask() {
            0b001 => Some(0),
            0b010 => Some(1),
            0b100 => Some(2),
            _ => None,
        };
        (n, face, (c, x - n * r, sep))
    } else {
        match penetrating_axis(p, d, h) {
            Axis::Face(k, s) => {
                let mut n = Vec3A::ZERO;
                n[k] = s;
                // Deepest end as the fallback point.
                let e = if s * p[k] <= s * (p[k] + d[k]) {
                    p
                } else {
                    p + d
                };
                let height = s * e[k] - h[k];
                (n, Some(k), (e - n * height, e - n * r, height - r))
            }
            Axis::Edge(n, i, sep) => {
                // The box edge along axis i that is furthest along n.
                let mut mid = Vec3A::ZERO;
                for m in 0..3 {
                    if m != i {
                        mid[m] = if n[m] < 0.0 { -h[m] } else { h[m] };
                    }
                }
                let mut e = Vec3A::ZERO;
                e[i] = h[i];
                let (_, _, on_box, on_seg) = closest_segments(mid - e, mid + e, p, p + d);
                (n, None, (on_box, on_seg - n * r, sep - r))
            }
        }
    };
    if let Some(k) = face {
        let s = if n[k] < 0.0 { -1.0 } else { 1.0 };
        face_points(p, d, h, k, s, r, margin, &mut face_pts);
    }
    let n_a = if let Some(k) = face {
        let mut f = Vec3A::ZERO;
        f[k] = if n[k] < 0.0 { -1.0 } else { 1.0 };
        f
    } else {
        n
    };
    if face_pts.is_empty() {
        let (on_a, on_b, sep) = single;
        if sep > margin {
            return false;
        }
        out.set_from_frame_a(
            n_a,
            iso_a.rotation,
            &b_in_a,
            &[WorldPoint {
                on_a,
                on_b,
                separation: sep,
                feature: feature::simple(feature::CAPSULE_BOX, 63),
            }],
        );
        return true;
    }
    let k = face.expect("face points come from a face") as u32;
    let face_id = 2 * k + u32::from(n[k as usize] < 0.0);
    let pts: ArrayVec<WorldPoint, 2> = face_pts
        .iter()
        .map(|&(on_a, on_b, sep, end)| WorldPoint {
            on_a,
            on_b,
            separation: sep,
            feature: feature::pack(feature::CAPSULE_BOX, false, face_id, 0, 0, end, 0),
        })
        .collect();
    out.set_from_frame_a(n_a, iso_a.rotation, &b_in_a, &pts);
    true
}

/// The axis of least penetration of a segment inside a box.
enum Axis {
    /// Face axis `k` and its outward sign.
    Face(usize, f32),
    /// Edge axis (unit normal from the box to the segment), box edge direction, separation.
    Edge(Vec3A, usize, f32),
}

/// Separating-axis test of segment `p + t d` against the box `[-h, h]`.
fn penetrating_axis(p: Vec3A, d: Vec3A, h: Vec3A) -> Axis {
    // Separation along unit `l` and the side (sign) B is on.
    let sep_along = |l: Vec3A| -> (f32, f32) {
        let rb = h.dot(l.abs());
        let (s0, s1) = (p.dot(l), (p + d).dot(l));
        let (lo, hi) = (s0.min(s1), s0.max(s1));
        let plus = lo - rb;
        let minus = -rb - hi;
        if plus >= minus {
            (plus, 1.0)
        } else {
            (minus, -1.0)
        }
    };
    let mut face = (0, 1.0, f32::NEG_INFINITY);
    for k in 0..3 {
        let mut l = Vec3A::ZERO;
        l[k] = 1.0;
        let (s, sign) = sep_along(l);
        if s > face.2 {
            face = (k, sign, s);
        }
    }
    let dn = d.normalize_or_zero();
    let mut edge = (Vec3A::ZERO, 0, f32::NEG_INFINITY);
    for i in 0..3 {
        let mut e = Vec3A::ZERO;
        e[i] = 1.0;
        let c = cross(dn, e);
        if c.length_squared() < 1e-6 {
            continue;
        }
        let l = normalize(c);
        let (s, sign) = sep_along(l);
        if s > edge.2 {
            edge = (l * sign, i, s);
        }
    }
    if edge.2 > face.2 + 1e-3 + 0.05 * face.2.abs() {
        Axis::Edge(edge.0, edge.1, edge.2)
    } else {
        Axis::Face(face.0, face.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_box_closest_matches_dense_sampling() {
        // Brute force: the minimum of the squared distance over 20,001 samples of t is
        // within (step * |d|)^2-ish of the exact minimum, and never below it.
        let h = Vec3A::new(0.5, 0.3, 0.8);
        let cases = [
            (Vec3A::new(-2.0, 1.0, 0.3), Vec3A::new(4.0, 0.5, -1.0)),
            (Vec3A::new(1.0, 1.0, 1.0), Vec3A::new(0.5, 0.7, 0.2)),
            (Vec3A::new(-1.0, -0.5, -1.5), Vec3A::new(2.2, 0.0, 3.1)),
            (Vec3A::new(0.9, 0.0, 0.0), Vec3A::new(0.0, 0.0, 0.0)),
        ];
        for (p, d) in cases {
            let (t, f) = segment_box_closest(p, d, h);
            assert!((box_distance2(p + d * t, h) - f).abs() < 1e-6);
            let brute = (0..=20_000)
                .map(|k| box_distance2(p + d * (k as f32 / 20_000.0), h))
                .fold(f32::MAX, f32::min);
            assert!(f <= brute + 1e-6, "exact {f} above sampled {brute}");
            assert!(brute - f < 1e-4, "exact {f} far below sampled {brute}");
        }
    }

    #[test]
    fn closest_segments_of_crossing_and_parallel_segments() {
        // Crossing at right angles 1 apart in y: the closest points are the crossing.
        let (_, _, a, b) = closest_segments(
            Vec3A::new(-1.0, 0.0, 0.0),
            Vec3A::new(1.0, 0.0, 0.0),
            Vec3A::new(0.0, 1.0, -1.0),
            Vec3A::new(0.0, 1.0, 1.0),
        );
        assert!((a - Vec3A::ZERO).length() < 1e-6 && (b - Vec3A::Y).length() < 1e-6);
        // Parallel: distance is still exact (1).
        let (_, _, a, b) = closest_segments(
            Vec3A::new(-1.0, 0.0, 0.0),
            Vec3A::new(1.0, 0.0, 0.0),
            Vec3A::new(-0.5, 1.0, 0.0),
            Vec3A::new(3.0, 1.0, 0.0),
        );
        assert!(((b - a).length() - 1.0).abs() < 1e-6);
    }
}
