//! Contact constraints solved four at a time (Box2D v3's `contact_solver.c` "SIMD" path,
//! in 3D, on stable Rust).
//!
//! ```text
//!   colour k:  c0 c1 c2 c3 | c4 c5 c6 c7 | c8 c9            constraint order
//!              \_ bundle _/  \_ bundle _/  \_ bundle (2 of 4 lanes used)
//!
//!   bundle:    normal.x [c0 c1 c2 c3]   point[0].r_a.x [c0 c1 c2 c3]   ...
//!              one lane per constraint, every field stored as four floats
//! ```
//!
//! Consecutive constraints of one colour form a bundle of [`LANES`] lanes. A colour's
//! constraints share no dynamic body, so the lanes' bodies are distinct: each pass gathers
//! their velocities into wide registers, solves the four manifolds at once (the points of
//! a manifold one after another, lanes without that point masked out) and scatters the
//! velocities back. A static or kinematic side is a dummy body that never moves (zero
//! inverse mass, its fixed velocity), as in Box2D; its lane of the result is dropped.
//!
//! The invariant: every lane computes, operation for operation, what the scalar
//! [`ContactConstraint`](super::contact::ContactConstraint) computes for the same
//! constraint (see `wide.rs`), and masked lanes leave bodies and impulses bit-exact. So
//! the bundled solver gives the same bits as the scalar one, and bundles, built from
//! constraint order alone, keep results independent of the thread count.

use joule_jobs::DisjointChunk;

use crate::math::{Quat, Vec3A};

use super::contact::{ContactConstraint, SLIDING_SPEED, Softness, SolverBody};
use super::wide::{F4, LANES, M3, M4, Q4, V3};

/// Marks a lane side with no solver body (static, kinematic or an unused lane).
const NO_SLOT: u32 = u32::MAX;

/// One point of the four manifolds of a bundle (see `ConstraintPoint` for each field).
#[derive(Clone, Copy, Debug, Default)]
pub struct BundlePoint {
    /// Anchors relative to the centres of mass.
    pub r_a: V3,
    /// Anchors relative to B's centre of mass.
    pub r_b: V3,
    /// Separation at the start of the step.
    pub separation: F4,
    /// Effective mass along the normal.
    pub normal_mass: F4,
    /// Effective masses along the tangents.
    pub tangent_mass: [F4; 2],
    /// Accumulated normal impulse.
    pub normal_impulse: F4,
    /// Accumulated friction impulses.
    pub tangent_impulse: [F4; 2],
    /// Largest normal impulse of the step.
    pub max_normal_impulse: F4,
    /// Approach speed for restitution.
    pub relative_velocity: F4,
    /// Lanes whose manifold has this point and whose body A is dynamic.
    pub mask_a: M4,
    /// Lanes whose manifold has this point and whose body B is dynamic.
    pub mask_b: M4,
}

/// Where a lane's side comes from.
#[derive(Clone, Copy, Debug)]
struct LaneSide {
    /// Plan position of the dynamic body in its colour, or [`NO_SLOT`].
    slot: u32,
    /// Velocity (linear, angular) used when there is no dynamic body.
    fixed: (Vec3A, Vec3A),
}

impl Default for LaneSide {
    fn default() -> Self {
        Self {
            slot: NO_SLOT,
            fixed: (Vec3A::ZERO, Vec3A::ZERO),
        }
    }
}

/// Up to [`LANES`] contact constraints of one colour, by component.
#[derive(Clone, Debug, Default)]
pub struct ContactBundle {
    /// Lanes in use (the first `count`).
    count: usize,
    /// Most points of any lane's manifold.
    points_used: usize,
    /// Contact id per lane.
    contact: [u32; LANES],
    /// Point count per lane.
    point_count: [u8; LANES],
    side_a: [LaneSide; LANES],
    side_b: [LaneSide; LANES],
    normal: V3,
    tangents: [V3; 2],
    friction: F4,
    restitution: F4,
    inv_mass_a: F4,
    inv_inertia_a: M3,
    inv_mass_b: F4,
    inv_inertia_b: M3,
    points: [BundlePoint; 4],
}

/// Velocities of one side of a bundle's four lanes.
#[derive(Clone, Copy, Debug)]
struct Velocities {
    v: V3,
    w: V3,
}

