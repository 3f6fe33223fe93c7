//! Soft contact constraints: the per-point math of the solver (Box2D v3's soft step,
//! extended to 3D with two friction directions).
//!
//! A contact point is a one-sided constraint `separation >= 0` along the normal, with a
//! friction cone bounded by `friction * normal impulse` in the tangent plane. Penetration
//! is resolved *softly*: instead of a hard velocity target, the constraint behaves like a
//! stiff damped spring (frequency `hertz`, damping ratio `zeta`, see [`Softness`]), which
//! keeps stacks stable without the jitter of Baumgarte stabilisation. Points that are
//! still separated (speculative contacts) allow the gap to close within one substep but no
//! further, which is what stops fast bodies without CCD at moderate speeds.

use crate::math::{cross, rotate};
use arrayvec::ArrayVec;

use crate::contact::ContactImpulse;
use crate::math::{Mat3A, Quat, Vec3A};

/// Slip speed above which a point counts as sliding (its friction then opposes the slip
/// exactly); below it, noise in the slip direction would make friction jitter.
pub(crate) const SLIDING_SPEED: f32 = 0.05;

/// Soft constraint coefficients for one substep length (Erin Catto, "Solver2D", 2024).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Softness {
    /// Scales the position error into a velocity bias.
    pub bias_rate: f32,
    /// Scales the effective mass.
    pub mass_scale: f32,
    /// Scales the accumulated impulse fed back (the spring's "memory").
    pub impulse_scale: f32,
}

impl Softness {
    /// Coefficients for a spring of `hertz` with damping ratio `zeta`, stepped by `h`.
    #[must_use]
    pub fn new(hertz: f32, zeta: f32, h: f32) -> Self {
        if hertz == 0.0 {
            return Self {
                bias_rate: 0.0,
                mass_scale: 1.0,
                impulse_scale: 0.0,
            };
        }
        let omega = 2.0 * std::f32::consts::PI * hertz;
        let a1 = 2.0 * zeta + h * omega;
        let a2 = h * omega * a1;
        let a3 = 1.0 / (1.0 + a2);
        Self {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }
}

/// The solver's view of one body's motion for the duration of a step: 64 bytes, one
/// cache line, all that the passes over constraints gather and scatter. The masses,
/// constant for the step, live in the constraints (Box2D v3's `b2BodyState`).
#[derive(Clone, Copy, Debug)]
pub struct SolverBody {
    /// Linear velocity of the centre of mass.
    pub v: Vec3A,
    /// Angular velocity.
    pub w: Vec3A,
    /// Translation of the centre of mass since the start of the step.
    pub dp: Vec3A,
    /// Rotation since the start of the step (world frame: `q = dq * q0`).
    pub dq: Quat,
}

impl SolverBody {
    /// A body that never moves (stands in for static sides of constraints).
    pub const FIXED: SolverBody = SolverBody {
        v: Vec3A::ZERO,
        w: Vec3A::ZERO,
        dp: Vec3A::ZERO,
        dq: Quat::IDENTITY,
    };
}

/// The inverse mass and inertia of one side of a constraint, frozen for the step.
#[derive(Clone, Copy, Debug)]
pub struct BodyMass {
    /// Inverse mass (0 for static and kinematic sides).
    pub inv_mass: f32,
    /// Inverse inertia in world axes (with locked rotation axes projected out:
    /// `P I⁻¹ P`, see [`crate::body::locked_axes`]).
    pub inv_inertia: Mat3A,
    /// 1 along the world axes the body may translate along, 0 along its locked ones: the
    /// inverse mass along axis `i` is `inv_mass * linear_axes[i]`. All ones unless the
    /// body locks a translation. Contact bundles carry it per lane; joints of such a body
    /// are solved by the scalar rows (the joint bundles keep one inverse mass per lane).
    pub linear_axes: Vec3A,
}

impl BodyMass {
    /// The mass of a side the solver does not move.
    pub const FIXED: BodyMass = BodyMass {
        inv_mass: 0.0,
        inv_inertia: Mat3A::ZERO,
        linear_axes: Vec3A::ONE,
    };

    /// Whether some translation axis is locked (then `linear_axes` is not all ones).
    #[must_use]
    #[inline]
    pub fn locks_translation(&self) -> bool {
        self.linear_axes != Vec3A::ONE
    }

    /// The velocity change of the linear impulse `p`: `m⁻¹ P p`. Without a lock this is
    /// `inv_mass * p`, bit for bit.
    #[must_use]
    #[inline]
    pub fn linear(&self, p: Vec3A) -> Vec3A {
        self.inv_mass * (p * self.linear_axes)
    }

