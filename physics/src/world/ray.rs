//! The ray cast: a ray as one value, Rapier's way: `Ray { origin, dir, max_toi }`, so a
//! cast reads `world.ray_cast(&ray, &filter)` and the length cannot be mixed up with the
//! direction. A hit ([`RayIntersection`]) says which body and which part of it (a
//! compound's child, a mesh's or heightfield's triangle), where (`toi`, `point`) and
//! the surface normal; [`World::ray_cast_all`] gives every hit, closest first.
//!
//! With a unit `dir`, `toi` is the distance in metres. `Ray::new(origin, v, 1.0)` casts
//! along the whole vector `v` (then `toi` is the fraction of `v`).
//!
//! [`World::cast_ray`] and [`World::cast_ray_all`] (origin and a direction whose length is
//! the ray's) are the older form of the same cast, kept for existing callers.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ball = world.create_body(&BodyDesc::fixed(Shape::sphere(1.0)?, Vec3::new(0.0, 0.0, -10.0)))?;
//! let ray = Ray::new(Vec3::ZERO, Vec3::NEG_Z, 100.0);
//! let hit = world.ray_cast(&ray, &QueryFilter::default()).expect("the ray meets the ball");
//! assert_eq!(hit.body, ball);
//! assert!((hit.toi - 9.0).abs() < 1e-4, "the near surface is 9 m away");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::BodyId;
use crate::collision::query::{self, QueryFilter, RayHit};
use crate::geometry::aabb::Aabb;
use crate::math::Vec3;
use crate::world::World;

/// A ray: the points `origin + t * dir` for `t` in `0..=max_toi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec3,
    /// Its direction (a unit vector makes `toi` a distance in metres).
    pub dir: Vec3,
    /// How far it goes, in units of `dir`.
    pub max_toi: f32,
}

impl Ray {
    /// A ray from `origin` along `dir`, `max_toi` long in units of `dir`.
    #[must_use]
    pub fn new(origin: Vec3, dir: Vec3, max_toi: f32) -> Ray {
        Ray {
            origin,
            dir,
            max_toi,
        }
    }

    /// The point at time of impact `toi`.
    #[must_use]
    pub fn point_at(&self, toi: f32) -> Vec3 {
        self.origin + self.dir * toi
    }
}

/// A hit of a [`Ray`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayIntersection {
    /// The body hit.
    pub body: BodyId,
    /// The part hit: a compound's child index, a mesh's triangle index, a heightfield's
    /// triangle index (`2 * cell + half`, see [`HeightField`](crate::shape::HeightField)),
    /// 0 for other shapes.
    pub sub_shape: u32,
    /// Time of impact: the hit is at `ray.point_at(toi)` (the distance in metres for a
    /// unit `dir`).
    pub toi: f32,
    /// World-space hit point.
    pub point: Vec3,
    /// World-space unit surface normal at the hit.
    pub normal: Vec3,
}

impl RayIntersection {
    fn from_hit(ray: &Ray, hit: RayHit) -> RayIntersection {
        RayIntersection {
            body: hit.body,
            sub_shape: hit.sub_shape,
            toi: hit.fraction * ray.max_toi,
            point: hit.point,
            normal: hit.normal,
        }
    }
}

impl World {
    /// The closest body `ray` meets, if any. A ray with a non-finite field or a negative
    /// `max_toi` meets nothing.
    #[must_use]
    pub fn ray_cast(&self, ray: &Ray, filter: &QueryFilter) -> Option<RayIntersection> {
        if !(ray.max_toi.is_finite() && ray.max_toi >= 0.0) {
            return None;
        }
        self.segment_closest(ray.origin, ray.dir * ray.max_toi, filter)
            .map(|hit| RayIntersection::from_hit(ray, hit))
    }

    /// Every body `ray` meets, closest first.
    #[must_use]
    pub fn ray_cast_all(&self, ray: &Ray, filter: &QueryFilter) -> Vec<RayIntersection> {
        if !(ray.max_toi.is_finite() && ray.max_toi >= 0.0) {
            return Vec::new();
        }
        self.segment_all(ray.origin, ray.dir * ray.max_toi, filter)
            .into_iter()
            .map(|hit| RayIntersection::from_hit(ray, hit))
            .collect()
    }
}

impl World {
    /// The closest body hit by the segment from `origin` to `origin + direction`: the
    /// older form of [`World::ray_cast`], the one ray call, which takes the ray as a
    /// [`Ray`] value; `world.ray_cast(&Ray::new(origin, direction, 1.0),
    /// filter)` is this call, with `toi` for `fraction`.
    #[deprecated(
        since = "0.1.0",
        note = "use `World::ray_cast(&Ray::new(origin, direction, 1.0), filter)`"
    )]
    pub fn cast_ray(&self, origin: Vec3, direction: Vec3, filter: &QueryFilter) -> Option<RayHit> {
        self.segment_closest(origin, direction, filter)
    }

    /// The closest hit along a segment; what [`World::ray_cast`] and the batch
    /// [`World::cast_rays`] run.
    pub(crate) fn segment_closest(
        &self,
        origin: Vec3,
        direction: Vec3,
        filter: &QueryFilter,
    ) -> Option<RayHit> {
        if !origin.is_finite() || !direction.is_finite() {
            return None;
        }
        query::cast_ray_closest(
            &self.bodies,
            &self.broad_phase,
            origin.into(),
            direction.into(),
            filter,
        )
    }

    /// Every body hit by the segment, closest first: the older form of
    /// [`World::ray_cast_all`].
    #[deprecated(
        since = "0.1.0",
        note = "use `World::ray_cast_all(&Ray::new(origin, direction, 1.0), filter)`"
    )]
    #[must_use]
    pub fn cast_ray_all(&self, origin: Vec3, direction: Vec3, filter: &QueryFilter) -> Vec<RayHit> {
        self.segment_all(origin, direction, filter)
    }

    /// Every hit along a segment, closest first; what [`World::ray_cast_all`] runs.
    pub(crate) fn segment_all(
        &self,
        origin: Vec3,
        direction: Vec3,
        filter: &QueryFilter,
    ) -> Vec<RayHit> {
        let mut out = Vec::new();
        if origin.is_finite() && direction.is_finite() {
            query::cast_ray_all(
                &self.bodies,
                &self.broad_phase,
                origin.into(),
                direction.into(),
                filter,
                &mut out,
            );
        }
        out
    }

    /// Bodies whose bounding boxes overlap `aabb`, ordered by id.
    #[must_use]
    pub fn overlap_aabb(&self, aabb: &Aabb, filter: &QueryFilter) -> Vec<BodyId> {
        let mut out = Vec::new();
        query::overlap_aabb(&self.bodies, &self.broad_phase, aabb, filter, &mut out);
        out
    }
}
