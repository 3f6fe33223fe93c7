//! Contact constraints solved [`LANES`] (8) at a time (Box2D v3's `contact_solver.c`
//! "SIMD" path, in 3D, on stable Rust).
//!
//! ```text
//!   colour k:  c0 c1 .. c7 | c8 c9 .. c15 | c16 c17          constraint order
//!              \_ bundle _/  \_ bundle __/  \_ bundle (2 of 8 lanes used)
//!
//!   bundle:    normal.x [c0 .. c7]   point[0].r_a.x [c0 .. c7]   ...
//!              one lane per constraint, every field stored as LANES floats
//! ```
//!
//! Consecutive constraints of one colour form a bundle of [`LANES`] lanes. A colour's
//! constraints share no dynamic body, so the lanes' bodies are distinct: each pass gathers
//! their velocities into wide registers, solves the manifolds at once (the points of
//! a manifold one after another, lanes without that point masked out) and scatters the
//! velocities back. A static or kinematic side is a dummy body that never moves (zero
//! inverse mass, its fixed velocity), as in Box2D; its lane of the result is dropped.
//!
//! The invariant: every lane computes, operation for operation, what the scalar
//! [`ContactConstraint`] computes for the same constraint (see `wide.rs`), and masked
//! lanes leave bodies and impulses bit-exact. So the bundled solver gives the same bits
//! as the scalar one (the unit test below checks it pass by pass), and bundles, built
//! from constraint order alone, keep results independent of the thread count.

use joule_jobs::DisjointChunk;

use crate::contact::ContactImpulse;
use crate::math::{Quat, Vec3A};

use super::contact::{BOUNCE_SLOP, ContactConstraint, SLIDING_SPEED, Softness, SolverBody};
use super::wide::{FloatW, LANES, MaskW, Mat3W, QuatW, Vec3W};

/// Marks a lane side with no solver body (static, kinematic or an unused lane).
const NO_SLOT: u32 = u32::MAX;

/// One point of the manifolds of a bundle (see `ConstraintPoint` for each field).
///
/// Nine cache lines, in the order the passes read them: the anchors (three lines), then
/// one line each for what the solve pass needs (separation and normal mass, normal
/// impulses), for friction (masses, impulses: the relax pass and the warm start), for
/// restitution (approach speeds and bounces: only bundles with a bouncy lane) and the
/// masks (only `masked` bundles). A pile's solve pass reads five lines per point.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub struct BundlePoint {
    /// Anchors relative to the centres of mass.
    pub r_a: Vec3W,
    /// Anchors relative to B's centre of mass.
    pub r_b: Vec3W,
    /// Separation at the start of the step less the anchors' normal offset.
    pub base_separation: FloatW,
    /// Effective mass along the normal.
    pub normal_mass: FloatW,
    /// Accumulated normal impulse.
    pub normal_impulse: FloatW,
    /// Largest normal impulse of the step.
    pub max_normal_impulse: FloatW,
    /// Effective masses along the tangents.
    pub tangent_mass: [FloatW; 2],
    /// Accumulated friction impulses.
    pub tangent_impulse: [FloatW; 2],
    /// Approach speed for restitution.
    pub relative_velocity: FloatW,
    /// Lanes whose point bounced this step.
    pub bounced: MaskW,
    /// Lanes whose manifold has this point and whose body A is dynamic.
    pub mask_a: MaskW,
    /// Lanes whose manifold has this point and whose body B is dynamic.
    pub mask_b: MaskW,
}

const _: () = assert!(
    std::mem::size_of::<BundlePoint>() == 9 * 64
        && std::mem::offset_of!(BundlePoint, base_separation) == 3 * 64
        && std::mem::offset_of!(BundlePoint, normal_impulse) == 4 * 64
        && std::mem::offset_of!(BundlePoint, tangent_mass) == 5 * 64
        && std::mem::offset_of!(BundlePoint, relative_velocity) == 7 * 64
        && std::mem::offset_of!(BundlePoint, mask_a) == 8 * 64,
    "a bundle point's fields sit in the cache lines its docs give"
);

impl BundlePoint {
    /// Lanes whose manifold has this point. Unless `MASKED`, every used lane has every
    /// point, so the lanes in use (`count`) say it without reading the masks' line.
    #[inline(always)]
    fn has<const MASKED: bool>(&self, count: usize) -> MaskW {
        if MASKED {
            self.mask_a.or(self.mask_b)
        } else {
            MaskW(std::array::from_fn(
                |i| if i < count { u32::MAX } else { 0 },
            ))
        }
    }

    /// `(r_a × n, r_b × n)`.
    #[inline(always)]
    fn rn(&self, n: Vec3W) -> (Vec3W, Vec3W) {
        (self.r_a.cross(n), self.r_b.cross(n))
    }
}

/// Where the lanes' bodies on one side come from. The velocities of sides without a
/// dynamic body stay in the bundle's cold `fixed_*` arrays, read only when `moving`:
/// every pass reads the slots, and static sides (almost all of them) are at rest.
#[derive(Clone, Copy, Debug)]
struct LaneSides {
    /// Plan position of each lane's dynamic body in its colour, or [`NO_SLOT`].
    slot: [u32; LANES],
    /// Some lane without a dynamic body on this side moves (a kinematic body), or has a
    /// velocity that is not exactly +0.
    moving: bool,
}