    /// The velocity change of the impulse `delta` along `n`: `(inv_mass * delta) * n`
    /// without a lock, bit for bit, as the contact rows write it.
    #[must_use]
    #[inline]
    pub fn linear_along(&self, delta: f32, n: Vec3A) -> Vec3A {
        ((self.inv_mass * delta) * n) * self.linear_axes
    }

    /// The inverse mass along the unit direction `n`: `nᵀ m⁻¹ P n` (exactly `inv_mass`
    /// without a lock).
    #[must_use]
    #[inline]
    pub fn inv_mass_along(&self, n: Vec3A) -> f32 {
        if self.locks_translation() {
            self.inv_mass * (n * self.linear_axes).dot(n)
        } else {
            self.inv_mass
        }
    }
}

/// One point of a contact constraint.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstraintPoint {
    /// Anchor relative to body A's centre of mass (world axes, at the start of the step).
    pub r_a: Vec3A,
    /// Anchor relative to body B's centre of mass.
    pub r_b: Vec3A,
    /// Separation at the start of the step (negative: penetration).
    pub separation: f32,
    /// `separation - (r_b·n - r_a·n)`, set by `prepare`: the current separation is then
    /// `(dp_b - dp_a)·n + (r_b·(q_b⁻¹ n) - r_a·(q_a⁻¹ n)) + base_separation`, which
    /// rotates the normal once per constraint instead of both anchors once per point.
    pub base_separation: f32,
    /// Effective mass along the normal.
    pub normal_mass: f32,
    /// Effective masses along the two tangents.
    pub tangent_mass: [f32; 2],
    /// Accumulated normal impulse (warm started from the previous step).
    pub normal_impulse: f32,
    /// Accumulated friction impulses.
    pub tangent_impulse: [f32; 2],
    /// Largest normal impulse applied this step (for restitution and events).
    pub max_normal_impulse: f32,
    /// Normal relative velocity before impact: at the start of the step, lowered to the
    /// approach speed seen when the point first touches during the substeps.
    pub relative_velocity: f32,
    /// Whether the point bounced this step (see `ContactConstraint::solve`).
    pub bounced: bool,
    /// The step's tally of normal impulse, kept only where
    /// [`ContactConstraint::force_threshold`] is finite: minus the warm-start impulse
    /// the step starts from, plus the accumulated impulse each substep's warm start
    /// applies, plus a bounce's kick. The step's total normal impulse is the tally plus
    /// the final accumulated impulse (each substep applies its warm start, then moves the
    /// accumulated impulse to the next warm start by its deltas).
    pub normal_tally: f32,
    /// The same tally for the two friction impulses.
    pub tangent_tally: [f32; 2],
}

impl ConstraintPoint {
    /// The step's total normal and friction impulses (see
    /// [`normal_tally`](Self::normal_tally)).
    #[must_use]
    pub fn step_totals(&self) -> (f32, [f32; 2]) {
        (
            self.normal_tally + self.normal_impulse,
            [
                self.tangent_tally[0] + self.tangent_impulse[0],
                self.tangent_tally[1] + self.tangent_impulse[1],
            ],
        )
    }
}

/// Rolling and spinning resistance of a manifold: angular rows on the bodies' relative
/// angular velocity, across the normal (rolling) and about it (spinning), each bounded by
/// its coefficient times the manifold's total normal impulse. Both coefficients are
/// lengths (m), the textbook "coefficient of rolling friction" `b` of `torque = b N`: a
/// solid ball of radius `r` rolling on flat ground slows at `(5/7) (b / r) g`, and a body
/// spinning on a face slows at `b m g / I`. Solved after the normal rows, so the bound is
/// this iteration's normal impulse; accumulated over the step's substeps, not stored
/// across steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RollingRows {
    /// Rolling resistance length (m).
    pub rolling: f32,
    /// Spinning resistance length (m).
    pub spinning: f32,
    /// Effective masses of the two rolling axes (the tangents) and of the normal axis.
    pub mass: [f32; 3],
    /// Accumulated angular impulses along the two tangents and the normal.
    pub impulse: [f32; 3],
}

impl RollingRows {
    /// Whether the manifold has any resistance to roll or spin.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.rolling > 0.0 || self.spinning > 0.0
    }
}

/// A point bounces once it is within this distance of touching (m): a speculative point
/// is first slowed to close its gap exactly, and bounces in the next pass, so this only
/// absorbs the rounding of the separation (a 5 mm slop made a 0.5 m drop at e = 0.3
/// bounce 4 % too high: it turned back up to 5 mm early).
pub(crate) const BOUNCE_SLOP: f32 = 1e-4;

