//! Contact manifolds: at most four points sharing one normal, and the reduction that
//! picks those four from the up to 64 points face clipping may produce.
//!
//! Invariants every routine keeps when it fills a manifold:
//! - `normal` is a world-space unit vector pointing from shape A towards shape B;
//! - for each point, `world(local_b) - world(local_a) ≈ separation * normal` (the two
//!   surface points differ along the normal only, so the solver can use either);
//! - feature ids are unique within one manifold and depend only on which features touch
//!   (never on the pose), so the contact cache can match points across frames.
//!
//! The reduction keeps the deepest point (the one that must not be lost; near-ties go to
//! the first candidate, so equally deep resting points give the same four every frame), the point
//! farthest from it, then the two points that add the most area (the same greedy
//! area-maximising choice as Bullet's and Jolt's manifold pruning): four points spanning
//! the largest quadrilateral support the shapes best against rotation.

use crate::math::{cross, rotate};
use arrayvec::ArrayVec;

pub use crate::contact::{ContactManifold, ContactPoint, MAX_MANIFOLD_POINTS};
use crate::math::{Isometry, Mat3A, Quat, Vec3A};

/// Points this close to the deepest one (m) count as equally deep in the reduction.
const DEPTH_TIE: f32 = 1e-3;

impl ContactManifold {
    /// Removes every point (the normal is left as is).
    pub fn clear(&mut self) {
        self.points.clear();
        self.materials = [None, None];
    }

    /// Swaps the roles of A and B: flips the normal and swaps each point's local points.
    /// Separations and feature ids do not change.
    pub fn flip(&mut self) {
        self.normal = -self.normal;
        self.materials.swap(0, 1);
        for p in &mut self.points {
            std::mem::swap(&mut p.local_a, &mut p.local_b);
        }
    }

    /// Fills the manifold from world-space candidates (already within the margin),
    /// reducing them to at most four with [`reduce_contact_points`].
    pub(crate) fn set_from_world(
        &mut self,
        normal: Vec3A,
        iso_a: &Isometry,
        iso_b: &Isometry,
        candidates: &[WorldPoint],
    ) {
        self.normal = normal;
        self.points.clear();
        let keep = reduce_by(normal, candidates.len(), |i| {
            let c = &candidates[i];
            (0.5 * (c.on_a + c.on_b), c.separation)
        });
        for i in keep {
            let c = &candidates[i];
            self.points.push(ContactPoint {
                local_a: iso_a.inverse_transform_point(c.on_a),
                local_b: iso_b.inverse_transform_point(c.on_b),
                separation: c.separation,
                feature: c.feature,
            });
        }
    }

    /// Like [`Self::set_from_world`] for candidates given in A's body frame (routines
    /// that work there): `normal_a` in A's frame, `rot_a` A's rotation, `b_in_a` B's
    /// frame relative to A's. Saves the round trip through world space.
    pub(crate) fn set_from_frame_a(
        &mut self,
        normal_a: Vec3A,
        rot_a: Quat,
        b_in_a: &Isometry,
        candidates: &[WorldPoint],
    ) {
        self.normal = rotate(rot_a, normal_a);
        self.points.clear();
        let keep = reduce_by(normal_a, candidates.len(), |i| {
            let c = &candidates[i];
            (0.5 * (c.on_a + c.on_b), c.separation)
        });
        let to_b = Mat3A::from_quat(b_in_a.rotation).transpose();
        for i in keep {
            let c = &candidates[i];
            self.points.push(ContactPoint {
                local_a: c.on_a,
                local_b: to_b * (c.on_b - b_in_a.translation),
                separation: c.separation,
                feature: c.feature,
            });
        }
    }

    /// Sets a manifold of one point.
    pub(crate) fn set_single(
        &mut self,
        normal: Vec3A,
        iso_a: &Isometry,
        iso_b: &Isometry,
        point: WorldPoint,
    ) {
        self.set_from_world(normal, iso_a, iso_b, &[point]);
    }
}

/// A candidate point before reduction, in world space (or in A's frame for
/// [`ContactManifold::set_from_frame_a`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldPoint {
    /// Point on A's surface.
    pub on_a: Vec3A,
    /// Point on B's surface (`on_b - on_a ≈ separation * normal`).
    pub on_b: Vec3A,
    /// Signed distance along the normal.
    pub separation: f32,
    /// Feature id.
    pub feature: u32,
}

