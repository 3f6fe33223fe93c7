//! Collision shapes: sphere, box, capsule, cylinder, convex hull, half-space, and the
//! composite shapes a level is made of: compounds of convex children, triangle meshes and
//! heightfields.
//!
//! Every shape lives in its body's local frame, centred at the local origin (hulls may be
//! off-centre: their centre of mass is computed). Each convex shape answers the questions
//! the narrow phase asks (`ConvexSupport`: support point, convex radius, support face) and
//! the questions the rest of the engine asks (bounding box, mass properties, ray cast).
//! Shapes are cheap to clone: hulls sit behind an `Arc`.
//!
//! Composite shapes are never convex as a whole: the narrow phase, queries and CCD visit
//! their parts (children, triangles) near the other shape through the shape's own tree or
//! grid (`collision/narrow_phase/composite.rs`). Meshes and heightfields have no mass (static or
//! kinematic bodies only).
//!
//! Constructors validate their input and return [`ShapeError`]; a `Shape` that exists is
//! valid, so nothing downstream re-checks it.

mod bvh;
mod compound;
mod convex_hull;
mod heightfield;
mod mesh;
mod primitives;
mod triangle;

use crate::math::rotate;
use std::sync::Arc;

pub use bvh::Bvh;
pub use compound::{Compound, CompoundChild};
pub use convex_hull::{ConvexHull, HullFace};
pub use heightfield::HeightField;
pub use mesh::TriangleMesh;
pub use primitives::{Capsule, Cuboid, Cylinder, HalfSpace, Sphere};
pub use triangle::{ALL_EDGES_ACTIVE, Triangle};

use crate::geometry::aabb::Aabb;
use crate::geometry::support::ConvexSupport;
use crate::math::{Isometry, Mat3A, Vec3, Vec3A};

/// Half size of the box that stands in for a half-space where a finite box is needed.
pub const HALF_SPACE_EXTENT: f32 = 1.0e6;

/// Why a shape could not be built.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ShapeError {
    /// A size, point or normal had a NaN or infinite component. Check the numbers you
    /// computed it from.
    NonFinite,
    /// A radius, half extent or half height was zero or negative (half heights of
    /// capsules may be zero). Use positive sizes.
    NonPositiveSize,
    /// A convex hull needs at least 4 distinct points. Add points.
    TooFewPoints,
    /// The hull's points are all (nearly) on one line or one plane, so they enclose no
    /// volume. Give points that span 3D (a flat piece needs some thickness).
    Degenerate,
    /// Density must be finite and positive to compute a mass.
    NonPositiveDensity,
    /// A half-space, mesh or heightfield has no finite mass. Use it for static (or, for
    /// meshes and heightfields, kinematic) bodies only.
    InfiniteShape,
    /// A mesh with no triangles or a compound with no children. Give at least one.
    Empty,
    /// A compound child that is not convex (a half-space, mesh, heightfield or another
    /// compound). Flatten nested compounds into one list of convex children.
    NonConvexChild,
    /// Triangle `n` names a vertex index past the end of the vertex list.
    IndexOutOfRange(u32),
    /// Triangle `n` has (nearly) zero area: repeated or collinear vertices. Remove it.
    DegenerateTriangle(u32),
    /// A list has the wrong length: heightfield samples other than `nx * nz` (or fewer
    /// than 2 per side), hole flags other than one per cell, materials other than one per
    /// triangle. `list` names it.
    WrongCount {
        /// The list, with what its length must match (`"heights (nx * nz)"`).
        list: &'static str,
        /// The length it must have.
        expected: u64,
        /// The length it has.
        actual: u64,
    },
    /// [`Shape::scaled`] takes meshes and heightfields only. Build other shapes at the
    /// size you need.
    NotScalable,
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            ShapeError::NonFinite => {
                "size, point or normal: expected finite components, got a NaN or infinite one"
            }
            ShapeError::NonPositiveSize => {
                "radius, half extent, half height or cell size: expected > 0, got zero or less"
            }
            ShapeError::TooFewPoints => {
                "convex hull points: expected at least 4 distinct points, got fewer"
            }
            ShapeError::Degenerate => {
                "convex hull points: expected points spanning 3D, got collinear or coplanar ones"
            }
            ShapeError::NonPositiveDensity => "density: expected a finite value > 0",
            ShapeError::InfiniteShape => {
                "shape: expected a finite shape to compute a mass, got a half-space, mesh or \
                 heightfield"
            }
            ShapeError::Empty => "triangles or children: expected at least one, got an empty list",
            ShapeError::NonConvexChild => {
                "compound child: expected a convex shape (sphere, box, capsule, cylinder, hull)"
            }
            ShapeError::IndexOutOfRange(t) => {
                return write!(
                    f,
                    "triangle {t}: expected vertex indices below the vertex count, got one past it"
                );
            }
            ShapeError::DegenerateTriangle(t) => {
                return write!(
                    f,
                    "triangle {t}: expected three distinct, non-collinear vertices"
                );
            }
            ShapeError::WrongCount {
                list,
                expected,
                actual,
            } => return write!(f, "{list}: expected {expected} entries, got {actual}"),
            ShapeError::NotScalable => {
                "shape to scale: expected a mesh or heightfield (build others at their size)"
            }
        };
        f.write_str(s)
    }
}

