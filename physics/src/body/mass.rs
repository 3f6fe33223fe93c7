//! Mass properties a user sets: where a dynamic body's mass, centre of mass and inertia
//! come from, how they are checked, and the principal axes of an inertia tensor.
//!
//! By default a body's mass follows from its shape and density. A user can instead give
//! a total mass (the shape's inertia is scaled with it, so its distribution is kept:
//! Jolt's `EOverrideMassProperties::CalculateInertia`), or the full properties (mass,
//! inertia about the centre of mass, centre of mass), which is also how a body without a
//! shape gets a mass. A centre-of-mass offset then moves the centre of mass within the
//! body (Edyn's `center_of_mass`, seed 003): the inertia becomes that of the same mass
//! distribution about the new point, by the parallel-axis theorem, so ballast placed low
//! in a car makes it both lower and harder to roll, as a real offset mass would.
//!
//! Every tensor a user passes must be symmetric and positive definite (Sylvester's
//! criterion on its leading minors); otherwise the body's motion would be undefined, so
//! it is refused with [`PhysicsError::InvalidMassProperties`].

use crate::error::PhysicsError;
use crate::math::quat_normalize;
use crate::math::{Mat3A, Quat, Vec3, Vec3A};
use crate::shape::{MassProperties, Shape};

/// Where a dynamic body's mass properties come from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum MassSpec {
    /// From the shape and [`BodyDesc::density`](crate::body::BodyDesc::density).
    #[default]
    FromShape,
    /// This total mass (kg); the inertia is the shape's scaled by the same factor, so the
    /// body turns like a uniform one of that mass. Needs a shape.
    Mass(f32),
    /// Exactly these: mass (kg), inertia (kg·m²) about the centre of mass in the body's
    /// local axes, centre of mass in the body's local frame.
    Properties(MassProperties),
}

/// The mass properties of a dynamic body, from its description.
pub(crate) fn resolve(
    shape: Option<&Shape>,
    density: f32,
    spec: MassSpec,
    offset: Vec3,
) -> Result<MassProperties, PhysicsError> {
    if !offset.is_finite() {
        return Err(PhysicsError::InvalidMassProperties);
    }
    let from_shape = |density: f32| -> Result<MassProperties, PhysicsError> {
        let shape = shape.ok_or(PhysicsError::InvalidMassProperties)?;
        Ok(shape.mass_properties(density)?)
    };
    let mp = match spec {
        MassSpec::FromShape => {
            if shape.is_none() {
                return Err(PhysicsError::InvalidMassProperties);
            }
            if !(density.is_finite() && density > 0.0) {
                return Err(PhysicsError::NonPositiveDensity);
            }
            from_shape(density)?
        }
        MassSpec::Mass(mass) => {
            if !(mass.is_finite() && mass > 0.0) {
                return Err(PhysicsError::InvalidMassProperties);
            }
            // Unit density gives the shape's volume as mass; inertia scales linearly.
            let unit = from_shape(1.0)?;
            if unit.mass.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return Err(PhysicsError::InvalidMassProperties);
            }
            let scale = mass / unit.mass;
            MassProperties {
                mass,
                center_of_mass: unit.center_of_mass,
                inertia: unit.inertia * scale,
            }
        }
        MassSpec::Properties(mp) => mp,
    };
    validate(&mp)?;
    let shifted = MassProperties {
        mass: mp.mass,
        center_of_mass: mp.center_of_mass + Vec3A::from(offset),
        inertia: shift_inertia(mp.inertia, mp.mass, offset.into()),
    };
    validate(&shifted)?;
    Ok(shifted)
}

/// Checks a mass, centre and inertia: finite, mass > 0, inertia symmetric (to a relative
/// 1e-5, f32 rounding of a rotated tensor) and positive definite.
pub(crate) fn validate(mp: &MassProperties) -> Result<(), PhysicsError> {
    let ok = mp.mass.is_finite()
        && mp.mass > 0.0
        && mp.center_of_mass.is_finite()
        && is_positive_definite(&mp.inertia)
        && mp.inertia.inverse().is_finite();
    if ok {
        Ok(())
    } else {
        Err(PhysicsError::InvalidMassProperties)
    }
}

/// Symmetric and positive definite (Sylvester's criterion).
pub(crate) fn is_positive_definite(m: &Mat3A) -> bool {
    if !m.is_finite() {
        return false;
    }
    let scale = m.x_axis.x.abs() + m.y_axis.y.abs() + m.z_axis.z.abs();
    let tol = 1e-5 * scale;
    let symmetric = (m.x_axis.y - m.y_axis.x).abs() <= tol
        && (m.x_axis.z - m.z_axis.x).abs() <= tol
        && (m.y_axis.z - m.z_axis.y).abs() <= tol;
    let (a, b, d) = (m.x_axis.x, m.y_axis.x, m.y_axis.y);
    symmetric && a > 0.0 && a * d - b * b > 0.0 && m.determinant() > 0.0
}

