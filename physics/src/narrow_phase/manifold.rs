//! Contact manifolds: up to four points sharing one normal.

use arrayvec::ArrayVec;

use crate::math::{Isometry, Vec3A};

/// One contact point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    /// The point on shape A's surface, in A's body frame.
    pub local_a: Vec3A,
    /// The point on shape B's surface, in B's body frame.
    pub local_b: Vec3A,
    /// Signed distance along the normal (negative: penetration).
    pub separation: f32,
    /// Which features touch (stable while the same features touch), for warm starting.
    pub feature: u32,
}

/// A contact manifold: a shared normal (world, unit, from A towards B) and its points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactManifold {
    /// World-space unit normal from A to B.
    pub normal: Vec3A,
    /// At most four points.
    pub points: ArrayVec<ContactPoint, 4>,
}

/// A world-space candidate point before reduction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldPoint {
    /// Point on A's surface.
    pub on_a: Vec3A,
    /// Point on B's surface.
    pub on_b: Vec3A,
    pub separation: f32,
    pub feature: u32,
}

impl ContactManifold {
    /// Clears the manifold.
    pub fn clear(&mut self) {
        self.points.clear();
    }

    /// Fills the manifold from world points (already filtered by the margin), reducing to
    /// at most four: the deepest point, the one farthest from it, then the two that add the
    /// most area on either side (the usual area-maximising reduction).
    pub(crate) fn set_from_world(
        &mut self,
        normal: Vec3A,
        iso_a: &Isometry,
        iso_b: &Isometry,
        pts: &[WorldPoint],
    ) {
        self.normal = normal;
        self.points.clear();
        let push = |m: &mut ContactManifold, p: &WorldPoint| {
            m.points.push(ContactPoint {
                local_a: iso_a.inverse_transform_point(p.on_a),
                local_b: iso_b.inverse_transform_point(p.on_b),
                separation: p.separation,
                feature: p.feature,
            });
        };
        if pts.len() <= 4 {
            for p in pts {
                push(self, p);
            }
            return;
        }
        let deepest = (0..pts.len())
            .min_by(|&a, &b| pts[a].separation.total_cmp(&pts[b].separation))
            .expect("non-empty");
        let a = pts[deepest].on_b;
        let far = (0..pts.len())
            .max_by(|&i, &j| {
                (pts[i].on_b - a)
                    .length_squared()
                    .total_cmp(&(pts[j].on_b - a).length_squared())
            })
            .expect("non-empty");
        let b = pts[far].on_b;
        let ab = b - a;
        let signed_area = |p: Vec3A| ab.cross(p - a).dot(normal);
        let third = (0..pts.len())
            .max_by(|&i, &j| signed_area(pts[i].on_b).total_cmp(&signed_area(pts[j].on_b)))
            .expect("non-empty");
        let fourth = (0..pts.len())
            .min_by(|&i, &j| signed_area(pts[i].on_b).total_cmp(&signed_area(pts[j].on_b)))
            .expect("non-empty");
        let mut chosen = [deepest, third, far, fourth];
        chosen.sort_unstable();
        let mut last = usize::MAX;
        for i in chosen {
            if i != last {
                push(self, &pts[i]);
                last = i;
            }
        }
    }

    /// Swaps the roles of A and B (flips the normal).
    pub(crate) fn flip(&mut self) {
        self.normal = -self.normal;
        for p in &mut self.points {
            std::mem::swap(&mut p.local_a, &mut p.local_b);
        }
    }
}