impl std::error::Error for ShapeError {}

/// The kind of a shape, for pair tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShapeKind {
    /// [`Sphere`].
    Sphere,
    /// [`Cuboid`].
    Box,
    /// [`Capsule`].
    Capsule,
    /// [`Cylinder`].
    Cylinder,
    /// [`ConvexHull`].
    ConvexHull,
    /// [`HalfSpace`].
    HalfSpace,
    /// [`Compound`].
    Compound,
    /// [`TriangleMesh`].
    TriangleMesh,
    /// [`HeightField`].
    HeightField,
}

/// Mass, centre of mass and inertia (about the centre of mass, local axes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// Mass in kg.
    pub mass: f32,
    /// Centre of mass in the shape's frame.
    pub center_of_mass: Vec3A,
    /// Inertia tensor about the centre of mass.
    pub inertia: Mat3A,
}

/// A ray hit on a shape, in the shape's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeRayHit {
    /// Fraction of the ray at the hit.
    pub fraction: f32,
    /// Unit outward normal at the hit (for a ray starting inside: minus the direction).
    pub normal: Vec3,
}

/// A collision shape.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A sphere.
    Sphere(Sphere),
    /// A box.
    Box(Cuboid),
    /// A capsule along local Y.
    Capsule(Capsule),
    /// A cylinder along local Y.
    Cylinder(Cylinder),
    /// A convex hull.
    ConvexHull(Arc<ConvexHull>),
    /// A half-space (static ground).
    HalfSpace(HalfSpace),
    /// Convex children at their own poses.
    Compound(Arc<Compound>),
    /// A triangle mesh (static or kinematic bodies).
    TriangleMesh(Arc<TriangleMesh>),
    /// A heightfield (static or kinematic bodies).
    HeightField(Arc<HeightField>),
}

fn positive(x: f32) -> Result<f32, ShapeError> {
    if !x.is_finite() {
        Err(ShapeError::NonFinite)
    } else if x <= 0.0 {
        Err(ShapeError::NonPositiveSize)
    } else {
        Ok(x)
    }
}

impl Shape {
    /// A sphere of `radius`.
    pub fn sphere(radius: f32) -> Result<Shape, ShapeError> {
        Ok(Shape::Sphere(Sphere {
            radius: positive(radius)?,
        }))
    }

    /// A box with the given half extents.
    pub fn cuboid(half_extents: Vec3) -> Result<Shape, ShapeError> {
        for h in half_extents.to_array() {
            positive(h)?;
        }
        Ok(Shape::Box(Cuboid {
            half_extents: half_extents.into(),
        }))
    }

    /// A capsule: the segment from -half_height to +half_height on local Y, swept by
    /// `radius`. `half_height` may be 0 (a sphere).
    pub fn capsule(half_height: f32, radius: f32) -> Result<Shape, ShapeError> {
        if !half_height.is_finite() {
            return Err(ShapeError::NonFinite);
        }
        if half_height < 0.0 {
            return Err(ShapeError::NonPositiveSize);
        }
        Ok(Shape::Capsule(Capsule {
            half_height,
            radius: positive(radius)?,
        }))
    }

    /// A cylinder along local Y.
    pub fn cylinder(half_height: f32, radius: f32) -> Result<Shape, ShapeError> {
        Ok(Shape::Cylinder(Cylinder {
            half_height: positive(half_height)?,
            radius: positive(radius)?,
        }))
    }

