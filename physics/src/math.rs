//! Math types shared by every part of the engine: glam's SIMD-friendly `Vec3A`,
//! `Quat` and `Mat3A` in f32, plus a rigid transform.
//!
//! # The same bits on every platform
//!
//! The step calls no platform libm: the C library's `atan2f`, `sinf` and the like differ
//! in their last bits between C libraries and CPUs, and a rollback or lockstep game
//! across machines would drift apart from the first differing bit. Every transcendental
//! function the step, the shapes and the mass computations call goes through the few
//! functions below ([`atan2`], [`atan`], [`sin_cos`], [`acos`]), which are the pure-Rust
//! `libm` crate (a port of musl's libm, made of IEEE operations in a fixed order), and
//! glam is built with its `libm` feature, so its own (`Quat::from_axis_angle`,
//! `from_rotation_*`, `to_axis_angle`, slerp) go there too. `sqrt` and the four
//! arithmetic operations are exactly rounded by IEEE 754 and stay as they are. Rust never
//! fuses a multiply and an add on its own, and the step calls no `mul_add`.
//!
//! # The same bits from every glam back-end
//!
//! glam's vector code is not one order of operations: its SSE2 back-end FUSES the
//! multiply-adds of a cross product, a quaternion product, a rotation (`Quat * Vec3A`,
//! which takes a cross product) and its lerps whenever the crate is compiled with
//! `target_feature = "fma"` (a game built with `-C target-cpu=native` or `x86-64-v3`),
//! its aarch64 NEON back-end always fuses the quaternion product and sums a quaternion's
//! dot product as `(x + y) + (z + w)` where SSE2 sums `(x + z) + (y + w)`. So the step
//! does these few operations itself, each in one written order of IEEE operations:
//! [`cross`], [`rotate`] and [`rotate_vec3`] (for `q * v`), [`quat_mul`] (for `a * b`),
//! [`quat_dot`], [`quat_length`] and [`quat_normalize`], plus [`normalize`] for a `Vec3A`
//! (SSE2 divides by the length, NEON and scalar multiply by its reciprocal) and
//! [`rotation_arc`] (glam's normalises a quaternion). Their order is the one glam's
//! SSE2 code takes without FMA, so results on x86-64 are those of the plain build, and a
//! build with FMA, with NEON or with glam's `scalar-math` computes the same bits. What
//! stays glam's is lane-wise arithmetic (`+ - * /`, `sqrt`, `min`, `max`, `abs`), the
//! 3-vector `dot`, `length`, `normalize_or_zero` and `try_normalize` (every back-end sums
//! `(x + y) + z` and multiplies by `1 / |v|`: NEON's `Vec3A::dot` is scalar code in that
//! order; its `+0`-fourth-lane sum is only behind `dot_into_vec` and `element_sum`, which
//! the step does not call; `examples/tests/golden.rs` runs on aarch64 under qemu in CI) and
//! `Mat3A * Vec3A` (`(x + y) + z` of the columns, unfused everywhere). What this does and
//! does not promise across CPU architectures is in README.md (Determinism) and
//! `examples/tests/golden.rs`.

use glam::Vec4;
pub use glam::{Mat3A, Quat, Vec2, Vec3, Vec3A};

/// A rigid transform: rotation followed by translation (`p' = rotation * p + translation`).
///
/// A user passes and reads it with `Vec3`: [`Isometry::new`] and
/// [`Isometry::from_translation`] take a `Vec3` (or a `Vec3A`), [`Isometry::position`]
/// gives the translation as a `Vec3`, and it converts from and to a `(Vec3, Quat)` pair.
/// The `translation` field stays a `Vec3A`, the SIMD layout the step works in.
///
/// ```
/// use joule_physics::math::{Isometry, Quat, Vec3};
///
/// let pose = Isometry::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.5));
/// let (p, q): (Vec3, Quat) = pose.into();
/// assert_eq!(p, Vec3::new(1.0, 2.0, 3.0));
/// assert_eq!(Isometry::from((p, q)), pose);
/// assert_eq!(pose.position(), p);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isometry {
    /// Translation, applied after the rotation (a `Vec3A` for the step's SIMD; read it as
    /// a `Vec3` with [`Isometry::position`]).
    pub translation: Vec3A,
    /// Unit rotation.
    pub rotation: Quat,
}

