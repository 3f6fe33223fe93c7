//! Shape definitions on the wire: every kind of [`Shape`] the world has, sent once per
//! client by id on the reliable channel.
//!
//! A definition is coded on its own ([`ShapeDef::encode`]) and travels in
//! [`ServerMessage::ShapePart`](super::ServerMessage::ShapePart)s of at most
//! [`SHAPE_PART_BYTES`] each, so a level mesh of megabytes crosses as many packets, each
//! under the packet limit; the client joins the parts (in order: the reliable channel
//! keeps it) and decodes the whole. Floats go as their 32 bits, so the client's shape is
//! the server's, bit for bit.
//!
//! Decoding checks every field before it is used: a kind tag in range (a compound's
//! children convex only), every count bounded by the bits left before anything is
//! allocated for it (and by the limits below), every float finite and within
//! [`MAX_SHAPE_SIZE`], triangle indices below the vertex count, a heightfield's
//! `nx × nz` samples matching the samples sent. What the shape constructors check beyond
//! that (a hull's points spanning 3D, triangles of non-zero area) is checked by building
//! the shape ([`ShapeDef::to_shape`]); the client refuses a definition that fails either.

use crate::math::{Isometry, Quat, Vec2, Vec3, quat_length};
use crate::shape::{CompoundChild, Shape, ShapeError};

use super::bits::{BitReader, BitWriter};
use super::error::WireError;

/// The largest size (a radius, a half extent, a coordinate of a hull or mesh vertex, a
/// height) a shape on the wire may have, in metres.
pub const MAX_SHAPE_SIZE: f32 = 1.0e4;

/// The most bytes one coded shape definition may take (a mesh of about a million
/// triangles).
pub const MAX_SHAPE_BYTES: u32 = 16 << 20;

/// The most bytes of a definition one [`ShapePart`](super::ServerMessage::ShapePart)
/// carries.
pub const SHAPE_PART_BYTES: usize = 16 * 1024;

/// The most points of a hull, children of a compound, vertices or triangles of a mesh,
/// or samples of a heightfield (each also bounded by the bytes that came).
pub const MAX_SHAPE_ELEMENTS: u32 = 1 << 22;

/// One child of a [`ShapeDef::Compound`].
#[derive(Clone, Debug, PartialEq)]
pub struct ChildDef {
    /// Its shape: a sphere, box, capsule, cylinder or hull.
    pub shape: ShapeDef,
    /// Its pose in the compound's frame.
    pub pose: Isometry,
    /// Its material id.
    pub material: u32,
}

/// A shape definition, sent once by id on the reliable channel.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeDef {
    /// A sphere of this radius.
    Sphere {
        /// Radius.
        radius: f32,
    },
    /// A box of these half extents.
    Cuboid {
        /// Half extents.
        half_extents: Vec3,
    },
    /// A capsule along y.
    Capsule {
        /// Half the length of the segment.
        half_height: f32,
        /// Radius.
        radius: f32,
    },
    /// A cylinder along y.
    Cylinder {
        /// Half the height.
        half_height: f32,
        /// Radius.
        radius: f32,
    },
    /// A convex hull of these points (the server's hull vertices).
    ConvexHull {
        /// The points.
        points: Vec<Vec3>,
    },
    /// The half-space `normal · x <= offset`.
    HalfSpace {
        /// Unit normal.
        normal: Vec3,
        /// Offset along the normal.
        offset: f32,
    },
    /// Convex children at their poses.
    Compound {
        /// The children, in the server's order.
        children: Vec<ChildDef>,
    },
    /// A triangle mesh.
    TriangleMesh {
        /// Vertices.
        vertices: Vec<Vec3>,
        /// Triangles, vertex indices.
        triangles: Vec<[u32; 3]>,
        /// One material id per triangle, or empty.
        materials: Vec<u32>,
    },
    /// A heightfield (see [`Shape::height_field`]).
    HeightField {
        /// Samples along X.
        nx: u32,
        /// Samples along Z.
        nz: u32,
        /// Cell size along X and Z.
        cell: Vec2,
        /// `nx * nz` heights, X fastest.
        heights: Vec<f32>,
        /// One flag per cell, or empty for none.
        holes: Vec<bool>,
    },
}

