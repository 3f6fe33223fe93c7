//! Heightfields: terrain as a regular grid of heights.
//!
//! `nx × nz` samples, `cell.x` apart along local X and `cell.y` apart along local Z,
//! centred on the local origin: sample `(i, j)` is at
//! `x = (i - (nx - 1) / 2) cell.x`, `z = (j - (nz - 1) / 2) cell.y`, `y = heights[j nx + i]`
//! (rows along X, stored row by row). Each cell is split along the diagonal from its
//! `(x0, z1)` corner to its `(x1, z0)` corner (as Rapier and Box3D do), and a cell may be
//! a hole. Memory is one `f32` per sample plus one bit per cell: no triangles or tree are
//! stored, because the grid is its own acceleration structure (a box query visits the
//! cells under the box; a ray walks the columns of cells it crosses, watertight: see
//! `HeightField::cast_ray`).
//!
//! Triangle `2 c` of cell `c = j (nx - 1) + i` is `(p00, p01, p10)`, triangle `2 c + 1`
//! is `(p10, p01, p11)`, both facing +Y. Active edges come from the neighbouring cells
//! exactly as for meshes (`mesh::edge_is_active`), computed when a triangle is fetched.

use crate::geometry::aabb::Aabb;
use crate::math::cross;
use crate::math::normalize;
use crate::math::{Vec2, Vec3};

use crate::math::Vec3A;

use super::mesh::edge_is_active;
use super::triangle::{Triangle, WatertightRay};
use super::{ShapeError, ShapeRayHit};

/// How far a ray's footprint is widened when the cell walk decides which cells it
/// passes, relative to the size of the coordinates (and at least of a cell): about 80
/// `f32` ulps, far above the rounding of the ray's position, far below a cell.
const GRID_PAD: f32 = 1e-5;

/// A heightfield: terrain as a regular grid of `nx × nz` height samples.
///
/// **Where the samples are.** The grid is centred on the body's origin: samples are
/// `cell.x` apart along local X and `cell.y` apart along local Z, and sample `(i, j)`
/// (`i` in `0..nx` along X, `j` in `0..nz` along Z) is at
///
/// ```text
/// x = (i - (nx - 1) / 2) * cell.x,   y = heights[j * nx + i],   z = (j - (nz - 1) / 2) * cell.y
/// ```
///
/// so `heights` is stored **row by row, X fastest**: the first `nx` values are the row
/// at the lowest Z (`j = 0`), from low X to high X. A 3 × 2 field with cell size 1 has
/// its samples at x = -1, 0, 1 and z = -0.5, 0.5. [`HeightField::point`] gives a sample's
/// local position. Place the terrain by the body's position (its origin is the grid's
/// centre, at height 0).
///
/// Each cell is split along the diagonal from its `(x0, z1)` corner to its `(x1, z0)`
/// corner; triangle `2 c` of cell `c = j (nx - 1) + i` is `(p00, p01, p10)` and triangle
/// `2 c + 1` is `(p10, p01, p11)`, both facing +Y (these are the triangle indices ray
/// hits report). A cell may be a hole (`holes`: one flag per cell, row by row the same
/// way).
///
/// ```
/// use joule_physics::math::{Vec2, Vec3};
/// use joule_physics::shape::{HeightField, Shape};
///
/// // 3 samples along X, 2 along Z; the row at z = -0.5 first.
/// let heights = [0.0, 1.0, 2.0, /* z = +0.5: */ 3.0, 4.0, 5.0];
/// let field = HeightField::new(3, 2, Vec2::ONE, &heights, None)?;
/// assert_eq!(field.point(0, 0), Vec3::new(-1.0, 0.0, -0.5));
/// assert_eq!(field.point(2, 1), Vec3::new(1.0, 5.0, 0.5));
/// let terrain = Shape::height_field(3, 2, Vec2::ONE, &heights, None)?;
/// # let _ = terrain;
/// # Ok::<(), joule_physics::shape::ShapeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct HeightField {
    nx: u32,
    nz: u32,
    cell: Vec2,
    heights: Vec<f32>,
    /// One bit per cell, set for holes; empty when there are none.
    holes: Vec<u64>,
    min_y: f32,
    max_y: f32,
}