impl Default for Isometry {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Isometry {
    /// The identity transform.
    pub const IDENTITY: Self = Self {
        translation: Vec3A::ZERO,
        rotation: Quat::IDENTITY,
    };

    /// A transform from a translation (a `Vec3` or a `Vec3A`) and a unit rotation.
    #[must_use]
    #[inline]
    pub fn new(translation: impl Into<Vec3A>, rotation: Quat) -> Self {
        Self {
            translation: translation.into(),
            rotation,
        }
    }

    /// A pure translation (a `Vec3` or a `Vec3A`).
    #[must_use]
    #[inline]
    pub fn from_translation(translation: impl Into<Vec3A>) -> Self {
        Self {
            translation: translation.into(),
            rotation: Quat::IDENTITY,
        }
    }

    /// The translation as a `Vec3`.
    #[must_use]
    #[inline]
    pub fn position(&self) -> Vec3 {
        self.translation.into()
    }

    /// Transforms a point from local to world space.
    #[must_use]
    #[inline]
    pub fn transform_point(&self, p: Vec3A) -> Vec3A {
        rotate(self.rotation, p) + self.translation
    }

    /// Rotates a direction from local to world space.
    #[must_use]
    #[inline]
    pub fn transform_vector(&self, v: Vec3A) -> Vec3A {
        rotate(self.rotation, v)
    }

    /// Transforms a world-space point into local space.
    #[must_use]
    #[inline]
    pub fn inverse_transform_point(&self, p: Vec3A) -> Vec3A {
        rotate(self.rotation.inverse(), p - self.translation)
    }

    /// Rotates a world-space direction into local space.
    #[must_use]
    #[inline]
    pub fn inverse_transform_vector(&self, v: Vec3A) -> Vec3A {
        rotate(self.rotation.inverse(), v)
    }

    /// The inverse transform.
    #[must_use]
    pub fn inverse(&self) -> Self {
        let r = self.rotation.inverse();
        Self {
            translation: -rotate(r, self.translation),
            rotation: r,
        }
    }

    /// `self * other`: applies `other` first, then `self`.
    #[must_use]
    pub fn mul_isometry(&self, other: &Self) -> Self {
        Self {
            translation: self.transform_point(other.translation),
            rotation: quat_mul(self.rotation, other.rotation),
        }
    }

    /// The pose a fraction `t` of the way to `other`: translation interpolated linearly,
    /// rotation by [`nlerp`] (normalised linear interpolation, shortest arc). Cheap, and
    /// within 1e-3 rad of [`slerp`](Self::slerp) for turns under 0.3 rad; its angular
    /// speed is not constant, so use `slerp` where it must be.
    /// `t = 0` gives `self` and `t = 1` gives `other`, exactly.
    #[must_use]
    pub fn lerp(&self, other: &Self, t: f32) -> Self {
        self.interpolate(other, t, nlerp)
    }

    /// The pose a fraction `t` of the way to `other`: translation interpolated linearly,
    /// rotation by [`slerp`] (constant angular speed about one axis, shortest arc). A body
    /// moving uniformly between two poses is at `a.slerp(&b, t)` at time `t` (to f32
    /// rounding). `t = 0` gives `self` and `t = 1` gives `other`, exactly.
    #[must_use]
    pub fn slerp(&self, other: &Self, t: f32) -> Self {
        self.interpolate(other, t, slerp)
    }