impl ConstraintPoint {
    /// What the point hands back to its contact after the step: the impulses for the next
    /// step's warm start and the approach it carries (see [`ContactImpulse::approach`]).
    #[must_use]
    pub fn stored(&self, restitution: f32, restitution_threshold: f32) -> ContactImpulse {
        ContactImpulse {
            normal: self.normal_impulse,
            tangent1: self.tangent_impulse[0],
            tangent2: self.tangent_impulse[1],
            max_normal: self.max_normal_impulse,
            relative_velocity: self.relative_velocity,
            approach: ContactImpulse::carried_approach(
                self.relative_velocity,
                self.max_normal_impulse > 0.0,
                self.bounced,
                restitution,
                restitution_threshold,
            ),
        }
    }
}

/// A manifold's points moved together: one step along "every point's normal impulse
/// by the same amount" before the points are solved one by one.
///
/// Solving the points of a manifold one after another (Gauss-Seidel) lets the first
/// point take the whole landing: a flat board that lands on its face pushes its corners
/// up one at a time, and with the strong coupling of a long thin box's corners (the
/// diagonal corners of a 2 x 0.5 m face move opposite ways at 70 % of a corner's own
/// response) the one or two passes of a substep leave it spinning at half its landing
/// speed over its length. Stacked boards then fall over from a few centimetres' drop. A
/// uniform change of all the points' impulses is a direction in which the same
/// quadratic is minimised exactly, cheaply (it acts at the points' sum, one row), and it
/// spreads a symmetric landing evenly: the points then only correct what is uneven. Its
/// fixed point is the points' own (the step is the exact line search of the problem the
/// points solve, soft terms included: each point's soft row is Gauss-Seidel on
/// `(K + c diag K) λ = -(v + b)`, `c = impulse_scale / mass_scale`), so it changes how
/// fast the solve converges, not what it converges to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Patch {
    /// `Σ r_a × n` over the points.
    pub rn_a: Vec3A,
    /// `Σ r_b × n`.
    pub rn_b: Vec3A,
    /// `1ᵀ K 1`: the sum of the normal rows' coupling matrix (`n² (m_a⁻¹ + m_b⁻¹) +
    /// (Σ r×n)ᵀ I⁻¹ (Σ r×n)` per side); zero disables the step.
    pub k: f32,
}

/// One point's row in a pass (see `ContactConstraint::solve`).
#[derive(Clone, Copy, Debug, Default)]
struct PointRow {
    /// Current separation.
    s: f32,
    /// Velocity bias.
    bias: f32,
    /// Solved soft (the solve pass, touching) rather than rigid.
    soft: bool,
}

/// A contact manifold as the solver sees it.
#[derive(Clone, Debug)]
pub struct ContactConstraint {
    /// Contact id (to store impulses back).
    pub contact: u32,
    /// Awake index of body A if it is dynamic (`None`: static, kinematic or asleep).
    pub body_a: Option<u32>,
    /// Awake index of body B if it is dynamic.
    pub body_b: Option<u32>,
    /// Velocity (linear, angular) of A when it is not dynamic (kinematic bodies move).
    pub fixed_a: (Vec3A, Vec3A),
    /// Velocity of B when it is not dynamic.
    pub fixed_b: (Vec3A, Vec3A),
    /// Motion (translation, rotation) of A since the start of the step when it is not
    /// dynamic: zero at the start, advanced by [`ContactConstraint::solve`] itself, one
    /// substep at the start of each relax pass, exactly as the position substep moves a
    /// kinematic body at `fixed_a` (see `advance_fixed`).
    pub pose_a: (Vec3A, Quat),
    /// The same for B.
    pub pose_b: (Vec3A, Quat),
    /// World normal from A to B.
    pub normal: Vec3A,
    /// Friction directions.
    pub tangents: [Vec3A; 2],
    /// Mixed friction coefficient.
    pub friction: f32,
    /// Mixed restitution.
    pub restitution: f32,
    /// Target sliding velocity of B relative to A along the two tangents (a conveyor
    /// belt's; zero for plain contacts).
    pub tangent_speed: [f32; 2],
    /// Rolling and spinning resistance (zero for most contacts; see [`RollingRows`]).
    pub rolling: RollingRows,
    /// Soft constraint coefficients.
    pub softness: Softness,
    /// Mass of A ([`BodyMass::FIXED`] unless A is dynamic).
    pub mass_a: BodyMass,
    /// Mass of B.
    pub mass_b: BodyMass,
    /// The points.
    pub points: ArrayVec<ConstraintPoint, 4>,
    /// The uniform step over the points (set by `prepare`; see [`Patch`]).
    pub patch: Patch,
    /// Newtons above which the contact reports a force event (the lower of its bodies'
    /// thresholds); `INFINITY`: none, and the points keep no tallies.
    pub force_threshold: f32,
}