impl HeightField {
    /// Builds a heightfield of `nx × nz` samples (`heights.len() == nx nz`, both at least
    /// 2, row by row with X fastest: see [`HeightField`] for where each sample is) with
    /// cell size `cell` (x along X, y along Z). `heights` is a slice (or a `Vec`, moved in
    /// without a copy). `holes`, when given, has one flag per cell (`(nx - 1)(nz - 1)`,
    /// row by row). Errors: [`ShapeError::WrongCount`], [`ShapeError::NonFinite`],
    /// [`ShapeError::NonPositiveSize`].
    pub fn new(
        nx: u32,
        nz: u32,
        cell: Vec2,
        heights: impl Into<Vec<f32>>,
        holes: Option<&[bool]>,
    ) -> Result<Self, ShapeError> {
        let heights = heights.into();
        if nx < 2 || nz < 2 {
            return Err(ShapeError::WrongCount {
                list: "samples per side (nx, nz; at least)",
                expected: 2,
                actual: u64::from(nx.min(nz)),
            });
        }
        if heights.len() as u64 != u64::from(nx) * u64::from(nz) {
            return Err(ShapeError::WrongCount {
                list: "heights (nx * nz)",
                expected: u64::from(nx) * u64::from(nz),
                actual: heights.len() as u64,
            });
        }
        if !cell.is_finite() || heights.iter().any(|h| !h.is_finite()) {
            return Err(ShapeError::NonFinite);
        }
        if cell.min_element() <= 0.0 {
            return Err(ShapeError::NonPositiveSize);
        }
        let cells = (nx as usize - 1) * (nz as usize - 1);
        let holes = match holes {
            None => Vec::new(),
            Some(h) if h.len() != cells => {
                return Err(ShapeError::WrongCount {
                    list: "holes ((nx - 1) * (nz - 1), one per cell)",
                    expected: cells as u64,
                    actual: h.len() as u64,
                });
            }
            Some(h) => {
                let mut bits = vec![0u64; cells.div_ceil(64)];
                for (c, _) in h.iter().enumerate().filter(|(_, x)| **x) {
                    bits[c / 64] |= 1 << (c % 64);
                }
                bits
            }
        };
        let min_y = heights.iter().copied().fold(f32::INFINITY, f32::min);
        let max_y = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        Ok(HeightField {
            nx,
            nz,
            cell,
            heights,
            holes,
            min_y,
            max_y,
        })
    }

    /// Samples along X and Z.
    #[must_use]
    pub fn sample_counts(&self) -> (u32, u32) {
        (self.nx, self.nz)
    }

    /// Cell size (x along X, y along Z).
    #[must_use]
    pub fn cell_size(&self) -> Vec2 {
        self.cell
    }

    /// The heights, row by row.
    #[must_use]
    pub fn heights(&self) -> &[f32] {
        &self.heights
    }

    /// Whether cell `(i, j)` is a hole.
    #[must_use]
    pub fn is_hole(&self, i: u32, j: u32) -> bool {
        let c = (j * (self.nx - 1) + i) as usize;
        !self.holes.is_empty() && self.holes[c / 64] >> (c % 64) & 1 == 1
    }

    fn origin(&self) -> Vec2 {
        -0.5 * Vec2::new((self.nx - 1) as f32, (self.nz - 1) as f32) * self.cell
    }

    /// Sample `(i, j)` in the local frame.
    #[must_use]
    pub fn point(&self, i: u32, j: u32) -> Vec3 {
        self.point_a(i, j).into()
    }

    /// [`Self::point`] in the step's SIMD layout.
    pub(crate) fn point_a(&self, i: u32, j: u32) -> Vec3A {
        let o = self.origin();
        Vec3A::new(
            o.x + i as f32 * self.cell.x,
            self.heights[(j * self.nx + i) as usize],
            o.y + j as f32 * self.cell.y,
        )
    }

    /// Box around the field in its frame.
    #[must_use]
    pub fn local_aabb(&self) -> Aabb {
        let o = self.origin();
        Aabb::new(
            Vec3A::new(o.x, self.min_y, o.y),
            Vec3A::new(-o.x, self.max_y, -o.y),
        )
    }

    /// Whether triangle `half` (0 or 1) of cell `(i, j)` exists (cell in range, no hole).
    fn exists(&self, i: i64, j: i64) -> bool {
        i >= 0
            && j >= 0
            && i < i64::from(self.nx) - 1
            && j < i64::from(self.nz) - 1
            && !self.is_hole(i as u32, j as u32)
    }

    /// Triangle `t` (`2 c + half` of cell `c`) with its active edges.
    #[must_use]
    pub fn triangle(&self, t: u32) -> Triangle {
        let mut tri = self.triangle_vertices(t);
        tri.active = self.active_edges(t, &tri.vertices);
        tri
    }

