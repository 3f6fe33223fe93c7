//! Wide float math for the bundled contact solver, on stable Rust without intrinsics:
//! every operation is a plain loop over `[f32; LANES]` that LLVM turns into SSE/NEON
//! instructions, two per operation at 8 lanes (checked in the release build's assembly).
//!
//! Why 8 lanes on 4-wide SSE: the solve is bound by latency, not arithmetic. Each point's
//! impulse depends on the velocities the previous point left, a chain of some 20
//! dependent operations; two independent 4-lane halves in flight fill the pipeline that
//! one leaves idle. pyramid_big at 1 thread: 5.38 ms per step with 4 lanes, 4.52 with 8,
//! 7.4 with 16 (register spills).
//!
//! Each lane does exactly the scalar operation glam does for `Vec3A`, `Mat3A` and `Quat`,
//! in the same order (`dot` is `(x + y) + z`, `Mat3A * v` sums the columns in order, `Quat *
//! v` is glam's `v (w² - b·b) + 2 b (v·b) + 2 w (b × v)`), so a lane computes bit for bit
//! what the scalar solver computes for the same constraint. Comparisons give a [`MaskW`], a
//! per-lane all-ones/zero mask as SIMD compares do, and [`FloatW::select`] blends on it.

use std::ops::{Add, Mul, Sub};

use glam::{Mat4, Vec4};

use crate::math::{self, Mat3A, Quat, Vec3A};

/// Lanes per bundle (a multiple of 4: gathers transpose 4x4 blocks).
pub const LANES: usize = 8;
const _: () = assert!(LANES.is_multiple_of(4), "gathers transpose 4x4 blocks");

/// `LANES` floats.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
pub struct FloatW(pub [f32; LANES]);

/// A per-lane mask: all ones where true, zero where false.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct MaskW(pub [u32; LANES]);

#[inline(always)]
fn lanes<U>(f: impl Fn(usize) -> U) -> [U; LANES] {
    std::array::from_fn(f)
}

impl FloatW {
    /// All lanes zero.
    pub const ZERO: FloatW = FloatW([0.0; LANES]);

    /// `x` in every lane.
    #[inline(always)]
    #[must_use]
    pub fn splat(x: f32) -> FloatW {
        FloatW([x; LANES])
    }

    /// Lane-wise `f32::max` (same NaN and signed-zero rules as the scalar solver).
    #[inline(always)]
    #[must_use]
    pub fn max(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i].max(o.0[i])))
    }

    /// Lane-wise `f32::min`.
    #[inline(always)]
    #[must_use]
    pub fn min(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i].min(o.0[i])))
    }

    /// Lane-wise square root.
    #[inline(always)]
    #[must_use]
    pub fn sqrt(self) -> FloatW {
        FloatW(lanes(|i| self.0[i].sqrt()))
    }

    /// Lane-wise `self > o`.
    #[inline(always)]
    #[must_use]
    pub fn gt(self, o: FloatW) -> MaskW {
        MaskW(lanes(|i| if self.0[i] > o.0[i] { u32::MAX } else { 0 }))
    }

    /// Lane-wise `self >= o`.
    #[inline(always)]
    #[must_use]
    pub fn ge(self, o: FloatW) -> MaskW {
        MaskW(lanes(|i| if self.0[i] >= o.0[i] { u32::MAX } else { 0 }))
    }

    /// Lane-wise `self == o`.
    #[inline(always)]
    #[must_use]
    pub fn eq(self, o: FloatW) -> MaskW {
        MaskW(lanes(|i| if self.0[i] == o.0[i] { u32::MAX } else { 0 }))
    }

    /// `a` where `m` is set, `b` elsewhere (bitwise, so NaNs and signed zeros pass as
    /// they are).
    #[inline(always)]
    #[must_use]
    pub fn select(m: MaskW, a: FloatW, b: FloatW) -> FloatW {
        FloatW(lanes(|i| {
            f32::from_bits((a.0[i].to_bits() & m.0[i]) | (b.0[i].to_bits() & !m.0[i]))
        }))
    }

    /// Lane-wise division.
    #[inline(always)]
    #[must_use]
    pub fn div(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i] / o.0[i]))
    }

    /// Lane-wise negation.
    #[inline(always)]
    #[must_use]
    pub fn neg(self) -> FloatW {
        FloatW(lanes(|i| -self.0[i]))
    }

    /// Lane-wise [`math::atan2`]`(self, x)` (the scalar function, lane by lane).
    #[inline(always)]
    #[must_use]
    pub fn atan2(self, x: FloatW) -> FloatW {
        FloatW(lanes(|i| math::atan2(self.0[i], x.0[i])))
    }
}

impl super::joint::Real for FloatW {
    #[inline(always)]
    fn recip_or_zero(self) -> Self {
        // `|x| > MIN_POSITIVE`, as the scalar `f32::abs` comparison (false for NaN).
        let big = self.max(self.neg()).gt(FloatW::splat(f32::MIN_POSITIVE));
        FloatW::select(big, FloatW::splat(1.0).div(self), FloatW::ZERO)
    }
}