    fn interpolate(&self, other: &Self, t: f32, rotate: fn(Quat, Quat, f32) -> Quat) -> Self {
        if t == 0.0 {
            return *self;
        }
        if t == 1.0 {
            return *other;
        }
        Self {
            translation: self.translation + (other.translation - self.translation) * t,
            rotation: rotate(self.rotation, other.rotation, t),
        }
    }
}

impl From<(Vec3, Quat)> for Isometry {
    fn from((translation, rotation): (Vec3, Quat)) -> Self {
        Self::new(translation, rotation)
    }
}

impl From<Isometry> for (Vec3, Quat) {
    fn from(iso: Isometry) -> Self {
        (iso.position(), iso.rotation)
    }
}

/// Normalised linear interpolation of unit rotations along the shorter arc (`b` and `-b`
/// are the same rotation; the one nearer `a` is used). Not constant speed; see [`slerp`].
#[must_use]
pub fn nlerp(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if quat_dot(a, b) < 0.0 { -b } else { b };
    quat_normalize(a + (b - a) * t)
}

/// The 3-vector dot product `(a.x b.x + a.y b.y) + a.z b.z`, unfused, in that order on
/// every back-end: the order glam's SSE2 `Vec3A::dot` (and its NEON and scalar ones) use,
/// written out so that it does not depend on glam's internals (its NEON `dot_into_vec` and
/// `element_sum` add a `+0` fourth lane, which turns a `-0` result into `+0`).
#[must_use]
#[inline]
pub fn dot(a: Vec3A, b: Vec3A) -> f32 {
    (a.x * b.x + a.y * b.y) + a.z * b.z
}

/// `|v|²` as [`dot`]`(v, v)`.
#[must_use]
#[inline]
pub fn length_squared(v: Vec3A) -> f32 {
    dot(v, v)
}

/// `|v|` as the square root of [`length_squared`] (IEEE `sqrt` is correctly rounded on
/// every back-end).
#[must_use]
#[inline]
pub fn length(v: Vec3A) -> f32 {
    length_squared(v).sqrt()
}

/// The cross product `a × b`, unfused on every back-end (see the [module docs](self)).
#[must_use]
#[inline]
pub fn cross(a: Vec3A, b: Vec3A) -> Vec3A {
    use glam::Vec3Swizzles;
    // Lane by lane `a.y b.z - a.z b.y` and so on: two products and a difference, each
    // rounded on its own.
    a.yzx() * b.zxy() - a.zxy() * b.yzx()
}

/// The rotation of `v` by the unit quaternion `q` (glam's `q * v`), in one fixed order
/// on every back-end (see the [module docs](self)): with `u` the vector part and `w` the
/// scalar, `(v (w² - u·u) + u 2(v·u)) + (u × v) 2w`.
#[must_use]
#[inline]
pub fn rotate(q: Quat, v: Vec3A) -> Vec3A {
    let u = Vec3A::new(q.x, q.y, q.z);
    let w = q.w;
    v * (w * w - dot(u, u)) + u * (dot(v, u) * 2.0) + cross(u, v) * (w * 2.0)
}

/// [`rotate`] for a `Vec3`.
#[must_use]
#[inline]
pub fn rotate_vec3(q: Quat, v: Vec3) -> Vec3 {
    rotate(q, Vec3A::from(v)).into()
}

/// The quaternion product `a b` (glam's `a * b`: `b`'s rotation first, then `a`'s), in
/// one fixed order on every back-end (see the [module docs](self)).
#[must_use]
#[inline]
pub fn quat_mul(a: Quat, b: Quat) -> Quat {
    // Each component is two unfused pairs summed, as glam's unfused SSE2 code groups them.
    Quat::from_xyzw(
        (a.x * b.w + a.w * b.x) + (a.y * b.z - a.z * b.y),
        (a.w * b.y - a.x * b.z) + (a.y * b.w + a.z * b.x),
        (a.x * b.y + a.w * b.z) + (a.z * b.w - a.y * b.x),
        (a.w * b.w - a.x * b.x) + (-(a.z * b.z) - a.y * b.y),
    )
}

/// `v` scaled to unit length, as `v / |v|` on every back-end (glam's SSE2 `normalize`
/// divides, its NEON and scalar ones multiply by `1 / |v|`, which differs in the last
/// bit). A zero or non-finite `v` gives non-finite components, as glam's does.
#[must_use]
#[inline]
pub fn normalize(v: Vec3A) -> Vec3A {
    v / length(v)
}

/// The shortest rotation taking the unit vector `from` to the unit vector `to` (glam's
/// `Quat::from_rotation_arc`, with its normalisation done by [`quat_normalize`]).
#[must_use]
pub fn rotation_arc(from: Vec3, to: Vec3) -> Quat {
    const ONE_MINUS_EPS: f32 = 1.0 - 2.0 * f32::EPSILON;
    let dot = from.dot(to);
    if dot > ONE_MINUS_EPS {
        Quat::IDENTITY
    } else if dot < -ONE_MINUS_EPS {
        Quat::from_axis_angle(from.any_orthonormal_vector(), std::f32::consts::PI)
    } else {
        let c = from.cross(to);
        quat_normalize(Quat::from_xyzw(c.x, c.y, c.z, 1.0 + dot))
    }
}

/// The 4-dimensional dot product of two quaternions, summed `(x + z) + (y + w)` on every
/// back-end (see the [module docs](self)). For unit rotations it is the cosine of half
/// the angle between them.
#[must_use]
#[inline]
pub fn quat_dot(a: Quat, b: Quat) -> f32 {
    let p = Vec4::from(a) * Vec4::from(b);
    (p.x + p.z) + (p.y + p.w)
}

/// The length of a quaternion, `sqrt(quat_dot(q, q))`.
#[must_use]
#[inline]
pub fn quat_length(q: Quat) -> f32 {
    quat_dot(q, q).sqrt()
}

/// `q` divided by its length, the same bits on every back-end (see the
/// [module docs](self)). A zero or non-finite `q` gives non-finite components, as glam's
/// `Quat::normalize` does.
#[must_use]
#[inline]
pub fn quat_normalize(q: Quat) -> Quat {
    Quat::from_vec4(Vec4::from(q) / quat_length(q))
}

/// `y.atan2(x)`: the angle of the point (x, y) from the x axis, in (-π, π], the same
/// bits on every platform (see the [module docs](self)).
#[must_use]
#[inline]
pub fn atan2(y: f32, x: f32) -> f32 {
    libm::atan2f(y, x)
}

/// `x.atan()`, the same bits on every platform.
#[must_use]
#[inline]
pub fn atan(x: f32) -> f32 {
    libm::atanf(x)
}

/// `(x.sin(), x.cos())`, the same bits on every platform.
#[must_use]
#[inline]
pub fn sin_cos(x: f32) -> (f32, f32) {
    libm::sincosf(x)
}

/// `x.acos()`, the same bits on every platform; NaN outside [-1, 1].
#[must_use]
#[inline]
pub fn acos(x: f32) -> f32 {
    libm::acosf(x)
}

/// Spherical linear interpolation of unit rotations along the shorter arc: `a` turned by
/// the fraction `t` of the rotation that takes `a` to `b` (`b` and `-b` give the same
/// result). `t` outside [0, 1] extrapolates along the same axis.
///
/// Unlike glam's `Quat::slerp` (whose `acos` of a dot product near 1 loses half the
/// digits: 3e-4 rad at f32 for the small turns of one physics step), the angle comes from
/// `atan2` of the relative rotation, accurate for every angle.
#[must_use]
pub fn slerp(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if quat_dot(a, b) < 0.0 { -b } else { b };
    // The relative rotation a⁻¹ b, with w >= 0 (its w is a · b).
    let r = quat_mul(a.conjugate(), b);
    let axis = Vec3::new(r.x, r.y, r.z);
    let sin_half = axis.length();
    if sin_half == 0.0 {
        return a;
    }
    let half = atan2(sin_half, r.w);
    let (s, c) = sin_cos(half * t);
    let axis = axis / sin_half * s;
    quat_normalize(quat_mul(a, Quat::from_xyzw(axis.x, axis.y, axis.z, c)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn dot_matches_sse2_order_bit_for_bit_with_signed_zeros() {
        use glam::Vec3A;
        // -0 · 1 summed three times is -0 in SSE2's order (a +0 fourth lane would give +0).
        let z = super::dot(Vec3A::splat(-0.0), Vec3A::ONE);
        assert_eq!(z.to_bits(), (-0.0f32).to_bits());
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = (state >> 33) as u32;
            match r % 8 {
                0 => 0.0,
                1 => -0.0,
                _ => (r as f32 / u32::MAX as f32 - 0.5) * 200.0,
            }
        };
        for _ in 0..100_000 {
            let a = Vec3A::new(next(), next(), next());
            let b = Vec3A::new(next(), next(), next());
            let want = (a.x * b.x + a.y * b.y) + a.z * b.z;
            assert_eq!(super::dot(a, b).to_bits(), want.to_bits(), "{a} . {b}");
            #[cfg(all(target_arch = "x86_64", not(feature = "glam-scalar-math")))]
            assert_eq!(super::dot(a, b).to_bits(), a.dot(b).to_bits(), "{a} . {b}");
        }
    }

    use super::*;

    #[test]
    fn inverse_undoes_transform() {
        let iso = Isometry::new(
            Vec3A::new(1.0, -2.0, 3.0),
            Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
        );
        let p = Vec3A::new(0.3, 0.4, -5.0);
        let q = iso.inverse().transform_point(iso.transform_point(p));
        assert!((q - p).length() < 1e-5);
        let q2 = iso.inverse_transform_point(iso.transform_point(p));
        assert!((q2 - p).length() < 1e-5);
    }

    /// Angle between two rotations, as the same rotation whichever sign each has.
    fn angle_between(a: Quat, b: Quat) -> f32 {
        2.0 * acos(a.dot(b).abs().min(1.0))
    }

    #[test]
    fn slerp_turns_at_constant_speed_about_one_axis() {
        let axis = Vec3::new(0.3, -1.0, 0.5).normalize();
        let a = Quat::from_axis_angle(Vec3::X, 0.4);
        // Small turns (one physics step) and large ones.
        for angle in [1e-3_f32, 0.05, 1.0, 3.0] {
            let b = Quat::from_axis_angle(axis, angle) * a;
            for t in [0.0, 0.1, 0.25, 0.5, 0.9, 1.0] {
                let expected = Quat::from_axis_angle(axis, angle * t) * a;
                let got = slerp(a, b, t);
                assert!(
                    angle_between(got, expected) < 2e-6,
                    "angle {angle}, t {t}: {got:?} vs {expected:?}"
                );
            }
        }
    }

    #[test]
    fn slerp_and_nlerp_take_the_shorter_arc() {
        // q and -q are one rotation: interpolating towards either gives the same poses.
        let a = Quat::from_axis_angle(Vec3::Y, 0.2);
        let b = Quat::from_axis_angle(Vec3::Y, 0.6);
        for t in [0.25, 0.5, 0.75] {
            let expected = Quat::from_axis_angle(Vec3::Y, 0.2 + 0.4 * t);
            for f in [slerp, nlerp] {
                assert!(angle_between(f(a, b, t), expected) < 1e-3);
                assert!(angle_between(f(a, -b, t), expected) < 1e-3);
                assert!(angle_between(f(-a, b, t), expected) < 1e-3);
            }
        }
    }

    /// A deterministic spread of values over several magnitudes and both signs.
    fn samples(n: usize) -> impl Iterator<Item = (Quat, Quat, Vec3A, Vec3A)> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            (unit * 2.0 - 1.0) * [1.0, 1e-3, 37.0][(state >> 20) as usize % 3]
        };
        (0..n).map(move |_| {
            let mut v = || Vec3A::new(next(), next(), next());
            let (a, b, c, d) = (v(), v(), v(), v());
            let q = |v: Vec3A, w: f32| Quat::from_xyzw(v.x, v.y, v.z, w).normalize();
            (q(a, c.x), q(b, c.y), c, d)
        })
    }