/// Motion of one side's four bodies since the start of the step.
#[derive(Clone, Copy, Debug)]
struct Poses {
    dp: V3,
    dq: Q4,
}

/// Constants of the solve pass.
#[derive(Clone, Copy, Debug)]
pub struct SolveParams {
    /// Inverse substep.
    pub inv_h: f32,
    /// Fastest push-out speed.
    pub max_push: f32,
    /// Contact softness.
    pub softness: Softness,
}

impl ContactBundle {
    /// An empty bundle.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a prepared constraint as the next lane; `slot_a` and `slot_b` are the plan
    /// positions of its dynamic bodies and `a`, `b` the bodies it was prepared with.
    /// Panics if the bundle is full.
    pub fn push(
        &mut self,
        c: &ContactConstraint,
        slot_a: Option<u32>,
        slot_b: Option<u32>,
        a: &SolverBody,
        b: &SolverBody,
    ) {
        assert!(self.count < LANES, "a bundle holds {LANES} constraints");
        let i = self.count;
        self.count += 1;
        self.contact[i] = c.contact;
        self.point_count[i] = c.points.len() as u8;
        self.points_used = self.points_used.max(c.points.len());
        self.side_a[i] = LaneSide {
            slot: slot_a.unwrap_or(NO_SLOT),
            fixed: c.fixed_a,
        };
        self.side_b[i] = LaneSide {
            slot: slot_b.unwrap_or(NO_SLOT),
            fixed: c.fixed_b,
        };
        self.normal.set_lane(i, c.normal);
        self.tangents[0].set_lane(i, c.tangents[0]);
        self.tangents[1].set_lane(i, c.tangents[1]);
        self.friction.0[i] = c.friction;
        self.restitution.0[i] = c.restitution;
        self.inv_mass_a.0[i] = a.inv_mass;
        self.inv_inertia_a.set_lane(i, &a.inv_inertia);
        self.inv_mass_b.0[i] = b.inv_mass;
        self.inv_inertia_b.set_lane(i, &b.inv_inertia);
        for (k, bp) in self.points.iter_mut().enumerate() {
            let has = k < c.points.len();
            let bit = if has { u32::MAX } else { 0 };
            bp.mask_a.0[i] = if slot_a.is_some() { bit } else { 0 };
            bp.mask_b.0[i] = if slot_b.is_some() { bit } else { 0 };
            let Some(p) = c.points.get(k) else {
                continue;
            };
            bp.r_a.set_lane(i, p.r_a);
            bp.r_b.set_lane(i, p.r_b);
            bp.separation.0[i] = p.separation;
            bp.normal_mass.0[i] = p.normal_mass;
            bp.tangent_mass[0].0[i] = p.tangent_mass[0];
            bp.tangent_mass[1].0[i] = p.tangent_mass[1];
            bp.normal_impulse.0[i] = p.normal_impulse;
            bp.tangent_impulse[0].0[i] = p.tangent_impulse[0];
            bp.tangent_impulse[1].0[i] = p.tangent_impulse[1];
            bp.max_normal_impulse.0[i] = p.max_normal_impulse;
            bp.relative_velocity.0[i] = p.relative_velocity;
        }
    }

    /// The lanes' contact ids and, per point, `(normal, tangent1, tangent2, max normal)`
    /// impulses, for the next step's warm start.
    pub fn impulses(&self) -> impl Iterator<Item = (u32, impl Iterator<Item = [f32; 4]>)> {
        (0..self.count).map(move |i| {
            let points = self.points[..usize::from(self.point_count[i])]
                .iter()
                .map(move |p| {
                    [
                        p.normal_impulse.0[i],
                        p.tangent_impulse[0].0[i],
                        p.tangent_impulse[1].0[i],
                        p.max_normal_impulse.0[i],
                    ]
                });
            (self.contact[i], points)
        })
    }

    /// Whether any lane bounces.
    #[must_use]
    pub fn has_restitution(&self) -> bool {
        self.restitution.0.iter().any(|&r| r != 0.0)
    }

    fn gather_velocities(
        sides: &[LaneSide; LANES],
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) -> Velocities {
        let mut v = [Vec3A::ZERO; LANES];
        let mut w = [Vec3A::ZERO; LANES];
        for (i, side) in sides.iter().enumerate() {
            (v[i], w[i]) = if side.slot == NO_SLOT {
                side.fixed
            } else {
                let body = chunk.get_mut(side.slot as usize);
                (body.v, body.w)
            };
        }
        Velocities {
            v: V3::gather(v),
            w: V3::gather(w),
        }
    }

