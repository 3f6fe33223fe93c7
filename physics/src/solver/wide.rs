//! Four-lane float math for the bundled contact solver, on stable Rust without
//! intrinsics: every operation is a plain loop over `[f32; 4]` that LLVM turns into one
//! SSE/NEON instruction (checked in the release build's assembly).
//!
//! Each lane does exactly the scalar operation glam does for `Vec3A`, `Mat3A` and `Quat`,
//! in the same order (`dot` is `(x + y) + z`, `Mat3A * v` sums the columns in order, `Quat *
//! v` is glam's `v (w² - b·b) + 2 b (v·b) + 2 w (b × v)`), so a lane computes bit for bit
//! what the scalar solver computes for the same constraint. Comparisons give a [`M4`], a
//! per-lane all-ones/zero mask as SIMD compares do, and [`F4::select`] blends on it.

use std::ops::{Add, Mul, Sub};

use glam::{Mat4, Vec4};

use crate::math::{Mat3A, Quat, Vec3A};

/// Lanes per bundle.
pub const LANES: usize = 4;

/// Four `f32` lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct F4(pub [f32; LANES]);

/// A per-lane mask: all ones where true, zero where false.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct M4(pub [u32; LANES]);

#[inline(always)]
fn lanes<U>(f: impl Fn(usize) -> U) -> [U; LANES] {
    [f(0), f(1), f(2), f(3)]
}

impl F4 {
    /// All lanes zero.
    pub const ZERO: F4 = F4([0.0; LANES]);

    /// `x` in every lane.
    #[inline(always)]
    #[must_use]
    pub fn splat(x: f32) -> F4 {
        F4([x; LANES])
    }

    /// Lane-wise `f32::max` (same NaN and signed-zero rules as the scalar solver).
    #[inline(always)]
    #[must_use]
    pub fn max(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i].max(o.0[i])))
    }

    /// Lane-wise `f32::min`.
    #[inline(always)]
    #[must_use]
    pub fn min(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i].min(o.0[i])))
    }

    /// Lane-wise square root.
    #[inline(always)]
    #[must_use]
    pub fn sqrt(self) -> F4 {
        F4(lanes(|i| self.0[i].sqrt()))
    }

    /// Lane-wise `self > o`.
    #[inline(always)]
    #[must_use]
    pub fn gt(self, o: F4) -> M4 {
        M4(lanes(|i| if self.0[i] > o.0[i] { u32::MAX } else { 0 }))
    }

    /// Lane-wise `self == o`.
    #[inline(always)]
    #[must_use]
    pub fn eq(self, o: F4) -> M4 {
        M4(lanes(|i| if self.0[i] == o.0[i] { u32::MAX } else { 0 }))
    }

    /// `a` where `m` is set, `b` elsewhere (bitwise, so NaNs and signed zeros pass as
    /// they are).
    #[inline(always)]
    #[must_use]
    pub fn select(m: M4, a: F4, b: F4) -> F4 {
        F4(lanes(|i| {
            f32::from_bits((a.0[i].to_bits() & m.0[i]) | (b.0[i].to_bits() & !m.0[i]))
        }))
    }

    /// Lane-wise division.
    #[inline(always)]
    #[must_use]
    pub fn div(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i] / o.0[i]))
    }

    /// Lane-wise negation.
    #[inline(always)]
    #[must_use]
    pub fn neg(self) -> F4 {
        F4(lanes(|i| -self.0[i]))
    }
}

impl M4 {
    /// Every lane set.
    pub const ALL: M4 = M4([u32::MAX; LANES]);

    /// Lane-wise and.
    #[inline(always)]
    #[must_use]
    pub fn and(self, o: M4) -> M4 {
        M4(lanes(|i| self.0[i] & o.0[i]))
    }

    /// Lane-wise and-not (`self & !o`).
    #[inline(always)]
    #[must_use]
    pub fn and_not(self, o: M4) -> M4 {
        M4(lanes(|i| self.0[i] & !o.0[i]))
    }

    /// Lane-wise or.
    #[inline(always)]
    #[must_use]
    pub fn or(self, o: M4) -> M4 {
        M4(lanes(|i| self.0[i] | o.0[i]))
    }

