//! Face clipping: the contact patch of two faces touching along a normal.
//!
//! One face is the reference (the one most perpendicular to the normal), the other the
//! incident face. The incident polygon is clipped (Sutherland–Hodgman) by the side
//! planes through the reference face's edges, each plane containing the contact normal,
//! so what is left is the part of the incident face that lies over the reference face
//! when seen along the normal. Each surviving point's separation is its distance to the
//! reference face's plane measured along the normal (Jolt's `ManifoldBetweenTwoFaces`
//! does the same); points farther than the margin are dropped.
//!
//! Every clipped point knows which features produced it, which gives its feature id:
//! an incident vertex; an incident edge cut by a reference side plane; or a reference
//! corner (where two side planes meet inside the incident face). To know which edge a
//! cut lies on, each polygon vertex carries the line its outgoing edge lies on: an
//! incident edge, or a reference side plane once a cut has run along it.
//!
//! The side planes are pushed out by a slop of 0.1% of the reference face's size: an
//! incident vertex exactly on a side plane (aligned stacks) then keeps its id under
//! perturbations smaller than the slop.
//!
//! A reference "face" may also be a segment (a capsule or cylinder side): then only its
//! two end planes clip. An incident face may be a polygon, a segment or one point.

use crate::math::cross;
use arrayvec::ArrayVec;

use crate::math::Vec3A;

use super::manifold::{WorldPoint, feature};

/// Most points clipping can produce: a convex n-gon cut by m planes keeps at most n + m
/// vertices, and faces have at most 32 vertices.
pub(crate) const MAX_CLIPPED: usize = 2 * crate::geometry::support::MAX_FACE_VERTICES;

/// The side planes are pushed out by this fraction of the reference face's size, so an
/// incident vertex lying on a side plane (boxes stacked with aligned edges) stays an
/// incident vertex under tiny perturbations instead of flipping between being kept and
/// being cut, which would change its feature id from frame to frame.
const CLIP_SLOP: f32 = 1e-3;

/// The line a polygon vertex's outgoing edge lies on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Line {
    Incident(u32),
    Side(u32),
}

#[derive(Clone, Copy, Debug)]
struct ClipVertex {
    p: Vec3A,
    kind: u32,
    i: u32,
    j: u32,
    out_edge: Line,
}

type Poly = ArrayVec<ClipVertex, MAX_CLIPPED>;

/// The point where the edge leaving `a` crosses side plane `plane`.
fn cut(a: &ClipVertex, b: &ClipVertex, da: f32, db: f32, plane: u32, leaving: bool) -> ClipVertex {
    let t = da / (da - db);
    let (kind, i) = match a.out_edge {
        Line::Incident(e) => (feature::EDGE_CUT, e),
        Line::Side(k) => (feature::REFERENCE_CORNER, k),
    };
    ClipVertex {
        p: a.p + (b.p - a.p) * t,
        kind,
        i,
        j: plane,
        out_edge: if leaving {
            Line::Side(plane)
        } else {
            a.out_edge
        },
    }
}

/// Keeps the part of `poly` where `s · p <= o`.
fn clip_plane(poly: &Poly, s: Vec3A, o: f32, plane: u32, out: &mut Poly) {
    out.clear();
    let n = poly.len();
    let dist = |v: &ClipVertex| s.dot(v.p) - o;
    match n {
        0 => {}
        1 => {
            if dist(&poly[0]) <= 0.0 {
                out.push(poly[0]);
            }
        }
        2 => {
            // An open segment: clip its one edge.
            let (a, b) = (&poly[0], &poly[1]);
            let (da, db) = (dist(a), dist(b));
            match (da <= 0.0, db <= 0.0) {
                (true, true) => out.extend([*a, *b]),
                (true, false) => out.extend([*a, cut(a, b, da, db, plane, true)]),
                (false, true) => out.extend([cut(a, b, da, db, plane, false), *b]),
                (false, false) => {}
            }
        }
        _ => {
            for k in 0..n {
                let (a, b) = (&poly[k], &poly[(k + 1) % n]);
                let (da, db) = (dist(a), dist(b));
                if da <= 0.0 && out.try_push(*a).is_err() {
                    return;
                }
                if (da <= 0.0) != (db <= 0.0)
                    && out.try_push(cut(a, b, da, db, plane, da <= 0.0)).is_err()
                {
                    return;
                }
            }
        }
    }
}

