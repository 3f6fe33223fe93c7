//! Integration: loading the awake bodies into solver bodies, the velocity and position
//! substeps (gravity, forces, damping, the gyroscopic term, speed limits), free bodies'
//! whole-step flight, and writing the solved bodies back.

use super::*;
use crate::math::{cross, quat_dot, quat_mul, quat_normalize, rotate};

/// Loads the awake bodies into solver bodies, their masses and integration parameters,
/// blocks of [`BODY_BLOCK`] in parallel (each entry from its own body only).
pub(super) fn load_bodies(
    jobs: &JobSystem,
    bodies: &Bodies,
    gravity: Vec3A,
    h: f32,
    s: &mut SolverScratch,
) {
    let awake = bodies.awake();
    let n = awake.len();
    // Every entry is overwritten below, so only new ones are initialised.
    s.bodies.truncate(n);
    s.bodies.resize(n, SolverBody::FIXED);
    s.masses.truncate(n);
    s.masses.resize(n, BodyMass::FIXED);
    s.params.truncate(n);
    s.params.resize(n, BodyParams::default());
    let substeps = s.constants.substeps;
    // Each block's three outputs, on the stack (at most `MAX_BLOCKS`), claimed by workers.
    let block = BODY_BLOCK.max(n.div_ceil(MAX_BLOCKS));
    let mut blocks: SmallVec<[_; MAX_BLOCKS]> = s
        .bodies
        .chunks_mut(block)
        .zip(s.masses.chunks_mut(block))
        .zip(s.params.chunks_mut(block))
        .enumerate()
        .map(|(k, ((b, m), p))| (k * block, b, m, p))
        .collect();
    jobs.parallel_for_slice(&mut blocks, 1, |_, claimed| {
        for (first, out_bodies, out_masses, out_params) in claimed.iter_mut() {
            let sims = &awake[*first..];
            for (((sim, body), mass), params) in sims
                .iter()
                .zip(out_bodies.iter_mut())
                .zip(out_masses.iter_mut())
                .zip(out_params.iter_mut())
            {
                (*body, *mass, *params) = load_body(bodies, sim, gravity, h, substeps);
            }
        }
    });
}

/// One awake body's solver body, mass and integration parameters.
pub(super) fn load_body(
    bodies: &Bodies,
    sim: &BodySim,
    gravity: Vec3A,
    h: f32,
    substeps: u32,
) -> (SolverBody, BodyMass, BodyParams) {
    let cold = &bodies.bodies[sim.body as usize];
    let dynamic = cold.motion_type == MotionType::Dynamic;
    let locks = if dynamic {
        cold.locked_axes
    } else {
        LockedAxes::empty()
    };
    let inv_inertia = if dynamic {
        locks.project_angular(sim.inv_inertia_world())
    } else {
        Mat3A::ZERO
    };
    let (dv, dw) = if dynamic {
        (
            h * (gravity * cold.gravity_scale + sim.inv_mass * (cold.force + cold.constant_force)),
            h * (inv_inertia * (cold.torque + cold.constant_torque)),
        )
    } else {
        (Vec3A::ZERO, Vec3A::ZERO)
    };
    let gyroscopic = dynamic && !is_isotropic(&sim.inv_inertia_local);
    (
        SolverBody {
            v: locks.free_linear(sim.linear_velocity),
            w: locks.free_angular(sim.angular_velocity),
            dp: Vec3A::ZERO,
            dq: Quat::IDENTITY,
        },
        BodyMass {
            inv_mass: sim.inv_mass,
            inv_inertia,
            linear_axes: locks.linear_axes(),
        },
        BodyParams {
            dv: locks.free_linear(dv),
            carry: locks.free_linear(sim.velocity_carry),
            dw: locks.free_angular(dw),
            gyroscopic,
            rotation0: sim.transform.rotation,
            inertia_local: if gyroscopic {
                sim.inv_inertia_local.inverse()
            } else {
                Mat3A::ZERO
            },
            linear_damping: 1.0 / (1.0 + h * cold.linear_damping),
            angular_damping: 1.0 / (1.0 + h * cold.angular_damping),
            max_linear_speed: cold.max_linear_speed,
            max_angular_speed: cold.max_angular_speed,
            dynamic,
            // Cleared below for bodies that some constraint touches.
            free: dynamic,
            h,
            substeps,
            locks,
        },
    )
}

