//! Shape queries against the world's bodies: sweep a shape (the first hit, or every
//! body along the way in order), find the bodies a shape overlaps, and collide a shape at
//! a pose with everything near it (every contact with its own normal and depth). They
//! run on a [`SceneQuery`] (the bodies and the broad phase), so the world, a step
//! listener and a job share one implementation.
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
//!
//! [`SceneQuery::collide_shape`] does not merge a mesh's triangles or a compound's
//! children into one manifold as the step does: each part touched gives its own contacts
//! (a capsule in the corner of a level mesh sees the floor and the wall), which is what a
//! character controller's move-and-slide needs.

use crate::body::BodyId;
use crate::collision::ccd::{CastSettings, linear_cast};
use crate::collision::narrow_phase::{ContactManifold, closest_points, collide, collide_each_part};
use crate::collision::query::{QueryFilter, SceneQuery};
use crate::geometry::aabb::Aabb;
use crate::math::{Isometry, Vec3, Vec3A};
use crate::shape::Shape;

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
/// `Default`: each is a hit at fraction 0 (what [`SceneQuery::cast_shape`] does), whichever
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

/// One contact of [`SceneQuery::collide_shape`]: where a body's surface meets (or comes
/// near) the query shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeContact {
    /// The body touched.
    pub body: BodyId,
    /// The part of it: a compound's child index, a mesh's or heightfield's triangle index
    /// (`2 * cell + half` for heightfields), 0 for other shapes.
    pub sub_shape: u32,
    /// World point on the body's surface.
    pub point: Vec3,
    /// World unit normal of the body's surface there, pointing at the query shape (the
    /// way to push the query shape out).
    pub normal: Vec3,
    /// Penetration depth along `normal` (m): positive when the shapes overlap, negative
    /// for a gap (at most `max_distance` wide).
    pub depth: f32,
}

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