impl Default for LaneSides {
    fn default() -> Self {
        Self {
            slot: [NO_SLOT; LANES],
            moving: false,
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
    /// Whether updates must be masked per lane: some lane lacks a point another has, or
    /// has a moving (kinematic) fixed side. Otherwise every used lane has every point and
    /// a fixed side's velocity is +0, which adding `0 * impulse` leaves bit-exact, so the
    /// selects are skipped.
    masked: bool,
    /// Contact id per lane.
    contact: [u32; LANES],
    /// Point count per lane.
    point_count: [u8; LANES],
    side_a: LaneSides,
    side_b: LaneSides,
    /// Velocity (linear, angular) of each lane's A when it has no dynamic body (see
    /// [`LaneSides`]).
    fixed_a: [(Vec3A, Vec3A); LANES],
    /// The same for B.
    fixed_b: [(Vec3A, Vec3A); LANES],
    normal: Vec3W,
    tangents: [Vec3W; 2],
    friction: FloatW,
    restitution: FloatW,
    tangent_speed: [FloatW; 2],
    inv_mass_a: FloatW,
    inv_inertia_a: Mat3W,
    inv_mass_b: FloatW,
    inv_inertia_b: Mat3W,
    points: [BundlePoint; 4],
    /// Lanes whose bodies are both dynamic.
    both: MaskW,
    /// Lanes whose manifold takes the uniform step over its points (see `Patch`).
    patch: MaskW,
    /// Whether every used lane takes the step (and, unless `masked`, has every point):
    /// then the step needs no selects.
    patch_all: bool,
}

/// Velocities of one side of a bundle's lanes.
#[derive(Clone, Copy, Debug)]
struct Velocities {
    v: Vec3W,
    w: Vec3W,
}

/// Motion of one side's bodies since the start of the step.
#[derive(Clone, Copy, Debug)]
struct Poses {
    dp: Vec3W,
    dq: QuatW,
}

/// The start-of-step velocities (linear, angular) of each lane's sides, from
/// [`ContactBundle::push`] to [`ContactBundle::prepare`] (kept out of the bundle, which
/// every pass streams through).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartVelocities {
    a: [(Vec3A, Vec3A); LANES],
    b: [(Vec3A, Vec3A); LANES],
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
    /// Approach speed above which restitution applies.
    pub restitution_threshold: f32,
}

impl ContactBundle {
    /// An empty bundle.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the bundle for reuse. Only what decides whether a lane or point takes part
    /// is reset (slots, point masks, restitution); the rest of an unused lane keeps last
    /// step's finite values, which no used lane ever reads (every operation is lane-wise)
    /// and which are never scattered. Cheaper than writing a fresh bundle of some 5 KB.
    pub fn clear(&mut self) {
        self.count = 0;
        self.points_used = 0;
        self.masked = false;
        self.point_count = [0; LANES];
        self.side_a = LaneSides::default();
        self.side_b = LaneSides::default();
        self.restitution = FloatW::ZERO;
        self.tangent_speed = [FloatW::ZERO; 2];
        self.patch = MaskW::default();
        self.both = MaskW::default();
        self.patch_all = true;
        for p in &mut self.points {
            p.mask_a = MaskW::default();
            p.mask_b = MaskW::default();
        }
    }

    /// Whether updates are masked per lane (see the field).
    #[must_use]
    pub fn masked(&self) -> bool {
        self.masked
    }

    /// The contact ids of the lanes in use.
    #[must_use]
    pub fn contacts(&self) -> &[u32] {
        &self.contact[..self.count]
    }

    /// Adds a constraint as the next lane, unprepared (its effective masses, anchor
    /// offsets, approach speeds and patch step are left to [`ContactBundle::prepare`],
    /// which forms them for all lanes at once); `slot_a` and `slot_b` are the plan
    /// positions of its dynamic bodies, `a` and `b` their solver bodies at the start of
    /// the step ([`SolverBody::FIXED`] for a side that is not dynamic). Panics if the
    /// bundle is full.
    pub fn push(
        &mut self,
        c: &ContactConstraint,
        (slot_a, slot_b): (Option<u32>, Option<u32>),
        (a, b): (&SolverBody, &SolverBody),
        start: &mut StartVelocities,
    ) {
        assert!(self.count < LANES, "a bundle holds {LANES} constraints");
        let i = self.count;
        self.count += 1;
        self.contact[i] = c.contact;
        self.point_count[i] = c.points.len() as u8;
        self.points_used = self.points_used.max(c.points.len());
        let still = |(v, w): (Vec3A, Vec3A)| {
            let bits = |x: Vec3A| x.to_array().map(f32::to_bits);
            bits(v) == [0; 3] && bits(w) == [0; 3]
        };
        let moving_a = slot_a.is_none() && !still(c.fixed_a);
        let moving_b = slot_b.is_none() && !still(c.fixed_b);
        self.masked |= usize::from(self.point_count[0]) != c.points.len() || moving_a || moving_b;
        self.side_a.slot[i] = slot_a.unwrap_or(NO_SLOT);
        Self::push_fixed(&mut self.side_a, &mut self.fixed_a, i, moving_a, c.fixed_a);
        self.both.0[i] = if slot_a.is_some() && slot_b.is_some() {
            u32::MAX
        } else {
            0
        };
        self.side_b.slot[i] = slot_b.unwrap_or(NO_SLOT);
        Self::push_fixed(&mut self.side_b, &mut self.fixed_b, i, moving_b, c.fixed_b);
        start.a[i] = c.velocity_a(a);
        start.b[i] = c.velocity_b(b);
        self.normal.set_lane(i, c.normal);
        self.tangents[0].set_lane(i, c.tangents[0]);
        self.tangents[1].set_lane(i, c.tangents[1]);
        self.friction.0[i] = c.friction;
        self.restitution.0[i] = c.restitution;
        self.tangent_speed[0].0[i] = c.tangent_speed[0];
        self.tangent_speed[1].0[i] = c.tangent_speed[1];
        let (ma, mb) = (&c.mass_a, &c.mass_b);
        self.inv_mass_a.0[i] = ma.inv_mass;
        self.inv_inertia_a.set_lane(i, &ma.inv_inertia);
        self.inv_mass_b.0[i] = mb.inv_mass;
        self.inv_inertia_b.set_lane(i, &mb.inv_inertia);
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
            // The separation, until `prepare` takes the anchors' offset off it.
            bp.base_separation.0[i] = p.separation;
            bp.normal_impulse.0[i] = p.normal_impulse;
            bp.tangent_impulse[0].0[i] = p.tangent_impulse[0];
            bp.tangent_impulse[1].0[i] = p.tangent_impulse[1];
            bp.max_normal_impulse.0[i] = 0.0;
            // The carried approach, until `prepare` lowers it to the start's.
            bp.relative_velocity.0[i] = p.relative_velocity;
            bp.bounced.0[i] = 0;
        }
    }

