//! Convex hulls built from points.
//!
//! Construction is the incremental algorithm (Clarkson & Shor; Barber et al.'s quickhull
//! shares its core step): start from a tetrahedron of extreme points, then add each point
//! that lies outside the current hull by removing the faces it sees and joining it to the
//! horizon. Tolerances are relative to the point cloud's size, so the same shape at any
//! scale builds the same hull. Coplanar triangles are merged into polygons afterwards (a
//! box's 8 corners give 6 quads), which is what face clipping wants.
//!
//! Mass properties integrate the polyhedron exactly by splitting it into tetrahedra from
//! an interior point (the covariance form of Tonon, "Explicit exact formulas for the 3-D
//! tetrahedron inertia tensor", 2004).

use crate::geometry::aabb::Aabb;
use crate::geometry::support::{ConvexSupport, MAX_FACE_VERTICES, SupportFace};
use crate::math::cross;
use crate::math::normalize;
use crate::math::{self, Isometry, Mat3A, Vec3, Vec3A};

use super::{MassProperties, ShapeError, ShapeRayHit};

/// A face of a hull: its outward plane and its vertices (CCW seen from outside).
#[derive(Clone, Debug, PartialEq)]
pub struct HullFace {
    /// Unit outward normal.
    pub normal: Vec3A,
    /// Plane offset: points `x` on the face satisfy `normal · x = offset`.
    pub offset: f32,
    /// Indices into [`ConvexHull::vertices`], counter-clockwise from outside.
    pub vertices: Vec<u32>,
}

/// A convex polyhedron.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    pub(crate) vertices: Vec<Vec3A>,
    pub(crate) faces: Vec<HullFace>,
    pub(crate) aabb: Aabb,
    /// Mass properties at density 1.
    pub(crate) unit_mass: MassProperties,
    pub(crate) inner_radius: f32,
}

#[derive(Clone, Copy)]
struct Tri {
    v: [usize; 3],
    n: Vec3A,
    d: f32,
}

fn tri(points: &[Vec3A], a: usize, b: usize, c: usize) -> Tri {
    let n = cross(points[b] - points[a], points[c] - points[a]).normalize_or_zero();
    Tri {
        v: [a, b, c],
        n,
        d: n.dot(points[a]),
    }
}

