//! Ball joints of one colour, [`LANES`] at a time: the point block of `joint.rs` on SIMD
//! lanes, and the lane helpers the other joint bundles share (`angular_bundle.rs`).
//!
//! A ball joint is the point block alone, the same few operations for every joint, so a
//! colour's ball joints are bundled as its contacts are (`contact_bundle.rs`). Each lane
//! does exactly what `JointConstraint::run` does for a ball joint, operation for
//! operation (the wide types reproduce glam bit for bit), so bundling changes speed, not
//! results: the unit test below compares them bit for bit.

use joule_jobs::DisjointChunk;

use crate::joint::JointImpulses;
use crate::math::{Mat3A, Quat, Vec3A};

use super::contact::{BodyMass, SolverBody};
#[cfg(test)]
use super::joint::JointConstraint;
use super::joint::{JointParams, JointStart, Pass, carry_weights, point_block_inverse, point_mass};
use super::wide::{FloatW, LANES, Mat3W, QuatW, Vec3W};

/// No joint in this lane, or no moving body on this side.
pub(crate) const NONE: u32 = u32::MAX;

/// One side of a bundle's lanes: the bodies' velocities and poses.
pub(super) struct Side {
    pub v: Vec3W,
    pub w: Vec3W,
    pub dp: Vec3W,
    pub dq: QuatW,
}

/// Gathers one side of a bundle's lanes: the bodies at plan positions `slots`, or for
/// [`NONE`] a side the solver does not move, with velocity `fixed`.
fn gather(
    slots: &[u32; LANES],
    fixed: &[(Vec3A, Vec3A); LANES],
    chunk: &mut DisjointChunk<'_, SolverBody>,
) -> Side {
    let mut v = [Vec3A::ZERO; LANES];
    let mut w = [Vec3A::ZERO; LANES];
    let mut dp = [Vec3A::ZERO; LANES];
    let mut dq = [Quat::IDENTITY; LANES];
    for (i, &slot) in slots.iter().enumerate() {
        if slot == NONE {
            (v[i], w[i]) = fixed[i];
        } else {
            let b = chunk.get_mut(slot as usize);
            (v[i], w[i], dp[i], dq[i]) = (b.v, b.w, b.dp, b.dq);
        }
    }
    Side {
        v: Vec3W::gather(v),
        w: Vec3W::gather(w),
        dp: Vec3W::gather(dp),
        dq: QuatW::gather(dq),
    }
}

/// Writes one side's velocities back to the bodies the solver moves.
fn scatter(slots: &[u32; LANES], side: &Side, chunk: &mut DisjointChunk<'_, SolverBody>) {
    let (v, w) = (side.v.scatter(), side.w.scatter());
    for (i, &slot) in slots.iter().enumerate() {
        if slot != NONE {
            let b = chunk.get_mut(slot as usize);
            b.v = v[i];
            b.w = w[i];
        }
    }
}

/// Which joint and which two bodies each lane of a joint bundle holds.
#[derive(Clone, Debug)]
pub(super) struct LaneBodies {
    /// Each lane's joint slot, or [`NONE`].
    pub joint: [u32; LANES],
    /// Plan positions of each lane's bodies, or [`NONE`] for a side the solver does not
    /// move.
    slot_a: [u32; LANES],
    slot_b: [u32; LANES],
    /// Velocities of the sides the solver does not move (a kinematic body's).
    fixed_a: [(Vec3A, Vec3A); LANES],
    fixed_b: [(Vec3A, Vec3A); LANES],
}

impl Default for LaneBodies {
    fn default() -> Self {
        Self {
            joint: [NONE; LANES],
            slot_a: [NONE; LANES],
            slot_b: [NONE; LANES],
            fixed_a: [(Vec3A::ZERO, Vec3A::ZERO); LANES],
            fixed_b: [(Vec3A::ZERO, Vec3A::ZERO); LANES],
        }
    }
}

impl LaneBodies {
    /// Fills lane `i`.
    pub(super) fn set_lane(&mut self, i: usize, c: &BallLane) {
        self.joint[i] = c.joint;
        self.slot_a[i] = c.slot_a.unwrap_or(NONE);
        self.slot_b[i] = c.slot_b.unwrap_or(NONE);
        self.fixed_a[i] = c.fixed_a;
        self.fixed_b[i] = c.fixed_b;
    }

