//! The primitive shapes: closed-form support functions, mass properties and ray casts.
//!
//! Boxes and cylinders use a convex radius of zero: their core is the exact shape. The
//! narrow phase has dedicated routines for boxes, and GJK + EPA handle the rest exactly.

use crate::math::rotate;
use std::f32::consts::PI;

use crate::geometry::support::{ConvexSupport, SupportFace};
use crate::math::{self, Mat3A, Vec3, Vec3A};

use super::{MassProperties, ShapeRayHit, box_inertia};

/// A sphere centred at the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Radius.
    pub radius: f32,
}

/// A box centred at the origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    /// Half extents along local x, y, z.
    pub half_extents: Vec3A,
}

/// A capsule: a segment on local Y swept by a sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// Half length of the segment.
    pub half_height: f32,
    /// Radius.
    pub radius: f32,
}

/// A cylinder along local Y.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// Half height.
    pub half_height: f32,
    /// Radius.
    pub radius: f32,
}

/// The half-space `normal · x <= offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace {
    /// Unit outward normal.
    pub normal: Vec3A,
    /// Plane offset along the normal.
    pub offset: f32,
}

#[inline]
fn sign(x: f32) -> f32 {
    if x < 0.0 { -1.0 } else { 1.0 }
}

/// Points on a cylinder cap used as its support face.
const CAP_POINTS: usize = 8;

impl ConvexSupport for Sphere {
    fn support_core(&self, _dir: Vec3A) -> Vec3A {
        Vec3A::ZERO
    }
    fn convex_radius(&self) -> f32 {
        self.radius
    }
    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        out.push(dir.normalize_or_zero() * self.radius);
    }
}

impl ConvexSupport for Cuboid {
    fn support_core(&self, dir: Vec3A) -> Vec3A {
        let h = self.half_extents;
        Vec3A::new(sign(dir.x) * h.x, sign(dir.y) * h.y, sign(dir.z) * h.z)
    }
    fn convex_radius(&self) -> f32 {
        0.0
    }
    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        let a = dir.abs();
        let h = self.half_extents;
        // The face whose normal is most aligned with dir; corners CCW seen from outside.
        let (axis, s) = if a.x >= a.y && a.x >= a.z {
            (0, sign(dir.x))
        } else if a.y >= a.z {
            (1, sign(dir.y))
        } else {
            (2, sign(dir.z))
        };
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let quad = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
        for k in 0..4 {
            // Reverse the winding on the negative side so it stays CCW from outside.
            let (cu, cv) = if s > 0.0 { quad[k] } else { quad[3 - k] };
            let mut p = Vec3A::ZERO;
            p[axis] = s * h[axis];
            p[u] = cu * h[u];
            p[v] = cv * h[v];
            out.push(p);
        }
    }
}

impl ConvexSupport for Capsule {
    fn support_core(&self, dir: Vec3A) -> Vec3A {
        Vec3A::new(0.0, sign(dir.y) * self.half_height, 0.0)
    }
    fn convex_radius(&self) -> f32 {
        self.radius
    }
    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        let d = dir.normalize_or_zero();
        // Nearly perpendicular to the axis: the whole side line touches.
        if d.y.abs() < 0.05 && self.half_height > 0.0 {
            let side = Vec3A::new(d.x, 0.0, d.z).normalize_or_zero() * self.radius;
            out.push(Vec3A::new(0.0, self.half_height, 0.0) + side);
            out.push(Vec3A::new(0.0, -self.half_height, 0.0) + side);
        } else {
            out.push(self.support_core(d) + d * self.radius);
        }
    }
}

impl Cylinder {
    /// The rounding radius of the GJK core: shallow contacts are then resolved by GJK on
    /// the shrunk core (exact, robust) and EPA is only needed for deep overlaps.
    fn core_radius(&self) -> f32 {
        (0.1 * self.radius.min(self.half_height)).min(0.05)
    }
}

