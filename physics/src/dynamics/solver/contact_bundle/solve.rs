//! The bundle's passes: warm start, solve (soft normal with the patch step, friction,
//! rolling, restitution) and relax, eight lanes at a time.

use super::*;

impl ContactBundle {
    /// Relative velocity of the anchors (B's minus A's).
    #[inline(always)]
    pub(super) fn relative_velocity(
        a: &Velocities,
        b: &Velocities,
        r_a: Vec3W,
        r_b: Vec3W,
    ) -> Vec3W {
        (b.v + b.w.cross(r_b)) - (a.v + a.w.cross(r_a))
    }

    /// Applies `impulse` at the anchors, to A negated: with `MASKED`, only in the lanes of
    /// the point's masks (see [`ContactBundle::masked`]).
    #[inline(always)]
    pub(super) fn apply<const MASKED: bool>(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        p: &BundlePoint,
        impulse: Vec3W,
    ) {
        if MASKED {
            self.apply_masked(a, b, p, impulse, p.mask_a, p.mask_b);
        } else {
            let (dv_a, dv_b) = self.linear(impulse);
            a.v = a.v - dv_a;
            a.w = a.w - self.inv_inertia_a.mul(p.r_a.cross(impulse));
            b.v = b.v + dv_b;
            b.w = b.w + self.inv_inertia_b.mul(p.r_b.cross(impulse));
        }
    }

    #[inline(always)]
    pub(super) fn apply_masked(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        p: &BundlePoint,
        impulse: Vec3W,
        mask_a: MaskW,
        mask_b: MaskW,
    ) {
        let (dv_a, dv_b) = self.linear(impulse);
        let va = a.v - dv_a;
        let wa = a.w - self.inv_inertia_a.mul(p.r_a.cross(impulse));
        let vb = b.v + dv_b;
        let wb = b.w + self.inv_inertia_b.mul(p.r_b.cross(impulse));
        a.v = Vec3W::select(mask_a, va, a.v);
        a.w = Vec3W::select(mask_a, wa, a.w);
        b.v = Vec3W::select(mask_b, vb, b.v);
        b.w = Vec3W::select(mask_b, wb, b.w);
    }

    /// Normal velocity of B's anchors relative to A's (see `ContactConstraint`).
    #[inline(always)]
    pub(super) fn normal_velocity(
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
    pub(super) fn apply_normal<const MASKED: bool>(
        &self,
        a: &mut Velocities,
        b: &mut Velocities,
        (k_a, k_b): (Vec3W, Vec3W),
        delta: FloatW,
        (mask_a, mask_b): (MaskW, MaskW),
    ) {
        let (dv_a, dv_b) = self.linear_along_normal(delta);
        let va = a.v - dv_a;
        let wa = a.w - k_a.scale(delta);
        let vb = b.v + dv_b;
        let wb = b.w + k_b.scale(delta);
        Self::store::<MASKED>(a, b, (va, wa, vb, wb), (mask_a, mask_b));
    }

    /// Stores the new velocities of both sides: with `MASKED`, only in the lanes of the
    /// masks.
    #[inline(always)]
    pub(super) fn store<const MASKED: bool>(
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
    pub(super) fn solve_patch<const MASKED: bool, const ALL: bool>(
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
        let (m_a, m_b) = self.inv_mass_along(n);
        let mut den = count * count * (m_a + m_b) + rn_a.dot(k_a) + rn_b.dot(k_b);
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
        let (dv_a, dv_b) = self.linear_along_normal(total);
        let va = a.v - dv_a;
        let wa = a.w - k_a.scale(step);
        let vb = b.v + dv_b;
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
        &mut self,
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) {
        if self.track {
            // Each substep's warm start applies the accumulated impulses: tallied for the
            // step's totals (see `ConstraintPoint::normal_tally`).
            for (t, p) in self
                .tallies
                .iter_mut()
                .zip(&self.points[..self.points_used])
            {
                t[0] = t[0] + p.normal_impulse;
                t[1] = t[1] + p.tangent_impulse[0];
                t[2] = t[2] + p.tangent_impulse[1];
            }
        }
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
        let (dv_a, dv_b) = self.linear(linear);
        let va = a.v - dv_a;
        let wa = a.w - self.inv_inertia_a.mul(moment_a);
        let vb = b.v + dv_b;
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
        if !use_bias {
            // Kinematic sides move on by the substep just integrated (see the scalar
            // `ContactConstraint::solve`).
            let (count, h) = (self.count, k.h);
            Self::advance_fixed(&self.side_a, &self.fixed_a, &mut self.pose_a, count, h);
            Self::advance_fixed(&self.side_b, &self.fixed_b, &mut self.pose_b, count, h);
        }
        let (mut a, pose_a) =
            Self::gather_bodies(&self.side_a, (&self.fixed_a, &self.pose_a), chunk);
        let (mut b, pose_b) =
            Self::gather_bodies(&self.side_b, (&self.fixed_b, &self.pose_b), chunk);
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
                    .and(FloatW::splat(-k.restitution_threshold).ge(rv))
                    .and(FloatW::splat(BOUNCE_SLOP).gt(s).or(both))
                    .and_not(p.bounced);
                let kick = (p.normal_mass * ((self.restitution * rv).neg() - vn)).max(zero);
                p.bounced = p.bounced.or(bounce);
                if self.track {
                    // The kick is outside the accumulated impulse: tallied here.
                    let t = &mut self.tallies[i][0];
                    *t = *t + FloatW::select(bounce, kick, zero);
                }
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