impl MaskW {
    /// Every lane set.
    pub const ALL: MaskW = MaskW([u32::MAX; LANES]);

    /// Lane-wise and.
    #[inline(always)]
    #[must_use]
    pub fn and(self, o: MaskW) -> MaskW {
        MaskW(lanes(|i| self.0[i] & o.0[i]))
    }

    /// Lane-wise and-not (`self & !o`).
    #[inline(always)]
    #[must_use]
    pub fn and_not(self, o: MaskW) -> MaskW {
        MaskW(lanes(|i| self.0[i] & !o.0[i]))
    }

    /// Lane-wise or.
    #[inline(always)]
    #[must_use]
    pub fn or(self, o: MaskW) -> MaskW {
        MaskW(lanes(|i| self.0[i] | o.0[i]))
    }

    /// Whether any lane is set.
    #[inline(always)]
    #[must_use]
    pub fn any(self) -> bool {
        self.0.iter().fold(0, |a, &m| a | m) != 0
    }
}

/// Component `k` of the result holds component `k` of every input, as lanes: 4x4
/// transposes in registers (glam's `Mat4::transpose`). Building lanes element by element
/// instead makes LLVM go through the stack with partial stores, which stalls the wide
/// loads that follow on store forwarding.
#[inline(always)]
fn transpose_in(v: [Vec4; LANES]) -> [FloatW; 4] {
    let mut out = [FloatW::ZERO; 4];
    for (g, c) in v.chunks_exact(4).enumerate() {
        let t = Mat4::from_cols(c[0], c[1], c[2], c[3]).transpose();
        for (o, axis) in out.iter_mut().zip([t.x_axis, t.y_axis, t.z_axis, t.w_axis]) {
            o.0[4 * g..4 * g + 4].copy_from_slice(&axis.to_array());
        }
    }
    out
}

/// The inverse of [`transpose_in`].
#[inline(always)]
fn transpose_out(c: [FloatW; 4]) -> [Vec4; LANES] {
    let mut out = [Vec4::ZERO; LANES];
    for (g, o) in out.chunks_exact_mut(4).enumerate() {
        let col = |k: usize| Vec4::from_slice(&c[k].0[4 * g..4 * g + 4]);
        let t = Mat4::from_cols(col(0), col(1), col(2), col(3)).transpose();
        o.copy_from_slice(&[t.x_axis, t.y_axis, t.z_axis, t.w_axis]);
    }
    out
}

impl Add for FloatW {
    type Output = FloatW;
    #[inline(always)]
    fn add(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i] + o.0[i]))
    }
}

impl Sub for FloatW {
    type Output = FloatW;
    #[inline(always)]
    fn sub(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i] - o.0[i]))
    }
}

impl Mul for FloatW {
    type Output = FloatW;
    #[inline(always)]
    fn mul(self, o: FloatW) -> FloatW {
        FloatW(lanes(|i| self.0[i] * o.0[i]))
    }
}

/// A 3-vector per lane, stored by component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3W {
    /// x of each lane.
    pub x: FloatW,
    /// y of each lane.
    pub y: FloatW,
    /// z of each lane.
    pub z: FloatW,
}

impl Vec3W {
    /// Zero in every lane.
    pub const ZERO: Vec3W = Vec3W {
        x: FloatW::ZERO,
        y: FloatW::ZERO,
        z: FloatW::ZERO,
    };

    /// Lane `i` of the result is `v[i]`.
    #[inline(always)]
    #[must_use]
    pub fn gather(v: [Vec3A; LANES]) -> Vec3W {
        let [x, y, z, _] = transpose_in(v.map(|v| v.extend(0.0)));
        Vec3W { x, y, z }
    }

    /// The lanes as vectors (the inverse of [`Vec3W::gather`]).
    #[inline(always)]
    #[must_use]
    pub fn scatter(&self) -> [Vec3A; LANES] {
        transpose_out([self.x, self.y, self.z, FloatW::ZERO]).map(Vec3A::from_vec4)
    }