/// Any orthonormal pair perpendicular to unit `n` (Duff et al., "Building an orthonormal
/// basis, revisited", 2017), continuous enough for warm-started friction.
#[must_use]
pub fn tangent_basis(n: Vec3A) -> [Vec3A; 2] {
    let sign = 1.0f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    [
        Vec3A::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x),
        Vec3A::new(b, sign + n.y * n.y * a, -n.y),
    ]
}

#[inline]
fn effective_mass(
    ma: f32,
    ia: &Mat3A,
    ra: Vec3A,
    mb: f32,
    ib: &Mat3A,
    rb: Vec3A,
    dir: Vec3A,
) -> f32 {
    let rna = cross(ra, dir);
    let rnb = cross(rb, dir);
    let k = ma + mb + rna.dot(*ia * rna) + rnb.dot(*ib * rnb);
    if k > 0.0 { 1.0 / k } else { 0.0 }
}

/// Advances the motion since the start of the step of a side the solver does not move,
/// at velocity `(v, w)`, by one substep `h`: the position substep that moves the
/// kinematic body itself, so the separation update sees where the body is, bit for bit
/// (a side at exactly zero velocity stays where it is, bit for bit).
#[inline]
pub(crate) fn advance_fixed(pose: &mut (Vec3A, Quat), (v, w): (Vec3A, Vec3A), h: f32) {
    let mut body = SolverBody {
        v,
        w,
        dp: pose.0,
        dq: pose.1,
    };
    super::integrate::position_substep(&mut body, h);
    *pose = (body.dp, body.dq);
}

impl ContactConstraint {
    /// Computes effective masses and start-of-step relative velocities.
    pub fn prepare(&mut self, a: &SolverBody, b: &SolverBody) {
        let (va, wa) = self.velocity_a(a);
        let (vb, wb) = self.velocity_b(b);
        let n = self.normal;
        let (ma, mb) = (&self.mass_a, &self.mass_b);
        for p in &mut self.points {
            let (ra, rb) = (p.r_a, p.r_b);
            let mass = |dir| {
                effective_mass(
                    ma.inv_mass_along(dir),
                    &ma.inv_inertia,
                    ra,
                    mb.inv_mass_along(dir),
                    &mb.inv_inertia,
                    rb,
                    dir,
                )
            };
            p.normal_mass = mass(n);
            p.tangent_mass = [mass(self.tangents[0]), mass(self.tangents[1])];
            let dv = (vb + cross(wb, p.r_b)) - (va + cross(wa, p.r_a));
            // The lower of the start-of-step approach and one carried from the last step
            // (see `ContactImpulse::approach`).
            p.relative_velocity = dv.dot(n).min(p.relative_velocity);
            p.max_normal_impulse = 0.0;
            p.bounced = false;
            p.base_separation = p.separation - (p.r_b.dot(n) - p.r_a.dot(n));
        }
        self.patch = Patch::default();
        // Bouncing manifolds keep the points' own order: their restitution records each
        // point's approach as that point starts to push (see `solve`).
        if self.points.len() >= 2 && self.restitution == 0.0 {
            let mut rn_a = Vec3A::ZERO;
            let mut rn_b = Vec3A::ZERO;
            for p in &self.points {
                rn_a += cross(p.r_a, n);
                rn_b += cross(p.r_b, n);
            }
            let count = self.points.len() as f32;
            let k = count * count * (ma.inv_mass_along(n) + mb.inv_mass_along(n))
                + rn_a.dot(ma.inv_inertia * rn_a)
                + rn_b.dot(mb.inv_inertia * rn_b);
            if k > 0.0 {
                self.patch = Patch { rn_a, rn_b, k };
            }
        }
        if self.rolling.is_active() {
            let axes = [self.tangents[0], self.tangents[1], n];
            self.rolling.mass = axes.map(|d| {
                let k = d.dot(ma.inv_inertia * d) + d.dot(mb.inv_inertia * d);
                if k > 0.0 { 1.0 / k } else { 0.0 }
            });
            self.rolling.impulse = [0.0; 3];
        }
    }