    /// Records lane `i`'s fixed velocity on one side. The cold array is written only
    /// once the side has a moving lane (zeroed then, for the lanes before it, which are
    /// at rest): a bundle of static sides never touches it.
    fn push_fixed(
        sides: &mut LaneSides,
        fixed: &mut [(Vec3A, Vec3A); LANES],
        i: usize,
        moving: bool,
        velocity: (Vec3A, Vec3A),
    ) {
        if moving && !sides.moving {
            *fixed = [(Vec3A::ZERO, Vec3A::ZERO); LANES];
            sides.moving = true;
        }
        if sides.moving {
            fixed[i] = velocity;
        }
    }

    /// Prepares the pushed lanes at once, as [`ContactConstraint::prepare`] prepares one
    /// constraint and bit for bit the same (the same operations in the same order, lane
    /// by lane): effective masses, the anchors' normal offset, the approach speeds and
    /// which lanes take the patch step. `start` is what [`ContactBundle::push`] filled.
    #[inline(always)]
    pub fn prepare(&mut self, start: &StartVelocities) {
        let side = |s: &[(Vec3A, Vec3A); LANES]| Velocities {
            v: Vec3W::gather(s.map(|(v, _)| v)),
            w: Vec3W::gather(s.map(|(_, w)| w)),
        };
        let (va, vb) = (side(&start.a), side(&start.b));
        let n = self.normal;
        let (ma, mb) = (self.inv_mass_a, self.inv_mass_b);
        let (ia, ib) = (self.inv_inertia_a, self.inv_inertia_b);
        let one = FloatW::splat(1.0);
        // `effective_mass` of the scalar solver, given `r × dir` per side. (A function,
        // not a closure: `#[inline(always)]` keeps it in the AVX2 copy of `simd.rs`.)
        #[inline(always)]
        fn effective_mass(
            (ma, mb): (FloatW, FloatW),
            (ia, ib): (&Mat3W, &Mat3W),
            rda: Vec3W,
            rdb: Vec3W,
        ) -> FloatW {
            let k = ma + mb + rda.dot(ia.mul(rda)) + rdb.dot(ib.mul(rdb));
            FloatW::select(k.gt(FloatW::ZERO), FloatW::splat(1.0).div(k), FloatW::ZERO)
        }
        let (m, i) = ((ma, mb), (&ia, &ib));
        let mut sum_a = Vec3W::ZERO;
        let mut sum_b = Vec3W::ZERO;
        let mut count = FloatW::ZERO;
        let tangents = self.tangents;
        for p in &mut self.points[..self.points_used] {
            let (r_a, r_b) = (p.r_a, p.r_b);
            let (rn_a, rn_b) = p.rn(n);
            p.normal_mass = effective_mass(m, i, rn_a, rn_b);
            p.tangent_mass = [
                effective_mass(m, i, r_a.cross(tangents[0]), r_b.cross(tangents[0])),
                effective_mass(m, i, r_a.cross(tangents[1]), r_b.cross(tangents[1])),
            ];
            let dv = Self::relative_velocity(&va, &vb, r_a, r_b);
            p.relative_velocity = dv.dot(n).min(p.relative_velocity);
            p.base_separation = p.base_separation - (r_b.dot(n) - r_a.dot(n));
            // The patch step's sums run over each lane's own points only.
            let has = p.has::<true>(self.count);
            sum_a = Vec3W::select(has, sum_a + rn_a, sum_a);
            sum_b = Vec3W::select(has, sum_b + rn_b, sum_b);
            count = FloatW::select(has, count + one, count);
        }
        // `ContactConstraint::prepare`'s condition for the patch step, lane by lane.
        let k = count * count * (ma + mb) + sum_a.dot(ia.mul(sum_a)) + sum_b.dot(ib.mul(sum_b));
        // Formed as wide masks: read lane by lane, `k` was formed lane by lane too, and
        // LLVM scalarised most of this kernel with it (4 times the code).
        let lanes_with = MaskW(std::array::from_fn(|i| {
            if i < self.count && self.point_count[i] >= 2 {
                u32::MAX
            } else {
                0
            }
        }));
        let take = lanes_with
            .and(self.restitution.eq(FloatW::ZERO))
            .and(k.gt(FloatW::ZERO));
        self.patch = take;
        self.patch_all = take.0[..self.count].iter().all(|&t| t != 0);
    }