/// Whether an inverse inertia is a multiple of the identity (to f32 rounding): then
/// `w × (I w)` is zero and the gyroscopic step is skipped.
pub(super) fn is_isotropic(inv_inertia: &Mat3A) -> bool {
    let d = Vec3A::new(
        inv_inertia.x_axis.x,
        inv_inertia.y_axis.y,
        inv_inertia.z_axis.z,
    );
    let tol = 1e-6 * d.max_element();
    (d.max_element() - d.min_element()) <= tol
        && inv_inertia.x_axis.y.abs() <= tol
        && inv_inertia.x_axis.z.abs() <= tol
        && inv_inertia.y_axis.z.abs() <= tol
}

pub(super) fn integrate_velocities(t: &TeamScope<'_>, s: &mut SolverScratch) {
    for_each_body(
        t,
        s,
        |w| w.substeps,
        |b, p| {
            if p.dynamic && !p.free {
                velocity_substep(b, p);
            }
        },
    );
}

/// Runs `f` on every solver body and its parameters, in blocks of [`BODY_BLOCK`] on the
/// team, skipping the blocks whose [`BlockWork`] `wanted` says have nothing to do.
pub(super) fn for_each_body(
    t: &TeamScope<'_>,
    s: &mut SolverScratch,
    wanted: impl Fn(&BlockWork) -> bool + Sync,
    f: impl Fn(&mut SolverBody, &mut BodyParams) + Sync,
) {
    let work = &s.block_work;
    t.for_each_chunk_mut2(
        &mut s.bodies,
        &mut s.params,
        BODY_BLOCK,
        |k, bodies, params| {
            if wanted(&work[k]) {
                for (b, p) in bodies.iter_mut().zip(params) {
                    f(b, p);
                }
            }
        },
    );
}

/// One substep of velocity integration: gravity and forces (Kahan-summed), damping,
/// speed limits.
#[inline]
pub(super) fn velocity_substep(b: &mut SolverBody, p: &mut BodyParams) {
    // Kahan: `carry` holds what the last `v + dv` rounded away.
    let dv = p.dv - p.carry;
    let sum = b.v + dv;
    p.carry = (sum - b.v) - dv;
    let mut v = sum * p.linear_damping;
    let mut w = b.w + p.dw;
    if p.gyroscopic {
        w = gyroscopic_substep(w, quat_mul(b.dq, p.rotation0), &p.inertia_local, p.h);
    }
    let mut w = w * p.angular_damping;
    let vl = v.length_squared();
    if vl > p.max_linear_speed * p.max_linear_speed {
        v *= p.max_linear_speed / vl.sqrt();
    }
    let wl = w.length_squared();
    if wl > p.max_angular_speed * p.max_angular_speed {
        w *= p.max_angular_speed / wl.sqrt();
    }
    if p.locks.is_empty() {
        b.v = v;
        b.w = w;
    } else {
        // The gyroscopic term and the speed limits mix axes: zero the locked ones again.
        b.v = p.locks.free_linear(v);
        b.w = p.locks.free_angular(w);
    }
}

