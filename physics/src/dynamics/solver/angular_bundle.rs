//! Swing-twist joints and hinges with at most a limit, [`LANES`] of one kind at a time:
//! the rows of `joint.rs` for these two kinds on SIMD lanes (a ragdoll's joints).
//!
//! Each lane runs the rows of [`JointConstraint::run`] for its joint in the same order
//! (swing-twist: twist limits, swing cone, point; hinge: angle limit, the two alignment
//! rows, point), with the same formulas and modes. The wide quaternion product and
//! normalisation sum in a different order than glam's, so a lane agrees with the scalar
//! joint to rounding, not bit for bit (the unit test below bounds the difference); a
//! joint always takes the same path, so results stay identical at any thread count.
//!
//! [`JointConstraint::run`]: super::joint::JointConstraint

use joule_jobs::DisjointChunk;

use crate::joint::{JointImpulses, JointKind};
use crate::math::{Quat, Vec3A};

use super::ball_bundle::{BallLane, LaneBodies, PointLanes, Side};
use super::contact::SolverBody;
use super::joint::{JointParams, JointStart, Pass};
use super::wide::{FloatW, LANES, MaskW, QuatW, Vec3W};

/// Which kind of joint a bundle holds (all its lanes are one kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AngularKind {
    SwingTwist,
    Hinge,
}

impl AngularKind {
    /// The bundled kind of a joint, if it has one: every swing-twist joint, and hinges
    /// whose drive is a limit or nothing (springs and motors stay scalar).
    pub(crate) fn of(kind: &JointKind) -> Option<AngularKind> {
        match kind {
            JointKind::SwingTwist { .. } => Some(AngularKind::SwingTwist),
            JointKind::Hinge(d) if d.spring.is_none() && d.motor.is_none() => {
                Some(AngularKind::Hinge)
            }
            _ => None,
        }
    }
}

/// Up to [`LANES`] joints of one [`AngularKind`] of one colour.
#[derive(Clone, Debug)]
pub(crate) struct AngularBundle {
    kind: AngularKind,
    lanes: LaneBodies,
    /// The frames' world orientations at the start of the step.
    q_a0: QuatW,
    q_b0: QuatW,
    /// The point block, and the two sides' masses.
    point: PointLanes,
    /// Swing-twist: swing half angle, twist lower, twist upper. Hinge: lower, upper.
    limits: [FloatW; 3],
    /// Hinge lanes with a limit.
    limited: MaskW,
    /// Accumulated impulses of the rows by their slot in `joint.rs` (swing-twist: 0
    /// cone, 1 and 2 twist; hinge: 0 and 1 alignment, 2 and 3 limit).
    acc: [FloatW; 4],
    /// Impulses on B in the current substep.
    sub_linear: Vec3W,
    sub_angular: Vec3W,
}

impl AngularBundle {
    /// An empty bundle of `kind`.
    pub(crate) fn new(kind: AngularKind) -> Self {
        Self {
            kind,
            lanes: LaneBodies::default(),
            q_a0: QuatW::gather([Quat::IDENTITY; LANES]),
            q_b0: QuatW::gather([Quat::IDENTITY; LANES]),
            point: PointLanes::default(),
            limits: [FloatW::ZERO; 3],
            limited: MaskW([0; LANES]),
            acc: [FloatW::ZERO; 4],
            sub_linear: Vec3W::ZERO,
            sub_angular: Vec3W::ZERO,
        }
    }

    /// Fills lane `i` from a joint's start of step (its kind must be the bundle's).
    pub(crate) fn set_lane(
        &mut self,
        i: usize,
        s: &JointStart,
        slot_a: Option<u32>,
        slot_b: Option<u32>,
    ) {
        let lane = BallLane::new(s, slot_a, slot_b);
        self.lanes.set_lane(i, &lane);
        self.point.set_lane(i, &lane);
        for (q, v) in [(&mut self.q_a0, s.q_a), (&mut self.q_b0, s.q_b)] {
            q.v.set_lane(i, Vec3A::new(v.x, v.y, v.z));
            q.w.0[i] = v.w;
        }
        match s.kind {
            JointKind::SwingTwist {
                swing_half_angle,
                twist,
            } => {
                debug_assert_eq!(self.kind, AngularKind::SwingTwist);
                self.limits[0].0[i] = swing_half_angle;
                self.limits[1].0[i] = twist.lower;
                self.limits[2].0[i] = twist.upper;
            }
            JointKind::Hinge(d) => {
                debug_assert_eq!(self.kind, AngularKind::Hinge);
                if let Some(l) = d.limit {
                    self.limited.0[i] = u32::MAX;
                    self.limits[0].0[i] = l.lower;
                    self.limits[1].0[i] = l.upper;
                }
            }
            _ => unreachable!("only swing-twist joints and hinges are bundled"),
        }
        for (k, acc) in self.acc.iter_mut().enumerate() {
            acc.0[i] = s.impulses.rows[k];
        }
    }