    /// The lanes' contact ids and, per point, what it hands back to its contact (as
    /// [`ConstraintPoint::stored`](super::contact::ConstraintPoint::stored) does for a
    /// scalar point).
    pub fn impulses(
        &self,
        restitution_threshold: f32,
    ) -> impl Iterator<Item = (u32, impl Iterator<Item = ContactImpulse>)> {
        (0..self.count).map(move |i| {
            let restitution = self.restitution.0[i];
            let points = self.points[..usize::from(self.point_count[i])]
                .iter()
                .map(move |p| ContactImpulse {
                    normal: p.normal_impulse.0[i],
                    tangent1: p.tangent_impulse[0].0[i],
                    tangent2: p.tangent_impulse[1].0[i],
                    max_normal: p.max_normal_impulse.0[i],
                    approach: ContactImpulse::carried_approach(
                        p.relative_velocity.0[i],
                        p.max_normal_impulse.0[i] > 0.0,
                        p.bounced.0[i] != 0,
                        restitution,
                        restitution_threshold,
                    ),
                });
            (self.contact[i], points)
        })
    }

    /// The velocity of lane `i`'s side without a dynamic body: its fixed one when the
    /// side has any moving, else zero (the exact +0 `push` saw).
    #[inline(always)]
    fn fixed_velocity(fixed: Option<&[(Vec3A, Vec3A); LANES]>, i: usize) -> (Vec3A, Vec3A) {
        fixed.map_or((Vec3A::ZERO, Vec3A::ZERO), |f| f[i])
    }

    // Gathers and scatters stay out of line: inlined into the passes, LLVM spilled the
    // transposed lanes through the stack with partial stores and the wide loads that
    // follow stalled on store forwarding (pyramid_big, 1 thread: 3.45 -> 5.7 ms per step).
    #[inline(never)]
    fn gather_velocities(
        sides: &LaneSides,
        fixed: &[(Vec3A, Vec3A); LANES],
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) -> Velocities {
        let fixed = sides.moving.then_some(fixed);
        let mut v = [Vec3A::ZERO; LANES];
        let mut w = [Vec3A::ZERO; LANES];
        for (i, &slot) in sides.slot.iter().enumerate() {
            (v[i], w[i]) = if slot == NO_SLOT {
                Self::fixed_velocity(fixed, i)
            } else {
                let body = chunk.get_mut(slot as usize);
                (body.v, body.w)
            };
        }
        Velocities {
            v: Vec3W::gather(v),
            w: Vec3W::gather(w),
        }
    }

    /// Velocities and poses at once: each lane's body is looked up once, its one cache
    /// line read whole.
    #[inline(never)]
    fn gather_bodies(
        sides: &LaneSides,
        fixed: &[(Vec3A, Vec3A); LANES],
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) -> (Velocities, Poses) {
        let fixed = sides.moving.then_some(fixed);
        let mut v = [Vec3A::ZERO; LANES];
        let mut w = [Vec3A::ZERO; LANES];
        let mut dp = [Vec3A::ZERO; LANES];
        let mut dq = [Quat::IDENTITY; LANES];
        for (i, &slot) in sides.slot.iter().enumerate() {
            if slot == NO_SLOT {
                (v[i], w[i]) = Self::fixed_velocity(fixed, i);
            } else {
                let body = chunk.get_mut(slot as usize);
                (v[i], w[i], dp[i], dq[i]) = (body.v, body.w, body.dp, body.dq);
            }
        }
        (
            Velocities {
                v: Vec3W::gather(v),
                w: Vec3W::gather(w),
            },
            Poses {
                dp: Vec3W::gather(dp),
                dq: QuatW::gather(dq),
            },
        )
    }

    #[inline(never)]
    fn scatter_velocities(
        sides: &LaneSides,
        vel: &Velocities,
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) {
        let (v, w) = (vel.v.scatter(), vel.w.scatter());
        for (i, &slot) in sides.slot.iter().enumerate() {
            if slot != NO_SLOT {
                let body = chunk.get_mut(slot as usize);
                body.v = v[i];
                body.w = w[i];
            }
        }
    }

    /// Relative velocity of the anchors (B's minus A's).
    #[inline(always)]
    fn relative_velocity(a: &Velocities, b: &Velocities, r_a: Vec3W, r_b: Vec3W) -> Vec3W {
        (b.v + b.w.cross(r_b)) - (a.v + a.w.cross(r_a))
    }

    /// Applies `impulse` at the anchors, to A negated: with `MASKED`, only in the lanes of
    /// the point's masks (see [`ContactBundle::masked`]).
    #[inline(always)]
    fn apply<const MASKED: bool>(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        p: &BundlePoint,
        impulse: Vec3W,
    ) {
        if MASKED {
            self.apply_masked(a, b, p, impulse, p.mask_a, p.mask_b);
        } else {
            a.v = a.v - impulse.scale(self.inv_mass_a);
            a.w = a.w - self.inv_inertia_a.mul(p.r_a.cross(impulse));
            b.v = b.v + impulse.scale(self.inv_mass_b);
            b.w = b.w + self.inv_inertia_b.mul(p.r_b.cross(impulse));
        }
    }

    #[inline(always)]
    fn apply_masked(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        p: &BundlePoint,
        impulse: Vec3W,
        mask_a: MaskW,
        mask_b: MaskW,
    ) {
        let va = a.v - impulse.scale(self.inv_mass_a);
        let wa = a.w - self.inv_inertia_a.mul(p.r_a.cross(impulse));
        let vb = b.v + impulse.scale(self.inv_mass_b);
        let wb = b.w + self.inv_inertia_b.mul(p.r_b.cross(impulse));
        a.v = Vec3W::select(mask_a, va, a.v);
        a.w = Vec3W::select(mask_a, wa, a.w);
        b.v = Vec3W::select(mask_b, vb, b.v);
        b.w = Vec3W::select(mask_b, wb, b.w);
    }