/// The gyroscopic term of Euler's equations, `I dw/dt = -w × (I w)`, over one substep,
/// in body axes (where `I` is constant), keeping both invariants of a torque-free body:
/// `|I w|`, the size of its angular momentum, and `w · I w`, twice its kinetic energy.
///
/// The step is the implicit midpoint rule, `I (w' - w) + h m × (I m) = 0` with
/// `m = (w + w') / 2`, solved by one Newton step from `w' = w`; that step is exactly
/// Kahan's linearly implicit discretisation of Euler's equations (Hirota & Kimura 2000),
///
/// ```text
/// I (w' - w) + h/2 (w × I w' + w' × I w) = 0,
/// ```
///
/// one 3x3 solve, as cheap as the backward Euler step it replaces. Kahan's step keeps the
/// ratio `|I w|² / (w · I w)` exactly whatever `h |w|` (checked in f64 to 1e-16 over random
/// inertias and `h |w|` up to 10), and changes each invariant by O((h |w|)³); scaling `w'`
/// back to the energy it came in with therefore restores both invariants at once. The
/// position substep then turns the body about `w'` itself, which leaves the spin in body
/// axes as it is, so both hold over the whole substep, at any step size: the energy
/// neither grows nor decays (to f32 rounding), and the spin stays on the curve where the two invariants
/// meet, so a fast-spinning thin body stays bounded as it did under backward Euler.
/// The step is second order, so the intermediate-axis flip keeps its period (the
/// torque-free top's, `2 K(k) / ω_p`).
///
/// Backward Euler (Catto, "Numerical Methods", GDC 2015), used before, damps at a rate
/// proportional to the substep: a box spun at a few rad/s about a skew axis lost 6 % of
/// |L| and 10 % of its energy in 10 s at the default substeps, a thin rod at 64 rad/s
/// nearly all of it (issue 28, item 6). Explicit Euler gains energy and blows up.
///
/// glam's `q * v` scales `v` by `|q|²`, and `rotation` (a product of two quaternions
/// normalised in f32) is off unit length by about 1e-7, more often long than short: in
/// and out of body axes that grew a free box's energy by 0.1 % in 10 s, so the result is
/// divided by `|q|⁴`.
#[inline]
pub(super) fn gyroscopic_substep(w: Vec3A, rotation: Quat, inertia: &Mat3A, h: f32) -> Vec3A {
    let wb = rotate(rotation.inverse(), w);
    let iw = *inertia * wb;
    let skew = |v: Vec3A| {
        Mat3A::from_cols(
            Vec3A::new(0.0, v.z, -v.y),
            Vec3A::new(-v.z, 0.0, v.x),
            Vec3A::new(v.y, -v.x, 0.0),
        )
    };
    // The midpoint residual's Jacobian at `w' = w`.
    let jacobian = *inertia + (skew(wb) * *inertia - skew(iw)) * (0.5 * h);
    let x = wb - jacobian.inverse() * (h * cross(wb, iw));
    let energy = wb.dot(iw);
    let now = x.dot(*inertia * x);
    let n = quat_dot(rotation, rotation);
    // sqrt(energy / now) / |q|⁴ in one division and one root.
    let scale = if now > 0.0 {
        (energy / (now * (n * n) * (n * n))).sqrt()
    } else {
        1.0
    };
    rotate(rotation, x * scale)
}

/// One substep of position integration.
#[inline]
pub(super) fn position_substep(b: &mut SolverBody, h: f32) {
    b.dp += h * b.v;
    let w = Quat::from_xyzw(b.w.x, b.w.y, b.w.z, 0.0);
    let dq = b.dq + (quat_mul(w, b.dq)) * (0.5 * h);
    b.dq = quat_normalize(dq);
}

pub(super) fn integrate_positions(t: &TeamScope<'_>, s: &mut SolverScratch) {
    for_each_body(
        t,
        s,
        |w| w.substeps,
        |b, p| {
            if !p.free {
                if !p.locks.is_empty() {
                    // The solved velocities have exact zeros on locked axes already (the
                    // projected masses add zero there); this keeps them so whatever a
                    // constraint did.
                    b.v = p.locks.free_linear(b.v);
                    b.w = p.locks.free_angular(b.w);
                }
                position_substep(b, p.h);
            }
        },
    );
}

/// Integrates every free body (dynamic, in no constraint) over all the step's substeps
/// at once, before the substep loop: nothing else acts on it during the step, so its
/// substeps need not wait for the constraints' passes.
pub(super) fn integrate_free(t: &TeamScope<'_>, s: &mut SolverScratch) {
    for_each_body(
        t,
        s,
        |w| w.free,
        |b, p| {
            if p.free {
                free_flight(b, p);
            }
        },
    );
}

/// All substeps of a body no constraint touches. In the common case (no damping, no
/// torque, no gyroscopic term, within the speed limits) this is the substep loop's closed form: with
/// `v_k = v_0 + k dv`, the body moves `h (n v_0 + dv n (n + 1) / 2)`, and a constant
/// angular velocity turns it by `n` times the substep's rotation, whose half angle is
/// `atan(h |w| / 2)` (the normalised `1 + h w / 2`). Otherwise it runs the loop itself.
pub(super) fn free_flight(b: &mut SolverBody, p: &mut BodyParams) {
    let n = p.substeps as f32;
    let total = p.dv * n - p.carry;
    let v_end = b.v + total;
    let max_v2 = p.max_linear_speed * p.max_linear_speed;
    let closed = p.linear_damping == 1.0
        && p.angular_damping == 1.0
        && p.dw == Vec3A::ZERO
        && !p.gyroscopic
        // |v_k| is convex in k, so the ends bound every substep.
        && b.v.length_squared() <= max_v2
        && v_end.length_squared() <= max_v2
        && b.w.length_squared() <= p.max_angular_speed * p.max_angular_speed;
    if !closed {
        for _ in 0..p.substeps {
            velocity_substep(b, p);
            position_substep(b, p.h);
        }
        return;
    }
    let h = p.h;
    b.dp += h * (n * b.v + (0.5 * n * (n + 1.0)) * p.dv);
    p.carry = (v_end - b.v) - total;
    b.v = v_end;
    let speed = b.w.length();
    if speed > 0.0 {
        let half = n * math::atan(0.5 * h * speed);
        let (sin, cos) = math::sin_cos(half);
        let axis = b.w / speed;
        let turn = Quat::from_xyzw(axis.x * sin, axis.y * sin, axis.z * sin, cos);
        b.dq = quat_normalize(quat_mul(turn, b.dq));
    }
}

