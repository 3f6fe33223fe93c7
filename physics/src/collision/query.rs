//! World queries: ray casts and AABB overlap.
//!
//! Queries read the broad phase's trees (both static and moving) to find candidate bodies,
//! then ask each candidate's shape in its local frame. Results are ordered (closest first
//! for "all hits", by body id for overlaps) so they never depend on tree layout.

use crate::body::filter::{CollisionFilter, ObjectLayer};
use crate::body::{Bodies, BodyId};
use crate::collision::broad_phase::BroadPhase;
use crate::geometry::aabb::Aabb;
use crate::math::{Vec3, Vec3A};

/// A ray hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyId,
    /// The part hit: a compound's child index, a mesh's or heightfield's triangle
    /// index (`2 * cell + half` for heightfields), 0 for other shapes.
    pub sub_shape: u32,
    /// Fraction of the ray's length at the hit (`origin + fraction * direction`).
    pub fraction: f32,
    /// World-space hit point.
    pub point: Vec3,
    /// World-space unit surface normal at the hit.
    pub normal: Vec3,
}

/// Which bodies a query considers. `Default`: every group and layer, no sensors, nothing
/// excluded.
///
/// The tests run cheapest first: sensors, group and mask bits, layers, the excluded
/// bodies, then the predicate.
///
/// ```
/// use joule_physics::prelude::*;
///
/// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
/// let near = world.create_body(&BodyDesc::fixed(Shape::sphere(0.5)?, Vec3::new(2.0, 0.0, 0.0)))?;
/// let far = world.create_body(&BodyDesc::fixed(Shape::sphere(0.5)?, Vec3::new(5.0, 0.0, 0.0)))?;
/// let skip = [near];
/// let only_far = |id: BodyId| id == far;
/// let filter = QueryFilter {
///     exclude_bodies: &skip,
///     predicate: Some(&only_far),
///     ..QueryFilter::default()
/// };
/// let hit = world.ray_cast(&Ray::new(Vec3::ZERO, Vec3::X, 10.0), &filter).unwrap();
/// assert_eq!(hit.body, far);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Default)]
pub struct QueryFilter<'a> {
    /// Group and mask bits, tested like a body's filter.
    pub filter: CollisionFilter,
    /// Whether sensor bodies are reported.
    pub include_sensors: bool,
    /// A body to ignore (the caster itself).
    pub exclude: Option<BodyId>,
    /// More bodies to ignore (a short list, scanned in order: a character's own body and
    /// what it carries).
    pub exclude_bodies: &'a [BodyId],
    /// When set, only bodies on these object layers are considered.
    pub layers: Option<&'a [ObjectLayer]>,
    /// When set, a body is considered only when this returns true for its id. It is
    /// called from the query's thread (batched queries call it from job threads, hence
    /// `Sync`), after every other test has passed.
    pub predicate: Option<&'a (dyn Fn(BodyId) -> bool + Sync)>,
}

impl std::fmt::Debug for QueryFilter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryFilter")
            .field("filter", &self.filter)
            .field("include_sensors", &self.include_sensors)
            .field("exclude", &self.exclude)
            .field("exclude_bodies", &self.exclude_bodies)
            .field("layers", &self.layers)
            .field("predicate", &self.predicate.map(|_| "Fn(BodyId) -> bool"))
            .finish()
    }
}

impl QueryFilter<'_> {
    pub(crate) fn accepts(&self, bodies: &Bodies, index: u32) -> bool {
        let b = &bodies.bodies[index as usize];
        if !((self.include_sensors || !b.is_sensor) && self.filter.collides(&b.filter)) {
            return false;
        }
        if self.layers.is_some_and(|l| !l.contains(&b.layer)) {
            return false;
        }
        let id = bodies.id_of(index);
        self.exclude.is_none_or(|e| e != id)
            && !self.exclude_bodies.contains(&id)
            && self.predicate.is_none_or(|p| p(id))
    }
}

/// The world's bodies and broad phase as one read-only view that answers queries: what
/// [`World`](crate::world::World)'s queries run on, and what a step listener or a job
/// holds to query the world (see
/// [`StepListenerContext::queries`](crate::listener::StepListenerContext::queries) and
/// [`World::scene_query`](crate::world::World::scene_query)). Shape queries are in
/// [`shape_query`](crate::collision::shape_query).
#[derive(Clone, Copy)]
pub struct SceneQuery<'a> {
    pub(crate) bodies: &'a Bodies,
    pub(crate) broad: &'a BroadPhase,
}

impl std::fmt::Debug for SceneQuery<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneQuery")
            .field("bodies", &self.bodies.len())
            .finish()
    }
}