/// Chooses at most four of `positions` (world points of one contact patch) to keep:
/// the deepest (smallest `separations[i]`; the lowest index among those within 1 mm of
/// it), the one farthest from
/// it across the normal, the one making the largest triangle with those two, and the one
/// adding the most area to that triangle. Returns their indices in increasing order.
/// Points are compared in the plane perpendicular to `normal`; coincident or collinear
/// sets give fewer than four. `positions` and `separations` must have the same length.
#[must_use]
pub fn reduce_contact_points(
    normal: Vec3A,
    positions: &[Vec3A],
    separations: &[f32],
) -> ArrayVec<usize, MAX_MANIFOLD_POINTS> {
    assert_eq!(
        positions.len(),
        separations.len(),
        "one separation per position"
    );
    reduce_by(normal, positions.len(), |i| (positions[i], separations[i]))
}

/// [`reduce_contact_points`] over any indexed candidate set.
fn reduce_by(
    normal: Vec3A,
    count: usize,
    point: impl Fn(usize) -> (Vec3A, f32),
) -> ArrayVec<usize, MAX_MANIFOLD_POINTS> {
    let mut keep = ArrayVec::new();
    if count <= MAX_MANIFOLD_POINTS {
        keep.extend(0..count);
        return keep;
    }
    let pos = |i: usize| point(i).0;
    // Argmax with the lowest index winning ties, so the choice is deterministic.
    let argmax = |score: &dyn Fn(usize) -> f32| {
        let mut best = (0, f32::NEG_INFINITY);
        for i in 0..count {
            let s = score(i);
            if s > best.1 {
                best = (i, s);
            }
        }
        best
    };
    // The deepest point; among points within DEPTH_TIE of it, the first, so that a
    // resting patch whose points are equally deep does not pick a different start (and
    // a different set of four) every frame.
    let (_, neg_min) = argmax(&|i| -point(i).1);
    let (i0, _) = argmax(&|i| {
        if -point(i).1 >= neg_min - DEPTH_TIE {
            -(i as f32)
        } else {
            f32::NEG_INFINITY
        }
    });
    let p0 = pos(i0);
    let (i1, d1) = argmax(&|i| {
        let d = pos(i) - p0;
        (d - normal * normal.dot(d)).length_squared()
    });
    // Everything within a hair of the deepest point: one point says it all.
    if d1 <= 1e-12 {
        keep.push(i0);
        return keep;
    }
    let p1 = pos(i1);
    let area = |a: Vec3A, b: Vec3A, c: Vec3A| cross(b - a, c - a).dot(normal);
    let (i2, a2) = argmax(&|i| area(p0, p1, pos(i)).abs());
    // Tolerance relative to the patch size: collinear points give a segment.
    let tiny = 1e-6 * d1;
    if a2 <= tiny {
        keep.extend([i0.min(i1), i0.max(i1)]);
        return keep;
    }
    // The triangle counter-clockwise about the normal.
    let p2 = pos(i2);
    let tri = if area(p0, p1, p2) > 0.0 {
        [p0, p1, p2]
    } else {
        [p0, p2, p1]
    };
    // Area a point adds outside one of the triangle's edges.
    let (i3, a3) = argmax(&|i| {
        let q = pos(i);
        (0..3)
            .map(|e| -area(tri[e], tri[(e + 1) % 3], q))
            .fold(0.0, f32::max)
    });
    keep.extend([i0, i1, i2]);
    if a3 > tiny {
        keep.push(i3);
    }
    keep.sort_unstable();
    keep
}

/// Feature ids. One packed `u32` per point, built from the features that touch:
///
/// | bits | meaning |
/// |---|---|
/// | 0..6 | index `i` (a vertex or an edge) |
/// | 6..12 | index `j` |
/// | 12..14 | what `i`, `j` name: 0 incident vertex `i`; 1 incident edge `i` cut by reference edge `j`; 2 reference corner between reference edges `i` and `j` |
/// | 14..20 | incident face |
/// | 20..26 | reference face |
/// | 26 | the reference face is B's |
/// | 27..32 | the routine (so two routines never share ids) |
pub(crate) mod feature {
    /// Routine tags.
    pub const SPHERE: u32 = 1;
    pub const CAPSULE: u32 = 2;
    pub const BOX_FACE: u32 = 3;
    pub const BOX_EDGE: u32 = 4;
    pub const CONVEX: u32 = 5;
    pub const HALF_SPACE: u32 = 6;
    pub const CAPSULE_BOX: u32 = 7;
    pub const TRIANGLE: u32 = 8;

