//! Joint constraints: the per-joint math of the solver (Box2D v3's soft joints, in 3D).
//!
//! Every joint type is built from a few kinds of rows, each solved with the same soft
//! step as contacts (`Softness`):
//! - the *point* block (3 rows): the anchors coincide; solved as one 3x3 system with the
//!   anchors of the current substep, as Box2D's revolute joint does in 2D;
//! - the *angular lock* block (3 rows): the frames keep their relative orientation;
//! - one-dimensional rows along an axis, linear or angular, in one of five modes:
//!   an equality (alignment), a one-sided limit (speculative: the gap may close within a
//!   substep, like a separated contact point), a spring, a velocity motor and a position
//!   motor (a spring with a force limit).
//!
//! Positions are tracked as Box2D v3 does: the anchors and frames are taken at the start
//! of the step and moved by each body's `dp` / `dq` of the running step, so no pose is
//! written back until the step ends.
//!
//! The point block follows the anchors as they turn, which matters when a body's inertia
//! is small against its mass times its arm squared (`m r² / I`: 1,000 for a 5 cm ball on
//! a 1 m rod, 10⁴-10⁶ for thin rods and bones). Its effective mass is then very
//! anisotropic (`1/m` along the arm, `1/m + r²/I` across it), and an impulse a little off
//! the current arm spins the body hard. So (a) its effective mass is formed at the current
//! arms once per substep (in the relax pass, after the positions moved; the next substep's
//! solve pass reuses it), not once per step: a mass for arms that have since turned
//! mistook across-arm velocity for along-arm and a released pendulum came apart in
//! half a second; (b) the accumulated impulse turns with the bodies between the solve
//! and relax passes (`carry`), so the warm start does not push across the new arm: at
//! `m r² / I = 10⁶` that push was larger than what f32 can cancel; and (c) in the solve
//! pass it also asks for the velocity that cancels the second-order part of its arms'
//! turn in the coming position substep (`arm_drift`): a link spinning at `w` pulls an
//! anchor at arm `r` inward by about `r |w|² h² / 2` per substep, which a velocity row
//! (linear in the arms) cannot see; at the tip of a whipping chain (40-50 rad/s) that is
//! millimetres per substep. Rigid rows are solved soft with a position bias in
//! the solve pass (joint stiffness [`JOINT_HERTZ`]) and rigid without bias in the relax
//! pass, so the bias velocity never remains in the result. Springs and position motors
//! act in the solve pass only and start each substep from a zero impulse: one pass of
//! such a row is then exactly an implicit-Euler step of the spring-damper (Catto,
//! "Solver2D", 2024), which `physics/tests/behaviour/joints.rs` checks.

use crate::math::{cross, quat_length, quat_mul, quat_normalize, rotate};
use std::ops::{Add, Mul, Sub};

use crate::joint::{AxisDrive, Dof, JointImpulses, JointKind, Motor, OrientationDrive, Spring};

/// The first of the three row slots of an orientation drive (after a swing-twist's
/// swing and twist limits in slots 0-2).
const DRIVE: usize = 3;
use crate::math::{self, Mat3A, Quat, Vec3A};

use super::contact::{BodyMass, Softness, SolverBody};

/// Stiffness of the rigid rows of joints, in Hz. Box2D v3 uses twice its contact
/// stiffness. Measured at 10 substeps of a 60 Hz step (`physics/tests/behaviour/joints.rs`): a
/// 20-link chain swinging from horizontal ends within 0.07 mm per link at 120 Hz and
/// 0.02 mm at 150 Hz; a load of 100 links' mass on a 10-link chain, iterated, sags 6.7 cm
/// at 120 Hz, 4.4 cm at 150 Hz and 2.6 cm at 200 Hz, and the same chain blows up at
/// 250 Hz. 150 Hz keeps a margin below that edge. (Such a chain is now solved exactly as
/// a tree, `joint_tree.rs`, whose rigid rows use only this stiffness's bias rate.)
pub const JOINT_HERTZ: f32 = 150.0;
/// Damping ratio of the rigid rows of joints (2 and 0.5 measured the same as 1).
pub const JOINT_DAMPING_RATIO: f32 = 1.0;
/// Joint stiffness is capped at this fraction of the substep rate (`h * omega` <= 1.6;
/// the heavy-load chain above is unstable from about 2.6), so fewer substeps stay stable.
pub const MAX_JOINT_HERTZ_PER_SUBSTEP_RATE: f32 = 0.25;

/// Which pass over the constraints is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Apply the accumulated impulses (start of a substep).
    WarmStart,
    /// Solve with the position bias (`true`) or without it (relax, `false`).
    Solve(bool),
}