    /// The convex hull of `points` (interior points are dropped, coplanar faces merged).
    pub fn convex_hull(points: &[Vec3]) -> Result<Shape, ShapeError> {
        Ok(Shape::ConvexHull(Arc::new(ConvexHull::new(points)?)))
    }

    /// The half-space `normal · x <= offset` (solid below the plane); `normal` is
    /// normalised here.
    pub fn half_space(normal: Vec3, offset: f32) -> Result<Shape, ShapeError> {
        if !normal.is_finite() || !offset.is_finite() {
            return Err(ShapeError::NonFinite);
        }
        let n = normal.try_normalize().ok_or(ShapeError::NonPositiveSize)?;
        Ok(Shape::HalfSpace(HalfSpace {
            normal: n.into(),
            offset,
        }))
    }

    /// A compound of convex children (see [`Compound::new`]).
    pub fn compound(children: Vec<CompoundChild>) -> Result<Shape, ShapeError> {
        Ok(Shape::Compound(Arc::new(Compound::new(children)?)))
    }

    /// A triangle mesh (see [`TriangleMesh::new`]).
    pub fn triangle_mesh(
        vertices: &[Vec3],
        triangles: &[[u32; 3]],
        materials: Option<&[u32]>,
    ) -> Result<Shape, ShapeError> {
        Ok(Shape::TriangleMesh(Arc::new(TriangleMesh::new(
            vertices, triangles, materials,
        )?)))
    }

    /// A heightfield of `nx × nz` samples `cell.x` apart along X and `cell.y` apart along
    /// Z, **centred on the body's origin**, with `heights` (a slice, or a `Vec` moved in)
    /// stored **row by row, X fastest**: sample `(i, j)` is at
    /// `x = (i - (nx - 1) / 2) cell.x`, `y = heights[j nx + i]`,
    /// `z = (j - (nz - 1) / 2) cell.y`. `holes`, when given, has one flag per cell, in the
    /// same order. See [`HeightField`] for the triangles and an example, and
    /// [`HeightField::new`] for the errors.
    pub fn height_field(
        nx: u32,
        nz: u32,
        cell: crate::math::Vec2,
        heights: impl Into<Vec<f32>>,
        holes: Option<&[bool]>,
    ) -> Result<Shape, ShapeError> {
        Ok(Shape::HeightField(Arc::new(HeightField::new(
            nx, nz, cell, heights, holes,
        )?)))
    }

    /// A mesh or heightfield scaled by `scale` per local axis (uniform or not), built
    /// once here (scaled vertices, or scaled cell size and heights), so colliding with it
    /// costs nothing extra. Errors: [`ShapeError::NonFinite`], [`ShapeError::NonPositiveSize`]
    /// (a zero or negative factor: mirroring would flip the triangles' winding),
    /// [`ShapeError::NotScalable`] for other kinds (build primitives, hulls and compounds
    /// at their size).
    pub fn scaled(&self, scale: Vec3) -> Result<Shape, ShapeError> {
        if !scale.is_finite() {
            return Err(ShapeError::NonFinite);
        }
        if scale.min_element() <= 0.0 {
            return Err(ShapeError::NonPositiveSize);
        }
        match self {
            Shape::TriangleMesh(m) => {
                let v: Vec<Vec3> = m
                    .vertices()
                    .iter()
                    .map(|p| Vec3::from(*p) * scale)
                    .collect();
                let materials = (!m.materials().is_empty()).then_some(m.materials());
                Shape::triangle_mesh(&v, m.indices(), materials)
            }
            Shape::HeightField(h) => {
                let (nx, nz) = h.sample_counts();
                let heights: Vec<f32> = h.heights().iter().map(|y| y * scale.y).collect();
                let cells = (nx - 1) * (nz - 1);
                let holes: Vec<bool> = (0..cells)
                    .map(|c| h.is_hole(c % (nx - 1), c / (nx - 1)))
                    .collect();
                let any = holes.iter().any(|&x| x);
                Shape::height_field(
                    nx,
                    nz,
                    h.cell_size() * crate::math::Vec2::new(scale.x, scale.z),
                    heights,
                    any.then_some(holes.as_slice()),
                )
            }
            _ => Err(ShapeError::NotScalable),
        }
    }