    /// Kinds of clipped points.
    pub const INCIDENT_VERTEX: u32 = 0;
    pub const EDGE_CUT: u32 = 1;
    pub const REFERENCE_CORNER: u32 = 2;

    /// Packs a feature id (indices and faces are taken modulo 64).
    #[must_use]
    pub fn pack(
        routine: u32,
        ref_is_b: bool,
        ref_face: u32,
        inc_face: u32,
        kind: u32,
        i: u32,
        j: u32,
    ) -> u32 {
        (routine & 0x1f) << 27
            | u32::from(ref_is_b) << 26
            | (ref_face & 63) << 20
            | (inc_face & 63) << 14
            | (kind & 3) << 12
            | (j & 63) << 6
            | (i & 63)
    }

    /// A simple id: routine plus one index.
    #[must_use]
    pub fn simple(routine: u32, i: u32) -> u32 {
        pack(routine, false, 0, 0, 0, i, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_of_a_square_grid_keeps_the_deepest_point_and_the_corners() {
        // A 3x3 grid on the plane y = 0 with the centre deepest: the largest quadrilateral
        // through the deepest point uses the centre and three corners (area 1.5 of 4).
        // What must hold: the deepest point survives and the four are distinct.
        let mut pos = Vec::new();
        let mut sep = Vec::new();
        for i in 0..3 {
            for k in 0..3 {
                pos.push(Vec3A::new(i as f32 - 1.0, 0.0, k as f32 - 1.0));
                sep.push(if i == 1 && k == 1 { -0.1 } else { -0.01 });
            }
        }
        let keep = reduce_contact_points(Vec3A::Y, &pos, &sep);
        assert_eq!(keep.len(), 4);
        assert!(keep.contains(&4), "deepest kept: {keep:?}");
        assert!(keep.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn reduction_of_eight_octagon_points_at_equal_depth_spans_a_large_area() {
        // Regular octagon of radius 1: the best inscribed quadrilateral is a square of
        // area 2 (the maximum for 4 of the 8 points); greedy picks must reach it because
        // the farthest point from any vertex is the opposite vertex.
        let pos: Vec<Vec3A> = (0..8)
            .map(|k| {
                let t = k as f32 * std::f32::consts::FRAC_PI_4;
                Vec3A::new(t.cos(), 0.0, t.sin())
            })
            .collect();
        let sep = vec![0.0; 8];
        let keep = reduce_contact_points(Vec3A::Y, &pos, &sep);
        assert_eq!(keep.len(), 4);
        // Shoelace area of the kept points in angular order (they are sorted by index,
        // which is angular order here).
        let mut a = 0.0;
        for w in 0..4 {
            let (p, q) = (pos[keep[w]], pos[keep[(w + 1) % 4]]);
            a += p.z * q.x - p.x * q.z;
        }
        assert!((a.abs() * 0.5 - 2.0).abs() < 1e-5, "area {}", a.abs() * 0.5);
    }

    #[test]
    fn reduction_of_collinear_and_coincident_points() {
        let line: Vec<Vec3A> = (0..6).map(|k| Vec3A::new(k as f32, 0.0, 0.0)).collect();
        let sep = [0.0, -0.2, 0.0, 0.0, 0.0, 0.0];
        // Deepest is index 1, farthest from it index 5; no third point adds area.
        assert_eq!(
            reduce_contact_points(Vec3A::Y, &line, &sep).as_slice(),
            &[1, 5]
        );
        let same = [Vec3A::ONE; 6];
        assert_eq!(
            reduce_contact_points(Vec3A::Y, &same, &[0.0; 6]).as_slice(),
            &[0]
        );
    }

    #[test]
    fn flip_swaps_local_points_and_negates_the_normal() {
        let mut m = ContactManifold {
            normal: Vec3A::X,
            points: ArrayVec::new(),
            materials: [Some(3), None],
        };
        m.points.push(ContactPoint {
            local_a: Vec3A::ONE,
            local_b: Vec3A::ZERO,
            separation: -0.1,
            feature: 7,
        });
        m.flip();
        assert_eq!(m.materials, [None, Some(3)], "part materials swap sides");
        assert_eq!(m.normal, -Vec3A::X);
        assert_eq!(m.points[0].local_a, Vec3A::ZERO);
        assert_eq!(m.points[0].local_b, Vec3A::ONE);
        assert_eq!((m.points[0].separation, m.points[0].feature), (-0.1, 7));
    }
}