impl ConvexSupport for Cylinder {
    fn support_core(&self, dir: Vec3A) -> Vec3A {
        let cr = self.core_radius();
        let r = Vec3A::new(dir.x, 0.0, dir.z);
        let len = r.length();
        let rim = if len > 1e-12 {
            r * ((self.radius - cr) / len)
        } else {
            Vec3A::ZERO
        };
        rim + Vec3A::new(0.0, sign(dir.y) * (self.half_height - cr), 0.0)
    }
    fn convex_radius(&self) -> f32 {
        self.core_radius()
    }
    fn support_face(&self, dir: Vec3A, out: &mut SupportFace) {
        out.clear();
        let d = dir.normalize_or_zero();
        if d.y.abs() > 0.7 {
            // A cap: a regular polygon approximating the rim, CCW from outside.
            let y = sign(d.y) * self.half_height;
            for k in 0..CAP_POINTS {
                let t = 2.0 * PI * k as f32 / CAP_POINTS as f32;
                let t = if d.y > 0.0 { -t } else { t };
                let (sin, cos) = math::sin_cos(t);
                out.push(Vec3A::new(self.radius * cos, y, self.radius * sin));
            }
        } else if d.y.abs() < 0.05 {
            // The side line.
            let side = Vec3A::new(d.x, 0.0, d.z).normalize_or_zero() * self.radius;
            out.push(side + Vec3A::new(0.0, self.half_height, 0.0));
            out.push(side - Vec3A::new(0.0, self.half_height, 0.0));
        } else {
            out.push(self.support(d));
        }
    }
}

impl Sphere {
    pub(crate) fn mass_properties(&self, density: f32) -> MassProperties {
        let r = self.radius;
        let m = density * 4.0 / 3.0 * PI * r * r * r;
        MassProperties {
            mass: m,
            center_of_mass: Vec3A::ZERO,
            inertia: Mat3A::from_diagonal(Vec3::splat(0.4 * m * r * r)),
        }
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        ray_sphere(Vec3A::ZERO, self.radius, o, d, max)
    }
}

/// Ray against a sphere at `c`; a ray starting inside hits at 0.
fn ray_sphere(c: Vec3A, r: f32, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
    let m = o - c;
    let cc = m.length_squared() - r * r;
    if cc <= 0.0 {
        return Some(ShapeRayHit {
            fraction: 0.0,
            normal: (-d.normalize_or_zero()).into(),
        });
    }
    let a = d.length_squared();
    if a == 0.0 {
        return None;
    }
    let b = m.dot(d);
    let disc = b * b - a * cc;
    if b > 0.0 || disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    (t >= 0.0 && t <= max).then(|| ShapeRayHit {
        fraction: t,
        normal: (m + d * t).normalize_or_zero().into(),
    })
}

impl Cuboid {
    pub(crate) fn mass_properties(&self, density: f32) -> MassProperties {
        let h = self.half_extents;
        let m = density * 8.0 * h.x * h.y * h.z;
        MassProperties {
            mass: m,
            center_of_mass: Vec3A::ZERO,
            inertia: box_inertia(m, h),
        }
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let h = self.half_extents;
        if o.abs().cmple(h).all() {
            return Some(ShapeRayHit {
                fraction: 0.0,
                normal: (-d.normalize_or_zero()).into(),
            });
        }
        let mut t_enter = 0.0f32;
        let mut t_exit = max;
        let mut normal = Vec3A::ZERO;
        for axis in 0..3 {
            if d[axis].abs() < 1e-12 {
                if o[axis].abs() > h[axis] {
                    return None;
                }
                continue;
            }
            let inv = 1.0 / d[axis];
            let mut t1 = (-h[axis] - o[axis]) * inv;
            let mut t2 = (h[axis] - o[axis]) * inv;
            let mut s = -1.0;
            if t1 > t2 {
                std::mem::swap(&mut t1, &mut t2);
                s = 1.0;
            }
            if t1 > t_enter {
                t_enter = t1;
                normal = Vec3A::ZERO;
                normal[axis] = s;
            }
            t_exit = t_exit.min(t2);
            if t_enter > t_exit {
                return None;
            }
        }
        Some(ShapeRayHit {
            fraction: t_enter,
            normal: normal.into(),
        })
    }
}

impl Capsule {
    pub(crate) fn mass_properties(&self, density: f32) -> MassProperties {
        let (r, hh) = (self.radius, self.half_height);
        // Cylinder of height 2hh plus two hemispheres (a sphere's mass).
        let mc = density * PI * r * r * 2.0 * hh;
        let ms = density * 4.0 / 3.0 * PI * r * r * r;
        let h = 2.0 * hh;
        let iy = mc * r * r / 2.0 + 0.4 * ms * r * r;
        // Each hemisphere: inertia about its own centre of mass (83/320 m r²), shifted to
        // the capsule's centre by the parallel-axis theorem; its centre of mass lies 3r/8
        // beyond the segment's end.
        let d = hh + 3.0 * r / 8.0;
        let hemi = ms / 2.0;
        let ix =
            mc * (3.0 * r * r + h * h) / 12.0 + 2.0 * (83.0 / 320.0 * hemi * r * r + hemi * d * d);
        MassProperties {
            mass: mc + ms,
            center_of_mass: Vec3A::ZERO,
            inertia: Mat3A::from_diagonal(Vec3::new(ix, iy, ix)),
        }
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let (r, hh) = (self.radius, self.half_height);
        // Inside test: distance to the segment.
        let closest = Vec3A::new(0.0, o.y.clamp(-hh, hh), 0.0);
        if (o - closest).length_squared() <= r * r {
            return Some(ShapeRayHit {
                fraction: 0.0,
                normal: (-d.normalize_or_zero()).into(),
            });
        }
        let mut best: Option<ShapeRayHit> = None;
        let mut consider = |hit: Option<ShapeRayHit>| {
            if let Some(h) = hit
                && best.is_none_or(|b| h.fraction < b.fraction)
            {
                best = Some(h);
            }
        };
        consider(ray_side(r, hh, o, d, max));
        consider(ray_sphere(Vec3A::new(0.0, hh, 0.0), r, o, d, max));
        consider(ray_sphere(Vec3A::new(0.0, -hh, 0.0), r, o, d, max));
        best
    }
}