    /// Normal velocity of B's anchors relative to A's (see `ContactConstraint`).
    #[inline(always)]
    fn normal_velocity(
        n: Vec3W,
        a: &Velocities,
        b: &Velocities,
        (rn_a, rn_b): (Vec3W, Vec3W),
    ) -> FloatW {
        (b.v - a.v).dot(n) + (b.w.dot(rn_b) - a.w.dot(rn_a))
    }

    /// Applies `delta` along the normal in the lanes of the masks (all lanes unless
    /// `MASKED`).
    #[inline(always)]
    fn apply_normal<const MASKED: bool>(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        (k_a, k_b): (Vec3W, Vec3W),
        delta: FloatW,
        (mask_a, mask_b): (MaskW, MaskW),
    ) {
        let n = self.normal;
        let va = a.v - n.scale(self.inv_mass_a * delta);
        let wa = a.w - k_a.scale(delta);
        let vb = b.v + n.scale(self.inv_mass_b * delta);
        let wb = b.w + k_b.scale(delta);
        Self::store::<MASKED>(a, b, (va, wa, vb, wb), (mask_a, mask_b));
    }

    /// Stores the new velocities of both sides: with `MASKED`, only in the lanes of the
    /// masks.
    #[inline(always)]
    fn store<const MASKED: bool>(
        a: &mut Velocities,
        b: &mut Velocities,
        (va, wa, vb, wb): (Vec3W, Vec3W, Vec3W, Vec3W),
        (mask_a, mask_b): (MaskW, MaskW),
    ) {
        if MASKED {
            a.v = Vec3W::select(mask_a, va, a.v);
            a.w = Vec3W::select(mask_a, wa, a.w);
            b.v = Vec3W::select(mask_b, vb, b.v);
            b.w = Vec3W::select(mask_b, wb, b.w);
        } else {
            (a.v, a.w, b.v, b.w) = (va, wa, vb, wb);
        }
    }

    /// The uniform step over each lane's points (see `ContactConstraint::solve_patch`,
    /// which this follows operation for operation in the lanes of `patch`).
    #[inline(always)]
    fn solve_patch<const MASKED: bool, const ALL: bool>(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        seps: &[FloatW; 4],
        k: &SolveParams,
        use_bias: bool,
    ) -> FloatW {
        let n = self.normal;
        let soft = k.softness;
        let zero = FloatW::ZERO;
        let c_soft = if use_bias && soft.mass_scale > 0.0 {
            soft.impulse_scale / soft.mass_scale
        } else {
            0.0
        };
        // The sums over each lane's points, formed here rather than stored (bundles are
        // streamed through every pass: their size is time), in the order
        // `ContactConstraint::prepare` forms them.
        let one = FloatW::splat(1.0);
        let (mut count, mut rn_a, mut rn_b) = (zero, Vec3W::ZERO, Vec3W::ZERO);
        for p in &self.points[..self.points_used] {
            if ALL {
                let (pa, pb) = p.rn(n);
                (count, rn_a, rn_b) = (count + one, rn_a + pa, rn_b + pb);
            } else {
                let (pa, pb) = p.rn(n);
                let has = p.has::<MASKED>(self.count);
                count = FloatW::select(has, count + one, count);
                rn_a = Vec3W::select(has, rn_a + pa, rn_a);
                rn_b = Vec3W::select(has, rn_b + pb, rn_b);
            }
        }
        let k_a = self.inv_inertia_a.mul(rn_a);
        let k_b = self.inv_inertia_b.mul(rn_b);
        let dv = (b.v - a.v).dot(n);
        let mut num = (dv + (b.w.dot(rn_b) - a.w.dot(rn_a))) + (count - one) * dv;
        let mut den =
            count * count * (self.inv_mass_a + self.inv_mass_b) + rn_a.dot(k_a) + rn_b.dot(k_b);
        let mut lowest = FloatW::splat(f32::INFINITY);
        for (i, p) in self.points[..self.points_used].iter().enumerate() {
            let s = seps[i];
            let has = p.has::<MASKED>(self.count);
            let speculative = s.gt(zero);
            let (bias, c) = if use_bias {
                let push = (FloatW::splat(soft.bias_rate) * s).max(FloatW::splat(-k.max_push));
                (
                    FloatW::select(speculative, s * FloatW::splat(k.inv_h), push),
                    FloatW::select(speculative, zero, FloatW::splat(c_soft)),
                )
            } else {
                (
                    FloatW::select(speculative, s * FloatW::splat(k.inv_h), zero),
                    zero,
                )
            };
            // `K_ii` of the soft term (see `ContactConstraint::solve_patch`).
            let ck = if use_bias {
                let k_ii = FloatW::select(p.normal_mass.gt(zero), one.div(p.normal_mass), zero);
                c * k_ii
            } else {
                zero
            };
            if ALL {
                num = num + (bias + ck * p.normal_impulse);
                den = den + ck;
                lowest = lowest.min(p.normal_impulse);
            } else {
                num = FloatW::select(has, num + (bias + ck * p.normal_impulse), num);
                den = FloatW::select(has, den + ck, den);
                lowest = FloatW::select(has, lowest.min(p.normal_impulse), lowest);
            }
        }
        let step = num.neg().div(den).max(lowest.neg());
        let step = if ALL {
            step
        } else {
            FloatW::select(self.patch, step, zero)
        };
        let total = count * step;
        let va = a.v - n.scale(self.inv_mass_a * total);
        let wa = a.w - k_a.scale(step);
        let vb = b.v + n.scale(self.inv_mass_b * total);
        let wb = b.w + k_b.scale(step);
        let new = (va, wa, vb, wb);
        if ALL {
            Self::store::<false>(a, b, new, (MaskW::ALL, MaskW::ALL));
        } else if MASKED {
            // A lane without the step keeps its velocities bit for bit, and a fixed side
            // of a lane with the step keeps its (kinematic) velocity too.
            let masks = (
                self.patch.and(self.points[0].mask_a),
                self.patch.and(self.points[0].mask_b),
            );
            Self::store::<true>(a, b, new, masks);
        } else {
            Self::store::<true>(a, b, new, (self.patch, self.patch));
        }
        step
    }