    /// The lanes that hold a joint.
    pub(super) fn filled(&self) -> impl Iterator<Item = usize> + '_ {
        (0..LANES).filter(|&i| self.joint[i] != NONE)
    }

    /// Both sides' bodies, lane by lane.
    pub(super) fn gather(&self, chunk: &mut DisjointChunk<'_, SolverBody>) -> (Side, Side) {
        (
            gather(&self.slot_a, &self.fixed_a, chunk),
            gather(&self.slot_b, &self.fixed_b, chunk),
        )
    }

    /// Writes both sides' velocities back.
    pub(super) fn scatter(&self, a: &Side, b: &Side, chunk: &mut DisjointChunk<'_, SolverBody>) {
        scatter(&self.slot_a, a, chunk);
        scatter(&self.slot_b, b, chunk);
    }
}

/// One ball joint (or another joint's point block) as a lane takes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BallLane {
    pub joint: u32,
    pub slot_a: Option<u32>,
    pub slot_b: Option<u32>,
    pub fixed_a: (Vec3A, Vec3A),
    pub fixed_b: (Vec3A, Vec3A),
    pub r_a0: Vec3A,
    pub r_b0: Vec3A,
    pub d0: Vec3A,
    pub point_mass: Mat3A,
    pub mass_a: BodyMass,
    pub mass_b: BodyMass,
    pub acc: Vec3A,
    pub weights: (f32, f32),
}

impl BallLane {
    /// A lane from the joint's start of step, with the point block's effective mass as
    /// `JointConstraint::new` forms it.
    pub(crate) fn new(s: &JointStart, slot_a: Option<u32>, slot_b: Option<u32>) -> Self {
        let (r_a0, r_b0) = (s.anchor_a - s.center_a, s.anchor_b - s.center_b);
        Self {
            joint: s.joint,
            slot_a,
            slot_b,
            fixed_a: (s.fixed_a.v, s.fixed_a.w),
            fixed_b: (s.fixed_b.v, s.fixed_b.w),
            r_a0,
            r_b0,
            d0: s.anchor_b - s.anchor_a,
            point_mass: point_mass(&s.mass_a, &s.mass_b, r_a0, r_b0),
            mass_a: s.mass_a,
            mass_b: s.mass_b,
            acc: s.impulses.point,
            weights: carry_weights(&s.mass_a, &s.mass_b, r_a0, r_b0),
        }
    }
}

/// The point block of a bundle's lanes (the anchors coincide), and the masses of its two
/// sides.
#[derive(Clone, Debug)]
pub(super) struct PointLanes {
    /// Anchors relative to the centres of mass at the start of the step, and anchor B
    /// minus anchor A then.
    pub r_a0: Vec3W,
    pub r_b0: Vec3W,
    d0: Vec3W,
    /// Inverse effective mass of the point block at the current arms (`JointConstraint`'s).
    point_mass: Mat3W,
    inv_mass_a: FloatW,
    inv_mass_b: FloatW,
    pub inv_inertia_a: Mat3W,
    pub inv_inertia_b: Mat3W,
    /// Accumulated impulse.
    pub acc: Vec3W,
    /// The accumulated impulse in A's and B's frames after the solve pass, and the sides'
    /// weights in carrying it to the relax pass's arms.
    acc_in_a: Vec3W,
    acc_in_b: Vec3W,
    weight_a: FloatW,
    weight_b: FloatW,
}

impl Default for PointLanes {
    fn default() -> Self {
        Self {
            r_a0: Vec3W::ZERO,
            r_b0: Vec3W::ZERO,
            d0: Vec3W::ZERO,
            point_mass: Mat3W::default(),
            inv_mass_a: FloatW::ZERO,
            inv_mass_b: FloatW::ZERO,
            inv_inertia_a: Mat3W::default(),
            inv_inertia_b: Mat3W::default(),
            acc: Vec3W::ZERO,
            acc_in_a: Vec3W::ZERO,
            acc_in_b: Vec3W::ZERO,
            weight_a: FloatW::ZERO,
            weight_b: FloatW::ZERO,
        }
    }
}

