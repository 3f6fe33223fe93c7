//! World queries: ray casts and AABB overlap.
//!
//! Queries read the broad phase's trees (both static and moving) to find candidate bodies,
//! then ask each candidate's shape in its local frame. Results are ordered (closest first
//! for "all hits", by body id for overlaps) so they never depend on tree layout.

use crate::body::filter::CollisionFilter;
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

/// Which bodies a query considers. `Default`: every group, no sensors, nothing excluded.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueryFilter {
    /// Group and mask bits, tested like a body's filter.
    pub filter: CollisionFilter,
    /// Whether sensor bodies are reported.
    pub include_sensors: bool,
    /// A body to ignore (the caster itself).
    pub exclude: Option<BodyId>,
}

impl QueryFilter {
    pub(crate) fn accepts(&self, bodies: &Bodies, index: u32) -> bool {
        let b = &bodies.bodies[index as usize];
        (self.include_sensors || !b.is_sensor)
            && self.filter.collides(&b.filter)
            && self.exclude.is_none_or(|e| e != bodies.id_of(index))
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
