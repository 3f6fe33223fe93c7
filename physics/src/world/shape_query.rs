//! Shape queries: sweep a shape through the world (first hit), find the bodies a shape
//! overlaps, and batched ray and shape casts that run in parallel on the world's job
//! system (one result per query, in query order, identical for any thread count).
//!
//! Shape casts use the same conservative advancement as continuous collision
//! (`ccd::linear_cast`): the swept shape does not rotate, and the hit is where the shapes
//! come within 0.1 mm.
//!
//! A shape that starts in contact with a body (closer than 0.1 mm, or overlapping it) is
//! judged first, by the narrow phase at the start pose (so a mesh's or heightfield's
//! internal edges give face normals, as in a step): the hit is at fraction 0, flagged
//! [`ShapeCastHit::started_in_contact`], with the contact's normal and depth. With
//! [`ShapeCastOptions::ignore_initial_contacts_moving_away`] it is a hit only when the
//! translation points into that normal; moving away or along the surface, the body is
//! cast on, and only a part the shape would sink into deeper than it started (a bump, a
//! wall of the same mesh) stops it. A character resting on the ground can then be cast
//! up and sideways (Rapier's `stop_at_penetration: false`, Avian's
//! `ignore_origin_penetration`).

use crate::body::BodyId;
use crate::collision::ccd::{CastSettings, linear_cast};
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
    /// Whether the shape already touched or overlapped the body at the start (closer
    /// than 0.1 mm): the hit is then at fraction 0, `normal` is the contact normal there
    /// and `depth` how deep the shape started.
    pub started_in_contact: bool,
    /// Penetration depth at the start (m, at least 0; 0 when merely touching or when
    /// the hit did not start in contact).
    pub depth: f32,
}

/// How a shape cast treats the bodies the shape starts in contact with.
///
/// `Default`: each is a hit at fraction 0 (what [`World::cast_shape`] does), whichever
/// way the shape moves.
///
/// ```
/// use joule_physics::prelude::*;
/// use joule_physics::math::Vec3A;
/// use joule_physics::shape_query::ShapeCastOptions;
///
/// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
/// world.create_body(&BodyDesc::fixed(Shape::half_space(Vec3::Y, 0.0)?, Vec3::ZERO))?;
/// // A capsule standing on the ground (its lowest point at y = 0).
/// let capsule = Shape::capsule(0.5, 0.25)?;
/// let pose = Isometry::from_translation(Vec3A::new(0.0, 0.75, 0.0));
/// let all = QueryFilter::default();
/// let away = ShapeCastOptions { ignore_initial_contacts_moving_away: true };
/// let up = world.cast_shape_with(&capsule, pose, Vec3::Y, &all, &away);
/// assert!(up.is_none(), "moving away from the ground hits nothing");
/// let down = world.cast_shape_with(&capsule, pose, -Vec3::Y, &all, &away).unwrap();
/// assert!(down.started_in_contact && down.fraction == 0.0 && down.normal.y > 0.99);
/// // The plain cast reports the ground it starts on, whichever way it moves.
/// assert!(world.cast_shape(&capsule, pose, Vec3::Y, &all).unwrap().started_in_contact);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShapeCastOptions {
    /// Of the bodies the shape starts in contact with, report only those the
    /// translation moves it into: the direction points into the start contact's normal
    /// by more than 1/1000 of its length (0.06°, above the narrow phase's rounding of a
    /// resting contact's normal). Such a hit is at fraction 0, flagged
    /// [`ShapeCastHit::started_in_contact`]. Moving away from the body or along it, the
    /// shape is cast on against it and stops only where it would sink more than 0.5 mm
    /// deeper into it than it started (a bump or a wall of the same mesh ahead).
    /// Rapier's `stop_at_penetration: false`, Avian's `ignore_origin_penetration`.
    pub ignore_initial_contacts_moving_away: bool,
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

/// A shape closer than this to a body at the start of a cast starts in contact with it
/// (the cast's own touching distance).
const START_CONTACT_DISTANCE: f32 = 1e-4;

/// A start contact counts as moved into when the translation's direction points into
/// its normal by more than this (the cosine to the tangent plane: 0.06°).
const MOVING_INTO_COS: f32 = 1e-3;

/// Moving away from or along a body the shape starts in, the cast stops where the shape
/// would be this much deeper than it started: above the difference between the narrow
/// phase's depth and the cast's own distance for the same contact.
const SINK_TOLERANCE: f32 = 5e-4;

fn pose_is_finite(pose: &Isometry) -> bool {
    pose.translation.is_finite() && pose.rotation.is_finite()
}