const SPHERE: u64 = 0;
const CUBOID: u64 = 1;
const CAPSULE: u64 = 2;
const CYLINDER: u64 = 3;
const HULL: u64 = 4;
const HALF_SPACE: u64 = 5;
const COMPOUND: u64 = 6;
const MESH: u64 = 7;
const HEIGHT_FIELD: u64 = 8;

fn write_vec(w: &mut BitWriter, v: Vec3) {
    for c in v.to_array() {
        w.write_f32(c);
    }
}

fn read_vec(r: &mut BitReader<'_>, max: f32, field: &'static str) -> Result<Vec3, WireError> {
    Ok(Vec3::new(
        r.read_f32(max, field)?,
        r.read_f32(max, field)?,
        r.read_f32(max, field)?,
    ))
}

fn read_size(r: &mut BitReader<'_>, field: &'static str) -> Result<f32, WireError> {
    let v = r.read_f32(MAX_SHAPE_SIZE, field)?;
    if v <= 0.0 {
        return Err(WireError::FloatOutOfRange {
            field,
            max: f64::from(MAX_SHAPE_SIZE),
            actual: f64::from(v),
        });
    }
    Ok(v)
}

/// Reads a pose: a translation within [`MAX_SHAPE_SIZE`] and a unit rotation.
pub(super) fn read_pose(r: &mut BitReader<'_>, field: &'static str) -> Result<Isometry, WireError> {
    let t = read_vec(r, MAX_SHAPE_SIZE, field)?;
    let q = Quat::from_xyzw(
        r.read_f32(1.01, field)?,
        r.read_f32(1.01, field)?,
        r.read_f32(1.01, field)?,
        r.read_f32(1.01, field)?,
    );
    let len = quat_length(q);
    if (len - 1.0).abs() > 1e-3 {
        return Err(WireError::FloatOutOfRange {
            field,
            max: 1.001,
            actual: f64::from(len),
        });
    }
    Ok(Isometry::new(t, q))
}

/// Writes a pose as [`read_pose`] reads it.
pub(super) fn write_pose(w: &mut BitWriter, pose: &Isometry) {
    write_vec(w, pose.position());
    for c in pose.rotation.to_array() {
        w.write_f32(c);
    }
}

impl ShapeDef {
    /// The definition of `shape`.
    #[must_use]
    pub fn from_shape(shape: &Shape) -> ShapeDef {
        match shape {
            Shape::Sphere(s) => ShapeDef::Sphere { radius: s.radius },
            Shape::Box(b) => ShapeDef::Cuboid {
                half_extents: b.half_extents.into(),
            },
            Shape::Capsule(c) => ShapeDef::Capsule {
                half_height: c.half_height,
                radius: c.radius,
            },
            Shape::Cylinder(c) => ShapeDef::Cylinder {
                half_height: c.half_height,
                radius: c.radius,
            },
            Shape::ConvexHull(h) => ShapeDef::ConvexHull {
                points: h.vertices().iter().map(|&v| v.into()).collect(),
            },
            Shape::HalfSpace(h) => ShapeDef::HalfSpace {
                normal: h.normal.into(),
                offset: h.offset,
            },
            Shape::Compound(c) => ShapeDef::Compound {
                children: c
                    .children()
                    .iter()
                    .map(|c| ChildDef {
                        shape: ShapeDef::from_shape(&c.shape),
                        pose: c.pose,
                        material: c.material,
                    })
                    .collect(),
            },
            Shape::TriangleMesh(m) => ShapeDef::TriangleMesh {
                vertices: m.vertices().iter().map(|&v| v.into()).collect(),
                triangles: m.indices().to_vec(),
                materials: m.materials().to_vec(),
            },
            Shape::HeightField(h) => {
                let (nx, nz) = h.sample_counts();
                let holes: Vec<bool> = (0..nz - 1)
                    .flat_map(|j| (0..nx - 1).map(move |i| (i, j)))
                    .map(|(i, j)| h.is_hole(i, j))
                    .collect();
                let any = holes.iter().any(|&x| x);
                ShapeDef::HeightField {
                    nx,
                    nz,
                    cell: h.cell_size(),
                    heights: h.heights().to_vec(),
                    holes: if any { holes } else { Vec::new() },
                }
            }
        }
    }