/// Inertia of the same mass distribution about a point `d` away from its centre of mass
/// (parallel-axis theorem): `I + m (|d|² E - d dᵀ)`.
#[must_use]
pub(crate) fn shift_inertia(inertia: Mat3A, mass: f32, d: Vec3A) -> Mat3A {
    let dd = d.dot(d);
    let outer = Mat3A::from_cols(d * d.x, d * d.y, d * d.z);
    inertia + (Mat3A::from_diagonal(Vec3::splat(dd)) - outer) * mass
}

/// Principal moments and axes of a symmetric tensor: `m = R diag(moments) Rᵀ` with `R`
/// the rotation returned (its columns the axes), moments in ascending order. Cyclic
/// Jacobi rotations (Golub & Van Loan, §8.5), converged to f32 precision in a few sweeps.
#[must_use]
pub fn principal_axes(m: Mat3A) -> (Vec3, Quat) {
    let mut a = [
        [m.x_axis.x, m.y_axis.x, m.z_axis.x],
        [m.x_axis.y, m.y_axis.y, m.z_axis.y],
        [m.x_axis.z, m.y_axis.z, m.z_axis.z],
    ]
    .map(|r| r.map(f64::from));
    let mut v = [[1.0f64, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..32 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off < 1e-15 * (a[0][0].abs() + a[1][1].abs() + a[2][2].abs()) {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // a = Jᵀ a J, v = v J for the rotation J in the (p, q) plane.
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (row_p, row_q) = (a[p], a[q]);
            for k in 0..3 {
                a[p][k] = c * row_p[k] - s * row_q[k];
                a[q][k] = s * row_p[k] + c * row_q[k];
            }
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let col = |i: usize| Vec3::new(v[0][i] as f32, v[1][i] as f32, v[2][i] as f32);
    let (x, y) = (col(order[0]), col(order[1]));
    // A right-handed frame: the third axis is the cross product (flips an eigenvector's
    // sign at most, which leaves it an eigenvector).
    let z = x.cross(y);
    let moments = Vec3::new(
        a[order[0]][order[0]] as f32,
        a[order[1]][order[1]] as f32,
        a[order[2]][order[2]] as f32,
    );
    let r = glam::Mat3::from_cols(x, y, z);
    (moments, quat_normalize(Quat::from_mat3(&r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_axes_recover_a_rotated_diagonal_tensor() {
        // R diag(1, 2, 3) Rᵀ must give back (1, 2, 3) and axes along R's columns.
        let r = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 0.7);
        let rm = Mat3A::from_quat(r);
        let m = rm * Mat3A::from_diagonal(Vec3::new(2.0, 3.0, 1.0)) * rm.transpose();
        let (moments, axes) = principal_axes(m);
        assert!((moments - Vec3::new(1.0, 2.0, 3.0)).abs().max_element() < 1e-5);
        let back = Mat3A::from_quat(axes)
            * Mat3A::from_diagonal(moments)
            * Mat3A::from_quat(axes).transpose();
        let err = (back - m)
            .to_cols_array()
            .iter()
            .fold(0f32, |e, x| e.max(x.abs()));
        assert!(err < 1e-5, "reconstruction error {err}");
    }

    #[test]
    fn positive_definite_check() {
        assert!(is_positive_definite(&Mat3A::from_diagonal(Vec3::ONE)));
        assert!(!is_positive_definite(&Mat3A::from_diagonal(Vec3::new(
            1.0, -1.0, 1.0
        ))));
        assert!(!is_positive_definite(&Mat3A::from_diagonal(Vec3::new(
            1.0, 0.0, 1.0
        ))));
        let asym = Mat3A::from_cols(Vec3A::X, Vec3A::new(0.5, 1.0, 0.0), Vec3A::Z);
        assert!(!is_positive_definite(&asym));
    }

    #[test]
    fn parallel_axis_shift() {
        // A point mass 2 kg at distance 3 along x: inertia about the origin is m d² about
        // y and z, 0 about x.
        let i = shift_inertia(Mat3A::ZERO, 2.0, Vec3A::new(3.0, 0.0, 0.0));
        assert_eq!(i.x_axis.x, 0.0);
        assert_eq!(i.y_axis.y, 18.0);
        assert_eq!(i.z_axis.z, 18.0);
    }
}