pub(super) fn store_bodies(jobs: &JobSystem, bodies: &mut Bodies, s: &SolverScratch) {
    jobs.parallel_for_slice(bodies.awake_mut(), BODY_BLOCK, |first, sims| {
        let solved = s.bodies[first..].iter().zip(&s.params[first..]);
        for (sim, (b, p)) in sims.iter_mut().zip(solved) {
            sim.velocity_carry = p.carry;
            sim.center0 = sim.center;
            if p.locks.is_empty() {
                sim.linear_velocity = b.v;
                sim.angular_velocity = b.w;
                sim.center += b.dp;
                sim.transform.rotation = quat_normalize(quat_mul(b.dq, sim.transform.rotation));
                sim.transform.translation =
                    sim.center - rotate(sim.transform.rotation, sim.local_center);
                continue;
            }
            // Locked coordinates are written back unchanged (see `LockedAxes`): not even
            // rounding moves them, and a fully locked rotation keeps its bits.
            let locks = p.locks;
            sim.linear_velocity = locks.free_linear(b.v);
            sim.angular_velocity = locks.free_angular(b.w);
            sim.center = locks.keep_locked(sim.center, sim.center + b.dp);
            if !locks.contains(LockedAxes::ROTATION) {
                sim.transform.rotation = quat_normalize(quat_mul(b.dq, sim.transform.rotation));
            }
            let origin = sim.center - rotate(sim.transform.rotation, sim.local_center);
            sim.transform.translation = locks.keep_locked(sim.transform.translation, origin);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dv: Vec3A, linear_damping: f32, dw: Vec3A) -> BodyParams {
        BodyParams {
            dv,
            carry: Vec3A::ZERO,
            dw,
            linear_damping,
            angular_damping: 1.0,
            max_linear_speed: 500.0,
            max_angular_speed: 50.0,
            dynamic: true,
            gyroscopic: false,
            rotation0: Quat::IDENTITY,
            inertia_local: Mat3A::ZERO,
            free: true,
            h: 1.0 / 600.0,
            substeps: 10,
            locks: LockedAxes::empty(),
        }
    }

    fn body(v: Vec3A, w: Vec3A) -> SolverBody {
        SolverBody {
            v,
            w,
            dp: Vec3A::ZERO,
            dq: Quat::IDENTITY,
        }
    }

    /// The substep loop `free_flight` stands for.
    fn looped(mut b: SolverBody, mut p: BodyParams) -> (SolverBody, BodyParams) {
        for _ in 0..p.substeps {
            velocity_substep(&mut b, &mut p);
            position_substep(&mut b, p.h);
        }
        (b, p)
    }

    #[test]
    fn free_flight_is_the_substep_loop_in_closed_form() {
        // Gravity plus a spin: the closed form must land where the loop does (to f32
        // rounding), velocity, displacement and rotation alike.
        let g = Vec3A::new(0.0, -9.81 / 600.0, 0.0);
        for (v, w) in [
            (Vec3A::ZERO, Vec3A::ZERO),
            (Vec3A::new(3.0, 1.0, -2.0), Vec3A::new(0.0, 0.0, 0.0)),
            (Vec3A::new(-20.0, 5.0, 0.5), Vec3A::new(1.0, -0.5, 0.8)),
            (Vec3A::new(0.04, -0.02, 0.01), Vec3A::new(0.0, 30.0, 0.0)),
        ] {
            let (mut b, mut p) = (body(v, w), params(g, 1.0, Vec3A::ZERO));
            let (lb, _) = looped(b, p);
            free_flight(&mut b, &mut p);
            assert!((b.v - lb.v).length() < 1e-5, "v {:?} vs {:?}", b.v, lb.v);
            assert!(
                (b.dp - lb.dp).length() < 1e-6,
                "dp {:?} vs {:?}",
                b.dp,
                lb.dp
            );
            assert!(
                b.dq.dot(lb.dq).abs() > 1.0 - 1e-6,
                "dq {:?} vs {:?}",
                b.dq,
                lb.dq
            );
        }
    }

    #[test]
    fn free_flight_runs_the_loop_when_there_is_damping_torque_or_a_gyroscopic_term() {
        // No closed form is used then: the result is the loop's, bit for bit (so a free
        // spinning body integrates as it would with a constraint on it).
        let g = Vec3A::new(0.0, -9.81 / 600.0, 0.0);
        let gyroscopic = BodyParams {
            gyroscopic: true,
            rotation0: Quat::from_axis_angle(glam::Vec3::new(0.6, 0.0, 0.8), 0.3),
            inertia_local: Mat3A::from_diagonal(glam::Vec3::new(0.3, 0.2, 0.05)),
            ..params(g, 1.0, Vec3A::ZERO)
        };
        for p in [
            params(g, 1.0 / (1.0 + 0.5 / 600.0), Vec3A::ZERO),
            params(g, 1.0, Vec3A::new(0.0, 0.01, 0.0)),
            gyroscopic,
        ] {
            let mut b = body(Vec3A::new(1.0, 2.0, 3.0), Vec3A::new(0.3, 0.0, 0.1));
            let mut q = p;
            let (lb, lp) = looped(b, p);
            free_flight(&mut b, &mut q);
            assert_eq!((b.v, b.w, b.dp, b.dq), (lb.v, lb.w, lb.dp, lb.dq));
            assert_eq!(q.carry, lp.carry);
        }
    }

    #[test]
    fn the_gyroscopic_substep_keeps_momentum_size_and_energy() {
        // |I w| and w·I w in body axes, before and after one substep: equal to f32
        // rounding whatever the step, from the default substep (h |w| up to 0.18 here)
        // to h |w| = 11, for a thin rod's (2 m by 4 cm by 10 cm) and a plate's inertia
        // (per unit mass) in axes turned off the principal ones.
        let turn = Mat3A::from_quat(Quat::from_axis_angle(
            Vec3A::new(0.3, 1.0, -0.6).normalize().into(),
            0.5,
        ));
        let boxed = |x: f32, y: f32, z: f32| {
            let d = Mat3A::from_diagonal(
                glam::Vec3::new(y * y + z * z, x * x + z * z, x * x + y * y) / 3.0,
            );
            turn * d * turn.transpose()
        };
        let rotation = Quat::from_axis_angle(Vec3A::new(1.0, -2.0, 0.5).normalize().into(), 0.8);
        let (rod, plate) = (boxed(0.02, 0.05, 1.0), boxed(0.5, 0.3, 0.02));
        for (inertia, w, h) in [
            (rod, Vec3A::new(1.0, 2.0, 3.0), 1.0 / 360.0),
            (plate, Vec3A::new(-4.0, 0.3, 0.2), 1.0 / 360.0),
            (rod, Vec3A::new(20.0, 10.0, 60.0), 1.0 / 360.0),
            (plate, Vec3A::new(20.0, 10.0, 60.0), 1.0 / 360.0),
            (rod, Vec3A::new(20.0, 10.0, 60.0), 1.0 / 60.0),
            (plate, Vec3A::new(20.0, 10.0, 60.0), 1.0 / 60.0),
            (rod, Vec3A::new(100.0, -50.0, 20.0), 1.0 / 40.0),
            (plate, Vec3A::new(100.0, -50.0, 20.0), 1.0 / 10.0),
        ] {
            let body = |w: Vec3A| rotation.inverse() * w;
            let (l0, e0) = (inertia * body(w), body(w).dot(inertia * body(w)));
            let after = gyroscopic_substep(w, rotation, &inertia, h);
            let (l, e) = (
                inertia * body(after),
                body(after).dot(inertia * body(after)),
            );
            assert!(e <= e0 * (1.0 + 1e-6), "w {w}, h {h}: energy {e0} -> {e}");
            assert!(
                (e / e0 - 1.0).abs() < 1e-6,
                "w {w}, h {h}: energy {e0} -> {e}"
            );
            assert!(
                (l.length() / l0.length() - 1.0).abs() < 1e-6,
                "w {w}, h {h}: |L| {} -> {}",
                l0.length(),
                l.length()
            );
        }
    }
}