    /// Builds the shape, with the checks of its constructor.
    ///
    /// # Errors
    /// The constructor's [`ShapeError`] (a degenerate hull, a zero-area triangle, ...).
    pub fn to_shape(&self) -> Result<Shape, ShapeError> {
        match self {
            ShapeDef::Sphere { radius } => Shape::sphere(*radius),
            ShapeDef::Cuboid { half_extents } => Shape::cuboid(*half_extents),
            ShapeDef::Capsule {
                half_height,
                radius,
            } => Shape::capsule(*half_height, *radius),
            ShapeDef::Cylinder {
                half_height,
                radius,
            } => Shape::cylinder(*half_height, *radius),
            ShapeDef::ConvexHull { points } => Shape::convex_hull(points),
            ShapeDef::HalfSpace { normal, offset } => Shape::half_space(*normal, *offset),
            ShapeDef::Compound { children } => Shape::compound(
                children
                    .iter()
                    .map(|c| {
                        Ok(CompoundChild::new(c.shape.to_shape()?, c.pose)
                            .with_material(c.material))
                    })
                    .collect::<Result<Vec<_>, ShapeError>>()?,
            ),
            ShapeDef::TriangleMesh {
                vertices,
                triangles,
                materials,
            } => Shape::triangle_mesh(
                vertices,
                triangles,
                (!materials.is_empty()).then_some(materials.as_slice()),
            ),
            ShapeDef::HeightField {
                nx,
                nz,
                cell,
                heights,
                holes,
            } => Shape::height_field(
                *nx,
                *nz,
                *cell,
                heights.as_slice(),
                (!holes.is_empty()).then_some(holes.as_slice()),
            ),
        }
    }