    /// (slot, impulses, linear and angular impulse on B in the last substep) per filled
    /// lane.
    pub(crate) fn results(&self) -> impl Iterator<Item = (u32, JointImpulses, Vec3A, Vec3A)> + '_ {
        self.lanes.filled().map(|i| {
            let mut imp = JointImpulses {
                point: self.point.acc.lane(i),
                ..JointImpulses::default()
            };
            for (k, acc) in self.acc.iter().enumerate() {
                imp.rows[k] = acc.0[i];
            }
            (
                self.lanes.joint[i],
                imp,
                self.sub_linear.lane(i),
                self.sub_angular.lane(i),
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
        if pass == Pass::WarmStart {
            self.sub_linear = Vec3W::ZERO;
            self.sub_angular = Vec3W::ZERO;
        }
        let r_a = a.dq.rotate(self.point.r_a0);
        let r_b = b.dq.rotate(self.point.r_b0);
        let q_a = a.dq.mul(self.q_a0).normalize();
        let q_b = b.dq.mul(self.q_b0).normalize();
        let axis = |q: QuatW, x: f32, y: f32, z: f32| {
            q.rotate(Vec3W {
                x: FloatW::splat(x),
                y: FloatW::splat(y),
                z: FloatW::splat(z),
            })
        };
        let (x_a, x_b) = (axis(q_a, 1.0, 0.0, 0.0), axis(q_b, 1.0, 0.0, 0.0));
        let mut rows = Rows {
            c: self,
            a: &mut a,
            b: &mut b,
            pass,
            k,
        };
        match rows.c.kind {
            AngularKind::SwingTwist => {
                // The twist: of q_a⁻¹ q_b about X, on the shorter way round.
                let rel = q_a.conjugate().mul(q_b);
                let flip = FloatW::ZERO.gt(rel.w);
                let (rx, rw) = (
                    FloatW::select(flip, rel.v.x.neg(), rel.v.x),
                    FloatW::select(flip, rel.w.neg(), rel.w),
                );
                let angle = FloatW::splat(2.0) * rx.atan2(rw);
                // The twist axis: halfway between the frames' X axes.
                let sum = x_a + x_b;
                let len = sum.dot(sum).sqrt();
                let ok = len.gt(FloatW::ZERO);
                let u = Vec3W::select(ok, sum.scale(FloatW::splat(1.0).div(len)), x_a);
                let [half, lower, upper] = rows.c.limits;
                rows.angular(1, MaskW::ALL, u, angle - lower, true);
                rows.angular(2, MaskW::ALL, neg(u), upper - angle, true);
                // The swing cone.
                let n = x_a.cross(x_b);
                let len = n.dot(n).sqrt();
                let open = len.gt(FloatW::splat(1e-6)).or(len.eq(FloatW::splat(1e-6)));
                if rows.pass == Pass::WarmStart {
                    rows.c.acc[0] = FloatW::select(open, rows.c.acc[0], FloatW::ZERO);
                }
                let safe = FloatW::select(open, len, FloatW::splat(1.0));
                let swing = len.atan2(x_a.dot(x_b));
                let dir = neg(n).scale(FloatW::splat(1.0).div(safe));
                rows.angular(0, open, dir, half - swing, true);
            }
            AngularKind::Hinge => {
                let (y_a, z_a) = (axis(q_a, 0.0, 1.0, 0.0), axis(q_a, 0.0, 0.0, 1.0));
                let y_b = axis(q_b, 0.0, 1.0, 0.0);
                let angle = y_a.cross(y_b).dot(x_a).atan2(y_a.dot(y_b));
                let [lower, upper, _] = rows.c.limits;
                let limited = rows.c.limited;
                rows.angular(2, limited, x_a, angle - lower, true);
                rows.angular(3, limited, neg(x_a), upper - angle, true);
                let n = x_a.cross(x_b);
                rows.angular(0, MaskW::ALL, y_a, y_a.dot(n), false);
                rows.angular(1, MaskW::ALL, z_a, z_a.dot(n), false);
            }
        }
        rows.point(r_a, r_b);
        self.lanes.scatter(&a, &b, chunk);
    }
}

fn neg(v: Vec3W) -> Vec3W {
    Vec3W {
        x: v.x.neg(),
        y: v.y.neg(),
        z: v.z.neg(),
    }
}

/// One pass over a bundle's rows.
struct Rows<'a> {
    c: &'a mut AngularBundle,
    a: &'a mut Side,
    b: &'a mut Side,
    pass: Pass,
    k: &'a JointParams,
}

impl Rows<'_> {
    fn apply_angular(&mut self, l: Vec3W) {
        self.a.w = self.a.w - self.c.point.inv_inertia_a.mul(l);
        self.b.w = self.b.w + self.c.point.inv_inertia_b.mul(l);
        self.c.sub_angular = self.c.sub_angular + l;
    }

