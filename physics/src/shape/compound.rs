//! Compound shapes: one body made of several convex children, each at its own pose.
//!
//! A dumbbell, a chair, a car body: anything concave that a few convex pieces describe.
//! The children sit in a [`Bvh`] in the compound's frame so the narrow phase and the
//! queries visit only the children near the other shape. Mass properties are the sum of
//! the children's, moved to the common centre of mass with the parallel-axis theorem;
//! overlapping children count their overlap twice (as Rapier and Box3D do), which is what
//! a sum of pieces means.

use crate::geometry::aabb::Aabb;
use crate::math::quat_length;
use crate::math::{Isometry, Mat3A, Vec3A};

use super::bvh::Bvh;
use super::{MassProperties, Shape, ShapeError, ShapeRayHit};

/// One child of a [`Compound`].
#[derive(Clone, Debug)]
pub struct CompoundChild {
    /// The child's shape (convex: sphere, box, capsule, cylinder or hull).
    pub shape: Shape,
    /// Its pose in the compound's frame.
    pub pose: Isometry,
    /// The child's material id (0 by default: the compound body's own material). A contact
    /// touching the child mixes with it (see [`crate::material`]).
    pub material: u32,
}

impl CompoundChild {
    /// A child `shape` at `pose` in the compound's frame, with the compound body's own
    /// material (0). Anything that converts into an [`Isometry`] is a pose: an
    /// `Isometry`, or a `(Vec3, Quat)` pair.
    ///
    /// ```
    /// use joule_physics::math::{Quat, Vec3};
    /// use joule_physics::shape::{CompoundChild, Shape};
    ///
    /// let dumbbell = Shape::compound(vec![
    ///     CompoundChild::new(Shape::sphere(0.3)?, (Vec3::new(-0.5, 0.0, 0.0), Quat::IDENTITY)),
    ///     CompoundChild::new(Shape::sphere(0.3)?, (Vec3::new(0.5, 0.0, 0.0), Quat::IDENTITY)),
    ///     CompoundChild::new(Shape::capsule(0.5, 0.1)?, (Vec3::ZERO, Quat::from_rotation_z(1.5708))),
    /// ])?;
    /// # let _ = dumbbell;
    /// # Ok::<(), joule_physics::shape::ShapeError>(())
    /// ```
    #[must_use]
    pub fn new(shape: Shape, pose: impl Into<Isometry>) -> Self {
        Self {
            shape,
            pose: pose.into(),
            material: 0,
        }
    }

    /// The same child with material id `material` (see [`CompoundChild::material`](field@CompoundChild::material)).
    #[must_use]
    pub fn with_material(mut self, material: u32) -> Self {
        self.material = material;
        self
    }
}

/// Several convex shapes moving as one.
#[derive(Clone, Debug)]
pub struct Compound {
    children: Vec<CompoundChild>,
    bvh: Bvh,
    aabb: Aabb,
}

impl Compound {
    /// Validates and builds a compound. Errors: no children ([`ShapeError::Empty`]), a
    /// child that is not convex ([`ShapeError::NonConvexChild`]), a pose that is not
    /// finite ([`ShapeError::NonFinite`]).
    pub fn new(children: Vec<CompoundChild>) -> Result<Self, ShapeError> {
        if children.is_empty() {
            return Err(ShapeError::Empty);
        }
        let mut boxes = Vec::with_capacity(children.len());
        for c in &children {
            if c.shape.as_convex().is_none() {
                return Err(ShapeError::NonConvexChild);
            }
            if !c.pose.translation.is_finite()
                || !c.pose.rotation.is_finite()
                || (quat_length(c.pose.rotation) - 1.0).abs() > 1e-3
            {
                return Err(ShapeError::NonFinite);
            }
            boxes.push(c.shape.world_aabb(&c.pose));
        }
        let bvh = Bvh::new(&boxes);
        let aabb = bvh.root_aabb();
        Ok(Compound {
            children,
            bvh,
            aabb,
        })
    }

    /// The children, in the order given.
    #[must_use]
    pub fn children(&self) -> &[CompoundChild] {
        &self.children
    }

    /// Box around every child, in the compound's frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        self.aabb
    }

    /// Calls `f(index)` for each child whose box overlaps `aabb` (compound frame).
    pub fn query(&self, aabb: &Aabb, f: impl FnMut(u32) -> bool) {
        self.bvh.query(aabb, f);
    }

    /// Sum of the children's mass properties about the common centre of mass.
    pub(crate) fn mass_properties(&self, density: f32) -> Result<MassProperties, ShapeError> {
        let mut parts = Vec::with_capacity(self.children.len());
        let (mut mass, mut moment) = (0.0f32, Vec3A::ZERO);
        for c in &self.children {
            let mp = c.shape.mass_properties(density)?;
            let com = c.pose.transform_point(mp.center_of_mass);
            mass += mp.mass;
            moment += mp.mass * com;
            parts.push((mp, com, c.pose.rotation));
        }
        let center = moment / mass;
        let mut inertia = Mat3A::ZERO;
        for (mp, com, rot) in parts {
            // Rotate the child's tensor into the compound frame, then shift it (parallel
            // axis: I + m (|d|² E - d dᵀ)).
            let r = Mat3A::from_quat(rot);
            let local = r * mp.inertia * r.transpose();
            let d = com - center;
            let shift = Mat3A::from_diagonal(glam::Vec3::splat(d.dot(d)))
                - Mat3A::from_cols(d * d.x, d * d.y, d * d.z);
            inertia += local + shift * mp.mass;
        }
        Ok(MassProperties {
            mass,
            center_of_mass: center,
            inertia,
        })
    }

    /// Smallest inner radius of a child (the "moved too far" threshold of CCD).
    pub(crate) fn inner_radius(&self) -> f32 {
        self.children
            .iter()
            .map(|c| c.shape.inner_radius())
            .fold(f32::INFINITY, f32::min)
    }

    /// The nearest hit of the ray on any child, with the child's index.
    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<(ShapeRayHit, u32)> {
        let mut best: Option<ShapeRayHit> = None;
        let mut part = 0;
        self.bvh.ray(o, d, max, |i| {
            let c = &self.children[i as usize];
            let lo = c.pose.inverse_transform_point(o);
            let ld = c.pose.inverse_transform_vector(d);
            let limit = best.map_or(max, |h| h.fraction);
            if let Some(h) = c.shape.cast_ray(lo, ld, limit)
                && best.is_none_or(|b| h.fraction < b.fraction)
            {
                best = Some(ShapeRayHit {
                    fraction: h.fraction,
                    normal: c.pose.transform_vector(h.normal.into()).into(),
                });
                part = i;
            }
            best.map_or(max, |h| h.fraction)
        });
        best.map(|h| (h, part))
    }
}