    /// On x86-64 without FMA glam's SSE2 code takes the very order written here, so the
    /// fixed-order functions give glam's plain-build bits (and the golden hashes blessed
    /// with it). With FMA, NEON or `scalar-math`, glam may differ; these do not.
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    #[test]
    fn fixed_order_gives_glams_plain_sse2_bits() {
        for (p, q, u, v) in samples(100_000) {
            let v3 = |v: Vec3A| v.to_array().map(f32::to_bits);
            let q4 = |q: Quat| q.to_array().map(f32::to_bits);
            assert_eq!(v3(cross(u, v)), v3(u.cross(v)));
            assert_eq!(v3(rotate(q, v)), v3(q * v));
            assert_eq!(
                v3(rotate_vec3(q, v.into()).into()),
                v3((q * Vec3::from(v)).into())
            );
            assert_eq!(q4(quat_mul(p, q)), q4(p * q));
            assert_eq!(quat_dot(p, q).to_bits(), p.dot(q).to_bits());
            let raw = Quat::from_xyzw(u.x, u.y, u.z, v.x);
            assert_eq!(quat_length(raw).to_bits(), raw.length().to_bits());
            assert_eq!(q4(quat_normalize(raw)), q4(raw.normalize()));
            assert_eq!(v3(normalize(u)), v3(u.normalize()));
            let (a, b) = (Vec3::from(u).normalize(), Vec3::from(v).normalize());
            assert_eq!(q4(rotation_arc(a, b)), q4(Quat::from_rotation_arc(a, b)));
            assert_eq!(q4(rotation_arc(a, a)), q4(Quat::from_rotation_arc(a, a)));
            assert_eq!(q4(rotation_arc(a, -a)), q4(Quat::from_rotation_arc(a, -a)));
        }
    }