    fn gather_poses(sides: &[LaneSide; LANES], chunk: &mut DisjointChunk<'_, SolverBody>) -> Poses {
        let mut dp = [Vec3A::ZERO; LANES];
        let mut dq = [Quat::IDENTITY; LANES];
        for (i, side) in sides.iter().enumerate() {
            if side.slot != NO_SLOT {
                let body = chunk.get_mut(side.slot as usize);
                (dp[i], dq[i]) = (body.dp, body.dq);
            }
        }
        Poses {
            dp: V3::gather(dp),
            dq: Q4::gather(dq),
        }
    }

    fn scatter_velocities(
        sides: &[LaneSide; LANES],
        vel: &Velocities,
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) {
        let (v, w) = (vel.v.scatter(), vel.w.scatter());
        for (i, side) in sides.iter().enumerate() {
            if side.slot != NO_SLOT {
                let body = chunk.get_mut(side.slot as usize);
                body.v = v[i];
                body.w = w[i];
            }
        }
    }

    /// Relative velocity of the anchors (B's minus A's).
    #[inline(always)]
    fn relative_velocity(a: &Velocities, b: &Velocities, r_a: V3, r_b: V3) -> V3 {
        (b.v + b.w.cross(r_b)) - (a.v + a.w.cross(r_a))
    }

    /// Applies `impulse` at the anchors, to A negated, in the lanes of the masks.
    #[inline(always)]
    fn apply(&self, a: &mut Velocities, b: &mut Velocities, p: &BundlePoint, impulse: V3) {
        self.apply_masked(a, b, p, impulse, p.mask_a, p.mask_b);
    }

    #[inline(always)]
    fn apply_masked(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        p: &BundlePoint,
        impulse: V3,
        mask_a: M4,
        mask_b: M4,
    ) {
        let va = a.v - impulse.scale(self.inv_mass_a);
        let wa = a.w - self.inv_inertia_a.mul(p.r_a.cross(impulse));
        let vb = b.v + impulse.scale(self.inv_mass_b);
        let wb = b.w + self.inv_inertia_b.mul(p.r_b.cross(impulse));
        a.v = V3::select(mask_a, va, a.v);
        a.w = V3::select(mask_a, wa, a.w);
        b.v = V3::select(mask_b, vb, b.v);
        b.w = V3::select(mask_b, wb, b.w);
    }

    /// Applies last step's impulses (warm starting).
    pub fn warm_start(&self, chunk: &mut DisjointChunk<'_, SolverBody>) {
        let mut a = Self::gather_velocities(&self.side_a, chunk);
        let mut b = Self::gather_velocities(&self.side_b, chunk);
        let [t0, t1] = self.tangents;
        for p in &self.points[..self.points_used] {
            let impulse = self.normal.scale(p.normal_impulse)
                + t0.scale(p.tangent_impulse[0])
                + t1.scale(p.tangent_impulse[1]);
            self.apply(&mut a, &mut b, p, impulse);
        }
        Self::scatter_velocities(&self.side_a, &a, chunk);
        Self::scatter_velocities(&self.side_b, &b, chunk);
    }