impl<'a> SceneQuery<'a> {
    pub(crate) fn new(bodies: &'a Bodies, broad: &'a BroadPhase) -> Self {
        SceneQuery { bodies, broad }
    }

    /// The closest body hit by the ray from `origin` along `direction` (whose length is
    /// the ray's length), if any; `None` for non-finite input.
    #[must_use]
    pub fn cast_ray(&self, origin: Vec3, direction: Vec3, filter: &QueryFilter) -> Option<RayHit> {
        if !origin.is_finite() || !direction.is_finite() {
            return None;
        }
        cast_ray_closest(
            self.bodies,
            self.broad,
            origin.into(),
            direction.into(),
            filter,
        )
    }

    /// Every body hit by the ray into `out` (cleared first), closest first.
    pub fn cast_ray_all(
        &self,
        origin: Vec3,
        direction: Vec3,
        filter: &QueryFilter,
        out: &mut Vec<RayHit>,
    ) {
        out.clear();
        if origin.is_finite() && direction.is_finite() {
            cast_ray_all(
                self.bodies,
                self.broad,
                origin.into(),
                direction.into(),
                filter,
                out,
            );
        }
    }

    /// Bodies whose bounding boxes overlap `aabb` into `out` (cleared first), by id.
    pub fn overlap_aabb(&self, aabb: &Aabb, filter: &QueryFilter, out: &mut Vec<BodyId>) {
        overlap_aabb(self.bodies, self.broad, aabb, filter, out);
    }
}

/// Casts against one body's shape; `dir` is the full ray (length = max distance).
pub(crate) fn cast_body(
    bodies: &Bodies,
    index: u32,
    origin: Vec3A,
    dir: Vec3A,
    max_fraction: f32,
) -> Option<RayHit> {
    let b = &bodies.bodies[index as usize];
    let sim = bodies.sim_of(index);
    let local_origin = sim.transform.inverse_transform_point(origin);
    let local_dir = sim.transform.inverse_transform_vector(dir);
    let (hit, part) = b
        .shape
        .cast_ray_part(local_origin, local_dir, max_fraction)?;
    let point = origin + dir * hit.fraction;
    Some(RayHit {
        body: bodies.id_of(index),
        sub_shape: part,
        fraction: hit.fraction,
        point: point.into(),
        normal: sim.transform.transform_vector(hit.normal.into()).into(),
    })
}

/// The closest hit along `origin + t * dir`, `t` in `[0, 1]`.
pub(crate) fn cast_ray_closest(
    bodies: &Bodies,
    broad: &BroadPhase,
    origin: Vec3A,
    dir: Vec3A,
    filter: &QueryFilter,
) -> Option<RayHit> {
    let mut best: Option<RayHit> = None;
    broad.ray_cast(origin, dir, 1.0, |_, body, max| {
        if !filter.accepts(bodies, body) {
            return max;
        }
        match cast_body(bodies, body, origin, dir, max) {
            Some(hit) => {
                // Ties are broken by body id so the answer does not depend on tree order.
                let better = best.is_none_or(|b| (hit.fraction, hit.body) < (b.fraction, b.body));
                if better {
                    best = Some(hit);
                }
                hit.fraction
            }
            None => max,
        }
    });
    best
}

/// Every hit along the ray, closest first (ties by body id).
pub(crate) fn cast_ray_all(
    bodies: &Bodies,
    broad: &BroadPhase,
    origin: Vec3A,
    dir: Vec3A,
    filter: &QueryFilter,
    out: &mut Vec<RayHit>,
) {
    out.clear();
    broad.ray_cast(origin, dir, 1.0, |_, body, max| {
        if filter.accepts(bodies, body)
            && let Some(hit) = cast_body(bodies, body, origin, dir, 1.0)
        {
            out.push(hit);
        }
        max
    });
    out.sort_by(|a, b| a.fraction.total_cmp(&b.fraction).then(a.body.cmp(&b.body)));
}

/// Bodies whose world AABB overlaps `aabb`, by body id.
pub(crate) fn overlap_aabb(
    bodies: &Bodies,
    broad: &BroadPhase,
    aabb: &Aabb,
    filter: &QueryFilter,
    out: &mut Vec<BodyId>,
) {
    out.clear();
    broad.query_aabb(aabb, |_, body| {
        if filter.accepts(bodies, body) {
            let b = &bodies.bodies[body as usize];
            if b.shape
                .world_aabb(&bodies.sim_of(body).transform)
                .overlaps(aabb)
            {
                out.push(bodies.id_of(body));
            }
        }
        true
    });
    out.sort_unstable();
    out.dedup();
}