    /// An angular row about `u` with position error `c`, in the lanes of `active`: a
    /// one-sided limit (`limit`) or an equality.
    fn angular(&mut self, slot: usize, active: MaskW, u: Vec3W, c: FloatW, limit: bool) {
        let acc = self.c.acc[slot];
        if self.pass == Pass::WarmStart {
            let imp = FloatW::select(active, acc, FloatW::ZERO);
            self.apply_angular(u.scale(imp));
            return;
        }
        let p = &self.c.point;
        let k = u.dot(p.inv_inertia_a.mul(u) + p.inv_inertia_b.mul(u));
        let valid = active.and(k.gt(FloatW::ZERO));
        let mass = FloatW::splat(1.0).div(FloatW::select(valid, k, FloatW::splat(1.0)));
        let cdot = u.dot(self.b.w - self.a.w);
        let (bias_rate, ms, is) = self.k.rigid(self.pass);
        let (bias_rate, ms, is) = (
            FloatW::splat(bias_rate),
            FloatW::splat(ms),
            FloatW::splat(is),
        );
        let new = if limit {
            // Speculative while open: the gap may close within the substep.
            let open = c.gt(FloatW::ZERO);
            let bias = FloatW::select(open, c * FloatW::splat(self.k.inv_h), bias_rate * c);
            let ms = FloatW::select(open, FloatW::splat(1.0), ms);
            let is = FloatW::select(open, FloatW::ZERO, is);
            (acc - ms * mass * (cdot + bias) - is * acc).max(FloatW::ZERO)
        } else {
            acc - ms * mass * (cdot + bias_rate * c) - is * acc
        };
        let new = FloatW::select(valid, new, acc);
        self.c.acc[slot] = new;
        self.apply_angular(u.scale(new - acc));
    }