    /// Applies the angular impulse `l` (B gets `+l`, A `-l`).
    #[inline]
    fn apply_angular(
        (ma, mb): (&BodyMass, &BodyMass),
        a: &mut SolverBody,
        b: &mut SolverBody,
        l: Vec3A,
    ) {
        a.w -= ma.inv_inertia * l;
        b.w += mb.inv_inertia * l;
    }

    /// The rolling and spinning rows (see [`RollingRows`]).
    fn solve_rolling(&mut self, a: &mut SolverBody, b: &mut SolverBody) {
        let total: f32 = self.points.iter().map(|p| p.normal_impulse).sum();
        let axes = [self.tangents[0], self.tangents[1], self.normal];
        let (_, wa) = self.velocity_a(a);
        let (_, wb) = self.velocity_b(b);
        let dw = wb - wa;
        let r = &mut self.rolling;
        let old = r.impulse;
        let mut new = old;
        if r.rolling > 0.0 {
            let max = r.rolling * total;
            new[0] = old[0] - r.mass[0] * dw.dot(axes[0]);
            new[1] = old[1] - r.mass[1] * dw.dot(axes[1]);
            let len2 = new[0] * new[0] + new[1] * new[1];
            if len2 > max * max {
                let s = max / len2.sqrt();
                new[0] *= s;
                new[1] *= s;
            }
        }
        if r.spinning > 0.0 {
            let max = r.spinning * total;
            new[2] = (old[2] - r.mass[2] * dw.dot(axes[2])).clamp(-max, max);
        }
        r.impulse = new;
        let l =
            (new[0] - old[0]) * axes[0] + (new[1] - old[1]) * axes[1] + (new[2] - old[2]) * axes[2];
        Self::apply_angular((&self.mass_a, &self.mass_b), a, b, l);
    }

    #[inline]
    pub(crate) fn velocity_a(&self, a: &SolverBody) -> (Vec3A, Vec3A) {
        if self.body_a.is_some() {
            (a.v, a.w)
        } else {
            self.fixed_a
        }
    }

    #[inline]
    pub(crate) fn velocity_b(&self, b: &SolverBody) -> (Vec3A, Vec3A) {
        if self.body_b.is_some() {
            (b.v, b.w)
        } else {
            self.fixed_b
        }
    }

    #[inline]
    fn apply(
        (ma, mb): (&BodyMass, &BodyMass),
        a: &mut SolverBody,
        b: &mut SolverBody,
        ra: Vec3A,
        rb: Vec3A,
        impulse: Vec3A,
    ) {
        a.v -= ma.linear(impulse);
        a.w -= ma.inv_inertia * cross(ra, impulse);
        b.v += mb.linear(impulse);
        b.w += mb.inv_inertia * cross(rb, impulse);
    }

    /// Normal velocity of B's anchor relative to A's, as `(vb - va)·n + (wb·(r_b × n) -
    /// wa·(r_a × n))`: the bundled solver keeps the cross products per point.
    #[inline]
    fn normal_velocity(
        (va, wa): (Vec3A, Vec3A),
        (vb, wb): (Vec3A, Vec3A),
        n: Vec3A,
        rn_a: Vec3A,
        rn_b: Vec3A,
    ) -> f32 {
        (vb - va).dot(n) + (wb.dot(rn_b) - wa.dot(rn_a))
    }

    /// Applies `delta` along the normal, through the same `r × n` as `normal_velocity`.
    #[inline]
    fn apply_normal(
        (ma, mb): (&BodyMass, &BodyMass),
        a: &mut SolverBody,
        b: &mut SolverBody,
        n: Vec3A,
        (rn_a, rn_b): (Vec3A, Vec3A),
        delta: f32,
    ) {
        a.v -= ma.linear_along(delta, n);
        a.w -= delta * (ma.inv_inertia * rn_a);
        b.v += mb.linear_along(delta, n);
        b.w += delta * (mb.inv_inertia * rn_b);
    }