    /// Applies last step's impulses (warm starting), `MASKED` as [`masked`](Self::masked)
    /// says. Called through `simd::warm_start`, which compiles it for the CPU.
    #[inline(always)]
    pub(crate) fn warm_start_lanes<const MASKED: bool>(
        &self,
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) {
        let mut a = Self::gather_velocities(&self.side_a, &self.fixed_a, chunk);
        let mut b = Self::gather_velocities(&self.side_b, &self.fixed_b, chunk);
        let [t0, t1] = self.tangents;
        // Summed first, as the scalar `ContactConstraint::warm_start` does (a lane
        // without a point skips it).
        let mut linear = Vec3W::ZERO;
        let mut moment_a = Vec3W::ZERO;
        let mut moment_b = Vec3W::ZERO;
        for p in &self.points[..self.points_used] {
            let impulse = self.normal.scale(p.normal_impulse)
                + t0.scale(p.tangent_impulse[0])
                + t1.scale(p.tangent_impulse[1]);
            let (l, ma, mb) = (
                linear + impulse,
                moment_a + p.r_a.cross(impulse),
                moment_b + p.r_b.cross(impulse),
            );
            if MASKED {
                let has = p.mask_a.or(p.mask_b);
                linear = Vec3W::select(has, l, linear);
                moment_a = Vec3W::select(has, ma, moment_a);
                moment_b = Vec3W::select(has, mb, moment_b);
            } else {
                (linear, moment_a, moment_b) = (l, ma, mb);
            }
        }
        let va = a.v - linear.scale(self.inv_mass_a);
        let wa = a.w - self.inv_inertia_a.mul(moment_a);
        let vb = b.v + linear.scale(self.inv_mass_b);
        let wb = b.w + self.inv_inertia_b.mul(moment_b);
        // Every used lane has its first point: its masks say which sides move.
        let masks = (self.points[0].mask_a, self.points[0].mask_b);
        Self::store::<MASKED>(&mut a, &mut b, (va, wa, vb, wb), masks);
        Self::scatter_velocities(&self.side_a, &a, chunk);
        Self::scatter_velocities(&self.side_b, &b, chunk);
    }