    /// One iteration: friction, then the soft normal constraint (`use_bias` false: the
    /// relax pass, no position correction).
    pub fn solve(
        &mut self,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        k: &SolveParams,
        use_bias: bool,
    ) {
        let mut a = Self::gather_velocities(&self.side_a, chunk);
        let mut b = Self::gather_velocities(&self.side_b, chunk);
        let pose_a = Self::gather_poses(&self.side_a, chunk);
        let pose_b = Self::gather_poses(&self.side_b, chunk);
        let n = self.normal;
        let [t0, t1] = self.tangents;
        let used = self.points_used;
        let zero = F4::ZERO;

        for i in 0..used {
            let p = self.points[i];
            let dv = Self::relative_velocity(&a, &b, p.r_a, p.r_b);
            let max = self.friction * p.normal_impulse;
            let vt = [dv.dot(t0), dv.dot(t1)];
            let old = p.tangent_impulse;
            let mut new = [
                old[0] - p.tangent_mass[0] * vt[0],
                old[1] - p.tangent_mass[1] * vt[1],
            ];
            let len2 = new[0] * new[0] + new[1] * new[1];
            let clamp = len2.gt(max * max);
            if clamp.any() {
                let slip = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
                let sliding = slip.gt(F4::splat(SLIDING_SPEED));
                let s = max.div(len2.sqrt());
                let neg_max = max.neg();
                for (k, nk) in new.iter_mut().enumerate() {
                    let slide = (neg_max * vt[k]).div(slip);
                    let scaled = *nk * s;
                    *nk = F4::select(clamp, F4::select(sliding, slide, scaled), *nk);
                }
            }
            self.points[i].tangent_impulse = new;
            let impulse = t0.scale(new[0] - old[0]) + t1.scale(new[1] - old[1]);
            self.apply(&mut a, &mut b, &p, impulse);
        }

        let soft = k.softness;
        for i in 0..used {
            let p = &mut self.points[i];
            let d = (pose_b.dp - pose_a.dp) + (pose_b.dq.rotate(p.r_b) - p.r_b)
                - (pose_a.dq.rotate(p.r_a) - p.r_a);
            let s = d.dot(n) + p.separation;
            let speculative = s.gt(zero);
            let gap = s * F4::splat(k.inv_h);
            let (bias, mass_scale, impulse_scale) = if use_bias {
                let push = (F4::splat(soft.bias_rate) * s).max(F4::splat(-k.max_push));
                (
                    F4::select(speculative, gap, push),
                    F4::select(speculative, F4::splat(1.0), F4::splat(soft.mass_scale)),
                    F4::select(speculative, zero, F4::splat(soft.impulse_scale)),
                )
            } else {
                (F4::select(speculative, gap, zero), F4::splat(1.0), zero)
            };
            let vn = Self::relative_velocity(&a, &b, p.r_a, p.r_b).dot(n);
            let lambda =
                p.normal_mass.neg() * mass_scale * (vn + bias) - impulse_scale * p.normal_impulse;
            let new = (p.normal_impulse + lambda).max(zero);
            if use_bias {
                p.relative_velocity = F4::select(
                    new.gt(zero),
                    p.relative_velocity.min(vn),
                    p.relative_velocity,
                );
            }
            let delta = new - p.normal_impulse;
            p.normal_impulse = new;
            p.max_normal_impulse = p.max_normal_impulse.max(new);
            let p = *p;
            self.apply(&mut a, &mut b, &p, n.scale(delta));
        }
        Self::scatter_velocities(&self.side_a, &a, chunk);
        Self::scatter_velocities(&self.side_b, &b, chunk);
    }

    /// Restitution pass: points that hit faster than `threshold` bounce back with
    /// `restitution` times their approach speed.
    pub fn apply_restitution(&mut self, chunk: &mut DisjointChunk<'_, SolverBody>, threshold: f32) {
        if !self.has_restitution() {
            return;
        }
        let mut a = Self::gather_velocities(&self.side_a, chunk);
        let mut b = Self::gather_velocities(&self.side_b, chunk);
        let n = self.normal;
        let zero = F4::ZERO;
        let bouncy = M4::ALL.and_not(self.restitution.eq(zero));
        for i in 0..self.points_used {
            let p = self.points[i];
            let skip = p
                .relative_velocity
                .gt(F4::splat(-threshold))
                .or(p.max_normal_impulse.eq(zero));
            let active = bouncy.and_not(skip);
            if !active.any() {
                continue;
            }
            let vn = Self::relative_velocity(&a, &b, p.r_a, p.r_b).dot(n);
            let lambda = p.normal_mass.neg() * (vn + self.restitution * p.relative_velocity);
            let new = (p.normal_impulse + lambda).max(zero);
            let delta = new - p.normal_impulse;
            let q = &mut self.points[i];
            q.normal_impulse = F4::select(active, new, p.normal_impulse);
            q.max_normal_impulse =
                F4::select(active, p.max_normal_impulse.max(new), p.max_normal_impulse);
            self.apply_masked(
                &mut a,
                &mut b,
                &p,
                n.scale(delta),
                p.mask_a.and(active),
                p.mask_b.and(active),
            );
        }
        Self::scatter_velocities(&self.side_a, &a, chunk);
        Self::scatter_velocities(&self.side_b, &b, chunk);
    }
}
