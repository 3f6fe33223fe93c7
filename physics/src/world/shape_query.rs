//! Shape queries on the world: sweep a shape through the world (the first hit, or every
//! body along the way), find the bodies a shape overlaps, collide a shape with the world
//! (every contact with its depth), and batched ray and shape casts that run in parallel
//! on the world's job system (one result per query, in query order, identical for any
//! thread count).
//!
//! The queries themselves live one layer down, on
//! [`SceneQuery`] (the rules for casts that start in contact
//! are in [`collision::shape_query`](crate::collision::shape_query)): the world's methods
//! here are that view of its bodies, which step listeners and jobs hold as well.

use crate::body::BodyId;
use crate::collision::query::{QueryFilter, RayHit, SceneQuery};
pub use crate::collision::shape_query::{ShapeCastHit, ShapeCastOptions, ShapeContact};
use crate::math::{Isometry, Vec3};
use crate::shape::Shape;
use crate::world::World;

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
        self.scene_query()
            .cast_shape_with(shape, pose, translation, filter, options)
    }

    /// Every body the swept shape hits, each once at its first hit, ordered by fraction
    /// (see [`SceneQuery::cast_shape_all`]).
    #[must_use]
    pub fn cast_shape_all(
        &self,
        shape: &Shape,
        pose: Isometry,
        translation: Vec3,
        filter: &QueryFilter,
        options: &ShapeCastOptions,
    ) -> Vec<ShapeCastHit> {
        let mut out = Vec::new();
        self.scene_query()
            .cast_shape_all(shape, pose, translation, filter, options, &mut out);
        out
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
        self.scene_query()
            .overlap_shape(shape, pose, filter, &mut out);
        out
    }

    /// Every contact of the convex `shape` at `pose` with the bodies it overlaps or comes
    /// within `max_distance` of, into `out` (see [`SceneQuery::collide_shape`]).
    ///
    /// ```
    /// use joule_physics::prelude::*;
    /// use joule_physics::math::Vec3A;
    ///
    /// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
    /// let ground = world.create_body(&BodyDesc::fixed(Shape::half_space(Vec3::Y, 0.0)?, Vec3::ZERO))?;
    /// // A sphere of radius 0.5 sunk 0.1 m into the ground.
    /// let pose = Isometry::from_translation(Vec3A::new(0.0, 0.4, 0.0));
    /// let mut contacts = Vec::new();
    /// world.collide_shape(&Shape::sphere(0.5)?, pose, 0.0, &QueryFilter::default(), &mut contacts);
    /// assert_eq!(contacts.len(), 1);
    /// assert_eq!(contacts[0].body, ground);
    /// assert!((contacts[0].depth - 0.1).abs() < 1e-5 && contacts[0].normal.y > 0.999);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn collide_shape(
        &self,
        shape: &Shape,
        pose: Isometry,
        max_distance: f32,
        filter: &QueryFilter,
        out: &mut Vec<ShapeContact>,
    ) {
        self.scene_query()
            .collide_shape(shape, pose, max_distance, filter, out);
    }

    /// The world's bodies and broad phase as a read-only query view, to hand to code
    /// that should query but not change the world (a job, a character update).
    #[must_use]
    pub fn scene_query(&self) -> SceneQuery<'_> {
        SceneQuery::new(&self.bodies, &self.broad_phase)
    }

    /// Casts every ray of `rays` (like [`ray_cast`](World::ray_cast), as segments) in parallel on the
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
                    *slot = self.segment_closest(r.origin, r.direction, filter);
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