/// Per-substep constants of the joint passes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JointParams {
    pub h: f32,
    pub inv_h: f32,
    pub softness: Softness,
}

impl JointParams {
    /// The soft coefficients of a rigid row in `pass`: (bias rate, mass scale, impulse
    /// scale). Soft with the position bias in the solve pass, rigid without it otherwise.
    pub(crate) fn rigid(&self, pass: Pass) -> (f32, f32, f32) {
        match pass {
            Pass::Solve(true) => {
                let s = self.softness;
                (s.bias_rate, s.mass_scale, s.impulse_scale)
            }
            _ => (0.0, 1.0, 0.0),
        }
    }
}

/// How a one-dimensional row acts.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `C = 0`, soft with bias, rigid in relax.
    Equal,
    /// `C >= 0`: the impulse only pushes.
    Limit,
    /// A spring toward `C = 0`.
    Spring(Softness),
    /// Drives `Cdot` to `speed` with at most `max` impulse per substep.
    Motor { speed: f32, max: f32 },
    /// A spring toward `C = 0` with at most `max` impulse per substep.
    PositionMotor { softness: Softness, max: f32 },
}

/// A joint as the solver sees it for one step.
#[derive(Clone, Debug)]
pub(crate) struct JointConstraint {
    /// Joint slot (to store impulses back).
    pub joint: u32,
    /// Position of body A in the colour's plan (awake index in the overflow).
    pub slot_a: Option<u32>,
    /// Position of body B in the colour's plan.
    pub slot_b: Option<u32>,
    /// Stand-ins for sides the solver does not move (a kinematic side keeps its velocity).
    pub fixed_a: SolverBody,
    pub fixed_b: SolverBody,
    pub mass_a: BodyMass,
    pub mass_b: BodyMass,
    /// Anchors relative to the centres of mass, world axes, at the start of the step.
    r_a0: Vec3A,
    r_b0: Vec3A,
    /// World orientations of the joint frames at the start of the step.
    q_a0: Quat,
    q_b0: Quat,
    /// Anchor B minus anchor A at the start of the step.
    d0: Vec3A,
    kind: JointKind,
    drive: Option<OrientationDrive>,
    /// Inverse effective mass of the point block at the current arms (formed at the start
    /// of the step and again in every relax pass, see the module header), and of the
    /// angular lock for the step's starting inertias.
    point_mass: Mat3A,
    angular_mass: Mat3A,
    /// The point block's accumulated impulse in the frames of A and B as the solve pass
    /// left it, and how much each side's turn counts when the relax pass carries it to
    /// the moved arms ([`carry_weights`]).
    acc_in_a: Vec3A,
    acc_in_b: Vec3A,
    weight_a: f32,
    weight_b: f32,
    /// Accumulated impulses (warm started from the last step).
    pub acc: JointImpulses,
    /// Impulse on body B during the current substep (linear, angular about its anchor),
    /// from which the joint's force and torque are reported.
    pub sub_linear: Vec3A,
    pub sub_angular: Vec3A,
}

/// The two frames' current placement within a substep.
struct Pose {
    r_a: Vec3A,
    r_b: Vec3A,
    q_a: Quat,
    q_b: Quat,
    /// Anchor B minus anchor A.
    d: Vec3A,
}

/// Inputs of [`JointConstraint::new`].
pub(crate) struct JointStart {
    pub joint: u32,
    pub kind: JointKind,
    pub fixed_a: SolverBody,
    pub fixed_b: SolverBody,
    pub mass_a: BodyMass,
    pub mass_b: BodyMass,
    /// World anchor positions and their bodies' centres of mass.
    pub anchor_a: Vec3A,
    pub anchor_b: Vec3A,
    pub center_a: Vec3A,
    pub center_b: Vec3A,
    /// World orientations of the frames.
    pub q_a: Quat,
    pub q_b: Quat,
    pub impulses: JointImpulses,
    /// A cone's or swing-twist's orientation drive.
    pub drive: Option<OrientationDrive>,
}

/// Angle in `[-π, π]` of a quaternion's rotation about its X axis (its twist).
fn twist_angle(q: Quat) -> f32 {
    let q = if q.w < 0.0 { -q } else { q };
    2.0 * math::atan2(q.x, q.w)
}

/// Twist about X and the two swing angles toward Y and Z of `q = swing * twist`.
pub(crate) fn twist_swing_angles(q: Quat) -> [f32; 3] {
    let q = if q.w < 0.0 { -q } else { q };
    let t = Quat::from_xyzw(q.x, 0.0, 0.0, q.w);
    let len = quat_length(t);
    let twist = if len > 1e-9 { t / len } else { Quat::IDENTITY };
    let swing = quat_mul(q, twist.conjugate());
    let swing = if swing.w < 0.0 { -swing } else { swing };
    [
        2.0 * math::atan2(twist.x, twist.w),
        2.0 * math::atan2(swing.y, swing.w),
        2.0 * math::atan2(swing.z, swing.w),
    ]
}