impl PointLanes {
    /// Fills lane `i`.
    pub(super) fn set_lane(&mut self, i: usize, c: &BallLane) {
        self.r_a0.set_lane(i, c.r_a0);
        self.r_b0.set_lane(i, c.r_b0);
        self.d0.set_lane(i, c.d0);
        self.point_mass.set_lane(i, &c.point_mass);
        self.inv_mass_a.0[i] = c.mass_a.inv_mass;
        self.inv_mass_b.0[i] = c.mass_b.inv_mass;
        self.inv_inertia_a.set_lane(i, &c.mass_a.inv_inertia);
        self.inv_inertia_b.set_lane(i, &c.mass_b.inv_inertia);
        self.acc.set_lane(i, c.acc);
        self.acc_in_a.set_lane(i, Vec3A::ZERO);
        self.acc_in_b.set_lane(i, Vec3A::ZERO);
        (self.weight_a.0[i], self.weight_b.0[i]) = c.weights;
    }

    /// The point block's inverse effective mass at the arms `r_a`, `r_b`
    /// (`joint::point_mass`, lane by lane).
    fn form_mass(&mut self, r_a: Vec3W, r_b: Vec3W) {
        let cols = |m: &Mat3W| m.cols.map(|c| [c.x, c.y, c.z]);
        let [xx, xy, xz, yy, yz, zz] = point_block_inverse(
            self.inv_mass_a + self.inv_mass_b,
            [r_a.x, r_a.y, r_a.z],
            &cols(&self.inv_inertia_a),
            [r_b.x, r_b.y, r_b.z],
            &cols(&self.inv_inertia_b),
        );
        self.point_mass.cols = [
            Vec3W {
                x: xx,
                y: xy,
                z: xz,
            },
            Vec3W {
                x: xy,
                y: yy,
                z: yz,
            },
            Vec3W {
                x: xz,
                y: yz,
                z: zz,
            },
        ];
    }

    /// One pass of the point block (`Rows::point`) at the arms `r_a`, `r_b`; returns the
    /// impulse it applied to B (to A negated).
    pub(super) fn run(
        &mut self,
        a: &mut Side,
        b: &mut Side,
        (r_a, r_b): (Vec3W, Vec3W),
        pass: Pass,
        k: &JointParams,
    ) -> Vec3W {
        let imp = if pass == Pass::WarmStart {
            self.acc
        } else {
            if pass == Pass::Solve(false) {
                let (in_a, in_b) = (a.dq.rotate(self.acc_in_a), b.dq.rotate(self.acc_in_b));
                self.acc = in_a.scale(self.weight_a) + in_b.scale(self.weight_b);
                self.form_mass(r_a, r_b);
            }
            let (bias_rate, ms, is) = k.rigid(pass);
            let d = self.d0 + (b.dp - a.dp) + (r_b - self.r_b0) - (r_a - self.r_a0);
            let cdot = b.v + b.w.cross(r_b) - a.v - a.w.cross(r_a);
            let mut x = cdot + d.scale(FloatW::splat(bias_rate));
            if pass == Pass::Solve(true) {
                // `joint::arm_drift`, lane by lane.
                let half_h = FloatW::splat(0.5 * k.h);
                let drift = arm_drift(b.w, r_b, half_h) - arm_drift(a.w, r_a, half_h);
                x = x + drift.scale(FloatW::splat(k.inv_h));
            }
            let imp = self.point_mass.mul(x).scale(FloatW::splat(-ms))
                - self.acc.scale(FloatW::splat(is));
            self.acc = self.acc + imp;
            if pass == Pass::Solve(true) {
                self.acc_in_a = a.dq.conjugate().rotate(self.acc);
                self.acc_in_b = b.dq.conjugate().rotate(self.acc);
            }
            imp
        };
        // `Rows::apply_linear`.
        a.v = a.v - imp.scale(self.inv_mass_a);
        a.w = a.w - self.inv_inertia_a.mul(r_a.cross(imp));
        b.v = b.v + imp.scale(self.inv_mass_b);
        b.w = b.w + self.inv_inertia_b.mul(r_b.cross(imp));
        imp
    }
}

/// `joint::arm_drift` in every lane, operation for operation alike.
#[inline(always)]
fn arm_drift(w: Vec3W, r: Vec3W, half_h: FloatW) -> Vec3W {
    let u = w.scale(half_h);
    let ur = u.cross(r);
    let uu = u.dot(u);
    let s = FloatW::splat(1.0).div(FloatW::splat(1.0) + uu);
    (u.cross(ur) - ur.scale(uu)).scale(FloatW::splat(2.0) * s)
}

/// Up to [`LANES`] ball joints of one colour.
#[derive(Clone, Debug)]
pub(crate) struct BallBundle {
    lanes: LaneBodies,
    point: PointLanes,
    /// The impulse of the current substep.
    pub sub: Vec3W,
}