    /// Triangle `t` without its active edges (`active` is 0); see [`Self::active_edges`].
    #[must_use]
    pub(crate) fn triangle_vertices(&self, t: u32) -> Triangle {
        let c = t / 2;
        let (i, j) = (c % (self.nx - 1), c / (self.nx - 1));
        let p = |di: u32, dj: u32| self.point_a(i + di, j + dj);
        let vertices = if t.is_multiple_of(2) {
            [p(0, 0), p(0, 1), p(1, 0)]
        } else {
            [p(1, 0), p(0, 1), p(1, 1)]
        };
        Triangle {
            vertices,
            active: 0,
            material: 0,
        }
    }

    /// The active-edge bits of triangle `t` whose corners are `vertices`.
    #[must_use]
    pub(crate) fn active_edges(&self, t: u32, vertices: &[Vec3A; 3]) -> u8 {
        let c = t / 2;
        let (i, j) = (c % (self.nx - 1), c / (self.nx - 1));
        let (ii, jj) = (i64::from(i), i64::from(j));
        // Per edge: the neighbouring cell and the sample opposite the edge there.
        let neighbours = if t.is_multiple_of(2) {
            [
                ((ii - 1, jj), (ii - 1, jj + 1)),
                ((ii, jj), (ii + 1, jj + 1)),
                ((ii, jj - 1), (ii + 1, jj - 1)),
            ]
        } else {
            [
                ((ii, jj), (ii, jj)),
                ((ii, jj + 1), (ii, jj + 2)),
                ((ii + 1, jj), (ii + 2, jj)),
            ]
        };
        let n = normalize(cross(vertices[1] - vertices[0], vertices[2] - vertices[0]));
        let mut active = 0;
        for (k, ((ci, cj), (vi, vj))) in neighbours.into_iter().enumerate() {
            let on = if self.exists(ci, cj) {
                let v = self.point_a(vi as u32, vj as u32);
                edge_is_active(vertices[k], vertices[(k + 1) % 3], n, v)
            } else {
                true
            };
            if on {
                active |= 1 << k;
            }
        }
        active
    }

    /// The cell range `[i0, i1) × [j0, j1)` under the X–Z extent of `aabb`.
    fn cells_under(&self, aabb: &Aabb) -> (u32, u32, u32, u32) {
        let o = self.origin();
        let lo = (Vec2::new(aabb.min.x, aabb.min.z) - o) / self.cell;
        let hi = (Vec2::new(aabb.max.x, aabb.max.z) - o) / self.cell;
        let clamp = |x: f32, n: u32| x.clamp(0.0, (n - 1) as f32) as u32;
        (
            clamp(lo.x.floor(), self.nx),
            clamp(hi.x.floor() + 1.0, self.nx),
            clamp(lo.y.floor(), self.nz),
            clamp(hi.y.floor() + 1.0, self.nz),
        )
    }

    /// Calls `f(index, triangle)` for each triangle whose box overlaps `aabb`, cell by
    /// cell in row order; `f` returns false to stop.
    pub fn query(&self, aabb: &Aabb, mut f: impl FnMut(u32, Triangle) -> bool) {
        self.query_vertices(aabb, |t, mut tri| {
            tri.active = self.active_edges(t, &tri.vertices);
            f(t, tri)
        });
    }

    /// [`Self::query`] without active edges (`active` is 0): the narrow phase computes
    /// them only for triangles that pass its cheaper tests.
    pub(crate) fn query_vertices(&self, aabb: &Aabb, mut f: impl FnMut(u32, Triangle) -> bool) {
        if aabb.max.y < self.min_y || aabb.min.y > self.max_y {
            return;
        }
        let (i0, i1, j0, j1) = self.cells_under(aabb);
        for j in j0..j1 {
            for i in i0..i1 {
                if self.is_hole(i, j) {
                    continue;
                }
                let c = j * (self.nx - 1) + i;
                for t in [2 * c, 2 * c + 1] {
                    let tri = self.triangle_vertices(t);
                    let [a, b, d] = tri.vertices;
                    let lo = a.min(b).min(d);
                    let hi = a.max(b).max(d);
                    if hi.y < aabb.min.y || lo.y > aabb.max.y {
                        continue;
                    }
                    if !f(t, tri) {
                        return;
                    }
                }
            }
        }
    }