    /// The point block, as `Rows::point` (shared with `ball_bundle.rs`).
    fn point(&mut self, r_a: Vec3W, r_b: Vec3W) {
        let imp = self
            .c
            .point
            .run(self.a, self.b, (r_a, r_b), self.pass, self.k);
        self.c.sub_linear = self.c.sub_linear + imp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::solver::ball_bundle::test_support::{
        PASSES, move_after, params, run_scalar, wave as f, wave3 as vec, with_chunk,
    };
    use crate::dynamics::solver::contact::BodyMass;
    use crate::dynamics::solver::joint::JointConstraint;
    use crate::joint::{AxisDrive, AxisLimit};
    use crate::math::Mat3A;

    /// Every lane must agree with the scalar joint, in every pass, to rounding: within
    /// 1e-5 of the velocities' and impulses' scale (a few thousand ulps at most).
    #[test]
    fn lanes_agree_with_the_scalar_joints() {
        let k = params();
        let rot = |i: usize, s: f32, angle: f32| {
            Quat::from_axis_angle(vec(i, s).normalize().into(), angle)
        };
        let swing_twist = JointKind::SwingTwist {
            swing_half_angle: 0.3,
            twist: AxisLimit {
                lower: -0.2,
                upper: 0.25,
            },
        };
        let hinge = |limit: bool| {
            JointKind::Hinge(AxisDrive {
                limit: limit.then_some(AxisLimit {
                    lower: -0.1,
                    upper: 0.2,
                }),
                ..AxisDrive::default()
            })
        };
        for (bundle_kind, kinds) in [
            (AngularKind::SwingTwist, [swing_twist; 7]),
            (
                AngularKind::Hinge,
                std::array::from_fn(|i| hinge(i % 3 != 1)),
            ),
        ] {
            // Lane i joins bodies 2i and 2i + 1 (lane 2 hangs from a kinematic side);
            // frames turned far enough that some limits and the cone are active. Lane 7
            // is empty.
            let mut bodies: Vec<SolverBody> = (0..16)
                .map(|i| SolverBody {
                    v: vec(i, 0.0),
                    w: vec(i, 4.0) * 3.0,
                    dp: vec(i, 7.0) * 0.01,
                    dq: rot(i, 9.0, 0.05 * i as f32),
                })
                .collect();
            let mut bundle = AngularBundle::new(bundle_kind);
            let mut scalar: Vec<JointConstraint> = (0..7)
                .map(|i| {
                    let mass = |b: usize| BodyMass {
                        inv_mass: 0.5 + 0.1 * b as f32,
                        inv_inertia: Mat3A::from_diagonal(glam::Vec3::new(
                            2.0,
                            3.0,
                            1.5 + b as f32,
                        )),
                        linear_axes: Vec3A::ONE,
                    };
                    let fixed_a = i == 2;
                    let mut fixed = SolverBody::FIXED;
                    if fixed_a {
                        fixed.v = Vec3A::new(0.3, 0.0, -0.2);
                        fixed.w = Vec3A::new(0.0, 1.0, 0.0);
                    }
                    let q = rot(i, 21.0, 0.2 + 0.1 * i as f32);
                    let start = JointStart {
                        joint: 10 + i as u32,
                        kind: kinds[i],
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
                        q_a: q,
                        q_b: q * rot(i, 23.0, 0.4 * f(i, 25.0)),
                        impulses: JointImpulses {
                            point: vec(i, 19.0),
                            rows: std::array::from_fn(|r| {
                                if r < 4 { 0.1 * f(i, r as f32) } else { 0.0 }
                            }),
                            ..JointImpulses::default()
                        },
                        drive: None,
                    };
                    let slot_a = (!fixed_a).then_some(2 * i as u32);
                    let slot_b = Some(2 * i as u32 + 1);
                    bundle.set_lane(i, &start, slot_a, slot_b);
                    let mut c = JointConstraint::new(start);
                    (c.slot_a, c.slot_b) = (slot_a, slot_b);
                    c
                })
                .collect();
            let mut wide_bodies = bodies.clone();
            let close = |x: Vec3A, y: Vec3A, what: &str| {
                let scale = 1.0 + x.abs().max_element();
                assert!(
                    (x - y).abs().max_element() < 1e-5 * scale,
                    "{what}: {x} vs {y}"
                );
            };
            for pass in PASSES {
                run_scalar(&mut scalar, &mut bodies, pass, &k);
                with_chunk(&mut wide_bodies, |chunk| bundle.run(chunk, pass, &k));
                for (s, w) in bodies.iter().zip(&wide_bodies) {
                    close(s.v, w.v, "v");
                    close(s.w, w.w, "w");
                }
                move_after(pass, &mut bodies);
                move_after(pass, &mut wide_bodies);
                let results: Vec<_> = bundle.results().collect();
                assert_eq!(results.len(), 7);
                for (c, (joint, imp, lin, ang)) in scalar.iter().zip(results) {
                    assert_eq!(c.joint, joint);
                    close(c.acc.point, imp.point, "point impulse");
                    for r in 0..4 {
                        close(
                            Vec3A::splat(c.acc.rows[r]),
                            Vec3A::splat(imp.rows[r]),
                            "row impulse",
                        );
                    }
                    close(c.sub_linear, lin, "linear");
                    close(c.sub_angular, ang, "angular");
                }
            }
            // The rows were exercised: some limit or alignment row's impulse moved from
            // its warm start, and some limit row pushes.
            let start_rows = |i: usize, r: usize| 0.1 * f(i, r as f32);
            assert!(
                scalar
                    .iter()
                    .enumerate()
                    .any(|(i, c)| (0..4).any(|r| c.acc.rows[r] != start_rows(i, r))),
                "{bundle_kind:?}: no row acted"
            );
            let limit_rows = if bundle_kind == AngularKind::Hinge {
                2..4
            } else {
                0..3
            };
            assert!(
                scalar
                    .iter()
                    .any(|c| limit_rows.clone().any(|r| c.acc.rows[r] > 0.0)),
                "{bundle_kind:?}: no limit pushed"
            );
        }
    }
}
