//! Triangle meshes: static (or kinematic) level geometry from vertices and indices.
//!
//! The mesh is validated once (finite vertices, indices in range, no triangle of zero
//! area), its triangles go into a [`Bvh`], and each triangle learns which of its edges are
//! active ([`edge_is_active`]): an edge shared with a neighbour that continues the surface
//! flat or bends it inwards cannot be hit "edge first" by anything resting on the surface,
//! so contacts there take the face normal (Jolt's active edges; Edyn keeps the same
//! adjacency for the same reason). Neighbours are found by sorting the edges by their
//! vertex pair, so a mesh must share vertex indices along seams (weld it first).
//!
//! Each triangle may carry a material id (Edyn's per-triangle friction and restitution):
//! a contact touching the triangle mixes its friction and restitution with that id and
//! the values set for it (`World::set_part_surface`; see [`crate::material`]), 0 meaning
//! the mesh body's own material.

use crate::geometry::aabb::Aabb;
use crate::math::cross;
use crate::math::normalize;
use crate::math::{Vec3, Vec3A};

use super::bvh::Bvh;
use super::triangle::{Triangle, WatertightRay};
use super::{ShapeError, ShapeRayHit};

/// Cosine of the bend below which a convex edge counts as active (5°, Jolt's default).
const ACTIVE_EDGE_COS: f32 = 0.996_194_7;

/// Whether edge `a -> b` of a triangle with unit normal `n` is active when the neighbour
/// across it has opposite vertex `v`: only a convex bend sharper than 5° is.
#[must_use]
pub(crate) fn edge_is_active(a: Vec3A, b: Vec3A, n: Vec3A, v: Vec3A) -> bool {
    // The neighbour (b, a, v) winds the same way as the triangle.
    let n2 = cross(a - b, v - b).normalize_or_zero();
    let convex = n.dot(v - a) < 0.0;
    convex && n.dot(n2) < ACTIVE_EDGE_COS
}

/// A triangle mesh (see the module docs).
#[derive(Clone, Debug)]
pub struct TriangleMesh {
    vertices: Vec<Vec3A>,
    triangles: Vec<[u32; 3]>,
    materials: Vec<u32>,
    active: Vec<u8>,
    bvh: Bvh,
}