    /// Whether the shape is made of parts (compound, mesh, heightfield).
    #[must_use]
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            Shape::Compound(_) | Shape::TriangleMesh(_) | Shape::HeightField(_)
        )
    }

    /// The shape's kind.
    #[must_use]
    pub fn kind(&self) -> ShapeKind {
        match self {
            Shape::Sphere(_) => ShapeKind::Sphere,
            Shape::Box(_) => ShapeKind::Box,
            Shape::Capsule(_) => ShapeKind::Capsule,
            Shape::Cylinder(_) => ShapeKind::Cylinder,
            Shape::ConvexHull(_) => ShapeKind::ConvexHull,
            Shape::HalfSpace(_) => ShapeKind::HalfSpace,
            Shape::Compound(_) => ShapeKind::Compound,
            Shape::TriangleMesh(_) => ShapeKind::TriangleMesh,
            Shape::HeightField(_) => ShapeKind::HeightField,
        }
    }

    /// The shape as a convex support map (every shape but the half-space and the
    /// composite shapes).
    #[must_use]
    pub fn as_convex(&self) -> Option<&dyn ConvexSupport> {
        match self {
            Shape::Sphere(s) => Some(s),
            Shape::Box(s) => Some(s),
            Shape::Capsule(s) => Some(s),
            Shape::Cylinder(s) => Some(s),
            Shape::ConvexHull(s) => Some(&**s),
            Shape::HalfSpace(_)
            | Shape::Compound(_)
            | Shape::TriangleMesh(_)
            | Shape::HeightField(_) => None,
        }
    }

    /// Bounding box in the shape's frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        match self {
            Shape::Sphere(s) => Aabb::from_center_half_extents(Vec3A::ZERO, Vec3A::splat(s.radius)),
            Shape::Box(b) => Aabb::from_center_half_extents(Vec3A::ZERO, b.half_extents),
            Shape::Capsule(c) => Aabb::from_center_half_extents(
                Vec3A::ZERO,
                Vec3A::new(c.radius, c.half_height + c.radius, c.radius),
            ),
            Shape::Cylinder(c) => Aabb::from_center_half_extents(
                Vec3A::ZERO,
                Vec3A::new(c.radius, c.half_height, c.radius),
            ),
            Shape::ConvexHull(h) => h.local_aabb(),
            Shape::HalfSpace(_) => {
                Aabb::from_center_half_extents(Vec3A::ZERO, Vec3A::splat(HALF_SPACE_EXTENT))
            }
            Shape::Compound(c) => c.local_aabb(),
            Shape::TriangleMesh(m) => m.local_aabb(),
            Shape::HeightField(h) => h.local_aabb(),
        }
    }

    /// Tight bounding box in world space under `iso`.
    #[must_use]
    pub fn world_aabb(&self, iso: &Isometry) -> Aabb {
        match self {
            Shape::Sphere(s) => {
                Aabb::from_center_half_extents(iso.translation, Vec3A::splat(s.radius))
            }
            Shape::Capsule(c) => {
                let axis = rotate(iso.rotation, Vec3A::new(0.0, c.half_height, 0.0));
                let r = Vec3A::splat(c.radius);
                let (a, b) = (iso.translation + axis, iso.translation - axis);
                Aabb::new(a.min(b) - r, a.max(b) + r)
            }
            Shape::ConvexHull(h) => h.world_aabb(iso),
            _ => {
                // Box-like: |R| * half extents around the transformed centre.
                let local = self.local_aabb();
                let m = Mat3A::from_quat(iso.rotation);
                let abs = Mat3A::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs());
                let c = iso.transform_point(local.center());
                Aabb::from_center_half_extents(c, abs * local.half_extents())
            }
        }
    }

    /// Mass properties at `density` (kg/m³).
    pub fn mass_properties(&self, density: f32) -> Result<MassProperties, ShapeError> {
        if !(density.is_finite() && density > 0.0) {
            return Err(ShapeError::NonPositiveDensity);
        }
        match self {
            Shape::Sphere(s) => Ok(s.mass_properties(density)),
            Shape::Box(b) => Ok(b.mass_properties(density)),
            Shape::Capsule(c) => Ok(c.mass_properties(density)),
            Shape::Cylinder(c) => Ok(c.mass_properties(density)),
            Shape::ConvexHull(h) => Ok(h.mass_properties(density)),
            Shape::Compound(c) => c.mass_properties(density),
            Shape::HalfSpace(_) | Shape::TriangleMesh(_) | Shape::HeightField(_) => {
                Err(ShapeError::InfiniteShape)
            }
        }
    }

    /// Radius of the largest sphere around the local origin that fits inside the shape
    /// (continuous collision uses it as the "moved too far" threshold).
    #[must_use]
    pub fn inner_radius(&self) -> f32 {
        match self {
            Shape::Sphere(s) => s.radius,
            Shape::Box(b) => b.half_extents.min_element(),
            Shape::Capsule(c) => c.radius,
            Shape::Cylinder(c) => c.radius.min(c.half_height),
            Shape::ConvexHull(h) => h.inner_radius(),
            Shape::HalfSpace(_) => HALF_SPACE_EXTENT,
            Shape::Compound(c) => c.inner_radius(),
            // Thin surfaces: any motion of a kinematic mesh may pass something.
            Shape::TriangleMesh(_) | Shape::HeightField(_) => 0.0,
        }
    }

    /// Casts the ray `origin + t * dir`, `t` in `[0, max_fraction]`, in the shape's frame.
    #[must_use]
    pub fn cast_ray(
        &self,
        origin: impl Into<Vec3A>,
        dir: impl Into<Vec3A>,
        max_fraction: f32,
    ) -> Option<ShapeRayHit> {
        self.cast_ray_part(origin.into(), dir.into(), max_fraction)
            .map(|h| h.0)
    }

    /// [`Self::cast_ray`] with the part hit: the compound child's index, the mesh or
    /// heightfield triangle's index, 0 for other shapes.
    #[must_use]
    pub fn cast_ray_part(
        &self,
        origin: Vec3A,
        dir: Vec3A,
        max_fraction: f32,
    ) -> Option<(ShapeRayHit, u32)> {
        let whole = |h: Option<ShapeRayHit>| h.map(|h| (h, 0));
        match self {
            Shape::Sphere(s) => whole(s.cast_ray(origin, dir, max_fraction)),
            Shape::Box(b) => whole(b.cast_ray(origin, dir, max_fraction)),
            Shape::Capsule(c) => whole(c.cast_ray(origin, dir, max_fraction)),
            Shape::Cylinder(c) => whole(c.cast_ray(origin, dir, max_fraction)),
            Shape::ConvexHull(h) => whole(h.cast_ray(origin, dir, max_fraction)),
            Shape::HalfSpace(h) => whole(h.cast_ray(origin, dir, max_fraction)),
            Shape::Compound(c) => c.cast_ray(origin, dir, max_fraction),
            Shape::TriangleMesh(m) => m.cast_ray(origin, dir, max_fraction),
            Shape::HeightField(h) => h.cast_ray(origin, dir, max_fraction),
        }
    }
}