    /// What the fixed order must still be, on any back-end: the textbook results to f32
    /// rounding.
    #[test]
    fn fixed_order_products_are_the_textbook_ones() {
        for (p, q, u, v) in samples(10_000) {
            let (u3, v3) = (Vec3::from(u), Vec3::from(v));
            let c = Vec3::new(
                u3.y * v3.z - u3.z * v3.y,
                u3.z * v3.x - u3.x * v3.z,
                u3.x * v3.y - u3.y * v3.x,
            );
            assert_eq!(Vec3::from(cross(u, v)), c);
            // q v q*, as a quaternion product.
            let vq = Quat::from_xyzw(v.x, v.y, v.z, 0.0);
            let r = quat_mul(quat_mul(q, vq), q.conjugate());
            let scale = v.length().max(1e-30);
            assert!((rotate(q, v) - Vec3A::new(r.x, r.y, r.z)).length() <= 1e-5 * scale);
            assert!((rotate(q, v).length() - v.length()).abs() <= 1e-5 * scale);
            // Rotating by p q is rotating by q, then by p.
            let pq = rotate(quat_mul(p, q), v);
            assert!((pq - rotate(p, rotate(q, v))).length() <= 1e-5 * scale);
            assert!((quat_length(quat_normalize(p * 3.0)) - 1.0).abs() <= 1e-6);
        }
    }

    #[test]
    fn isometry_interpolation_hits_both_ends_exactly() {
        let a = Isometry::new(Vec3A::new(1.0, 2.0, 3.0), Quat::from_rotation_z(0.3));
        let b = Isometry::new(Vec3A::new(-4.0, 0.5, 7.0), Quat::from_rotation_x(-1.1));
        for f in [Isometry::lerp, Isometry::slerp] {
            assert_eq!(f(&a, &b, 0.0), a);
            assert_eq!(f(&a, &b, 1.0), b);
            let mid = f(&a, &b, 0.5);
            assert!((mid.translation - Vec3A::new(-1.5, 1.25, 5.0)).length() < 1e-6);
        }
    }
}