impl TriangleMesh {
    /// Builds a mesh. `materials`, when given, has one id per triangle. Errors:
    /// [`ShapeError::Empty`] (no triangles), [`ShapeError::NonFinite`] (a vertex),
    /// [`ShapeError::IndexOutOfRange`], [`ShapeError::DegenerateTriangle`],
    /// [`ShapeError::WrongCount`] (materials of another length).
    pub fn new(
        vertices: &[Vec3],
        triangles: &[[u32; 3]],
        materials: Option<&[u32]>,
    ) -> Result<Self, ShapeError> {
        if triangles.is_empty() {
            return Err(ShapeError::Empty);
        }
        if vertices.iter().any(|v| !v.is_finite()) {
            return Err(ShapeError::NonFinite);
        }
        if let Some(m) = materials.filter(|m| m.len() != triangles.len()) {
            return Err(ShapeError::WrongCount {
                list: "materials (one per triangle)",
                expected: triangles.len() as u64,
                actual: m.len() as u64,
            });
        }
        let vertices: Vec<Vec3A> = vertices.iter().map(|&v| v.into()).collect();
        let mut boxes = Vec::with_capacity(triangles.len());
        let mut normals = Vec::with_capacity(triangles.len());
        for (t, tri) in triangles.iter().enumerate() {
            if tri.iter().any(|&i| i as usize >= vertices.len()) {
                return Err(ShapeError::IndexOutOfRange(t as u32));
            }
            let [a, b, c] = tri.map(|i| vertices[i as usize]);
            let cross = cross(b - a, c - a);
            let scale = (b - a).length_squared().max((c - a).length_squared());
            // Area relative to the longest edge: slivers thinner than 1e-6 of their
            // length have no usable normal.
            if cross.length_squared() <= 1e-12 * scale * scale || scale == 0.0 {
                return Err(ShapeError::DegenerateTriangle(t as u32));
            }
            normals.push(normalize(cross));
            boxes.push(Aabb::new(a.min(b).min(c), a.max(b).max(c)));
        }
        // Edges keyed by their sorted vertex pair; equal keys are neighbours.
        let mut edges: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(3 * triangles.len());
        for (t, tri) in triangles.iter().enumerate() {
            for k in 0..3 {
                let (p, q) = (tri[k], tri[(k + 1) % 3]);
                edges.push((p.min(q), p.max(q), t as u32, k as u8));
            }
        }
        edges.sort_unstable();
        let mut active = vec![0u8; triangles.len()];
        let mut s = 0;
        while s < edges.len() {
            let mut e = s + 1;
            while e < edges.len() && edges[e].0 == edges[s].0 && edges[e].1 == edges[s].1 {
                e += 1;
            }
            for x in s..e {
                let (_, _, t, k) = edges[x];
                let tri = triangles[t as usize];
                let on = if e - s == 2 {
                    let (_, _, t2, k2) = edges[if x == s { s + 1 } else { s }];
                    let other = triangles[t2 as usize];
                    let v = vertices[other[(k2 as usize + 2) % 3] as usize];
                    let (a, b) = (
                        vertices[tri[k as usize] as usize],
                        vertices[tri[(k as usize + 1) % 3] as usize],
                    );
                    edge_is_active(a, b, normals[t as usize], v)
                } else {
                    // A boundary edge, or more than two triangles on one edge.
                    true
                };
                if on {
                    active[t as usize] |= 1 << k;
                }
            }
            s = e;
        }
        Ok(TriangleMesh {
            vertices,
            triangles: triangles.to_vec(),
            materials: materials.map(<[u32]>::to_vec).unwrap_or_default(),
            active,
            bvh: Bvh::new(&boxes),
        })
    }

    /// The vertices.
    #[must_use]
    pub fn vertices(&self) -> &[Vec3A] {
        &self.vertices
    }

    /// The triangles' vertex indices.
    #[must_use]
    pub fn indices(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Per-triangle material ids (empty when none were given).
    #[must_use]
    pub fn materials(&self) -> &[u32] {
        &self.materials
    }

    /// Triangle `t` with its active edges and material.
    #[must_use]
    pub fn triangle(&self, t: u32) -> Triangle {
        let tri = self.triangles[t as usize];
        Triangle {
            vertices: tri.map(|i| self.vertices[i as usize]),
            active: self.active[t as usize],
            material: self.materials.get(t as usize).copied().unwrap_or(0),
        }
    }

    /// Box around the mesh in its frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        self.bvh.root_aabb()
    }

    /// Calls `f(index, triangle)` for each triangle whose box overlaps `aabb`; `f`
    /// returns false to stop.
    pub fn query(&self, aabb: &Aabb, mut f: impl FnMut(u32, Triangle) -> bool) {
        self.bvh.query(aabb, |t| f(t, self.triangle(t)));
    }

    /// The nearest ray hit (both faces), with the triangle's index. Watertight: the tree
    /// walk pads its boxes ([`Bvh::ray`]) and each triangle is tested with
    /// [`WatertightRay`], so a ray through a shared edge or vertex hits.
    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<(ShapeRayHit, u32)> {
        let ray = WatertightRay::new(o, d)?;
        let mut best: Option<(f32, u32)> = None;
        self.bvh.ray(o, d, max, |t| {
            let limit = best.map_or(max, |b| b.0);
            let tri = self.triangles[t as usize].map(|i| self.vertices[i as usize]);
            if let Some(f) = ray.hit(&tri, limit)
                && best.is_none_or(|b| f < b.0)
            {
                best = Some((f, t));
            }
            best.map_or(max, |b| b.0)
        });
        best.map(|(fraction, t)| {
            let normal = self.triangle(t).normal_against(d);
            (
                ShapeRayHit {
                    fraction,
                    normal: normal.into(),
                },
                t,
            )
        })
    }
}