    /// One iteration: friction (relax pass only), then the soft normal constraint
    /// (`use_bias` false: the relax pass, no position correction); `MASKED` as
    /// [`masked`](Self::masked) says. Called through `simd::solve`, which compiles it for
    /// the CPU.
    #[inline(always)]
    pub(crate) fn solve_lanes<const MASKED: bool>(
        &mut self,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        k: &SolveParams,
        use_bias: bool,
    ) {
        let (mut a, pose_a) = Self::gather_bodies(&self.side_a, &self.fixed_a, chunk);
        let (mut b, pose_b) = Self::gather_bodies(&self.side_b, &self.fixed_b, chunk);
        let n = self.normal;
        let [t0, t1] = self.tangents;
        let used = self.points_used;
        let zero = FloatW::ZERO;

        // Friction in the relax pass only: see the scalar `ContactConstraint::solve`.
        let friction_points = if use_bias { 0 } else { used };
        for i in 0..friction_points {
            let p = self.points[i];
            let dv = Self::relative_velocity(&a, &b, p.r_a, p.r_b);
            let max = self.friction * p.normal_impulse;
            let vt = [
                dv.dot(t0) - self.tangent_speed[0],
                dv.dot(t1) - self.tangent_speed[1],
            ];
            let old = p.tangent_impulse;
            let mut new = [
                old[0] - p.tangent_mass[0] * vt[0],
                old[1] - p.tangent_mass[1] * vt[1],
            ];
            let len2 = new[0] * new[0] + new[1] * new[1];
            let clamp = len2.gt(max * max);
            if clamp.any() {
                let slip = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
                let sliding = slip.gt(FloatW::splat(SLIDING_SPEED));
                let s = max.div(len2.sqrt());
                let neg_max = max.neg();
                for (k, nk) in new.iter_mut().enumerate() {
                    let slide = (neg_max * vt[k]).div(slip);
                    let scaled = *nk * s;
                    *nk = FloatW::select(clamp, FloatW::select(sliding, slide, scaled), *nk);
                }
            }
            self.points[i].tangent_impulse = new;
            let impulse = t0.scale(new[0] - old[0]) + t1.scale(new[1] - old[1]);
            self.apply::<MASKED>(&mut a, &mut b, &p, impulse);
        }

        let soft = k.softness;
        let bouncy = MaskW::ALL.and_not(self.restitution.eq(zero));
        let bouncy_any = bouncy.any();
        let shift = (pose_b.dp - pose_a.dp).dot(n);
        let n_a = pose_a.dq.conjugate().rotate(n);
        let n_b = pose_b.dq.conjugate().rotate(n);
        // Each point's separation, once for the patch step and the points. (Its bias and
        // softness are formed again in each: keeping them in a row array as the scalar
        // `ContactConstraint::solve` does cost 5 % more instructions here, in stack
        // traffic, on pyramid_big.)
        let mut seps = [zero; 4];
        for (i, p) in self.points[..used].iter().enumerate() {
            seps[i] = shift + (p.r_b.dot(n_b) - p.r_a.dot(n_a)) + p.base_separation;
        }
        // Every used lane has every point when not `MASKED`.
        let all = !MASKED && self.patch_all;
        let step = if all {
            Some(self.solve_patch::<false, true>(&mut a, &mut b, &seps, k, use_bias))
        } else if self.patch.any() {
            Some(self.solve_patch::<MASKED, false>(&mut a, &mut b, &seps, k, use_bias))
        } else {
            None
        };
        for (i, &s) in seps[..used].iter().enumerate() {
            let p = &mut self.points[i];
            let old = match step {
                Some(step) if all => p.normal_impulse + step,
                Some(step) => FloatW::select(
                    self.patch.and(p.has::<MASKED>(self.count)),
                    p.normal_impulse + step,
                    p.normal_impulse,
                ),
                None => p.normal_impulse,
            };
            let speculative = s.gt(zero);
            let gap = s * FloatW::splat(k.inv_h);
            let (bias, mass_scale, impulse_scale) = if use_bias {
                let push = (FloatW::splat(soft.bias_rate) * s).max(FloatW::splat(-k.max_push));
                (
                    FloatW::select(speculative, gap, push),
                    FloatW::select(
                        speculative,
                        FloatW::splat(1.0),
                        FloatW::splat(soft.mass_scale),
                    ),
                    FloatW::select(speculative, zero, FloatW::splat(soft.impulse_scale)),
                )
            } else {
                (
                    FloatW::select(speculative, gap, zero),
                    FloatW::splat(1.0),
                    zero,
                )
            };
            // `r × n` and `I (r × n)` are formed here rather than stored: the passes
            // stream every bundle from memory, and these four vectors were 40 % of a
            // point's bytes.
            let rn = p.rn(n);
            let k_ab = (self.inv_inertia_a.mul(rn.0), self.inv_inertia_b.mul(rn.1));
            let vn = Self::normal_velocity(n, &a, &b, rn);
            let lambda = p.normal_mass.neg() * mass_scale * (vn + bias) - impulse_scale * old;
            let new = (old + lambda).max(zero);
            let (new, delta, max_normal) = if bouncy_any {
                // In both passes, and the bounce: see the scalar `ContactConstraint::solve`.
                let pushing = new.gt(zero);
                let rv = FloatW::select(pushing, p.relative_velocity.min(vn), p.relative_velocity);
                p.relative_velocity = rv;
                let both = self.both;
                let rv = FloatW::select(both, vn, rv);
                let bounce = bouncy
                    .and(pushing)
                    .and(FloatW::splat(-k.restitution_threshold).gt(rv))
                    .and(FloatW::splat(BOUNCE_SLOP).gt(s).or(both))
                    .and_not(p.bounced);
                let kick = (p.normal_mass * ((self.restitution * rv).neg() - vn)).max(zero);
                p.bounced = p.bounced.or(bounce);
                let max_normal =
                    FloatW::select(bounce, p.max_normal_impulse.max(kick), p.max_normal_impulse);
                (
                    FloatW::select(bounce, old, new),
                    FloatW::select(bounce, kick, new - old),
                    max_normal,
                )
            } else {
                // No lane can bounce: the approach speed and the bounce flags only serve
                // restitution (a point without it carries no approach to the next step,
                // see `ContactImpulse::carried_approach`), so they are neither read nor
                // written, two of a point's eight cache lines.
                (new, new - old, p.max_normal_impulse)
            };
            p.normal_impulse = new;
            p.max_normal_impulse = max_normal.max(new);
            let p = *p;
            self.apply_normal::<MASKED>(&mut a, &mut b, k_ab, delta, (p.mask_a, p.mask_b));
        }
        Self::scatter_velocities(&self.side_a, &a, chunk);
        Self::scatter_velocities(&self.side_b, &b, chunk);
    }
}

#[cfg(test)]
mod tests {
    use arrayvec::ArrayVec;
    use joule_jobs::DisjointPlan;

    use super::*;
    use crate::dynamics::solver::contact::{BodyMass, ConstraintPoint, RollingRows, tangent_basis};
    use crate::dynamics::solver::simd;
    use crate::math::Mat3A;

    struct Rng(u64);