    /// The definition coded on its own (what [`decode`](Self::decode) reads).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut w = BitWriter::new();
        self.write(&mut w);
        w.finish()
    }

    fn write(&self, w: &mut BitWriter) {
        match self {
            ShapeDef::Sphere { radius } => {
                w.write(SPHERE, 4);
                w.write_f32(*radius);
            }
            ShapeDef::Cuboid { half_extents } => {
                w.write(CUBOID, 4);
                write_vec(w, *half_extents);
            }
            ShapeDef::Capsule {
                half_height,
                radius,
            } => {
                w.write(CAPSULE, 4);
                w.write_f32(*half_height);
                w.write_f32(*radius);
            }
            ShapeDef::Cylinder {
                half_height,
                radius,
            } => {
                w.write(CYLINDER, 4);
                w.write_f32(*half_height);
                w.write_f32(*radius);
            }
            ShapeDef::ConvexHull { points } => {
                w.write(HULL, 4);
                w.write_var(points.len() as u32);
                for &p in points {
                    write_vec(w, p);
                }
            }
            ShapeDef::HalfSpace { normal, offset } => {
                w.write(HALF_SPACE, 4);
                write_vec(w, *normal);
                w.write_f32(*offset);
            }
            ShapeDef::Compound { children } => {
                w.write(COMPOUND, 4);
                w.write_var(children.len() as u32);
                for c in children {
                    c.shape.write(w);
                    write_pose(w, &c.pose);
                    w.write_var(c.material);
                }
            }
            ShapeDef::TriangleMesh {
                vertices,
                triangles,
                materials,
            } => {
                w.write(MESH, 4);
                w.write_var(vertices.len() as u32);
                for &v in vertices {
                    write_vec(w, v);
                }
                w.write_var(triangles.len() as u32);
                let width = index_width(vertices.len() as u32);
                for t in triangles {
                    for &i in t {
                        w.write(u64::from(i), width);
                    }
                }
                w.write_bool(!materials.is_empty());
                for &m in materials {
                    w.write_var(m);
                }
            }
            ShapeDef::HeightField {
                nx,
                nz,
                cell,
                heights,
                holes,
            } => {
                w.write(HEIGHT_FIELD, 4);
                w.write_var(*nx);
                w.write_var(*nz);
                w.write_f32(cell.x);
                w.write_f32(cell.y);
                for &h in heights {
                    w.write_f32(h);
                }
                w.write_bool(!holes.is_empty());
                for &h in holes {
                    w.write_bool(h);
                }
            }
        }
    }

    /// Decodes and checks a definition (see the [module header](self)); the bytes must
    /// hold it and nothing more.
    ///
    /// # Errors
    /// Any [`WireError`] naming the field.
    pub fn decode(bytes: &[u8]) -> Result<ShapeDef, WireError> {
        if bytes.len() > MAX_SHAPE_BYTES as usize {
            return Err(WireError::TooLong {
                actual: bytes.len(),
            });
        }
        let mut r = BitReader::new(bytes);
        let def = Self::read(&mut r, false)?;
        r.finish()?;
        Ok(def)
    }

    fn read(r: &mut BitReader<'_>, child: bool) -> Result<ShapeDef, WireError> {
        let kind = r.read(4, "shape.kind")?;
        let largest = if child { HULL } else { HEIGHT_FIELD };
        if kind > largest {
            return Err(WireError::OutOfRange {
                field: if child {
                    "shape.compound.child.kind"
                } else {
                    "shape.kind"
                },
                max: largest,
                actual: kind,
            });
        }
        Ok(match kind {
            SPHERE => ShapeDef::Sphere {
                radius: read_size(r, "shape.radius")?,
            },
            CUBOID => ShapeDef::Cuboid {
                half_extents: Vec3::new(
                    read_size(r, "shape.half_extents")?,
                    read_size(r, "shape.half_extents")?,
                    read_size(r, "shape.half_extents")?,
                ),
            },
            CAPSULE | CYLINDER => {
                let half_height = if kind == CAPSULE {
                    // A capsule's may be 0 (a sphere).
                    let h = r.read_f32(MAX_SHAPE_SIZE, "shape.half_height")?;
                    if h < 0.0 {
                        return Err(WireError::FloatOutOfRange {
                            field: "shape.half_height",
                            max: f64::from(MAX_SHAPE_SIZE),
                            actual: f64::from(h),
                        });
                    }
                    h
                } else {
                    read_size(r, "shape.half_height")?
                };
                let radius = read_size(r, "shape.radius")?;
                if kind == CAPSULE {
                    ShapeDef::Capsule {
                        half_height,
                        radius,
                    }
                } else {
                    ShapeDef::Cylinder {
                        half_height,
                        radius,
                    }
                }
            }
            HULL => {
                let n = r.read_var("shape.hull.points")?;
                let n = r.check_count(n, MAX_SHAPE_ELEMENTS, 96, "shape.hull.points")?;
                if n < 4 {
                    return Err(WireError::OutOfRange {
                        field: "shape.hull.points (at least 4)",
                        max: 4,
                        actual: n as u64,
                    });
                }
                let mut points = Vec::with_capacity(n);
                for _ in 0..n {
                    points.push(read_vec(r, MAX_SHAPE_SIZE, "shape.hull.point")?);
                }
                ShapeDef::ConvexHull { points }
            }
            HALF_SPACE => ShapeDef::HalfSpace {
                normal: read_vec(r, 1.01, "shape.half_space.normal")?,
                offset: r.read_f32(crate::shape::HALF_SPACE_EXTENT, "shape.half_space.offset")?,
            },
            COMPOUND => {
                let n = r.read_var("shape.compound.children")?;
                // A child is at least a sphere (4 + 32 bits), a pose (224) and a material
                // (6).
                let n = r.check_count(n, MAX_SHAPE_ELEMENTS, 266, "shape.compound.children")?;
                if n == 0 {
                    return Err(WireError::OutOfRange {
                        field: "shape.compound.children (at least 1)",
                        max: 1,
                        actual: 0,
                    });
                }
                let mut children = Vec::with_capacity(n);
                for _ in 0..n {
                    let shape = Self::read(r, true)?;
                    let pose = read_pose(r, "shape.compound.child.pose")?;
                    let material = r.read_var("shape.compound.child.material")?;
                    children.push(ChildDef {
                        shape,
                        pose,
                        material,
                    });
                }
                ShapeDef::Compound { children }
            }
            MESH => {
                let nv = r.read_var("shape.mesh.vertices")?;
                let nv = r.check_count(nv, MAX_SHAPE_ELEMENTS, 96, "shape.mesh.vertices")?;
                let mut vertices = Vec::with_capacity(nv);
                for _ in 0..nv {
                    vertices.push(read_vec(r, MAX_SHAPE_SIZE, "shape.mesh.vertex")?);
                }
                let nt = r.read_var("shape.mesh.triangles")?;
                let width = index_width(nv as u32);
                let nt =
                    r.check_count(nt, MAX_SHAPE_ELEMENTS, 3 * width, "shape.mesh.triangles")?;
                if nt == 0 || nv < 3 {
                    return Err(WireError::OutOfRange {
                        field: "shape.mesh.triangles (at least 1, of 3 vertices or more)",
                        max: 1,
                        actual: 0,
                    });
                }
                let mut triangles = Vec::with_capacity(nt);
                for _ in 0..nt {
                    let mut t = [0u32; 3];
                    for i in &mut t {
                        *i = r.read_u32(width, "shape.mesh.index")?;
                        if *i as usize >= nv {
                            return Err(WireError::OutOfRange {
                                field: "shape.mesh.index",
                                max: nv as u64 - 1,
                                actual: u64::from(*i),
                            });
                        }
                    }
                    triangles.push(t);
                }
                let materials = if r.read_bool("shape.mesh.materials")? {
                    // One var (at least 6 bits) per triangle.
                    r.check_count(nt as u32, MAX_SHAPE_ELEMENTS, 6, "shape.mesh.materials")?;
                    let mut m = Vec::with_capacity(nt);
                    for _ in 0..nt {
                        m.push(r.read_var("shape.mesh.material")?);
                    }
                    m
                } else {
                    Vec::new()
                };
                ShapeDef::TriangleMesh {
                    vertices,
                    triangles,
                    materials,
                }
            }
            _ => {
                let nx = r.read_var("shape.height_field.nx")?;
                let nz = r.read_var("shape.height_field.nz")?;
                if nx < 2 || nz < 2 {
                    return Err(WireError::OutOfRange {
                        field: "shape.height_field.nx, nz (at least 2)",
                        max: 2,
                        actual: u64::from(nx.min(nz)),
                    });
                }
                let cell = Vec2::new(
                    read_size(r, "shape.height_field.cell")?,
                    read_size(r, "shape.height_field.cell")?,
                );
                let samples = u64::from(nx) * u64::from(nz);
                let samples = r.check_count(
                    u32::try_from(samples).unwrap_or(u32::MAX),
                    MAX_SHAPE_ELEMENTS,
                    32,
                    "shape.height_field.heights (nx * nz)",
                )?;
                let mut heights = Vec::with_capacity(samples);
                for _ in 0..samples {
                    heights.push(r.read_f32(MAX_SHAPE_SIZE, "shape.height_field.height")?);
                }
                let cells = (nx as usize - 1) * (nz as usize - 1);
                let holes = if r.read_bool("shape.height_field.holes")? {
                    r.check_count(
                        cells as u32,
                        MAX_SHAPE_ELEMENTS,
                        1,
                        "shape.height_field.holes",
                    )?;
                    let mut h = Vec::with_capacity(cells);
                    for _ in 0..cells {
                        h.push(r.read_bool("shape.height_field.hole")?);
                    }
                    h
                } else {
                    Vec::new()
                };
                ShapeDef::HeightField {
                    nx,
                    nz,
                    cell,
                    heights,
                    holes,
                }
            }
        })
    }
}

/// Bits per vertex index of a mesh of `vertices` vertices (at least 1).
fn index_width(vertices: u32) -> u32 {
    (32 - vertices.saturating_sub(1).leading_zeros()).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heightfield_whose_samples_do_not_match_nx_nz_is_refused() {
        let def = ShapeDef::HeightField {
            nx: 3,
            nz: 2,
            cell: Vec2::ONE,
            heights: vec![0.0; 6],
            holes: Vec::new(),
        };
        let bytes = def.encode();
        assert_eq!(ShapeDef::decode(&bytes).unwrap(), def);
        // Five samples where nx * nz says six: the packet is short.
        let short = ShapeDef::HeightField {
            nx: 3,
            nz: 2,
            cell: Vec2::ONE,
            heights: vec![0.0; 5],
            holes: Vec::new(),
        };
        assert!(ShapeDef::decode(&short.encode()).is_err());
    }
}
