//! Quantization: positions to a box at a chosen precision, rotations as smallest-three,
//! velocities to a symmetric range.
//!
//! A position axis with range `[min, max]` and precision `p` has `ceil((max - min) / p)`
//! steps and needs `bits = ceil(log2(steps + 1))` bits; a value inside the range comes
//! back within `p / 2` of itself, one outside is clamped to the range first. Seed 000's
//! example, ±2000 m × ±1000 m × ±2000 m at 1 mm, is 4,000,000 and 2,000,000 steps: 22 +
//! 21 + 22 = 65 bits (the seed counts 20 bits for the y axis, but 2,000,001 values need
//! 21); at 1.0 mm on x and z and 2 mm on y, or ±1048 m on y, it fits 64.
//!
//! A unit quaternion is sent as smallest-three: `q` and `-q` are the same rotation, so
//! the sign makes the largest component positive; its index takes 2 bits, and the other
//! three, each within ±1/√2, take `n` bits each. The largest is rebuilt as
//! `sqrt(1 - a² - b² - c²)`. With `h` the half step `1/(√2 (2^n - 1))`, each small
//! component is off by at most `h`, the largest (which is at least 1/2) by at most about
//! `3 · 1.42 · h`, the quaternion by at most `4.6 h`, and the rotation by twice that
//! (about `9.2 h` radians): 11 bits give 0.0032 rad, 12 bits 0.0016 rad.
//!
//! All arithmetic is in `f64` with round-half-away-from-zero on both sides, so the same
//! value always gives the same integer on every machine.

use crate::math::{Quat, Vec3};

use super::error::NetConfigError;

/// The most bits one quantized axis may use: deltas between two values then fit 31 bits
/// with their sign, which the snapshot codec's 5-bit widths can name.
pub const MAX_AXIS_BITS: u32 = 30;

/// A box of positions or velocities and the precision to send them at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantRange {
    /// The smallest value of each axis.
    pub min: Vec3,
    /// The largest value of each axis.
    pub max: Vec3,
    /// The step: values come back within half of it.
    pub precision: Vec3,
}

impl QuantRange {
    /// Seed 000's world box: x and z within ±2000 m, y within ±1000 m, at 1 mm.
    pub const SEED_WORLD: QuantRange = QuantRange {
        min: Vec3::new(-2000.0, -1000.0, -2000.0),
        max: Vec3::new(2000.0, 1000.0, 2000.0),
        precision: Vec3::splat(0.001),
    };

    /// A range symmetric about zero: each axis within `±limit`, at `precision`.
    #[must_use]
    pub fn symmetric(limit: f32, precision: f32) -> QuantRange {
        QuantRange {
            min: Vec3::splat(-limit),
            max: Vec3::splat(limit),
            precision: Vec3::splat(precision),
        }
    }
}

/// Turns a [`QuantRange`]'s values into integers of a fixed width per axis and back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantizer {
    min: [f64; 3],
    precision: [f64; 3],
    steps: [u32; 3],
    bits: [u32; 3],
}

