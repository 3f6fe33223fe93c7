//! Shape queries: sweep a shape through the world (first hit), find the bodies a shape
//! overlaps, and batched ray and shape casts that run in parallel on the world's job
//! system (one result per query, in query order, identical for any thread count).
//!
//! Shape casts use the same conservative advancement as continuous collision
//! (`ccd::linear_cast`): the swept shape does not rotate, and the hit is where the shapes
//! come within 0.1 mm. A shape that already overlaps a body at the start hits it at
//! fraction 0.

use crate::body::BodyId;
use crate::collision::ccd::linear_cast;
use crate::collision::narrow_phase::{ContactManifold, closest_points, collide};
use crate::collision::query::{QueryFilter, RayHit};
use crate::geometry::aabb::Aabb;
use crate::math::{Isometry, Vec3, Vec3A};
use crate::shape::Shape;
use crate::world::World;

/// The first body a swept shape hits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeCastHit {
    /// The body hit.
    pub body: BodyId,
    /// Fraction of the translation at the hit (`pose + fraction * translation`).
    pub fraction: f32,
    /// World point of contact.
    pub point: Vec3,
    /// World unit normal of the body's surface at the hit (pointing at the cast shape).
    pub normal: Vec3,
}

/// One ray of a batch: from `origin` along `direction` (its length is the ray's length).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayQuery {
    /// Start point.
    pub origin: Vec3,
    /// Direction and length.
    pub direction: Vec3,
}

/// One shape cast of a batch.
#[derive(Clone, Copy, Debug)]
pub struct ShapeCastQuery<'a> {
    /// The swept shape (not a half-space).
    pub shape: &'a Shape,
    /// Its pose at the start.
    pub pose: Isometry,
    /// The sweep.
    pub translation: Vec3,
}

/// Queries below this many per job are not split further.
const BATCH_GRAIN: usize = 16;

fn pose_is_finite(pose: &Isometry) -> bool {
    pose.translation.is_finite() && pose.rotation.is_finite()
}

impl World {
    /// Sweeps `shape` from `pose` along `translation` and returns the first body it hits
    /// (ties broken by body id), or `None` when it hits nothing, when the inputs are not
    /// finite, or when `shape` is a half-space, mesh or heightfield (which are not swept;
    /// compounds are).
    #[must_use]
    pub fn cast_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
    ) -> Option<ShapeCastHit> {
        if shape.as_convex().is_none() && !matches!(shape, Shape::Compound(_)) {
            return None;
        }
        if !pose_is_finite(&pose) || !translation.is_finite() {
            return None;
        }
        let delta = Vec3A::from(translation);
        let end = Isometry::new(pose.translation + delta, pose.rotation);
        let swept = shape.world_aabb(&pose).union(&shape.world_aabb(&end));
        let mut best: Option<ShapeCastHit> = None;
        self.broad_phase.query_aabb(&swept, |_, body| {
            if !filter.accepts(&self.bodies, body) {
                return true;
            }
            let other = &self.bodies.bodies[body as usize];
            let other_pose = self.bodies.sim_of(body).transform;
            let max = best.map_or(1.0, |h| h.fraction);
            if let Some((fraction, n, p)) = linear_cast(
                shape,
                &pose,
                delta,
                &other.shape,
                &other_pose,
                max,
                0.0,
                0.0,
            ) {
                let id = self.bodies.id_of(body);
                let better = best.is_none_or(|h| (fraction, id) < (h.fraction, h.body));
                if better {
                    best = Some(ShapeCastHit {
                        body: id,
                        fraction,
                        point: p.into(),
                        normal: (-n).into(),
                    });
                }
            }
            true
        });
        best
    }

    /// Every body whose shape overlaps `shape` at `pose` (touching counts), ordered by id.
    /// Empty when the pose is not finite or `shape` is a half-space, mesh or heightfield
    /// (compounds may be the query shape).
    #[must_use]
    pub fn overlap_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        filter: &QueryFilter,
    ) -> Vec<BodyId> {
        let mut out = Vec::new();
        let convex = shape.as_convex();
        if convex.is_none() && !matches!(shape, Shape::Compound(_)) {
            return out;
        }
        if !pose_is_finite(&pose) {
            return out;
        }
        let aabb: Aabb = shape.world_aabb(&pose);
        self.broad_phase.query_aabb(&aabb, |_, body| {
            if !filter.accepts(&self.bodies, body) {
                return true;
            }
            let other = &self.bodies.bodies[body as usize];
            let other_pose = self.bodies.sim_of(body).transform;
            let separation = match (convex, &other.shape) {
                (Some(convex), Shape::HalfSpace(h)) => h.distance_to(&other_pose, convex, &pose).0,
                (Some(convex), s) if s.as_convex().is_some() => {
                    let oc = s.as_convex().expect("checked just above");
                    closest_points(convex, &pose, oc, &other_pose).separation
                }
                // Composite on either side: the narrow phase's manifold at zero margin has
                // points exactly when the shapes touch or overlap.
                (_, s) => {
                    let mut m = ContactManifold::default();
                    if collide(shape, &pose, s, &other_pose, 0.0, &mut m) {
                        m.points
                            .iter()
                            .map(|p| p.separation)
                            .fold(f32::INFINITY, f32::min)
                    } else {
                        f32::INFINITY
                    }
                }
            };
            if separation <= 0.0 {
                out.push(self.bodies.id_of(body));
            }
            true
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Casts every ray of `rays` (like [`cast_ray`](World::cast_ray)) in parallel on the
    /// world's job system; `out` gets one result per ray, in order.
    pub fn cast_rays(
        &self,
        rays: &[RayQuery],
        filter: &QueryFilter,
        out: &mut Vec<Option<RayHit>>,
    ) {
        out.clear();
        out.resize(rays.len(), None);
        self.jobs
            .parallel_for_slice(out, BATCH_GRAIN, |start, chunk| {
                for (k, slot) in chunk.iter_mut().enumerate() {
                    let r = &rays[start + k];
                    *slot = self.cast_ray(r.origin, r.direction, filter);
                }
            });
    }

    /// Casts every shape of `casts` (like [`cast_shape`](World::cast_shape)) in parallel;
    /// `out` gets one result per cast, in order.
    pub fn cast_shapes(
        &self,
        casts: &[ShapeCastQuery<'_>],
        filter: &QueryFilter,
        out: &mut Vec<Option<ShapeCastHit>>,
    ) {
        out.clear();
        out.resize(casts.len(), None);
        self.jobs
            .parallel_for_slice(out, BATCH_GRAIN, |start, chunk| {
                for (k, slot) in chunk.iter_mut().enumerate() {
                    let c = &casts[start + k];
                    *slot = self.cast_shape(c.shape, c.pose, c.translation, filter);
                }
            });
    }
}