    /// The uniform step over the points (see [`Patch`]): `Δ = -Σ (v_i + b_i + c_i K_ii
    /// λ_i) / (1ᵀK1 + Σ c_i K_ii)`, truncated where the lowest impulse reaches zero.
    /// Returns `Δ`, which the points add to their impulses.
    fn solve_patch(
        &self,
        a: &mut SolverBody,
        b: &mut SolverBody,
        rows: &[PointRow; 4],
        use_bias: bool,
    ) -> f32 {
        let n = self.normal;
        let soft = self.softness;
        let c_soft = if use_bias && soft.mass_scale > 0.0 {
            soft.impulse_scale / soft.mass_scale
        } else {
            0.0
        };
        let va = if self.body_a.is_none() {
            self.fixed_a
        } else {
            (a.v, a.w)
        };
        let vb = if self.body_b.is_none() {
            self.fixed_b
        } else {
            (b.v, b.w)
        };
        let count = self.points.len() as f32;
        let mut num = Self::normal_velocity(va, vb, n, self.patch.rn_a, self.patch.rn_b)
            + (count - 1.0) * (vb.0 - va.0).dot(n);
        let mut den = self.patch.k;
        let mut lowest = f32::INFINITY;
        for (p, row) in self.points.iter().zip(rows) {
            let c = if row.soft { c_soft } else { 0.0 };
            // `K_ii = 1 / normal_mass`, formed here rather than stored (the bundles do
            // the same, and their size is time); none in the relax pass (`c = 0`).
            let ck = if use_bias {
                let k_ii = if p.normal_mass > 0.0 {
                    1.0 / p.normal_mass
                } else {
                    0.0
                };
                c * k_ii
            } else {
                0.0
            };
            num += row.bias + ck * p.normal_impulse;
            den += ck;
            lowest = lowest.min(p.normal_impulse);
        }
        // Truncated where the first point's impulse reaches zero, so the step stays on
        // the line and can only lower the quadratic (clamping points one by one would
        // leave the line and could add energy).
        let step = (-num / den).max(-lowest);
        let (ma, mb) = (&self.mass_a, &self.mass_b);
        a.v -= ma.linear_along(count * step, n);
        a.w -= step * (ma.inv_inertia * self.patch.rn_a);
        b.v += mb.linear_along(count * step, n);
        b.w += step * (mb.inv_inertia * self.patch.rn_b);
        step
    }

    /// Applies last step's impulses (warm starting).
    ///
    /// The points' impulses are summed first (linear, and each side's moment), so each
    /// side's inverse inertia multiplies once per manifold rather than once per point.
    pub fn warm_start(&mut self, a: &mut SolverBody, b: &mut SolverBody) {
        let mut linear = Vec3A::ZERO;
        let mut moment_a = Vec3A::ZERO;
        let mut moment_b = Vec3A::ZERO;
        if self.force_threshold.is_finite() {
            for p in &mut self.points {
                p.normal_tally += p.normal_impulse;
                p.tangent_tally[0] += p.tangent_impulse[0];
                p.tangent_tally[1] += p.tangent_impulse[1];
            }
        }
        for p in &self.points {
            let impulse = p.normal_impulse * self.normal
                + p.tangent_impulse[0] * self.tangents[0]
                + p.tangent_impulse[1] * self.tangents[1];
            linear += impulse;
            moment_a += cross(p.r_a, impulse);
            moment_b += cross(p.r_b, impulse);
        }
        let (ma, mb) = (&self.mass_a, &self.mass_b);
        a.v -= ma.linear(linear);
        a.w -= ma.inv_inertia * moment_a;
        b.v += mb.linear(linear);
        b.w += mb.inv_inertia * moment_b;
        if self.rolling.is_active() {
            let [i0, i1, i2] = self.rolling.impulse;
            let l = i0 * self.tangents[0] + i1 * self.tangents[1] + i2 * self.normal;
            Self::apply_angular((&self.mass_a, &self.mass_b), a, b, l);
        }
    }