fn spring_softness(s: &Spring, h: f32) -> Softness {
    Softness::new(s.hertz, s.damping_ratio, h)
}

/// The inverse of a symmetric 3x3 block, or zero for a singular one (a joint between
/// two sides the solver does not move in that block's directions). Axes whose row and
/// column are exactly zero (locked on both sides: [`crate::body::locked_axes`]) are
/// left out, so the block is inverted on the others (the pseudo-inverse).
fn inverse(m: Mat3A) -> Mat3A {
    let cols = [m.x_axis, m.y_axis, m.z_axis];
    let idle = [0, 1, 2].map(|i| cols[i] == Vec3A::ZERO);
    if idle.contains(&true) && idle.contains(&false) {
        let unit = [Vec3A::X, Vec3A::Y, Vec3A::Z];
        let filled = [0, 1, 2].map(|i| if idle[i] { unit[i] } else { cols[i] });
        let inv = inverse(Mat3A::from_cols(filled[0], filled[1], filled[2]));
        let zero = |v: Vec3A| {
            Vec3A::new(
                if idle[0] { 0.0 } else { v.x },
                if idle[1] { 0.0 } else { v.y },
                if idle[2] { 0.0 } else { v.z },
            )
        };
        let c = [inv.x_axis, inv.y_axis, inv.z_axis];
        let col = |i: usize| if idle[i] { Vec3A::ZERO } else { zero(c[i]) };
        return Mat3A::from_cols(col(0), col(1), col(2));
    }
    if m.determinant().abs() > f32::MIN_POSITIVE {
        m.inverse()
    } else {
        Mat3A::ZERO
    }
}

/// The arithmetic of the point block's effective mass, for `f32` (the scalar rows) and
/// the SIMD lanes (`wide::FloatW`), so that both form it operation for operation alike.
pub(crate) trait Real:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self>
{
    /// `1 / self`, or zero unless `|self|` is above `f32::MIN_POSITIVE` (a singular block:
    /// a joint between two sides the solver does not move).
    fn recip_or_zero(self) -> Self;
}

impl Real for f32 {
    #[inline(always)]
    fn recip_or_zero(self) -> Self {
        if self.abs() > f32::MIN_POSITIVE {
            1.0 / self
        } else {
            0.0
        }
    }
}

/// `[r]× A [r]×ᵀ` for a symmetric `A` given by its columns, as its entries (xx, xy, xz,
/// yy, yz, zz). Column `j` is `r × (A (e_j × r))`.
#[inline(always)]
fn arm_block<T: Real>(r: [T; 3], a: &[[T; 3]; 3]) -> [T; 6] {
    let [x, y, z] = r;
    // u_j = A (e_j × r), the components the entries need.
    let (u0y, u0z) = (a[2][1] * y - a[1][1] * z, a[2][2] * y - a[1][2] * z);
    let u1 = [
        a[0][0] * z - a[2][0] * x,
        a[0][1] * z - a[2][1] * x,
        a[0][2] * z - a[2][2] * x,
    ];
    let u2 = [
        a[1][0] * x - a[0][0] * y,
        a[1][1] * x - a[0][1] * y,
        a[1][2] * x - a[0][2] * y,
    ];
    [
        y * u0z - z * u0y,
        y * u1[2] - z * u1[1],
        y * u2[2] - z * u2[1],
        z * u1[0] - x * u1[2],
        z * u2[0] - x * u2[2],
        x * u2[1] - y * u2[0],
    ]
}

/// The inverse effective mass of the point block, `K⁻¹` with `K = (1/m_a + 1/m_b) 1 +
/// [r_a]× I_a⁻¹ [r_a]×ᵀ + [r_b]× I_b⁻¹ [r_b]×ᵀ`, by cofactors of the symmetric `K`, as
/// its entries (xx, xy, xz, yy, yz, zz); zero for a singular block.
#[inline(always)]
pub(crate) fn point_block_inverse<T: Real>(
    inv_mass: T,
    r_a: [T; 3],
    inv_inertia_a: &[[T; 3]; 3],
    r_b: [T; 3],
    inv_inertia_b: &[[T; 3]; 3],
) -> [T; 6] {
    let ka = arm_block(r_a, inv_inertia_a);
    let kb = arm_block(r_b, inv_inertia_b);
    let k = [
        inv_mass + ka[0] + kb[0],
        ka[1] + kb[1],
        ka[2] + kb[2],
        inv_mass + ka[3] + kb[3],
        ka[4] + kb[4],
        inv_mass + ka[5] + kb[5],
    ];
    let [xx, xy, xz, yy, yz, zz] = k;
    let c = [
        yy * zz - yz * yz,
        xz * yz - xy * zz,
        xy * yz - xz * yy,
        xx * zz - xz * xz,
        xy * xz - xx * yz,
        xx * yy - xy * xy,
    ];
    let inv_det = (xx * c[0] + xy * c[1] + xz * c[2]).recip_or_zero();
    c.map(|c| c * inv_det)
}