impl Default for BallBundle {
    fn default() -> Self {
        Self {
            lanes: LaneBodies::default(),
            point: PointLanes::default(),
            sub: Vec3W::ZERO,
        }
    }
}

impl BallBundle {
    /// Fills lane `i`.
    pub(crate) fn set_lane(&mut self, i: usize, c: &BallLane) {
        self.lanes.set_lane(i, c);
        self.point.set_lane(i, c);
        self.sub.set_lane(i, Vec3A::ZERO);
    }

    /// The joints' impulses to store: (slot, impulses, linear impulse of the last
    /// substep) per filled lane.
    pub(crate) fn results(&self) -> impl Iterator<Item = (u32, JointImpulses, Vec3A)> + '_ {
        self.lanes.filled().map(|i| {
            (
                self.lanes.joint[i],
                JointImpulses {
                    point: self.point.acc.lane(i),
                    ..JointImpulses::default()
                },
                self.sub.lane(i),
            )
        })
    }

    /// Runs one pass of every lane's joint on its bodies in `chunk`.
    #[inline(always)]
    pub(crate) fn run(
        &mut self,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        pass: Pass,
        k: &JointParams,
    ) {
        let (mut a, mut b) = self.lanes.gather(chunk);
        let r_a = a.dq.rotate(self.point.r_a0);
        let r_b = b.dq.rotate(self.point.r_b0);
        if pass == Pass::WarmStart {
            self.sub = Vec3W::ZERO;
        }
        let imp = self.point.run(&mut a, &mut b, (r_a, r_b), pass, k);
        self.sub = self.sub + imp;
        self.lanes.scatter(&a, &b, chunk);
    }
}

/// What the bundle tests share: the passes they run and the scalar joints they compare
/// with.
#[cfg(test)]
pub(super) mod test_support {
    use joule_jobs::{DisjointChunk, DisjointPlan};

    use super::super::contact::{Softness, SolverBody};
    use super::super::joint::{JointConstraint, JointParams, Pass};
    use crate::math::Vec3A;

    /// Two substeps' passes, the second warm started from the first.
    pub(in crate::dynamics::solver) const PASSES: [Pass; 5] = [
        Pass::WarmStart,
        Pass::Solve(true),
        Pass::Solve(false),
        Pass::WarmStart,
        Pass::Solve(true),
    ];

    /// One pass of the scalar joints; each has a moving side B after its side A.
    pub(in crate::dynamics::solver) fn run_scalar(
        scalar: &mut [JointConstraint],
        bodies: &mut [SolverBody],
        pass: Pass,
        k: &JointParams,
    ) {
        for c in scalar {
            let mut a = c.fixed_a;
            let b_slot = c.slot_b.expect("side B moves") as usize;
            match c.slot_a {
                Some(sa) => {
                    let (lo, hi) = bodies.split_at_mut(b_slot);
                    c.run(&mut lo[sa as usize], &mut hi[0], pass, k);
                }
                None => c.run(&mut a, &mut bodies[b_slot], pass, k),
            }
        }
    }

    /// Moves the bodies as the position update between the solve and relax passes does
    /// (by ten substeps, so the arms turn visibly), after `pass` if it is the solve pass.
    pub(in crate::dynamics::solver) fn move_after(pass: Pass, bodies: &mut [SolverBody]) {
        if pass == Pass::Solve(true) {
            let h = 10.0 * params().h;
            for b in bodies {
                b.dp += h * b.v;
                let w = crate::math::Quat::from_xyzw(b.w.x, b.w.y, b.w.z, 0.0);
                b.dq = (b.dq + (w * b.dq) * (0.5 * h)).normalize();
            }
        }
    }

    /// A substep of a 60 Hz step with 6 substeps, joints at 90 Hz.
    pub(in crate::dynamics::solver) fn params() -> JointParams {
        let h = 1.0 / 360.0;
        JointParams {
            h,
            inv_h: 1.0 / h,
            softness: Softness::new(90.0, 1.0, h),
        }
    }

    /// A smooth, irregular test value for lane `i` and seed `s`.
    pub(in crate::dynamics::solver) fn wave(i: usize, s: f32) -> f32 {
        (i as f32 * 0.37 + s).sin()
    }

    /// A vector of [`wave`]s.
    pub(in crate::dynamics::solver) fn wave3(i: usize, s: f32) -> Vec3A {
        Vec3A::new(wave(i, s), wave(i, s + 1.1), wave(i, s + 2.3))
    }