    /// One iteration: friction (relax pass only), then the soft normal constraint. With
    /// `use_bias` false (relax pass) no position correction is applied, only velocity
    /// constraints.
    ///
    /// Restitution happens here, not after the substeps: the first time in a step that a
    /// bouncy point pushes while touching, after approaching at `restitution_threshold` or
    /// faster, it applies at once, and only once, the impulse that turns
    /// its approach speed `u` into a separation speed `e u` (kept out of the accumulated
    /// impulse, which warm starting re-applies every substep). Colours and substeps then
    /// carry the new velocity to the next contact of a chain, which bounces in turn:
    /// sequential pairwise collisions, as Edyn's restitution solver (seed 000) does by
    /// graph traversal. A Newton's cradle passes the striker's speed to the last ball,
    /// and since a single impulse with `e <= 1` along one constraint never adds kinetic
    /// energy, a chain of them never does either. (Applying every bounce at the end of
    /// the step, as Box2D does, lets the soft substeps first spread the striker's
    /// momentum over the chain, and each contact then bounces from a share of it.)
    ///
    /// Between two dynamic bodies the bounce comes in the pass where the point starts to
    /// push, even while a speculative gap is still open, and from the approach speed at
    /// that moment. Closing the gap first (a plastic push that stops the pair exactly
    /// at touching, then the bounce a pass later) hands part of the striker's momentum
    /// to the next ball before the bounce, and the next contact bounces at that share:
    /// the cradle's last ball left at 0.4-0.8 v0 whenever the striker's gap closed
    /// inside a substep. And the speed it bounces from must be the current one: when a
    /// ball hits two others at once, the second contact's start-of-step approach is gone
    /// after the first bounce, and bouncing from it made a billiards break gain a
    /// quarter of its energy. Against a static or kinematic side the point still closes
    /// its gap first and bounces touching, from the lowest approach it recorded (the
    /// rebound heights of `speculative.rs` and `restitution.rs` rest on that).
    ///
    /// A kinematic side moves during the step too: its motion so far enters the current
    /// separation as a dynamic body's does. It is tracked here (`pose_a`, `pose_b`), one
    /// substep at the start of each relax pass, which follows the position substep: the
    /// passes must come in the order the substeps run them, `use_bias` then not.
    #[allow(
        clippy::too_many_arguments,
        reason = "the pass's constants, as the bundled solve takes them in `SolveParams`"
    )]
    pub fn solve(
        &mut self,
        a: &mut SolverBody,
        b: &mut SolverBody,
        h: f32,
        inv_h: f32,
        max_push: f32,
        restitution_threshold: f32,
        use_bias: bool,
    ) {
        let n = self.normal;
        let fa = self.body_a.is_none();
        let fb = self.body_b.is_none();
        let (fixed_a, fixed_b) = (self.fixed_a, self.fixed_b);
        if !use_bias {
            let still = (Vec3A::ZERO, Vec3A::ZERO);
            if fa && fixed_a != still {
                advance_fixed(&mut self.pose_a, fixed_a, h);
            }
            if fb && fixed_b != still {
                advance_fixed(&mut self.pose_b, fixed_b, h);
            }
        }
        let vel = |a: &SolverBody, b: &SolverBody, ra: Vec3A, rb: Vec3A| {
            let (va, wa) = if fa { fixed_a } else { (a.v, a.w) };
            let (vb, wb) = if fb { fixed_b } else { (b.v, b.w) };
            (vb + cross(wb, rb)) - (va + cross(wa, ra))
        };

        // Friction first, so the normal constraint gets the last word on penetration, and
        // in the relax pass only, as Box2D v3 does: the solve pass's bias acts along the
        // normal, and friction solved once per substep, on the unbiased velocities, still
        // holds boxes on slopes and piles without creep (the friction and pile tests) at
        // half the friction rows' cost (8 % of pyramid_big's step at 4 substeps).
        let friction_points = if use_bias { 0 } else { self.points.len() };
        for p in &mut self.points[..friction_points] {
            let dv = vel(a, b, p.r_a, p.r_b);
            let max = self.friction * p.normal_impulse;
            // Slip relative to the target sliding velocity (exactly `dv · t` when it is
            // zero: subtracting 0.0 changes no bit).
            let vt = [
                dv.dot(self.tangents[0]) - self.tangent_speed[0],
                dv.dot(self.tangents[1]) - self.tangent_speed[1],
            ];
            let old = p.tangent_impulse;
            let mut new = [
                old[0] - p.tangent_mass[0] * vt[0],
                old[1] - p.tangent_mass[1] * vt[1],
            ];
            let len2 = new[0] * new[0] + new[1] * new[1];
            if len2 > max * max {
                // Sliding: Coulomb friction opposes the slip velocity with the full cone
                // bound (when the slip is clear, see `SLIDING_SPEED`). (Scaling the unclamped vector instead would tilt it when the two
                // tangent masses differ, leaving friction a few percent short and adding a
                // spurious torque.)
                let slip = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
                new = if slip > SLIDING_SPEED {
                    [-max * vt[0] / slip, -max * vt[1] / slip]
                } else {
                    let s = max / len2.sqrt();
                    [new[0] * s, new[1] * s]
                };
            }
            p.tangent_impulse = new;
            let impulse =
                (new[0] - old[0]) * self.tangents[0] + (new[1] - old[1]) * self.tangents[1];
            Self::apply((&self.mass_a, &self.mass_b), a, b, p.r_a, p.r_b, impulse);
        }

        // Current separation from the bodies' motion during this step (see
        // `base_separation`); a fixed side's is its own (zero unless it is kinematic).
        let (dp_a, dq_a) = if fa { self.pose_a } else { (a.dp, a.dq) };
        let (dp_b, dq_b) = if fb { self.pose_b } else { (b.dp, b.dq) };
        let shift = (dp_b - dp_a).dot(n);
        let n_a = rotate(dq_a.conjugate(), n);
        let n_b = rotate(dq_b.conjugate(), n);
        // Each point's row, once for the patch step and the points: its separation, its
        // velocity bias, and whether it is solved soft. A speculative point closes its gap
        // in one substep, no more (rigid); a touching one pushes out softly in the solve
        // pass and is rigid, without bias, in the relax pass.
        let mut rows = [PointRow::default(); 4];
        for (row, p) in rows.iter_mut().zip(&self.points) {
            let s = shift + (p.r_b.dot(n_b) - p.r_a.dot(n_a)) + p.base_separation;
            *row = if s > 0.0 {
                PointRow {
                    s,
                    bias: s * inv_h,
                    soft: false,
                }
            } else if use_bias {
                let bias = (self.softness.bias_rate * s).max(-max_push);
                PointRow {
                    s,
                    bias,
                    soft: true,
                }
            } else {
                PointRow {
                    s,
                    bias: 0.0,
                    soft: false,
                }
            };
        }
        let step = if self.patch.k > 0.0 {
            Some(self.solve_patch(a, b, &rows, use_bias))
        } else {
            None
        };
        for (p, row) in self.points.iter_mut().zip(&rows) {
            // The patch step's share, already in the velocities.
            let old = match step {
                Some(step) => p.normal_impulse + step,
                None => p.normal_impulse,
            };
            let (s, bias) = (row.s, row.bias);
            let (mass_scale, impulse_scale) = if row.soft {
                (self.softness.mass_scale, self.softness.impulse_scale)
            } else {
                (1.0, 0.0)
            };
            let (rn_a, rn_b) = (cross(p.r_a, n), cross(p.r_b, n));
            let va = if fa { fixed_a } else { (a.v, a.w) };
            let vb = if fb { fixed_b } else { (b.v, b.w) };
            let vn = Self::normal_velocity(va, vb, n, rn_a, rn_b);
            let lambda = -p.normal_mass * mass_scale * (vn + bias) - impulse_scale * old;
            let new = (old + lambda).max(0.0);
            if new > 0.0 {
                // The approach speed at the moment the point starts pushing (for
                // restitution): the start-of-step value misses the gravity gained during
                // the step before the hit. Recorded in the relax pass too: a speculative
                // point often closes its gap there, and then the solve pass of the next
                // substep only sees the slowed body.
                p.relative_velocity = p.relative_velocity.min(vn);
            }
            // Two dynamic bodies bounce in the pass they start to push, gap or not, from
            // their approach at that moment (see `solve`).
            let both = !fa && !fb;
            let rv = if both { vn } else { p.relative_velocity };
            let bounce = self.restitution != 0.0
                && new > 0.0
                && rv <= -restitution_threshold
                && !p.bounced
                && (s < BOUNCE_SLOP || both);
            let (new, delta) = if bounce {
                p.bounced = true;
                let kick = (p.normal_mass * (-(self.restitution * rv) - vn)).max(0.0);
                p.max_normal_impulse = p.max_normal_impulse.max(kick);
                // Outside the accumulated impulse: tallied here (a point bounces once a
                // step). Without a tally nobody reads it.
                p.normal_tally += kick;
                (old, kick)
            } else {
                (new, new - old)
            };
            p.normal_impulse = new;
            p.max_normal_impulse = p.max_normal_impulse.max(new);
            Self::apply_normal((&self.mass_a, &self.mass_b), a, b, n, (rn_a, rn_b), delta);
        }
        if self.rolling.is_active() {
            self.solve_rolling(a, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tangent_basis_is_orthonormal() {
        for n in [
            Vec3A::X,
            Vec3A::Y,
            -Vec3A::Z,
            Vec3A::new(1.0, 2.0, -3.0).normalize(),
        ] {
            let [t1, t2] = tangent_basis(n);
            assert!(t1.dot(n).abs() < 1e-6 && t2.dot(n).abs() < 1e-6 && t1.dot(t2).abs() < 1e-6);
            assert!((t1.length() - 1.0).abs() < 1e-5 && (t2.length() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn soft_constraint_limits() {
        // hertz 0 is a rigid constraint; a stiff spring approaches rigid.
        let rigid = Softness::new(0.0, 1.0, 1.0 / 240.0);
        assert_eq!(rigid.mass_scale, 1.0);
        let s = Softness::new(30.0, 10.0, 1.0 / 240.0);
        assert!(s.mass_scale > 0.0 && s.mass_scale < 1.0);
        assert!(
            (s.mass_scale + s.impulse_scale - 1.0).abs() < 1e-6,
            "a2*a3 + a3 = 1"
        );
    }
}