fn columns(m: &Mat3A) -> [[f32; 3]; 3] {
    [m.x_axis.into(), m.y_axis.into(), m.z_axis.into()]
}

/// The inverse effective mass of the point block with the arms `r_a`, `r_b`.
pub(crate) fn point_mass(ma: &BodyMass, mb: &BodyMass, r_a: Vec3A, r_b: Vec3A) -> Mat3A {
    if ma.locks_translation() || mb.locks_translation() {
        return locked_point_mass(ma, mb, r_a, r_b);
    }
    let [xx, xy, xz, yy, yz, zz] = point_block_inverse(
        ma.inv_mass + mb.inv_mass,
        r_a.into(),
        &columns(&ma.inv_inertia),
        r_b.into(),
        &columns(&mb.inv_inertia),
    );
    Mat3A::from_cols(
        Vec3A::new(xx, xy, xz),
        Vec3A::new(xy, yy, yz),
        Vec3A::new(xz, yz, zz),
    )
}

/// The point block's inverse effective mass for sides with locked axes:
/// `K = m_a⁻¹ P_a + m_b⁻¹ P_b + [r_a]× I_a⁻¹ [r_a]×ᵀ + [r_b]× I_b⁻¹ [r_b]×ᵀ`, inverted
/// on the axes it can move (see [`inverse`]).
fn locked_point_mass(ma: &BodyMass, mb: &BodyMass, r_a: Vec3A, r_b: Vec3A) -> Mat3A {
    let skew = |r: Vec3A| {
        Mat3A::from_cols(
            Vec3A::new(0.0, r.z, -r.y),
            Vec3A::new(-r.z, 0.0, r.x),
            Vec3A::new(r.y, -r.x, 0.0),
        )
    };
    let arm = |m: &BodyMass, r: Vec3A| {
        let s = skew(r);
        s * m.inv_inertia * s.transpose()
    };
    let linear =
        Mat3A::from_diagonal((ma.inv_mass * ma.linear_axes + mb.inv_mass * mb.linear_axes).into());
    inverse(linear + arm(ma, r_a) + arm(mb, r_b))
}

/// How far the arm `r` of a body turning at `w` moves in the next position substep
/// (`half_h` = half its length) beyond its first-order motion `h w × r`: the integrator
/// turns the body by the normalised `1 + (h w / 2)`, so with `u = h w / 2` and
/// `s = 1 / (1 + |u|²)` the arm ends at `r + 2 s (u × r + u × (u × r))`, and the drift is
/// `2 s (u × (u × r) - |u|² (u × r))`: mostly inward, `-(h²/2) |w|² r` for `w ⟂ r`.
/// The bundled lanes (`ball_bundle.rs`) compute it operation for operation alike.
#[inline(always)]
pub(crate) fn arm_drift(w: Vec3A, r: Vec3A, half_h: f32) -> Vec3A {
    let u = half_h * w;
    let ur = cross(u, r);
    let uu = u.dot(u);
    let s = 1.0 / (1.0 + uu);
    (2.0 * s) * (cross(u, ur) - uu * ur)
}

/// How much each side's turn counts when the point block's impulse is carried from the
/// solve pass's arms to the relax pass's (A's weight, B's): in proportion to how strongly
/// an impulse at that side's anchor turns it, `tr(I⁻¹) r²`, so an impulse on a body of
/// small inertia keeps its line through the body (a pendulum's bob: all B's).
pub(crate) fn carry_weights(ma: &BodyMass, mb: &BodyMass, r_a: Vec3A, r_b: Vec3A) -> (f32, f32) {
    let turn = |m: &BodyMass, r: Vec3A| {
        (m.inv_inertia.x_axis.x + m.inv_inertia.y_axis.y + m.inv_inertia.z_axis.z)
            * r.length_squared()
    };
    let (sa, sb) = (turn(ma, r_a), turn(mb, r_b));
    let total = sa + sb;
    if total > 0.0 && total.is_finite() {
        (sa / total, sb / total)
    } else {
        (0.5, 0.5)
    }
}