/// Ray against the side of an infinite cylinder of radius `r` on Y, kept where |y| <= hh.
fn ray_side(r: f32, hh: f32, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
    let a = d.x * d.x + d.z * d.z;
    if a < 1e-12 {
        return None;
    }
    let b = o.x * d.x + o.z * d.z;
    let c = o.x * o.x + o.z * o.z - r * r;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    if t < 0.0 || t > max {
        return None;
    }
    let p = o + d * t;
    (p.y.abs() <= hh).then(|| ShapeRayHit {
        fraction: t,
        normal: Vec3A::new(p.x, 0.0, p.z).normalize_or_zero().into(),
    })
}

impl Cylinder {
    pub(crate) fn mass_properties(&self, density: f32) -> MassProperties {
        let (r, hh) = (self.radius, self.half_height);
        let h = 2.0 * hh;
        let m = density * PI * r * r * h;
        let ix = m * (3.0 * r * r + h * h) / 12.0;
        MassProperties {
            mass: m,
            center_of_mass: Vec3A::ZERO,
            inertia: Mat3A::from_diagonal(Vec3::new(ix, m * r * r / 2.0, ix)),
        }
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let (r, hh) = (self.radius, self.half_height);
        if o.y.abs() <= hh && o.x * o.x + o.z * o.z <= r * r {
            return Some(ShapeRayHit {
                fraction: 0.0,
                normal: (-d.normalize_or_zero()).into(),
            });
        }
        let mut best = ray_side(r, hh, o, d, max);
        // Caps.
        if d.y.abs() > 1e-12 {
            for s in [1.0f32, -1.0] {
                let t = (s * hh - o.y) / d.y;
                if t < 0.0 || t > max || best.is_some_and(|b| b.fraction <= t) {
                    continue;
                }
                let p = o + d * t;
                // Only the outside face of each cap can be entered.
                if p.x * p.x + p.z * p.z <= r * r && d.y * s < 0.0 {
                    best = Some(ShapeRayHit {
                        fraction: t,
                        normal: Vec3::new(0.0, s, 0.0),
                    });
                }
            }
        }
        best
    }
}

impl HalfSpace {
    /// Signed distance from the plane (at `pose`) to the deepest point of `shape` (at
    /// `shape_pose`), the plane's world normal (pointing out of the half-space) and that
    /// deepest point (world). Negative distance: the shape reaches into the half-space.
    pub(crate) fn distance_to(
        &self,
        pose: &crate::math::Isometry,
        shape: &dyn crate::geometry::support::ConvexSupport,
        shape_pose: &crate::math::Isometry,
    ) -> (f32, Vec3A, Vec3A) {
        let n = rotate(pose.rotation, self.normal);
        let offset = n.dot(pose.translation) + self.offset;
        let local_dir = rotate(shape_pose.rotation.inverse(), -n);
        let deepest = shape_pose.transform_point(shape.support(local_dir));
        (n.dot(deepest) - offset, n, deepest)
    }

    pub(crate) fn cast_ray(&self, o: Vec3A, d: Vec3A, max: f32) -> Option<ShapeRayHit> {
        let dist = self.normal.dot(o) - self.offset;
        if dist <= 0.0 {
            return Some(ShapeRayHit {
                fraction: 0.0,
                normal: (-d.normalize_or_zero()).into(),
            });
        }
        let dn = self.normal.dot(d);
        if dn >= 0.0 {
            return None;
        }
        let t = -dist / dn;
        (t <= max).then_some(ShapeRayHit {
            fraction: t,
            normal: self.normal.into(),
        })
    }
}