impl SceneQuery<'_> {
    /// Sweeps `shape` from `pose` along `translation` and returns the first body it hits
    /// (ties broken by body id), or `None` when it hits nothing, when the inputs are not
    /// finite, or when `shape` is a half-space, mesh or heightfield (which are not swept;
    /// compounds are). A body the shape starts in contact with is a hit at fraction 0
    /// (see [`ShapeCastHit::started_in_contact`]); [`SceneQuery::cast_shape_with`] can
    /// skip the ones it moves away from.
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

    /// [`SceneQuery::cast_shape`] with `options` (see [`ShapeCastOptions`]).
    #[must_use]
    pub fn cast_shape_with(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
        options: &ShapeCastOptions,
    ) -> Option<ShapeCastHit> {
        let mut best: Option<ShapeCastHit> = None;
        self.sweep(shape, pose, translation, filter, options, true, |hit| {
            let better = best.is_none_or(|h| (hit.fraction, hit.body) < (h.fraction, h.body));
            if better {
                best = Some(hit);
            }
            best.map_or(1.0, |h| h.fraction)
        });
        best
    }

    /// Every body the swept shape hits, each once (its first hit), into `out` (cleared
    /// first), ordered by fraction, ties by body id: what a sweep passes through, not
    /// only what stops it. Same inputs and rules as [`SceneQuery::cast_shape_with`];
    /// `out` is empty for input it refuses.
    pub fn cast_shape_all(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
        options: &ShapeCastOptions,
        out: &mut Vec<ShapeCastHit>,
    ) {
        out.clear();
        self.sweep(shape, pose, translation, filter, options, false, |hit| {
            out.push(hit);
            1.0
        });
        out.sort_unstable_by(|a, b| a.fraction.total_cmp(&b.fraction).then(a.body.cmp(&b.body)));
    }

    /// Casts against each candidate body; `found` gets each hit and returns the fraction
    /// the next bodies must beat (1 to see them all).
    #[allow(clippy::too_many_arguments)]
    fn sweep(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
        options: &ShapeCastOptions,
        closest_only: bool,
        mut found: impl FnMut(ShapeCastHit) -> f32,
    ) {
        if shape.as_convex().is_none() && !matches!(shape, Shape::Compound(_)) {
            return;
        }
        if !pose_is_finite(&pose) || !translation.is_finite() {
            return;
        }
        let delta = Vec3A::from(translation);
        let end = Isometry::new(pose.translation + delta, pose.rotation);
        let start_box = shape.world_aabb(&pose);
        let swept = start_box.union(&shape.world_aabb(&end));
        let mut manifold = ContactManifold::default();
        let mut max_fraction = 1.0;
        self.broad.query_aabb(&swept, |_, body| {
            if !filter.accepts(self.bodies, body) {
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
                max_fraction,
            };
            if let Some(hit) = cast.run(id, options, &mut manifold) {
                let next = found(hit);
                if closest_only {
                    max_fraction = next;
                }
            }
            true
        });
    }

    /// Every body whose shape overlaps `shape` at `pose` (touching counts) into `out`
    /// (cleared first), ordered by id. Empty when the pose is not finite or `shape` is a
    /// half-space, mesh or heightfield (compounds may be the query shape).
    pub fn overlap_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        filter: &QueryFilter,
        out: &mut Vec<BodyId>,
    ) {
        out.clear();
        let convex = shape.as_convex();
        if convex.is_none() && !matches!(shape, Shape::Compound(_)) {
            return;
        }
        if !pose_is_finite(&pose) {
            return;
        }
        let aabb: Aabb = shape.world_aabb(&pose);
        self.broad.query_aabb(&aabb, |_, body| {
            if !filter.accepts(self.bodies, body) {
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
    }

    /// Collides the convex `shape` at `pose` with every body it overlaps or comes within
    /// `max_distance` of (m, at least 0), and puts every contact point into `out`
    /// (cleared first): up to four per part touched, each part (a mesh's triangle, a
    /// compound's child) with its own normal, ordered by body id, then part, then depth
    /// (deepest first). Nothing allocates once `out` has grown to its working size.
    ///
    /// Empty when `shape` is not convex (a half-space, mesh, heightfield or compound),
    /// when the pose is not finite, or when `max_distance` is negative or not finite.
    pub fn collide_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        max_distance: f32,
        filter: &QueryFilter,
        out: &mut Vec<ShapeContact>,
    ) {
        out.clear();
        if shape.as_convex().is_none() || !pose_is_finite(&pose) {
            return;
        }
        if !(max_distance.is_finite() && max_distance >= 0.0) {
            return;
        }
        let aabb = shape.world_aabb(&pose).expanded(max_distance);
        let mut part = ContactManifold::default();
        self.broad.query_aabb(&aabb, |_, body| {
            if !filter.accepts(self.bodies, body) {
                return true;
            }
            let other = &self.bodies.bodies[body as usize];
            let other_pose = self.bodies.sim_of(body).transform;
            let id = self.bodies.id_of(body);
            collide_each_part(
                shape,
                &pose,
                &other.shape,
                &other_pose,
                max_distance,
                &mut part,
                &mut |sub_shape, m| {
                    for p in &m.points {
                        out.push(ShapeContact {
                            body: id,
                            sub_shape,
                            point: other_pose.transform_point(p.local_b).into(),
                            normal: (-m.normal).into(),
                            depth: -p.separation,
                        });
                    }
                },
            );
            true
        });
        // Unstable (no scratch buffer) on a total order: the points break the ties.
        out.sort_unstable_by(|a, b| {
            (a.body, a.sub_shape)
                .cmp(&(b.body, b.sub_shape))
                .then(b.depth.total_cmp(&a.depth))
                .then_with(|| {
                    let key = |c: &ShapeContact| c.point.to_array().map(f32::to_bits);
                    key(a).cmp(&key(b))
                })
        });
    }
}

/// One body against the swept shape of `SceneQuery::cast_shape_with`.
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
