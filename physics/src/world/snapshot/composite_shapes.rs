//! Compound, mesh and heightfield shapes in the image.
//!
//! ```text
//!  tag 6  compound     count; per child: translation, rotation, material, child shape
//!  tag 7  mesh         vertex count, vertices; triangle count, 3 indices each;
//!                      material count (0 or one per triangle), materials
//!  tag 8  heightfield  nx, nz, cell x, cell z, nx·nz heights, hole flag count (0 or one
//!                      per cell), flags
//! ```
//!
//! Each is stored as its constructor's input and rebuilt through the constructor on
//! restore: construction is deterministic (trees built from sorted input, adjacency from
//! sorted edges), so the rebuilt shape equals the saved one bit for bit, and a bad image
//! is refused by the same validation as bad user input. Bodies that shared one mesh `Arc`
//! get a copy each after restore (memory, not results).

use std::sync::Arc;

use crate::math::Vec2;

use crate::math::{Isometry, Vec3};
use crate::shape::{CompoundChild, ConvexHull, Shape};

use super::SnapshotError;
use super::bodies::{HullTable, read_shape, write_shape};
use super::wire::{Reader, Writer};

pub(super) fn write_composite(w: &mut Writer, shape: &Shape, hulls: &HullTable) {
    match shape {
        Shape::Compound(c) => {
            w.u8(6);
            w.count(c.children().len());
            for child in c.children() {
                w.vec3(child.pose.translation);
                w.quat(child.pose.rotation);
                w.u32(child.material);
                write_shape(w, &child.shape, hulls);
            }
        }
        Shape::TriangleMesh(m) => {
            w.u8(7);
            w.count(m.vertices().len());
            for v in m.vertices() {
                w.vec3(*v);
            }
            w.count(m.indices().len());
            for t in m.indices() {
                for i in t {
                    w.u32(*i);
                }
            }
            w.count(m.materials().len());
            for x in m.materials() {
                w.u32(*x);
            }
        }
        Shape::HeightField(h) => {
            w.u8(8);
            let (nx, nz) = h.sample_counts();
            w.u32(nx);
            w.u32(nz);
            w.f32(h.cell_size().x);
            w.f32(h.cell_size().y);
            w.count(h.heights().len());
            for y in h.heights() {
                w.f32(*y);
            }
            let cells = (nx - 1) * (nz - 1);
            let any_hole = (0..cells).any(|c| h.is_hole(c % (nx - 1), c / (nx - 1)));
            w.count(if any_hole { cells as usize } else { 0 });
            if any_hole {
                for c in 0..cells {
                    w.bool(h.is_hole(c % (nx - 1), c / (nx - 1)));
                }
            }
        }
        _ => unreachable!("write_composite is called for composite shapes only"),
    }
}

fn refused(_: crate::shape::ShapeError) -> SnapshotError {
    SnapshotError::Corrupt("a composite shape fails its constructor's checks")
}

pub(super) fn read_composite(
    r: &mut Reader<'_>,
    tag: u8,
    hulls: &[Arc<ConvexHull>],
) -> Result<Shape, SnapshotError> {
    match tag {
        6 => {
            let n = r.count(33)?;
            let mut children = Vec::with_capacity(n);
            for _ in 0..n {
                let translation = r.vec3()?;
                let rotation = r.quat()?;
                let material = r.u32()?;
                let shape = read_shape(r, hulls)?;
                children.push(CompoundChild {
                    shape,
                    pose: Isometry::new(translation, rotation),
                    material,
                });
            }
            Shape::compound(children).map_err(refused)
        }
        7 => {
            let n = r.count(12)?;
            let mut vertices = Vec::with_capacity(n);
            for _ in 0..n {
                vertices.push(Vec3::from(r.vec3()?));
            }
            let n = r.count(12)?;
            let mut triangles = Vec::with_capacity(n);
            for _ in 0..n {
                triangles.push([r.u32()?, r.u32()?, r.u32()?]);
            }
            let n = r.count(4)?;
            let mut materials = Vec::with_capacity(n);
            for _ in 0..n {
                materials.push(r.u32()?);
            }
            let materials = (!materials.is_empty()).then_some(materials.as_slice());
            Shape::triangle_mesh(&vertices, &triangles, materials).map_err(refused)
        }
        _ => {
            let (nx, nz) = (r.u32()?, r.u32()?);
            let cell = Vec2::new(r.f32()?, r.f32()?);
            let n = r.count(4)?;
            let mut heights = Vec::with_capacity(n);
            for _ in 0..n {
                heights.push(r.f32()?);
            }
            let n = r.count(1)?;
            let mut holes = Vec::with_capacity(n);
            for _ in 0..n {
                holes.push(r.bool()?);
            }
            let holes = (!holes.is_empty()).then_some(holes.as_slice());
            Shape::height_field(nx, nz, cell, heights, holes).map_err(refused)
        }
    }
}