    /// Whether any lane is set.
    #[inline(always)]
    #[must_use]
    pub fn any(self) -> bool {
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) != 0
    }
}

impl Add for F4 {
    type Output = F4;
    #[inline(always)]
    fn add(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i] + o.0[i]))
    }
}

impl Sub for F4 {
    type Output = F4;
    #[inline(always)]
    fn sub(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i] - o.0[i]))
    }
}

impl Mul for F4 {
    type Output = F4;
    #[inline(always)]
    fn mul(self, o: F4) -> F4 {
        F4(lanes(|i| self.0[i] * o.0[i]))
    }
}

/// Four 3-vectors, one per lane, stored by component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct V3 {
    /// x of each lane.
    pub x: F4,
    /// y of each lane.
    pub y: F4,
    /// z of each lane.
    pub z: F4,
}

impl V3 {
    /// Lane `i` of the result is `v[i]` (a 4x4 transpose in registers: building the
    /// lanes element by element makes LLVM go through the stack with partial stores,
    /// which stalls the wide loads that follow).
    #[inline(always)]
    #[must_use]
    pub fn gather(v: [Vec3A; LANES]) -> V3 {
        let t = Mat4::from_cols(
            v[0].extend(0.0),
            v[1].extend(0.0),
            v[2].extend(0.0),
            v[3].extend(0.0),
        )
        .transpose();
        V3 {
            x: F4(t.x_axis.to_array()),
            y: F4(t.y_axis.to_array()),
            z: F4(t.z_axis.to_array()),
        }
    }

    /// The four lanes as vectors (the inverse of [`V3::gather`]).
    #[inline(always)]
    #[must_use]
    pub fn scatter(&self) -> [Vec3A; LANES] {
        let t = Mat4::from_cols(
            Vec4::from_array(self.x.0),
            Vec4::from_array(self.y.0),
            Vec4::from_array(self.z.0),
            Vec4::ZERO,
        )
        .transpose();
        [t.x_axis, t.y_axis, t.z_axis, t.w_axis].map(Vec3A::from_vec4)
    }

    /// Lane `i` as a vector.
    #[cfg(test)]
    #[must_use]
    pub fn lane(&self, i: usize) -> Vec3A {
        Vec3A::new(self.x.0[i], self.y.0[i], self.z.0[i])
    }