    /// Lane `i` as a vector.
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
    pub fn dot(self, o: Vec3W) -> FloatW {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// The cross product, as glam's `Vec3A::cross`.
    #[inline(always)]
    #[must_use]
    pub fn cross(self, o: Vec3W) -> Vec3W {
        Vec3W {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    /// The component-wise product (`v * o` in glam).
    #[inline(always)]
    #[must_use]
    pub fn mul_each(self, o: Vec3W) -> Vec3W {
        Vec3W {
            x: self.x * o.x,
            y: self.y * o.y,
            z: self.z * o.z,
        }
    }

    /// Every component scaled by the lane's `s` (`s * v` in glam).
    #[inline(always)]
    #[must_use]
    pub fn scale(self, s: FloatW) -> Vec3W {
        Vec3W {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }

    /// `a` where `m` is set, `b` elsewhere.
    #[inline(always)]
    #[must_use]
    pub fn select(m: MaskW, a: Vec3W, b: Vec3W) -> Vec3W {
        Vec3W {
            x: FloatW::select(m, a.x, b.x),
            y: FloatW::select(m, a.y, b.y),
            z: FloatW::select(m, a.z, b.z),
        }
    }
}

impl Add for Vec3W {
    type Output = Vec3W;
    #[inline(always)]
    fn add(self, o: Vec3W) -> Vec3W {
        Vec3W {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl Sub for Vec3W {
    type Output = Vec3W;
    #[inline(always)]
    fn sub(self, o: Vec3W) -> Vec3W {
        Vec3W {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

/// A 3x3 matrix per lane, by column as glam's `Mat3A`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mat3W {
    /// The columns.
    pub cols: [Vec3W; 3],
}

impl Mat3W {
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
    pub fn mul(&self, v: Vec3W) -> Vec3W {
        let [c0, c1, c2] = self.cols;
        Vec3W {
            x: c0.x * v.x + c1.x * v.y + c2.x * v.z,
            y: c0.y * v.x + c1.y * v.y + c2.y * v.z,
            z: c0.z * v.x + c1.z * v.y + c2.z * v.z,
        }
    }
}

/// A unit quaternion per lane, by component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuatW {
    /// The vector part.
    pub v: Vec3W,
    /// The scalar part.
    pub w: FloatW,
}

impl QuatW {
    /// Lane `i` of the result is `q[i]`.
    #[inline(always)]
    #[must_use]
    pub fn gather(q: [Quat; LANES]) -> QuatW {
        let [x, y, z, w] = transpose_in(q.map(Vec4::from));
        QuatW {
            v: Vec3W { x, y, z },
            w,
        }
    }

    /// The Hamilton product `self * o` (rotation `o`, then `self`).
    #[inline(always)]
    #[must_use]
    pub fn mul(self, o: QuatW) -> QuatW {
        let (a, b) = (self, o);
        QuatW {
            v: Vec3W {
                x: a.w * b.v.x + a.v.x * b.w + a.v.y * b.v.z - a.v.z * b.v.y,
                y: a.w * b.v.y - a.v.x * b.v.z + a.v.y * b.w + a.v.z * b.v.x,
                z: a.w * b.v.z + a.v.x * b.v.y - a.v.y * b.v.x + a.v.z * b.w,
            },
            w: a.w * b.w - a.v.x * b.v.x - a.v.y * b.v.y - a.v.z * b.v.z,
        }
    }

    /// Scaled to unit length.
    #[inline(always)]
    #[must_use]
    pub fn normalize(self) -> QuatW {
        let len = (self.v.dot(self.v) + self.w * self.w).sqrt();
        let r = FloatW::splat(1.0).div(len);
        QuatW {
            v: self.v.scale(r),
            w: self.w * r,
        }
    }

    /// The inverse rotations (glam's `Quat::conjugate`: negated vector part).
    #[inline(always)]
    #[must_use]
    pub fn conjugate(self) -> QuatW {
        QuatW {
            v: Vec3W {
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
    pub fn rotate(self, r: Vec3W) -> Vec3W {
        let two = FloatW::splat(2.0);
        let b = self.v;
        let w = self.w;
        let b2 = b.dot(b);
        let k0 = w * w - b2;
        let k1 = r.dot(b) * two;
        let k2 = w * two;
        let c = b.cross(r);
        Vec3W {
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
        let base = [
            Vec3A::new(0.3, -1.7, 2.9),
            Vec3A::new(-0.0, 1e-7, -3.3e5),
            Vec3A::new(1.0 / 3.0, 2.0 / 7.0, -5.0 / 11.0),
            Vec3A::new(9.1, 0.001, -0.5),
        ];
        let vs: [Vec3A; LANES] = std::array::from_fn(|i| base[i % 4] * (1 + i / 4) as f32);
        let us: [Vec3A; LANES] = std::array::from_fn(|i| vs[(i + 3) % LANES]);
        let rotations = [
            Quat::from_rotation_y(0.3),
            Quat::from_axis_angle(Vec3A::new(1.0, 2.0, 3.0).normalize().into(), 1.1),
            Quat::IDENTITY,
            Quat::from_xyzw(0.1, -0.2, 0.3, 0.9).normalize(),
        ];
        let qs: [Quat; LANES] =
            std::array::from_fn(|i| rotations[i % 4] * Quat::from_rotation_x(i as f32 * 0.2));
        let m = Mat3A::from_cols(vs[0], vs[2], vs[3]);
        let (v, u, q) = (Vec3W::gather(vs), Vec3W::gather(us), QuatW::gather(qs));
        let mut mw = Mat3W::default();
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
        let signs = [1.0, -1.0, 0.0, -0.0];
        let mask = FloatW(std::array::from_fn(|i| signs[i % 4])).gt(FloatW::ZERO);
        assert_eq!(
            mask,
            MaskW(std::array::from_fn(|i| if i % 4 == 0 {
                u32::MAX
            } else {
                0
            }))
        );
        let s = FloatW::select(mask, FloatW::splat(1.0), FloatW::splat(-0.0));
        for (i, x) in s.0.iter().enumerate() {
            let want: f32 = if i % 4 == 0 { 1.0 } else { -0.0 };
            assert_eq!(x.to_bits(), want.to_bits());
        }
        let round_trip = Vec3W::gather(vs).scatter();
        assert_eq!(round_trip, vs);
    }
}