    /// The nearest ray hit, with the triangle's index.
    ///
    /// Watertight: a ray that meets the surface reports it, through edges and vertices
    /// too. The ray (already in the field's frame) walks the columns of cells along the
    /// axis it crosses more cells of, in order; in each column it visits every cell its
    /// footprint passes within `pad` of, so both cells beside a grid line it follows or
    /// crosses are tested, and each triangle is tested with [`WatertightRay`], which
    /// never lets a ray through between two triangles. The walk stops at the first
    /// column that starts beyond the nearest hit found.
    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<(ShapeRayHit, u32)> {
        let ray = WatertightRay::new(o, d)?;
        let bounds = self.local_aabb();
        let scale = bounds
            .min
            .abs()
            .max(bounds.max.abs())
            .max(o.abs())
            .max_element();
        let pad = GRID_PAD * scale.max(self.cell.max_element());
        // Clip the ray to the padded box, one axis at a time (a zero component of `d`
        // is tested by position, never divided by).
        let (mut t0, mut t1) = (0.0f32, max);
        for k in 0..3 {
            let (lo, hi) = (bounds.min[k] - pad, bounds.max[k] + pad);
            if d[k] == 0.0 {
                if o[k] < lo || o[k] > hi {
                    return None;
                }
            } else {
                let (a, b) = ((lo - o[k]) / d[k], (hi - o[k]) / d[k]);
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return None;
        }
        // In 2D: index 0 is local X (cells along i), index 1 local Z (cells along j).
        let (o2, d2) = (Vec2::new(o.x, o.z), Vec2::new(d.x, d.z));
        let corner = self.origin();
        let cells = [i64::from(self.nx) - 1, i64::from(self.nz) - 1];
        // The cells along axis `k` whose padded extent the ray reaches for t in [ta, tb].
        let span = |k: usize, ta: f32, tb: f32| -> (i64, i64) {
            let at = |t: f32| (o2[k] + d2[k] * t - corner[k]) / self.cell[k];
            let (a, b) = (at(ta), at(tb));
            let p = pad / self.cell[k];
            let clamp = |x: f32| (x.floor() as i64).clamp(0, cells[k] - 1);
            (clamp(a.min(b) - p), clamp(a.max(b) + p))
        };
        let (u, v) = if (d2.x / self.cell.x).abs() >= (d2.y / self.cell.y).abs() {
            (0, 1)
        } else {
            (1, 0)
        };
        let (first, last) = span(u, t0, t1);
        let mut best: Option<(f32, u32)> = None;
        for k in 0..=last - first {
            let cu = if d2[u] < 0.0 { last - k } else { first + k };
            // The part of the ray over this column, padded.
            let (ta, tb) = if d2[u] == 0.0 {
                (t0, t1)
            } else {
                let lo = corner[u] + cu as f32 * self.cell[u] - pad;
                let hi = corner[u] + (cu + 1) as f32 * self.cell[u] + pad;
                let (a, b) = ((lo - o2[u]) / d2[u], (hi - o2[u]) / d2[u]);
                (a.min(b).max(t0), a.max(b).min(t1))
            };
            // Columns come in order of `ta`, and a hit over a column is at `ta` or later.
            if best.is_some_and(|(t, _)| t < ta) {
                break;
            }
            if ta > tb {
                continue;
            }
            // The ray's heights over the column: a cell wholly above or below them is
            // skipped without fetching its triangles (most of a grazing ray's cells).
            let (ya, yb) = (o.y + d.y * ta, o.y + d.y * tb);
            let (ray_lo, ray_hi) = (ya.min(yb) - pad, ya.max(yb) + pad);
            let (rows_first, rows_last) = span(v, ta, tb);
            for cv in rows_first..=rows_last {
                let (i, j) = if u == 0 { (cu, cv) } else { (cv, cu) };
                if !self.exists(i, j) {
                    continue;
                }
                let (i, j) = (i as u32, j as u32);
                let h = |di: u32, dj: u32| self.heights[((j + dj) * self.nx + i + di) as usize];
                let corners = [h(0, 0), h(1, 0), h(0, 1), h(1, 1)];
                let lo = corners.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = corners.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                if hi < ray_lo || lo > ray_hi {
                    continue;
                }
                let c = j * (self.nx - 1) + i;
                for t in [2 * c, 2 * c + 1] {
                    let limit = best.map_or(max, |b| b.0);
                    if let Some(f) = ray.hit(&self.triangle_vertices(t).vertices, limit)
                        && best.is_none_or(|b| f < b.0)
                    {
                        best = Some((f, t));
                    }
                }
            }
        }
        best.map(|(fraction, t)| {
            let normal = self.triangle_vertices(t).normal_against(d);
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