    /// Runs `f` on all of `bodies` as one chunk, plan position = index.
    pub(in crate::dynamics::solver) fn with_chunk(
        bodies: &mut [SolverBody],
        f: impl FnOnce(&mut DisjointChunk<'_, SolverBody>),
    ) {
        let n = bodies.len();
        let mut plan = DisjointPlan::new();
        plan.set(n, 0..n).expect("distinct indices");
        let bounds = [0, n];
        let mut chunks = plan.chunks(bodies, &bounds).expect("one chunk");
        f(&mut chunks.next().expect("one chunk"));
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{PASSES, move_after, params, run_scalar, wave3 as vec, with_chunk};
    use super::*;
    use crate::joint::JointKind;

    /// Every lane must do bit for bit what the scalar joint does, in every pass.
    #[test]
    fn lanes_match_the_scalar_ball_joint_bit_for_bit() {
        let k = params();
        // Lane i joins bodies 2i and 2i + 1; lanes 2 and 5 hang from a fixed side (one
        // of them moving, as a kinematic body does), lane 7 is empty.
        let mut bodies: Vec<SolverBody> = (0..16)
            .map(|i| SolverBody {
                v: vec(i, 0.0),
                w: vec(i, 4.0),
                dp: vec(i, 7.0) * 0.01,
                dq: Quat::from_axis_angle(vec(i, 9.0).normalize().into(), 0.05 * i as f32),
            })
            .collect();
        let mut lanes = Vec::new();
        let mut scalar: Vec<JointConstraint> = (0..7)
            .map(|i| {
                let mass = |b: usize| BodyMass {
                    inv_mass: 0.5 + 0.1 * b as f32,
                    inv_inertia: Mat3A::from_diagonal(glam::Vec3::new(2.0, 3.0, 1.5 + b as f32))
                        + Mat3A::from_cols(Vec3A::ZERO, Vec3A::X * 0.1, Vec3A::Y * 0.1),
                    linear_axes: Vec3A::ONE,
                };
                let fixed_a = i == 2 || i == 5;
                let mut fixed = SolverBody::FIXED;
                if i == 5 {
                    fixed.v = Vec3A::new(0.3, 0.0, -0.2);
                    fixed.w = Vec3A::new(0.0, 1.0, 0.0);
                }
                let start = JointStart {
                    joint: 10 + i as u32,
                    kind: JointKind::Ball,
                    fixed_a: fixed,
                    fixed_b: SolverBody::FIXED,
                    mass_a: if fixed_a {
                        BodyMass::FIXED
                    } else {
                        mass(2 * i)
                    },
                    mass_b: mass(2 * i + 1),
                    anchor_a: vec(i, 11.0),
                    anchor_b: vec(i, 11.0) + vec(i, 13.0) * 0.01,
                    center_a: vec(i, 15.0),
                    center_b: vec(i, 17.0),
                    q_a: Quat::IDENTITY,
                    q_b: Quat::IDENTITY,
                    impulses: JointImpulses {
                        point: vec(i, 19.0),
                        ..JointImpulses::default()
                    },
                    drive: None,
                };
                let (slot_a, slot_b) = ((!fixed_a).then_some(2 * i as u32), Some(2 * i as u32 + 1));
                lanes.push(BallLane::new(&start, slot_a, slot_b));
                let mut c = JointConstraint::new(start);
                (c.slot_a, c.slot_b) = (slot_a, slot_b);
                c
            })
            .collect();
        let mut bundle = BallBundle::default();
        for (i, lane) in lanes.iter().enumerate() {
            bundle.set_lane(i, lane);
        }
        let mut wide_bodies = bodies.clone();
        for pass in PASSES {
            run_scalar(&mut scalar, &mut bodies, pass, &k);
            with_chunk(&mut wide_bodies, |chunk| bundle.run(chunk, pass, &k));
            for (s, w) in bodies.iter().zip(&wide_bodies) {
                assert_eq!((s.v, s.w), (w.v, w.w), "{pass:?}");
            }
            move_after(pass, &mut bodies);
            move_after(pass, &mut wide_bodies);
            let results: Vec<_> = bundle.results().collect();
            assert_eq!(results.len(), 7);
            for (c, (joint, imp, sub)) in scalar.iter().zip(results) {
                assert_eq!(
                    (c.joint, c.acc.point, c.sub_linear),
                    (joint, imp.point, sub)
                );
            }
        }
    }
}