impl ConvexHull {
    /// Builds the hull of `points`.
    pub fn new(input: &[Vec3]) -> Result<Self, ShapeError> {
        if input.iter().any(|p| !p.is_finite()) {
            return Err(ShapeError::NonFinite);
        }
        let points: Vec<Vec3A> = input.iter().map(|&p| p.into()).collect();
        if points.len() < 4 {
            return Err(ShapeError::TooFewPoints);
        }
        let bounds = points.iter().fold(Aabb::EMPTY, |b, &p| b.including(p));
        let size = (bounds.max - bounds.min).max_element();
        if size <= 0.0 {
            return Err(ShapeError::TooFewPoints);
        }
        let eps = 1e-5 * size;

        // Initial tetrahedron from extreme points.
        let i0 = (0..points.len())
            .min_by(|&a, &b| points[a].x.total_cmp(&points[b].x))
            .expect("non-empty");
        let i1 = (0..points.len())
            .max_by(|&a, &b| {
                (points[a] - points[i0])
                    .length_squared()
                    .total_cmp(&(points[b] - points[i0]).length_squared())
            })
            .expect("non-empty");
        if (points[i1] - points[i0]).length() <= eps {
            return Err(ShapeError::TooFewPoints);
        }
        let axis = normalize(points[i1] - points[i0]);
        let line_dist = |p: Vec3A| {
            let v = p - points[i0];
            (v - axis * v.dot(axis)).length()
        };
        let i2 = (0..points.len())
            .max_by(|&a, &b| line_dist(points[a]).total_cmp(&line_dist(points[b])))
            .expect("non-empty");
        if line_dist(points[i2]) <= eps {
            return Err(ShapeError::Degenerate);
        }
        let plane_n = normalize(cross(points[i1] - points[i0], points[i2] - points[i0]));
        let plane_dist = |p: Vec3A| plane_n.dot(p - points[i0]);
        let i3 = (0..points.len())
            .max_by(|&a, &b| {
                plane_dist(points[a])
                    .abs()
                    .total_cmp(&plane_dist(points[b]).abs())
            })
            .expect("non-empty");
        if plane_dist(points[i3]).abs() <= eps {
            return Err(ShapeError::Degenerate);
        }

        let mut faces = if plane_dist(points[i3]) < 0.0 {
            vec![
                tri(&points, i0, i1, i2),
                tri(&points, i0, i3, i1),
                tri(&points, i1, i3, i2),
                tri(&points, i2, i3, i0),
            ]
        } else {
            vec![
                tri(&points, i0, i2, i1),
                tri(&points, i0, i1, i3),
                tri(&points, i1, i2, i3),
                tri(&points, i2, i0, i3),
            ]
        };

        let mut horizon: Vec<(usize, usize)> = Vec::new();
        for (pi, &p) in points.iter().enumerate() {
            if [i0, i1, i2, i3].contains(&pi) {
                continue;
            }
            if !faces.iter().any(|f| f.n.dot(p) - f.d > eps) {
                continue;
            }
            // Horizon: directed edges of visible faces whose twin is not visible.
            horizon.clear();
            let visible: Vec<bool> = faces.iter().map(|f| f.n.dot(p) - f.d > eps).collect();
            for (f, _) in faces.iter().zip(&visible).filter(|(_, v)| **v) {
                for k in 0..3 {
                    let (a, b) = (f.v[k], f.v[(k + 1) % 3]);
                    let twin_visible = faces
                        .iter()
                        .zip(&visible)
                        .any(|(g, &gv)| gv && (0..3).any(|j| g.v[j] == b && g.v[(j + 1) % 3] == a));
                    if !twin_visible {
                        horizon.push((a, b));
                    }
                }
            }
            let mut keep = visible.iter().map(|v| !v);
            faces.retain(|_| keep.next().unwrap_or(true));
            for &(a, b) in &horizon {
                faces.push(tri(&points, a, b, pi));
            }
        }

        // Merge coplanar triangles into polygons.
        let mut used = vec![false; faces.len()];
        let mut groups: Vec<(Vec3A, Vec<usize>)> = Vec::new();
        for i in 0..faces.len() {
            if used[i] {
                continue;
            }
            let n = faces[i].n;
            let mut verts = Vec::new();
            for j in i..faces.len() {
                if !used[j]
                    && faces[j].n.dot(n) > 1.0 - 1e-5
                    && (faces[j].d - faces[i].d).abs() <= eps
                {
                    used[j] = true;
                    verts.extend(faces[j].v);
                }
            }
            verts.sort_unstable();
            verts.dedup();
            groups.push((n, verts));
        }

        // Compact the vertex list to the points the hull uses.
        let mut remap = vec![u32::MAX; points.len()];
        let mut vertices = Vec::new();
        let mut hull_faces = Vec::with_capacity(groups.len());
        for (n, verts) in groups {
            let c = verts.iter().map(|&v| points[v]).sum::<Vec3A>() / verts.len() as f32;
            let t1 = (points[verts[0]] - c).normalize_or_zero();
            let t2 = cross(n, t1);
            let mut ring: Vec<(f32, usize)> = verts
                .iter()
                .map(|&v| {
                    let r = points[v] - c;
                    (math::atan2(r.dot(t2), r.dot(t1)), v)
                })
                .collect();
            ring.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut idx = Vec::with_capacity(ring.len());
            for (_, v) in ring {
                if remap[v] == u32::MAX {
                    remap[v] = vertices.len() as u32;
                    vertices.push(points[v]);
                }
                idx.push(remap[v]);
            }
            let offset = idx
                .iter()
                .map(|&i| n.dot(vertices[i as usize]))
                .fold(f32::MIN, f32::max);
            hull_faces.push(HullFace {
                normal: n,
                offset,
                vertices: idx,
            });
        }

        let aabb = vertices.iter().fold(Aabb::EMPTY, |b, &p| b.including(p));
        let mut hull = ConvexHull {
            vertices,
            faces: hull_faces,
            aabb,
            unit_mass: MassProperties {
                mass: 0.0,
                center_of_mass: Vec3A::ZERO,
                inertia: Mat3A::ZERO,
            },
            inner_radius: 0.0,
        };
        hull.unit_mass = hull.integrate();
        if hull.unit_mass.mass.is_nan() || hull.unit_mass.mass <= 0.0 {
            return Err(ShapeError::Degenerate);
        }
        let com = hull.unit_mass.center_of_mass;
        hull.inner_radius = hull
            .faces
            .iter()
            .map(|f| f.offset - f.normal.dot(com))
            .fold(f32::INFINITY, f32::min)
            .max(0.0);
        Ok(hull)
    }