    /// Sets lane `i`.
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, v: Vec3A) {
        self.x.0[i] = v.x;
        self.y.0[i] = v.y;
        self.z.0[i] = v.z;
    }

    /// `(x * x' + y * y') + z * z'`, as glam's `Vec3A::dot`.
    #[inline(always)]
    #[must_use]
    pub fn dot(self, o: V3) -> F4 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// The cross product, as glam's `Vec3A::cross`.
    #[inline(always)]
    #[must_use]
    pub fn cross(self, o: V3) -> V3 {
        V3 {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    /// Every component scaled by the lane's `s` (`s * v` in glam).
    #[inline(always)]
    #[must_use]
    pub fn scale(self, s: F4) -> V3 {
        V3 {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }

    /// `a` where `m` is set, `b` elsewhere.
    #[inline(always)]
    #[must_use]
    pub fn select(m: M4, a: V3, b: V3) -> V3 {
        V3 {
            x: F4::select(m, a.x, b.x),
            y: F4::select(m, a.y, b.y),
            z: F4::select(m, a.z, b.z),
        }
    }
}

impl Add for V3 {
    type Output = V3;
    #[inline(always)]
    fn add(self, o: V3) -> V3 {
        V3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl Sub for V3 {
    type Output = V3;
    #[inline(always)]
    fn sub(self, o: V3) -> V3 {
        V3 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

/// Four 3x3 matrices by column, as glam's `Mat3A`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct M3 {
    /// The columns.
    pub cols: [V3; 3],
}

impl M3 {
    /// Sets lane `i`.
    #[inline]
    pub fn set_lane(&mut self, i: usize, m: &Mat3A) {
        self.cols[0].set_lane(i, m.x_axis);
        self.cols[1].set_lane(i, m.y_axis);
        self.cols[2].set_lane(i, m.z_axis);
    }

    /// `M * v`, summed as glam's `Mat3A::mul_vec3a`.
    #[inline(always)]
    #[must_use]
    pub fn mul(&self, v: V3) -> V3 {
        let [c0, c1, c2] = self.cols;
        V3 {
            x: c0.x * v.x + c1.x * v.y + c2.x * v.z,
            y: c0.y * v.x + c1.y * v.y + c2.y * v.z,
            z: c0.z * v.x + c1.z * v.y + c2.z * v.z,
        }
    }
}

/// Four unit quaternions by component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Q4 {
    /// The vector part.
    pub v: V3,
    /// The scalar part.
    pub w: F4,
}

impl Q4 {
    /// Lane `i` of the result is `q[i]`.
    #[inline(always)]
    #[must_use]
    pub fn gather(q: [Quat; LANES]) -> Q4 {
        let t = Mat4::from_cols(q[0].into(), q[1].into(), q[2].into(), q[3].into()).transpose();
        Q4 {
            v: V3 {
                x: F4(t.x_axis.to_array()),
                y: F4(t.y_axis.to_array()),
                z: F4(t.z_axis.to_array()),
            },
            w: F4(t.w_axis.to_array()),
        }
    }

    /// The inverse rotations (glam's `Quat::conjugate`: negated vector part).
    #[inline(always)]
    #[must_use]
    pub fn conjugate(self) -> Q4 {
        Q4 {
            v: V3 {
                x: self.v.x.neg(),
                y: self.v.y.neg(),
                z: self.v.z.neg(),
            },
            w: self.w,
        }
    }

    /// Rotates `r`, with glam's formula for `Quat * Vec3A`.
    #[inline(always)]
    #[must_use]
    pub fn rotate(self, r: V3) -> V3 {
        let two = F4::splat(2.0);
        let b = self.v;
        let w = self.w;
        let b2 = b.dot(b);
        let k0 = w * w - b2;
        let k1 = r.dot(b) * two;
        let k2 = w * two;
        let c = b.cross(r);
        V3 {
            x: r.x * k0 + b.x * k1 + c.x * k2,
            y: r.y * k0 + b.y * k1 + c.y * k2,
            z: r.z * k0 + b.z * k1 + c.z * k2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane must reproduce glam's scalar result bit for bit: the bundled solver
    /// relies on it to match the scalar one.
    #[test]
    fn lanes_match_glam_bit_for_bit() {
        let vs = [
            Vec3A::new(0.3, -1.7, 2.9),
            Vec3A::new(-0.0, 1e-7, -3.3e5),
            Vec3A::new(1.0 / 3.0, 2.0 / 7.0, -5.0 / 11.0),
            Vec3A::new(9.1, 0.001, -0.5),
        ];
        let us = [vs[3], vs[0], vs[1], vs[2]];
        let qs = [
            Quat::from_rotation_y(0.3),
            Quat::from_axis_angle(Vec3A::new(1.0, 2.0, 3.0).normalize().into(), 1.1),
            Quat::IDENTITY,
            Quat::from_xyzw(0.1, -0.2, 0.3, 0.9).normalize(),
        ];
        let m = Mat3A::from_cols(vs[0], vs[2], vs[3]);
        let (v, u, q) = (V3::gather(vs), V3::gather(us), Q4::gather(qs));
        let mut mw = M3::default();
        for i in 0..LANES {
            mw.set_lane(i, &m);
        }
        let (dot, cross, rot, mv) = (v.dot(u), v.cross(u), q.rotate(v), mw.mul(v));
        for i in 0..LANES {
            assert_eq!(dot.0[i].to_bits(), vs[i].dot(us[i]).to_bits());
            assert_eq!(cross.lane(i), vs[i].cross(us[i]));
            assert_eq!(rot.lane(i), qs[i] * vs[i]);
            assert_eq!(q.conjugate().rotate(v).lane(i), qs[i].conjugate() * vs[i]);
            assert_eq!(mv.lane(i), m * vs[i]);
        }
        let mask = F4([1.0, -1.0, 0.0, -0.0]).gt(F4::ZERO);
        assert_eq!(mask, M4([u32::MAX, 0, 0, 0]));
        let s = F4::select(mask, F4::splat(1.0), F4([-0.0; 4]));
        assert_eq!(
            s.0.map(f32::to_bits),
            [1.0f32, -0.0, -0.0, -0.0].map(f32::to_bits)
        );
    }
}
