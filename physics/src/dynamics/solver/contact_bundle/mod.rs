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
mod solve;
#[cfg(test)]
mod tests;

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

/// Velocities (linear, angular) of the lanes' sides without a dynamic body.
type FixedVelocities = [(Vec3A, Vec3A); LANES];

/// Motion (translation, rotation) of the lanes' sides without a dynamic body since the
/// start of the step.
type FixedPoses = [(Vec3A, Quat); LANES];

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
    fixed_a: FixedVelocities,
    /// The same for B.
    fixed_b: FixedVelocities,
    /// Motion (translation, rotation) since the start of the step of each lane's A when
    /// it has no dynamic body, kept only while `side_a.moving`, as `fixed_a` is: advanced
    /// by `solve_lanes` as [`ContactConstraint::solve`] advances its `pose_a`.
    pose_a: FixedPoses,
    /// The same for B.
    pose_b: FixedPoses,
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
    /// Per side, the lanes whose body locks a translation and each lane's
    /// `BodyMass::linear_axes` (1 along free axes, 0 along locked ones). Applied to every
    /// lane without a branch: multiplying by one keeps an unlocked lane's bits, and a
    /// per-bundle branch on whether any lane is locked cost the solve passes several
    /// times what the multiplies do (measured on pyramid_big).
    locks: [(MaskW, Vec3W); 2],
    /// Whether some lane reports contact forces (a finite `force_threshold`): only then
    /// are the `tallies` kept, so the passes of other bundles never touch their lines.
    track: bool,
    /// Each lane's [`ContactConstraint::force_threshold`].
    force_threshold: [f32; LANES],
    /// Per point: the step's tallies of normal impulse and of the two friction impulses
    /// (see [`ConstraintPoint::normal_tally`](super::contact::ConstraintPoint::normal_tally)),
    /// kept only while `track`. Last in the bundle, out of the lines the passes stream.
    tallies: [[FloatW; 3]; 4],
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
    /// Substep (kinematic sides move by it in each relax pass).
    pub h: f32,
    /// Inverse substep.
    pub inv_h: f32,
    /// Fastest push-out speed.
    pub max_push: f32,
    /// Contact softness.
    pub softness: Softness,
    /// Approach speed at and above which restitution applies.
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
        self.track = false;
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
        Self::push_fixed(
            &mut self.side_a,
            (&mut self.fixed_a, &mut self.pose_a),
            i,
            moving_a,
            c.fixed_a,
        );
        self.both.0[i] = if slot_a.is_some() && slot_b.is_some() {
            u32::MAX
        } else {
            0
        };
        self.side_b.slot[i] = slot_b.unwrap_or(NO_SLOT);
        Self::push_fixed(
            &mut self.side_b,
            (&mut self.fixed_b, &mut self.pose_b),
            i,
            moving_b,
            c.fixed_b,
        );
        start.a[i] = c.velocity_a(a);
        start.b[i] = c.velocity_b(b);
        self.normal.set_lane(i, c.normal);
        self.tangents[0].set_lane(i, c.tangents[0]);
        self.tangents[1].set_lane(i, c.tangents[1]);
        self.friction.0[i] = c.friction;
        self.restitution.0[i] = c.restitution;
        self.force_threshold[i] = c.force_threshold;
        if c.force_threshold.is_finite() {
            self.track = true;
            for (t, p) in self.tallies.iter_mut().zip(&c.points) {
                t[0].0[i] = p.normal_tally;
                t[1].0[i] = p.tangent_tally[0];
                t[2].0[i] = p.tangent_tally[1];
            }
        }
        self.tangent_speed[0].0[i] = c.tangent_speed[0];
        self.tangent_speed[1].0[i] = c.tangent_speed[1];
        let (ma, mb) = (&c.mass_a, &c.mass_b);
        self.inv_mass_a.0[i] = ma.inv_mass;
        self.inv_inertia_a.set_lane(i, &ma.inv_inertia);
        self.inv_mass_b.0[i] = mb.inv_mass;
        self.inv_inertia_b.set_lane(i, &mb.inv_inertia);
        for (side, m) in self.locks.iter_mut().zip([ma, mb]) {
            side.0.0[i] = if m.locks_translation() { u32::MAX } else { 0 };
            side.1.set_lane(i, m.linear_axes);
        }
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

    /// Records lane `i`'s fixed velocity on one side, and its motion so far (none). The
    /// cold arrays are written only once the side has a moving lane (reset then, for the
    /// lanes before it, which are at rest): a bundle of static sides never touches them.
    fn push_fixed(
        sides: &mut LaneSides,
        (fixed, pose): (&mut FixedVelocities, &mut FixedPoses),
        i: usize,
        moving: bool,
        velocity: (Vec3A, Vec3A),
    ) {
        if moving && !sides.moving {
            *fixed = [(Vec3A::ZERO, Vec3A::ZERO); LANES];
            *pose = [(Vec3A::ZERO, Quat::IDENTITY); LANES];
            sides.moving = true;
        }
        if sides.moving {
            fixed[i] = velocity;
            pose[i] = (Vec3A::ZERO, Quat::IDENTITY);
        }
    }

    /// Moves the lanes' sides without a dynamic body on by one substep `h`, as
    /// [`ContactConstraint::solve`] moves its own (a side at rest does not move; nor, bit
    /// for bit, does one at exactly zero velocity).
    fn advance_fixed(
        sides: &LaneSides,
        fixed: &FixedVelocities,
        pose: &mut FixedPoses,
        count: usize,
        h: f32,
    ) {
        if !sides.moving {
            return;
        }
        for i in 0..count {
            if sides.slot[i] == NO_SLOT {
                super::contact::advance_fixed(&mut pose[i], fixed[i], h);
            }
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
        let i = (&ia, &ib);
        let tangents = self.tangents;
        // The inverse masses along the normal and the tangents (`BodyMass::inv_mass_along`).
        let [m, m_t0, m_t1] = [n, tangents[0], tangents[1]].map(|d| self.inv_mass_along(d));
        let mut sum_a = Vec3W::ZERO;
        let mut sum_b = Vec3W::ZERO;
        let mut count = FloatW::ZERO;
        for p in &mut self.points[..self.points_used] {
            let (r_a, r_b) = (p.r_a, p.r_b);
            let (rn_a, rn_b) = p.rn(n);
            p.normal_mass = effective_mass(m, i, rn_a, rn_b);
            p.tangent_mass = [
                effective_mass(m_t0, i, r_a.cross(tangents[0]), r_b.cross(tangents[0])),
                effective_mass(m_t1, i, r_a.cross(tangents[1]), r_b.cross(tangents[1])),
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
        let k = count * count * (m.0 + m.1) + sum_a.dot(ia.mul(sum_a)) + sum_b.dot(ib.mul(sum_b));
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

    /// Each side's inverse mass along `d`, lane by lane as
    /// `BodyMass::inv_mass_along`: the plain inverse mass unless the lane's body locks
    /// a translation.
    #[inline(always)]
    pub(super) fn inv_mass_along(&self, d: Vec3W) -> (FloatW, FloatW) {
        let (ma, mb) = (self.inv_mass_a, self.inv_mass_b);
        let [(locked_a, axes_a), (locked_b, axes_b)] = self.locks;
        (
            FloatW::select(locked_a, ma * d.mul_each(axes_a).dot(d), ma),
            FloatW::select(locked_b, mb * d.mul_each(axes_b).dot(d), mb),
        )
    }

    /// The velocity changes of both sides for the linear impulse `p` (A's to subtract,
    /// B's to add), as `BodyMass::linear`.
    #[inline(always)]
    pub(super) fn linear(&self, p: Vec3W) -> (Vec3W, Vec3W) {
        (
            p.mul_each(self.locks[0].1).scale(self.inv_mass_a),
            p.mul_each(self.locks[1].1).scale(self.inv_mass_b),
        )
    }

    /// The velocity changes of both sides for the impulse `delta` along the normal, as
    /// `BodyMass::linear_along`.
    #[inline(always)]
    pub(super) fn linear_along_normal(&self, delta: FloatW) -> (Vec3W, Vec3W) {
        let n = self.normal;
        (
            n.scale(self.inv_mass_a * delta).mul_each(self.locks[0].1),
            n.scale(self.inv_mass_b * delta).mul_each(self.locks[1].1),
        )
    }

    /// The lanes that report contact forces: each one's contact id, force threshold
    /// and, per point, the step's total normal impulse and two friction impulses (as
    /// [`ConstraintPoint::step_totals`](super::contact::ConstraintPoint::step_totals)
    /// gives them for a scalar point). Nothing unless a lane tracks.
    pub fn step_totals(
        &self,
    ) -> impl Iterator<Item = (u32, f32, impl Iterator<Item = (f32, [f32; 2])>)> {
        let lanes = if self.track { self.count } else { 0 };
        (0..lanes)
            .filter(|&i| self.force_threshold[i].is_finite())
            .map(move |i| {
                let points = self.points[..usize::from(self.point_count[i])]
                    .iter()
                    .zip(&self.tallies)
                    .map(move |(p, t)| {
                        (
                            t[0].0[i] + p.normal_impulse.0[i],
                            [
                                t[1].0[i] + p.tangent_impulse[0].0[i],
                                t[2].0[i] + p.tangent_impulse[1].0[i],
                            ],
                        )
                    });
                (self.contact[i], self.force_threshold[i], points)
            })
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
                    relative_velocity: p.relative_velocity.0[i],
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
        (fixed, pose): (&FixedVelocities, &FixedPoses),
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) -> (Velocities, Poses) {
        let moving = sides.moving;
        let fixed = moving.then_some(fixed);
        let mut v = [Vec3A::ZERO; LANES];
        let mut w = [Vec3A::ZERO; LANES];
        let mut dp = [Vec3A::ZERO; LANES];
        let mut dq = [Quat::IDENTITY; LANES];
        for (i, &slot) in sides.slot.iter().enumerate() {
            if slot == NO_SLOT {
                (v[i], w[i]) = Self::fixed_velocity(fixed, i);
                if moving {
                    (dp[i], dq[i]) = pose[i];
                }
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
}