/// Calls `f(index, triangle)` for each triangle of a mesh or heightfield whose box
/// overlaps `aabb` (in the shape's frame); nothing for other shapes. `f` returns false to
/// stop.
pub(crate) fn for_each_triangle(shape: &Shape, aabb: &Aabb, f: impl FnMut(u32, Triangle) -> bool) {
    match shape {
        Shape::TriangleMesh(m) => m.query(aabb, f),
        Shape::HeightField(h) => h.query(aabb, f),
        _ => {}
    }
}

/// [`for_each_triangle`] where heightfield triangles come without their active edges
/// (`active` 0) until [`fill_active_edges`] is called: the narrow phase culls most
/// triangles before it needs them.
pub(crate) fn for_each_triangle_lazy(
    shape: &Shape,
    aabb: &Aabb,
    f: impl FnMut(u32, Triangle) -> bool,
) {
    match shape {
        Shape::TriangleMesh(m) => m.query(aabb, f),
        Shape::HeightField(h) => h.query_vertices(aabb, f),
        _ => {}
    }
}

/// Sets the active edges of triangle `t` of `shape` from [`for_each_triangle_lazy`].
pub(crate) fn fill_active_edges(shape: &Shape, t: u32, tri: &mut Triangle) {
    if let Shape::HeightField(h) = shape {
        tri.active = h.active_edges(t, &tri.vertices);
    }
}

/// Inertia of a solid box with half extents `h` and mass `m` about its centre.
#[must_use]
pub(crate) fn box_inertia(m: f32, h: Vec3A) -> Mat3A {
    let s = h * h;
    Mat3A::from_diagonal(Vec3::new(
        m / 3.0 * (s.y + s.z),
        m / 3.0 * (s.x + s.z),
        m / 3.0 * (s.x + s.y),
    ))
}