/// Unit normal of a planar polygon, counter-clockwise seen from its front, by Newell's
/// method (sums over all vertices, so it is robust for any count); zero if degenerate.
pub(crate) fn polygon_normal(pts: &[Vec3A]) -> Vec3A {
    let Some(&o) = pts.first() else {
        return Vec3A::ZERO;
    };
    let mut n = Vec3A::ZERO;
    for k in 1..pts.len().saturating_sub(1) {
        n += cross(pts[k] - o, pts[k + 1] - o);
    }
    n.normalize_or_zero()
}

/// A face taking part in clipping: world-space vertices (counter-clockwise seen from
/// outside its shape) and an id used in feature ids.
#[derive(Clone, Copy)]
pub(crate) struct ClipFace<'a> {
    pub points: &'a [Vec3A],
    pub id: u32,
}

/// Clips `incident` against `reference` and appends the points within `margin` to
/// `out`. `normal` is the contact normal from A to B; `ref_is_b` says whose face the
/// reference is. Returns false when the reference is a single point (nothing to clip
/// against) or the reference plane is too oblique to the normal (more than ~80°).
#[allow(clippy::too_many_arguments)]
pub(crate) fn clip_faces(
    normal: Vec3A,
    reference: ClipFace,
    ref_is_b: bool,
    incident: ClipFace,
    routine: u32,
    margin: f32,
    out: &mut ArrayVec<WorldPoint, MAX_CLIPPED>,
) -> bool {
    let refs = reference.points;
    if refs.len() < 2 || incident.points.is_empty() {
        return false;
    }
    // Outward from the reference shape, towards the incident one.
    let ref_n = if ref_is_b { -normal } else { normal };
    let mut buf_a: Poly = incident
        .points
        .iter()
        .take(MAX_CLIPPED)
        .enumerate()
        .map(|(k, &p)| ClipVertex {
            p,
            kind: feature::INCIDENT_VERTEX,
            i: k as u32,
            j: 0,
            out_edge: Line::Incident(k as u32),
        })
        .collect();
    let mut buf_b = Poly::new();
    // Clip back and forth between the two buffers (swapping the references, not the
    // kilobytes behind them).
    let (mut poly, mut tmp) = (&mut buf_a, &mut buf_b);

    // The reference plane, as (unit normal, point, normal · ref_n).
    let (plane_n, plane_p, cos) = if refs.len() >= 3 {
        let mut n = polygon_normal(refs);
        if n.dot(ref_n) < 0.0 {
            n = -n;
        }
        let c = refs.iter().copied().sum::<Vec3A>() / refs.len() as f32;
        (n, c, n.dot(ref_n))
    } else {
        (ref_n, refs[0], 1.0)
    };
    if cos < 0.17 {
        return false;
    }

    if refs.len() >= 3 {
        let c = plane_p;
        let size = refs.iter().map(|p| (*p - c).length()).fold(0.0, f32::max);
        let slop = CLIP_SLOP * size;
        for k in 0..refs.len() {
            let (p, q) = (refs[k], refs[(k + 1) % refs.len()]);
            let Some(mut s) = cross(q - p, ref_n).try_normalize() else {
                continue;
            };
            if s.dot(c - p) > 0.0 {
                s = -s;
            }
            clip_plane(poly, s, s.dot(p) + slop, k as u32, tmp);
            std::mem::swap(&mut poly, &mut tmp);
            if poly.is_empty() {
                return true;
            }
        }
    } else {
        // A segment: its two end planes (the segment projected along the normal).
        let (p, q) = (refs[0], refs[1]);
        let axis = (q - p) - ref_n * ref_n.dot(q - p);
        if let Some(axis) = axis.try_normalize() {
            let slop = CLIP_SLOP * (q - p).length();
            clip_plane(poly, -axis, -axis.dot(p) + slop, 0, tmp);
            std::mem::swap(&mut poly, &mut tmp);
            clip_plane(poly, axis, axis.dot(q) + slop, 1, tmp);
            std::mem::swap(&mut poly, &mut tmp);
        }
    }

    for v in poly.iter() {
        let sep = plane_n.dot(v.p - plane_p) / cos;
        if sep > margin || out.is_full() {
            continue;
        }
        let on_ref = v.p - ref_n * sep;
        let (on_a, on_b) = if ref_is_b {
            (v.p, on_ref)
        } else {
            (on_ref, v.p)
        };
        out.push(WorldPoint {
            on_a,
            on_b,
            separation: sep,
            feature: feature::pack(
                routine,
                ref_is_b,
                reference.id,
                incident.id,
                v.kind,
                v.i,
                v.j,
            ),
        });
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(y: f32, h: f32) -> [Vec3A; 4] {
        // Counter-clockwise seen from +y.
        [
            Vec3A::new(-h, y, -h),
            Vec3A::new(-h, y, h),
            Vec3A::new(h, y, h),
            Vec3A::new(h, y, -h),
        ]
    }

    #[test]
    fn square_over_a_larger_square_keeps_its_corners_and_small_square_is_cut() {
        // Reference: A's top face (y = 0, half size 1). Incident: B's bottom face at
        // y = -0.01 (1 cm deep), half size 0.5: entirely over the reference, 4 corners.
        let r = square(0.0, 1.0);
        let inc = square(-0.01, 0.5);
        let mut out = ArrayVec::new();
        let ok = clip_faces(
            Vec3A::Y,
            ClipFace { points: &r, id: 2 },
            false,
            ClipFace {
                points: &inc,
                id: 3,
            },
            feature::BOX_FACE,
            0.02,
            &mut out,
        );
        assert!(ok);
        assert_eq!(out.len(), 4);
        for p in &out {
            assert!((p.separation + 0.01).abs() < 1e-6);
            assert!(((p.on_b - p.on_a) - Vec3A::Y * p.separation).length() < 1e-6);
        }
        // Incident larger than the reference: 4 reference corners come out (the
        // incident face covers the whole reference face), each a reference-corner id.
        let inc = square(-0.01, 2.0);
        let r = square(0.0, 0.5);
        out.clear();
        clip_faces(
            Vec3A::Y,
            ClipFace { points: &r, id: 2 },
            false,
            ClipFace {
                points: &inc,
                id: 3,
            },
            feature::BOX_FACE,
            0.02,
            &mut out,
        );
        assert_eq!(out.len(), 4);
        let mut ids: Vec<u32> = out.iter().map(|p| p.feature).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 4, "unique ids");
        for p in &out {
            assert_eq!((p.feature >> 12) & 3, feature::REFERENCE_CORNER);
            // At the corners, pushed out by the slop (0.1 % of the face's half diagonal).
            let slop = CLIP_SLOP * 0.5 * 2f32.sqrt();
            assert!((p.on_a.x.abs() - 0.5 - slop).abs() < 1e-6);
            assert!((p.on_a.z.abs() - 0.5 - slop).abs() < 1e-6);
        }
    }

    #[test]
    fn segment_incident_is_cut_to_the_reference_and_far_points_dropped() {
        // A segment along x from -2 to 2 at height 0.01 over a unit square (half 0.5):
        // cut at x = ±0.5 (plus the slop), separation +0.01 (speculative). With margin
        // 0.005: none.
        let r = square(0.0, 0.5);
        let seg = [Vec3A::new(-2.0, 0.01, 0.0), Vec3A::new(2.0, 0.01, 0.0)];
        let mut out = ArrayVec::new();
        clip_faces(
            Vec3A::Y,
            ClipFace { points: &r, id: 0 },
            false,
            ClipFace {
                points: &seg,
                id: 0,
            },
            feature::CONVEX,
            0.02,
            &mut out,
        );
        assert_eq!(out.len(), 2);
        for p in &out {
            // Cut at the end planes, pushed out by the slop (0.1 % of the face size).
            let slop = CLIP_SLOP * 0.5 * 2f32.sqrt();
            assert!((p.on_b.x.abs() - 0.5 - slop).abs() < 1e-6);
            assert!((p.separation - 0.01).abs() < 1e-6);
        }
        out.clear();
        clip_faces(
            Vec3A::Y,
            ClipFace { points: &r, id: 0 },
            false,
            ClipFace {
                points: &seg,
                id: 0,
            },
            feature::CONVEX,
            0.005,
            &mut out,
        );
        assert!(out.is_empty());
    }
}