impl JointConstraint {
    pub(crate) fn new(s: JointStart) -> Self {
        let (ma, mb) = (s.mass_a, s.mass_b);
        let (r_a, r_b) = (s.anchor_a - s.center_a, s.anchor_b - s.center_b);
        let (weight_a, weight_b) = carry_weights(&ma, &mb, r_a, r_b);
        Self {
            point_mass: point_mass(&ma, &mb, r_a, r_b),
            acc_in_a: Vec3A::ZERO,
            acc_in_b: Vec3A::ZERO,
            weight_a,
            weight_b,
            // Only the joints with an angular lock or an orientation drive read it.
            angular_mass: if matches!(s.kind, JointKind::Fixed | JointKind::Slider(_))
                || s.drive.is_some()
            {
                inverse(ma.inv_inertia + mb.inv_inertia)
            } else {
                Mat3A::ZERO
            },
            joint: s.joint,
            slot_a: None,
            slot_b: None,
            fixed_a: s.fixed_a,
            fixed_b: s.fixed_b,
            mass_a: s.mass_a,
            mass_b: s.mass_b,
            r_a0: r_a,
            r_b0: r_b,
            q_a0: s.q_a,
            q_b0: s.q_b,
            d0: s.anchor_b - s.anchor_a,
            kind: s.kind,
            drive: s.drive,
            acc: s.impulses,
            sub_linear: Vec3A::ZERO,
            sub_angular: Vec3A::ZERO,
        }
    }

    fn pose(&self, a: &SolverBody, b: &SolverBody) -> Pose {
        let r_a = rotate(a.dq, self.r_a0);
        let r_b = rotate(b.dq, self.r_b0);
        // A ball joint needs no orientation.
        let (q_a, q_b) = if self.kind == JointKind::Ball {
            (Quat::IDENTITY, Quat::IDENTITY)
        } else {
            (
                quat_normalize(quat_mul(a.dq, self.q_a0)),
                quat_normalize(quat_mul(b.dq, self.q_b0)),
            )
        };
        Pose {
            r_a,
            r_b,
            q_a,
            q_b,
            d: self.d0 + (b.dp - a.dp) + (r_b - self.r_b0) - (r_a - self.r_a0),
        }
    }

    /// Runs one pass of this joint on its two bodies.
    pub(crate) fn run(
        &mut self,
        a: &mut SolverBody,
        b: &mut SolverBody,
        pass: Pass,
        k: &JointParams,
    ) {
        if pass == Pass::WarmStart {
            self.sub_linear = Vec3A::ZERO;
            self.sub_angular = Vec3A::ZERO;
        }
        let p = self.pose(a, b);
        let mut rows = Rows {
            c: self,
            a,
            b,
            pass,
            k,
        };
        if rows.c.kind == JointKind::Ball {
            rows.point(&p);
            return;
        }
        let (x_a, y_a, z_a) = (
            rotate(p.q_a, Vec3A::X),
            rotate(p.q_a, Vec3A::Y),
            rotate(p.q_a, Vec3A::Z),
        );
        let x_b = rotate(p.q_b, Vec3A::X);
        match rows.c.kind {
            JointKind::Ball => rows.point(&p),
            JointKind::Fixed => {
                rows.angular_lock(&p);
                rows.point(&p);
            }
            JointKind::Hinge(drive) => {
                let angle = {
                    let y_b = rotate(p.q_b, Vec3A::Y);
                    math::atan2(cross(y_a, y_b).dot(x_a), y_a.dot(y_b))
                };
                rows.drive(&drive, 2, x_a, angle, None);
                let n = cross(x_a, x_b);
                rows.angular(0, y_a, y_a.dot(n), Mode::Equal);
                rows.angular(1, z_a, z_a.dot(n), Mode::Equal);
                rows.point(&p);
            }
            JointKind::Slider(drive) => {
                let r_a = p.r_a + p.d;
                rows.drive(&drive, 2, x_a, x_a.dot(p.d), Some((r_a, p.r_b)));
                rows.angular_lock(&p);
                rows.linear(0, y_a, r_a, p.r_b, y_a.dot(p.d), Mode::Equal);
                rows.linear(1, z_a, r_a, p.r_b, z_a.dot(p.d), Mode::Equal);
            }
            JointKind::Distance { min, max, spring } => {
                let len = p.d.length();
                let u = if len > 1e-6 { p.d / len } else { x_a };
                let r_a = p.r_a + p.d;
                if let Some(s) = spring {
                    let soft = spring_softness(&s, k.h);
                    rows.linear(2, u, r_a, p.r_b, len - s.rest, Mode::Spring(soft));
                }
                if min == max {
                    rows.linear(0, u, r_a, p.r_b, len - min, Mode::Equal);
                } else {
                    rows.linear(0, u, r_a, p.r_b, len - min, Mode::Limit);
                    rows.linear(1, -u, r_a, p.r_b, max - len, Mode::Limit);
                }
            }
            JointKind::Cone { half_angle } => {
                if let Some(d) = rows.c.drive {
                    rows.orientation_drive(&p, &d);
                }
                rows.cone(0, x_a, x_b, half_angle);
                rows.point(&p);
            }
            JointKind::SwingTwist {
                swing_half_angle,
                twist,
            } => {
                if let Some(d) = rows.c.drive {
                    rows.orientation_drive(&p, &d);
                }
                let angle = twist_angle(quat_mul(p.q_a.conjugate(), p.q_b));
                let u = (x_a + x_b).try_normalize().unwrap_or(x_a);
                rows.angular(1, u, angle - twist.lower, Mode::Limit);
                rows.angular(2, -u, twist.upper - angle, Mode::Limit);
                rows.cone(0, x_a, x_b, swing_half_angle);
                rows.point(&p);
            }
            JointKind::SixDof(six) => {
                let axes = [x_a, y_a, z_a];
                let angles = twist_swing_angles(quat_mul(p.q_a.conjugate(), p.q_b));
                for (i, &u) in axes.iter().enumerate() {
                    if let Some(m) = six.angular_motors[i] {
                        rows.motor(15 + i, u, angles[i], &m, None);
                    }
                    rows.dof(6 + 2 * i, &six.angular[i], u, angles[i], None);
                }
                let r_a = p.r_a + p.d;
                for (i, &u) in axes.iter().enumerate() {
                    let pos = u.dot(p.d);
                    if let Some(m) = six.linear_motors[i] {
                        rows.motor(12 + i, u, pos, &m, Some((r_a, p.r_b)));
                    }
                    rows.dof(2 * i, &six.linear[i], u, pos, Some((r_a, p.r_b)));
                }
            }
        }
    }
}