impl Quantizer {
    /// A quantizer for `range`; `field` names it in errors.
    ///
    /// # Errors
    /// [`NetConfigError::Invalid`] for a non-finite bound, a minimum not below its
    /// maximum or a precision not positive; [`NetConfigError::TooManySteps`] when an axis
    /// needs more than [`MAX_AXIS_BITS`].
    pub fn new(range: QuantRange, field: &'static str) -> Result<Quantizer, NetConfigError> {
        let mut q = Quantizer {
            min: [0.0; 3],
            precision: [0.0; 3],
            steps: [0; 3],
            bits: [0; 3],
        };
        for axis in 0..3 {
            let (lo, hi, p) = (
                f64::from(range.min[axis]),
                f64::from(range.max[axis]),
                f64::from(range.precision[axis]),
            );
            if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
                return Err(NetConfigError::Invalid {
                    field,
                    expected: "finite bounds with min < max",
                    actual: hi - lo,
                });
            }
            if !(p.is_finite() && p > 0.0) {
                return Err(NetConfigError::Invalid {
                    field,
                    expected: "a positive finite precision",
                    actual: p,
                });
            }
            // A range that is a whole number of steps (up to the f32 rounding of the
            // precision) is that many, not one more.
            let exact = (hi - lo) / p;
            let steps = if (exact - exact.round()).abs() <= 1e-6 * exact.max(1.0) {
                exact.round()
            } else {
                exact.ceil()
            };
            let bits = if steps >= f64::from(1u32 << MAX_AXIS_BITS) {
                MAX_AXIS_BITS + 1
            } else {
                32 - (steps as u32).leading_zeros()
            };
            if bits > MAX_AXIS_BITS {
                return Err(NetConfigError::TooManySteps { field, bits });
            }
            q.min[axis] = lo;
            q.precision[axis] = p;
            q.steps[axis] = steps as u32;
            q.bits[axis] = bits;
        }
        Ok(q)
    }

    /// The bits of each axis.
    #[must_use]
    pub fn bits(&self) -> [u32; 3] {
        self.bits
    }

    /// The largest integer of each axis (the number of steps).
    #[must_use]
    pub fn steps(&self) -> [u32; 3] {
        self.steps
    }

    /// The integers of `v`, each axis clamped to the range. A NaN axis gives 0 (the
    /// range's minimum): the caller validates its own world's values.
    #[must_use]
    pub fn quantize(&self, v: Vec3) -> [u32; 3] {
        let mut out = [0; 3];
        for axis in 0..3 {
            let x = (f64::from(v[axis]) - self.min[axis]) / self.precision[axis];
            let x = x.round().clamp(0.0, f64::from(self.steps[axis]));
            out[axis] = if x.is_nan() { 0 } else { x as u32 };
        }
        out
    }

    /// The value of integers made by [`quantize`](Self::quantize) (each at most
    /// [`steps`](Self::steps), which decoders check).
    #[must_use]
    pub fn dequantize(&self, q: [u32; 3]) -> Vec3 {
        let mut out = Vec3::ZERO;
        for axis in 0..3 {
            out[axis] = (self.min[axis] + f64::from(q[axis]) * self.precision[axis]) as f32;
        }
        out
    }
}

/// A rotation in smallest-three form: the index of the dropped largest component and the
/// other three, in order, as integers of `n` bits each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SmallestThree {
    /// Which of x, y, z, w was dropped (0 to 3).
    pub largest: u8,
    /// The three others, each `round((c + 1/√2) / (2/√2) · (2^n - 1))`.
    pub small: [u32; 3],
}

const INV_SQRT_2: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Bits per component that rotations may use on the wire (2 to 16 allowed).
pub const ROTATION_BITS_RANGE: std::ops::RangeInclusive<u32> = 2..=16;

impl SmallestThree {
    /// The smallest-three form of `q` at `bits` bits per component. `q` is normalized
    /// first; a zero or non-finite `q` gives the identity.
    #[must_use]
    pub fn encode(q: Quat, bits: u32) -> SmallestThree {
        debug_assert!(ROTATION_BITS_RANGE.contains(&bits));
        let q = if q.is_finite() && q.length_squared() > 0.0 {
            q.normalize()
        } else {
            Quat::IDENTITY
        };
        let c = [
            f64::from(q.x),
            f64::from(q.y),
            f64::from(q.z),
            f64::from(q.w),
        ];
        let mut largest = 0;
        for i in 1..4 {
            if c[i].abs() > c[largest].abs() {
                largest = i;
            }
        }
        let sign = if c[largest] < 0.0 { -1.0 } else { 1.0 };
        let scale = f64::from((1u32 << bits) - 1);
        let mut small = [0u32; 3];
        let mut k = 0;
        for (i, &ci) in c.iter().enumerate() {
            if i == largest {
                continue;
            }
            let unit = (ci * sign + INV_SQRT_2) / (2.0 * INV_SQRT_2);
            small[k] = (unit.clamp(0.0, 1.0) * scale).round() as u32;
            k += 1;
        }
        SmallestThree {
            largest: largest as u8,
            small,
        }
    }