    impl Rng {
        fn f(&mut self, lo: f32, hi: f32) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
        }
        fn v(&mut self, r: f32) -> Vec3A {
            Vec3A::new(self.f(-r, r), self.f(-r, r), self.f(-r, r))
        }
    }

    fn body(rng: &mut Rng, speed: f32, inv_mass: f32) -> (SolverBody, BodyMass) {
        let m = Mat3A::from_cols(rng.v(0.5), rng.v(0.5), rng.v(0.5));
        let body = SolverBody {
            v: rng.v(speed),
            w: rng.v(speed),
            dp: rng.v(0.01),
            dq: Quat::from_scaled_axis(rng.v(0.02).into()),
        };
        let mass = BodyMass {
            inv_mass: rng.f(0.1, 2.0) * inv_mass,
            inv_inertia: (m * m.transpose() + Mat3A::from_diagonal(glam::Vec3::splat(0.2)))
                * inv_mass,
        };
        (body, mass)
    }

    /// Scalar constraint `k` of a lane set: dynamic sides, point counts and materials vary
    /// with `k` so that lanes disagree (masks, sliding and sticking friction, bounces).
    fn constraint(
        rng: &mut Rng,
        k: usize,
        (a, b): (Option<u32>, Option<u32>),
        masses: &[BodyMass],
    ) -> ContactConstraint {
        let n = rng.v(1.0).normalize();
        let mut points = ArrayVec::new();
        for _ in 0..1 + (k * 3 + 1) % 4 {
            points.push(ConstraintPoint {
                r_a: rng.v(0.7),
                r_b: rng.v(0.7),
                separation: rng.f(-0.05, 0.02),
                normal_impulse: rng.f(0.0, 3.0),
                tangent_impulse: [rng.f(-1.0, 1.0), rng.f(-1.0, 1.0)],
                ..ConstraintPoint::default()
            });
        }
        ContactConstraint {
            contact: k as u32,
            body_a: a,
            body_b: b,
            fixed_a: if k == 2 {
                (rng.v(1.0), rng.v(1.0))
            } else {
                (Vec3A::ZERO, Vec3A::ZERO)
            },
            fixed_b: (Vec3A::ZERO, Vec3A::ZERO),
            normal: n,
            tangents: tangent_basis(n),
            friction: [0.6, 0.05, 1.0, 0.3][k % 4],
            restitution: [0.0, 0.5, 0.9, 0.0][k % 4],
            // A conveyor on one lane: lanes must still match the scalar path bit for bit.
            tangent_speed: if k % 4 == 1 { [0.7, -0.2] } else { [0.0, 0.0] },
            rolling: RollingRows::default(),
            softness: Softness::new(90.0, 10.0, 1.0 / 600.0),
            mass_a: a.map_or(BodyMass::FIXED, |i| masses[i as usize]),
            mass_b: b.map_or(BodyMass::FIXED, |i| masses[i as usize]),
            points,
            patch: Default::default(),
        }
    }

    /// The invariant of the module: a bundle moves bodies and impulses bit for bit as the
    /// scalar constraints do, pass by pass, for full and partial bundles.
    #[test]
    fn bundle_matches_scalar_constraints_bit_for_bit() {
        for lanes in 1..=LANES {
            let mut rng = Rng(0x5eed + lanes as u64);
            // Lane 3's bodies are heavy and barely move: its friction clamps without sliding.
            let (mut bodies, masses): (Vec<SolverBody>, Vec<BodyMass>) = (0..2 * LANES)
                .map(|i| match i {
                    6.. => body(&mut rng, 0.001, 0.001),
                    _ => body(&mut rng, 2.0, 1.0),
                })
                .unzip();
            // Lane 1 has a static A, lane 2 a kinematic A, lane 3 a static B.
            let sides = |k: usize| {
                let a = (k != 1 && k != 2).then_some(2 * k as u32);
                let b = (k != 3).then_some(2 * k as u32 + 1);
                (a, b)
            };
            let mut scalar: Vec<ContactConstraint> = (0..lanes)
                .map(|k| constraint(&mut rng, k, sides(k), &masses))
                .collect();
            let mut bundle = ContactBundle::new();
            let mut start = StartVelocities::default();
            let mut indices = Vec::new();
            for c in &mut scalar {
                let at = |i: Option<u32>| i.map_or(SolverBody::FIXED, |i| bodies[i as usize]);
                let (a, b) = (at(c.body_a), at(c.body_b));
                let mut slot = |i: Option<u32>| {
                    i.map(|i| {
                        indices.push(i as usize);
                        indices.len() as u32 - 1
                    })
                };
                let slots = (slot(c.body_a), slot(c.body_b));
                // The bundle gets the constraint unprepared and prepares its lanes itself.
                bundle.push(c, slots, (&a, &b), &mut start);
                c.prepare(&a, &b);
            }
            bundle.prepare(&start);
            let mut expected = bodies.clone();
            let mut plan = DisjointPlan::new();
            plan.set(bodies.len(), indices.iter().copied()).unwrap();
            let bounds = [0, indices.len()];
            let params = SolveParams {
                inv_h: 600.0,
                max_push: 3.0,
                softness: scalar[0].softness,
                restitution_threshold: 0.5,
            };

            for pass in [0, 1, 2, 1, 2, 1, 2] {
                for c in &mut scalar {
                    let mut fa = SolverBody::FIXED;
                    let mut fb = SolverBody::FIXED;
                    let (a, b) = match (c.body_a, c.body_b) {
                        (Some(ia), Some(ib)) => {
                            let [a, b] = expected
                                .get_disjoint_mut([ia as usize, ib as usize])
                                .unwrap();
                            (a, b)
                        }
                        (Some(ia), None) => (&mut expected[ia as usize], &mut fb),
                        (None, Some(ib)) => (&mut fa, &mut expected[ib as usize]),
                        (None, None) => unreachable!(),
                    };
                    match pass {
                        0 => c.warm_start(a, b),
                        1 => c.solve(a, b, params.inv_h, params.max_push, 0.5, true),
                        _ => c.solve(a, b, params.inv_h, params.max_push, 0.5, false),
                    }
                }
                let mut chunk = plan.chunks(&mut bodies, &bounds).unwrap().next().unwrap();
                match pass {
                    0 => simd::warm_start(std::slice::from_mut(&mut bundle), &mut chunk),
                    1 => simd::solve(std::slice::from_mut(&mut bundle), &mut chunk, &params, true),
                    _ => simd::solve(
                        std::slice::from_mut(&mut bundle),
                        &mut chunk,
                        &params,
                        false,
                    ),
                }
                for (i, (got, want)) in bodies.iter().zip(&expected).enumerate() {
                    assert_eq!(
                        (got.v, got.w),
                        (want.v, want.w),
                        "{lanes} lanes, pass {pass}: body {i}"
                    );
                }
                let got: Vec<_> = bundle
                    .impulses(1.0)
                    .map(|(id, p)| (id, p.collect::<Vec<_>>()))
                    .collect();
                let want: Vec<_> = scalar
                    .iter()
                    .map(|c| {
                        let p = c.points.iter().map(|p| p.stored(c.restitution, 1.0));
                        (c.contact, p.collect::<Vec<_>>())
                    })
                    .collect();
                assert_eq!(got, want, "{lanes} lanes, pass {pass}: impulses");
            }
        }
    }
}