/// One pass over one joint's rows.
struct Rows<'a> {
    c: &'a mut JointConstraint,
    a: &'a mut SolverBody,
    b: &'a mut SolverBody,
    pass: Pass,
    k: &'a JointParams,
}

impl Rows<'_> {
    fn apply_linear(&mut self, p: Vec3A, r_a: Vec3A, r_b: Vec3A) {
        let (ma, mb) = (self.c.mass_a, self.c.mass_b);
        self.a.v -= ma.linear(p);
        self.a.w -= ma.inv_inertia * cross(r_a, p);
        self.b.v += mb.linear(p);
        self.b.w += mb.inv_inertia * cross(r_b, p);
        self.c.sub_linear += p;
    }

    fn apply_angular(&mut self, l: Vec3A) {
        self.a.w -= self.c.mass_a.inv_inertia * l;
        self.b.w += self.c.mass_b.inv_inertia * l;
        self.c.sub_angular += l;
    }

    /// The soft coefficients of a rigid row in this pass: (bias rate, mass scale,
    /// impulse scale).
    fn rigid(&self) -> (f32, f32, f32) {
        self.k.rigid(self.pass)
    }

    fn point(&mut self, p: &Pose) {
        if self.pass == Pass::WarmStart {
            let imp = self.c.acc.point;
            self.apply_linear(imp, p.r_a, p.r_b);
            return;
        }
        let (bias_rate, ms, is) = self.rigid();
        let c = &mut *self.c;
        if self.pass == Pass::Solve(false) {
            // The bodies moved since the solve pass: carry its impulse along with them
            // and form the effective mass at the new arms (see the module header).
            let (in_a, in_b) = (rotate(self.a.dq, c.acc_in_a), rotate(self.b.dq, c.acc_in_b));
            c.acc.point = in_a * c.weight_a + in_b * c.weight_b;
            c.point_mass = point_mass(&c.mass_a, &c.mass_b, p.r_a, p.r_b);
        }
        let cdot = self.b.v + cross(self.b.w, p.r_b) - self.a.v - cross(self.a.w, p.r_a);
        let mut x = cdot + bias_rate * p.d;
        if self.pass == Pass::Solve(true) {
            // The arms' turn in the coming position substep opens the joint by its
            // second-order part (centripetal: a fast-spinning link pulls its anchors
            // inward by `r |w|² h² / 2`): ask for the velocity that cancels it too.
            let half_h = 0.5 * self.k.h;
            let drift = arm_drift(self.b.w, p.r_b, half_h) - arm_drift(self.a.w, p.r_a, half_h);
            x += self.k.inv_h * drift;
        }
        let imp = -ms * (c.point_mass * x) - is * c.acc.point;
        c.acc.point += imp;
        if self.pass == Pass::Solve(true) {
            c.acc_in_a = rotate(self.a.dq.conjugate(), c.acc.point);
            c.acc_in_b = rotate(self.b.dq.conjugate(), c.acc.point);
        }
        self.apply_linear(imp, p.r_a, p.r_b);
    }

    fn angular_lock(&mut self, p: &Pose) {
        if self.pass == Pass::WarmStart {
            let imp = self.c.acc.angular;
            self.apply_angular(imp);
            return;
        }
        let rel = quat_mul(p.q_b, p.q_a.conjugate());
        let rel = if rel.w < 0.0 { -rel } else { rel };
        let err = 2.0 * Vec3A::new(rel.x, rel.y, rel.z);
        let cdot = self.b.w - self.a.w;
        let (bias_rate, ms, is) = self.rigid();
        let imp = -ms * (self.c.angular_mass * (cdot + bias_rate * err)) - is * self.c.acc.angular;
        self.c.acc.angular += imp;
        self.apply_angular(imp);
    }

    /// A cone's or swing-twist's orientation drive, one 3-row angular block in slots
    /// `DRIVE..DRIVE + 3` (world axes): a soft spring toward frame B's target
    /// orientation (solve pass only, from a zero impulse each substep, as the springs),
    /// or a velocity motor; the impulse's size is clamped to the torque limit.
    fn orientation_drive(&mut self, p: &Pose, d: &OrientationDrive) {
        let slots = DRIVE..DRIVE + 3;
        let acc = Vec3A::from_slice(&self.c.acc.rows[slots.clone()]);
        let spring = matches!(d, OrientationDrive::Spring { .. });
        if self.pass == Pass::WarmStart {
            if spring {
                self.c.acc.rows[slots].fill(0.0);
            } else {
                self.apply_angular(acc);
            }
            return;
        }
        let Pass::Solve(use_bias) = self.pass else {
            return;
        };
        let cdot = self.b.w - self.a.w;
        let mass = self.c.angular_mass;
        let (new, max) = match *d {
            OrientationDrive::Spring {
                target,
                hertz,
                damping_ratio,
                max_torque,
            } => {
                if !use_bias {
                    return;
                }
                // The rotation from the target to frame B, as a rotation vector.
                let goal = p.q_a * target;
                let e = p.q_b * goal.conjugate();
                let e = if e.w < 0.0 { -e } else { e };
                let v = Vec3A::new(e.x, e.y, e.z);
                let s = v.length();
                let err = if s > 0.0 {
                    v * (2.0 * math::atan2(s, e.w) / s)
                } else {
                    Vec3A::ZERO
                };
                let soft = Softness::new(hertz, damping_ratio, self.k.h);
                (
                    acc - soft.mass_scale * (mass * (cdot + soft.bias_rate * err))
                        - soft.impulse_scale * acc,
                    max_torque,
                )
            }
            OrientationDrive::Velocity {
                angular_velocity,
                max_torque,
            } => {
                let target = p.q_a * Vec3A::from(angular_velocity);
                (acc - mass * (cdot - target), max_torque)
            }
        };
        let m = max * self.k.h;
        let len = new.length();
        let new = if len > m { new * (m / len) } else { new };
        new.write_to_slice(&mut self.c.acc.rows[slots]);
        self.apply_angular(new - acc);
    }

    /// A one-dimensional row: linear along `u` between the points `r_a`, `r_b` when
    /// `arms` is given, angular about `u` otherwise. `c` is its position error.
    fn row(&mut self, slot: usize, u: Vec3A, arms: Option<(Vec3A, Vec3A)>, c: f32, mode: Mode) {
        let apply = |rows: &mut Self, imp: f32| match arms {
            Some((r_a, r_b)) => rows.apply_linear(u * imp, r_a, r_b),
            None => rows.apply_angular(u * imp),
        };
        if self.pass == Pass::WarmStart {
            if matches!(mode, Mode::Spring(_) | Mode::PositionMotor { .. }) {
                self.c.acc.rows[slot] = 0.0;
            } else {
                apply(self, self.c.acc.rows[slot]);
            }
            return;
        }
        let Pass::Solve(use_bias) = self.pass else {
            return;
        };
        let (ma, mb) = (self.c.mass_a, self.c.mass_b);
        let (k, cdot) = match arms {
            Some((r_a, r_b)) => {
                let (ra, rb) = (cross(r_a, u), cross(r_b, u));
                (
                    ma.inv_mass_along(u)
                        + mb.inv_mass_along(u)
                        + ra.dot(ma.inv_inertia * ra)
                        + rb.dot(mb.inv_inertia * rb),
                    u.dot(self.b.v + cross(self.b.w, r_b) - self.a.v - cross(self.a.w, r_a)),
                )
            }
            None => (
                u.dot((ma.inv_inertia + mb.inv_inertia) * u),
                u.dot(self.b.w - self.a.w),
            ),
        };
        if k <= 0.0 {
            return;
        }
        let mass = 1.0 / k;
        let acc = self.c.acc.rows[slot];
        let new = match mode {
            Mode::Equal => {
                let (bias_rate, ms, is) = self.rigid();
                acc - ms * mass * (cdot + bias_rate * c) - is * acc
            }
            Mode::Limit => {
                let (bias, ms, is) = if c > 0.0 {
                    (c * self.k.inv_h, 1.0, 0.0)
                } else {
                    let (bias_rate, ms, is) = self.rigid();
                    (bias_rate * c, ms, is)
                };
                (acc - ms * mass * (cdot + bias) - is * acc).max(0.0)
            }
            Mode::Spring(s) => {
                if !use_bias {
                    return;
                }
                acc - s.mass_scale * mass * (cdot + s.bias_rate * c) - s.impulse_scale * acc
            }
            Mode::Motor { speed, max } => {
                let m = max * self.k.h;
                (acc - mass * (cdot - speed)).clamp(-m, m)
            }
            Mode::PositionMotor { softness: s, max } => {
                if !use_bias {
                    return;
                }
                let m = max * self.k.h;
                (acc - s.mass_scale * mass * (cdot + s.bias_rate * c) - s.impulse_scale * acc)
                    .clamp(-m, m)
            }
        };
        self.c.acc.rows[slot] = new;
        apply(self, new - acc);
    }

    fn linear(&mut self, slot: usize, u: Vec3A, r_a: Vec3A, r_b: Vec3A, c: f32, mode: Mode) {
        self.row(slot, u, Some((r_a, r_b)), c, mode);
    }

    fn angular(&mut self, slot: usize, u: Vec3A, c: f32, mode: Mode) {
        self.row(slot, u, None, c, mode);
    }

    /// The swing limit: the angle between the frames' X axes stays within `half`.
    fn cone(&mut self, slot: usize, x_a: Vec3A, x_b: Vec3A, half: f32) {
        let n = cross(x_a, x_b);
        let len = n.length();
        // Aligned axes: no swing, and no direction to limit it in.
        if len < 1e-6 {
            if self.pass == Pass::WarmStart {
                self.c.acc.rows[slot] = 0.0;
            }
            return;
        }
        let swing = math::atan2(len, x_a.dot(x_b));
        self.angular(slot, -n / len, half - swing, Mode::Limit);
    }

    /// A motor on an axis at position `pos`.
    fn motor(&mut self, slot: usize, u: Vec3A, pos: f32, m: &Motor, arms: Option<(Vec3A, Vec3A)>) {
        let mode = match *m {
            Motor::Velocity { speed, max_force } => Mode::Motor {
                speed,
                max: max_force,
            },
            Motor::Position {
                target,
                hertz,
                damping_ratio,
                max_force,
            } => {
                let s = Spring {
                    hertz,
                    damping_ratio,
                    rest: target,
                };
                return self.row(
                    slot,
                    u,
                    arms,
                    pos - target,
                    Mode::PositionMotor {
                        softness: spring_softness(&s, self.k.h),
                        max: max_force,
                    },
                );
            }
        };
        self.row(slot, u, arms, 0.0, mode);
    }

    /// Limit, spring and motor of a hinge's or slider's free axis, in slots
    /// `base..base + 4`.
    fn drive(
        &mut self,
        d: &AxisDrive,
        base: usize,
        u: Vec3A,
        pos: f32,
        arms: Option<(Vec3A, Vec3A)>,
    ) {
        if let Some(m) = d.motor {
            self.motor(base + 3, u, pos, &m, arms);
        }
        if let Some(s) = d.spring {
            let soft = spring_softness(&s, self.k.h);
            self.row(base + 2, u, arms, pos - s.rest, Mode::Spring(soft));
        }
        if let Some(l) = d.limit {
            self.row(base, u, arms, pos - l.lower, Mode::Limit);
            self.row(base + 1, -u, arms, l.upper - pos, Mode::Limit);
        }
    }

    /// One six-DOF axis in slots `base`, `base + 1`.
    fn dof(&mut self, base: usize, d: &Dof, u: Vec3A, pos: f32, arms: Option<(Vec3A, Vec3A)>) {
        match d {
            Dof::Free => {}
            Dof::Locked => self.row(base, u, arms, pos, Mode::Equal),
            Dof::Limited(l) => {
                self.row(base, u, arms, pos - l.lower, Mode::Limit);
                self.row(base + 1, -u, arms, l.upper - pos, Mode::Limit);
            }
        }
    }
}