impl World {
    /// Sweeps `shape` from `pose` along `translation` and returns the first body it hits
    /// (ties broken by body id), or `None` when it hits nothing, when the inputs are not
    /// finite, or when `shape` is a half-space, mesh or heightfield (which are not swept;
    /// compounds are). A body the shape starts in contact with is a hit at fraction 0
    /// (see [`ShapeCastHit::started_in_contact`]); [`World::cast_shape_with`] can skip
    /// the ones it moves away from.
    #[must_use]
    pub fn cast_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
    ) -> Option<ShapeCastHit> {
        self.cast_shape_with(
            shape,
            pose,
            translation,
            filter,
            &ShapeCastOptions::default(),
        )
    }

    /// [`World::cast_shape`] with `options` (see [`ShapeCastOptions`]).
    #[must_use]
    pub fn cast_shape_with(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
        options: &ShapeCastOptions,
    ) -> Option<ShapeCastHit> {
        if shape.as_convex().is_none() && !matches!(shape, Shape::Compound(_)) {
            return None;
        }
        if !pose_is_finite(&pose) || !translation.is_finite() {
            return None;
        }
        let delta = Vec3A::from(translation);
        let end = Isometry::new(pose.translation + delta, pose.rotation);
        let start_box = shape.world_aabb(&pose);
        let swept = start_box.union(&shape.world_aabb(&end));
        let mut manifold = ContactManifold::default();
        let mut best: Option<ShapeCastHit> = None;
        self.broad_phase.query_aabb(&swept, |_, body| {
            if !filter.accepts(&self.bodies, body) {
                return true;
            }
            let other = &self.bodies.bodies[body as usize];
            let other_pose = self.bodies.sim_of(body).transform;
            let id = self.bodies.id_of(body);
            let cast = BodyCast {
                shape,
                pose: &pose,
                start_box: &start_box,
                delta,
                other: &other.shape,
                other_pose: &other_pose,
                max_fraction: best.map_or(1.0, |h| h.fraction),
            };
            if let Some(hit) = cast.run(id, options, &mut manifold) {
                let better = best.is_none_or(|h| (hit.fraction, id) < (h.fraction, h.body));
                if better {
                    best = Some(hit);
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
        self.cast_shapes_with(casts, filter, &ShapeCastOptions::default(), out);
    }

    /// [`World::cast_shapes`] with `options` for every cast (see [`ShapeCastOptions`]).
    pub fn cast_shapes_with(
        &self,
        casts: &[ShapeCastQuery<'_>],
        filter: &QueryFilter,
        options: &ShapeCastOptions,
        out: &mut Vec<Option<ShapeCastHit>>,
    ) {
        out.clear();
        out.resize(casts.len(), None);
        self.jobs
            .parallel_for_slice(out, BATCH_GRAIN, |start, chunk| {
                for (k, slot) in chunk.iter_mut().enumerate() {
                    let c = &casts[start + k];
                    *slot = self.cast_shape_with(c.shape, c.pose, c.translation, filter, options);
                }
            });
    }
}

/// One body against the swept shape of [`World::cast_shape_with`].
struct BodyCast<'a> {
    shape: &'a Shape,
    pose: &'a Isometry,
    /// The shape's world box at `pose`.
    start_box: &'a Aabb,
    delta: Vec3A,
    other: &'a Shape,
    other_pose: &'a Isometry,
    max_fraction: f32,
}

impl BodyCast<'_> {
    /// The hit on body `id`, if any, before `max_fraction` (see the module docs for the
    /// contacts the shape starts in).
    fn run(
        &self,
        id: BodyId,
        options: &ShapeCastOptions,
        manifold: &mut ContactManifold,
    ) -> Option<ShapeCastHit> {
        let mut floor = f32::INFINITY;
        let near = self
            .start_box
            .expanded(START_CONTACT_DISTANCE)
            .overlaps(&self.other.world_aabb(self.other_pose));
        if near
            && collide(
                self.shape,
                self.pose,
                self.other,
                self.other_pose,
                START_CONTACT_DISTANCE,
                manifold,
            )
        {
            let deepest = manifold
                .points
                .iter()
                .min_by(|x, y| x.separation.total_cmp(&y.separation))
                .expect("collide reports at least one point");
            let into = manifold.normal.dot(self.delta) > MOVING_INTO_COS * self.delta.length();
            if into || !options.ignore_initial_contacts_moving_away {
                return Some(ShapeCastHit {
                    body: id,
                    fraction: 0.0,
                    point: self.pose.transform_point(deepest.local_a).into(),
                    normal: (-manifold.normal).into(),
                    started_in_contact: true,
                    depth: (-deepest.separation).max(0.0),
                });
            }
            floor = deepest.separation - SINK_TOLERANCE;
        }
        let settings = CastSettings {
            max_fraction: self.max_fraction,
            skin: 0.0,
            allowance: 0.0,
            floor,
        };
        let hit = linear_cast(
            self.shape,
            self.pose,
            self.delta,
            self.other,
            self.other_pose,
            &settings,
        )?;
        // A pair the narrow phase did not see touching can still be within the cast's
        // touching distance (an internal edge's ghost contact): a hit at 0 all the same.
        let started = hit.fraction == 0.0;
        Some(ShapeCastHit {
            body: id,
            fraction: hit.fraction,
            point: hit.point.into(),
            normal: (-hit.normal).into(),
            started_in_contact: started,
            depth: if started {
                (-hit.separation).max(0.0)
            } else {
                0.0
            },
        })
    }
}