    /// Volume, centre of mass and inertia at density 1.
    fn integrate(&self) -> MassProperties {
        let r = self.vertices.iter().sum::<Vec3A>() / self.vertices.len() as f32;
        let mut volume = 0.0f32;
        let mut first = Vec3A::ZERO;
        let mut cov = Mat3A::ZERO;
        for f in &self.faces {
            let v0 = self.vertices[f.vertices[0] as usize] - r;
            for k in 1..f.vertices.len() - 1 {
                let v1 = self.vertices[f.vertices[k] as usize] - r;
                let v2 = self.vertices[f.vertices[k + 1] as usize] - r;
                let vol = v0.dot(cross(v1, v2)) / 6.0;
                volume += vol;
                let s = v0 + v1 + v2;
                first += vol * s / 4.0;
                let outer = |a: Vec3A| Mat3A::from_cols(a * a.x, a * a.y, a * a.z);
                cov += (outer(v0) + outer(v1) + outer(v2) + outer(s)) * (vol / 20.0);
            }
        }
        let c = first / volume;
        // Covariance about the centre of mass, then inertia = tr(C) I - C.
        let outer_c = Mat3A::from_cols(c * c.x, c * c.y, c * c.z);
        let cov_cm = cov - outer_c * volume;
        let tr = cov_cm.x_axis.x + cov_cm.y_axis.y + cov_cm.z_axis.z;
        MassProperties {
            mass: volume,
            center_of_mass: c + r,
            inertia: Mat3A::from_diagonal(Vec3::splat(tr)) - cov_cm,
        }
    }

    /// The hull's vertices.
    #[must_use]
    pub fn vertices(&self) -> &[Vec3A] {
        &self.vertices
    }

    /// The hull's faces.
    #[must_use]
    pub fn faces(&self) -> &[HullFace] {
        &self.faces
    }

    /// Bounding box in the hull's frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        self.aabb
    }

    /// Tight bounding box under `iso`.
    #[must_use]
    pub fn world_aabb(&self, iso: &Isometry) -> Aabb {
        self.vertices
            .iter()
            .fold(Aabb::EMPTY, |b, &v| b.including(iso.transform_point(v)))
    }

    pub(crate) fn mass_properties(&self, density: f32) -> MassProperties {
        MassProperties {
            mass: self.unit_mass.mass * density,
            center_of_mass: self.unit_mass.center_of_mass,
            inertia: self.unit_mass.inertia * density,
        }
    }

    /// Distance from the centre of mass to the nearest face.
    #[must_use]
    pub fn inner_radius(&self) -> f32 {
        self.inner_radius
    }

    /// Index of the face whose normal is most aligned with `dir`.
    #[must_use]
    pub fn support_face_index(&self, dir: Vec3A) -> usize {
        let mut best = 0;
        let mut best_dot = f32::NEG_INFINITY;
        for (i, f) in self.faces.iter().enumerate() {
            let d = f.normal.dot(dir);
            if d > best_dot {
                best_dot = d;
                best = i;
            }
        }
        best
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        // Cyrus-Beck: clip the ray against every face's half-space.
        let mut t_enter = 0.0f32;
        let mut t_exit = max;
        let mut normal = None;
        for f in &self.faces {
            let num = f.offset - f.normal.dot(o);
            let den = f.normal.dot(d);
            if den.abs() < 1e-12 {
                if num < 0.0 {
                    return None;
                }
                continue;
            }
            let t = num / den;
            if den < 0.0 {
                if t > t_enter {
                    t_enter = t;
                    normal = Some(f.normal);
                }
            } else {
                t_exit = t_exit.min(t);
            }
            if t_enter > t_exit {
                return None;
            }
        }
        Some(ShapeRayHit {
            fraction: t_enter,
            normal: normal.unwrap_or_else(|| -d.normalize_or_zero()).into(),
        })
    }
}

impl ConvexSupport for ConvexHull {
    fn support_core(&self, dir: Vec3A) -> Vec3A {
        let mut best = self.vertices[0];
        let mut best_dot = best.dot(dir);
        for &v in &self.vertices[1..] {
            let d = v.dot(dir);
            if d > best_dot {
                best_dot = d;
                best = v;
            }
        }
        best
    }

    fn convex_radius(&self) -> f32 {
        0.0
    }

    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        let f = &self.faces[self.support_face_index(dir)];
        for &i in f.vertices.iter().take(MAX_FACE_VERTICES) {
            out.push(self.vertices[i as usize]);
        }
    }
}