    /// The unit quaternion back (its largest component non-negative).
    #[must_use]
    pub fn decode(&self, bits: u32) -> Quat {
        let scale = f64::from((1u32 << bits) - 1);
        let mut c = [0.0f64; 4];
        let mut sum = 0.0;
        let mut k = 0;
        for (i, ci) in c.iter_mut().enumerate() {
            if i == usize::from(self.largest) {
                continue;
            }
            let v = f64::from(self.small[k]) / scale * (2.0 * INV_SQRT_2) - INV_SQRT_2;
            *ci = v;
            sum += v * v;
            k += 1;
        }
        c[usize::from(self.largest) & 3] = (1.0 - sum).max(0.0).sqrt();
        let norm = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + c[3] * c[3]).sqrt();
        Quat::from_xyzw(
            (c[0] / norm) as f32,
            (c[1] / norm) as f32,
            (c[2] / norm) as f32,
            (c[3] / norm) as f32,
        )
    }

    /// Half a step of one small component at `bits` bits: the bound of its error.
    #[must_use]
    pub fn half_step(bits: u32) -> f64 {
        INV_SQRT_2 / f64::from((1u32 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lcg(u64);
    impl Lcg {
        fn unit(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 40) as f32) / ((1u64 << 24) as f32)
        }
    }

    #[test]
    fn the_seed_box_needs_22_21_22_bits() {
        let q = Quantizer::new(QuantRange::SEED_WORLD, "position").unwrap();
        assert_eq!(q.bits(), [22, 21, 22]);
        assert_eq!(q.steps(), [4_000_000, 2_000_000, 4_000_000]);
    }

    #[test]
    fn positions_inside_the_range_come_back_within_half_a_step() {
        let range = QuantRange::SEED_WORLD;
        let q = Quantizer::new(range, "position").unwrap();
        let mut rng = Lcg(7);
        for _ in 0..200_000 {
            let u = Vec3::new(rng.unit(), rng.unit(), rng.unit());
            let p = range.min + (range.max - range.min) * u;
            let back = q.dequantize(q.quantize(p));
            for axis in 0..3 {
                // Half a step, plus the f32 rounding of a value near 2000 (1.2e-4 ulp / 2).
                let bound =
                    f64::from(range.precision[axis]) / 2.0 + 2000.0 * f64::from(f32::EPSILON);
                let err = f64::from((back[axis] - p[axis]).abs());
                assert!(err <= bound, "axis {axis}: {p} came back as {back}");
            }
        }
    }

    #[test]
    fn values_outside_are_clamped() {
        let q = Quantizer::new(QuantRange::symmetric(10.0, 0.01), "v").unwrap();
        assert_eq!(q.steps(), [2000; 3]);
        let top = q.dequantize(q.quantize(Vec3::splat(1e9)));
        let bottom = q.dequantize(q.quantize(Vec3::splat(-1e9)));
        assert!(
            (top - Vec3::splat(10.0)).abs().max_element() < 1e-5,
            "{top}"
        );
        assert_eq!(bottom, Vec3::splat(-10.0));
        assert_eq!(q.quantize(Vec3::NAN), [0; 3]);
    }

    #[test]
    fn bad_ranges_are_refused_with_the_field_named() {
        let bad = QuantRange::symmetric(10.0, 0.0);
        let err = Quantizer::new(bad, "velocity").unwrap_err();
        assert!(
            err.to_string().starts_with("velocity: expected a positive"),
            "{err}"
        );
        let huge = QuantRange::symmetric(1e6, 1e-6);
        assert!(matches!(
            Quantizer::new(huge, "p"),
            Err(NetConfigError::TooManySteps { .. })
        ));
    }

    #[test]
    fn smallest_three_is_within_its_bound() {
        let mut rng = Lcg(11);
        for bits in [9u32, 11, 12, 16] {
            let bound = 9.2 * SmallestThree::half_step(bits) + 1e-6;
            let mut worst = 0.0f64;
            for _ in 0..100_000 {
                let q = Quat::from_xyzw(
                    rng.unit() * 2.0 - 1.0,
                    rng.unit() * 2.0 - 1.0,
                    rng.unit() * 2.0 - 1.0,
                    rng.unit() * 2.0 - 1.0,
                );
                if q.length_squared() < 1e-4 {
                    continue;
                }
                let q = q.normalize();
                let back = SmallestThree::encode(q, bits).decode(bits);
                // The angle between two rotations from the chord between their
                // quaternions (exact near zero, where acos of the dot product is not).
                let (a, b) = (q.to_array(), back.to_array());
                let chord = |s: f64| -> f64 {
                    (0..4)
                        .map(|i| (f64::from(a[i]) - s * f64::from(b[i])).powi(2))
                        .sum::<f64>()
                        .sqrt()
                };
                let d = chord(1.0).min(chord(-1.0));
                let angle = 4.0 * (d / 2.0).asin();
                worst = worst.max(angle);
                assert!(
                    angle <= bound,
                    "{bits} bits: {q} came back as {back}, {angle} rad > {bound}"
                );
            }
            assert!(
                worst > bound / 20.0,
                "{bits} bits: worst {worst} is implausibly small"
            );
        }
    }
}
