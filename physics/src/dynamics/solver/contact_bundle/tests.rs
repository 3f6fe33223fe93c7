//! The bundled solver against the scalar one, bit for bit.

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
        inv_inertia: (m * m.transpose() + Mat3A::from_diagonal(glam::Vec3::splat(0.2))) * inv_mass,
        linear_axes: Vec3A::ONE,
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
            normal_tally: rng.f(-3.0, 0.0),
            tangent_tally: [rng.f(-1.0, 1.0), rng.f(-1.0, 1.0)],
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
        pose_a: (Vec3A::ZERO, Quat::IDENTITY),
        pose_b: (Vec3A::ZERO, Quat::IDENTITY),
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
        // Every other lane reports contact forces: its step totals are tallied.
        force_threshold: if k.is_multiple_of(2) {
            0.0
        } else {
            f32::INFINITY
        },
    }
}

/// The invariant of the module: a bundle moves bodies and impulses bit for bit as the
/// scalar constraints do, pass by pass, for full and partial bundles.
#[test]
fn bundle_matches_scalar_constraints_bit_for_bit() {
    check_bundle(false);
}

/// The same with locked axes on some sides (a mass per axis, a projected inertia).
#[test]
fn bundle_matches_scalar_constraints_with_locked_axes() {
    check_bundle(true);
}

fn check_bundle(with_locks: bool) {
    use crate::body::LockedAxes;
    let locks = [
        LockedAxes::PLANE_XY,
        LockedAxes::TRANSLATION_Y,
        LockedAxes::ROTATION,
        LockedAxes::TRANSLATION_X | LockedAxes::ROTATION_Z,
    ];
    for lanes in 1..=LANES {
        let mut rng = Rng(0x5eed + lanes as u64);
        // Lane 3's bodies are heavy and barely move: its friction clamps without sliding.
        let (mut bodies, mut masses): (Vec<SolverBody>, Vec<BodyMass>) = (0..2 * LANES)
            .map(|i| match i {
                6.. => body(&mut rng, 0.001, 0.001),
                _ => body(&mut rng, 2.0, 1.0),
            })
            .unzip();
        if with_locks {
            // Every third body, as `load_body` would give it (its velocity's locked
            // components zero).
            for (k, i) in (0..2 * LANES).step_by(3).enumerate() {
                let l = locks[k % locks.len()];
                masses[i].linear_axes = l.linear_axes();
                masses[i].inv_inertia = l.project_angular(masses[i].inv_inertia);
                bodies[i].v = l.free_linear(bodies[i].v);
                bodies[i].w = l.free_angular(bodies[i].w);
            }
        }
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
            h: 1.0 / 600.0,
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
                    1 => c.solve(a, b, params.h, params.inv_h, params.max_push, 0.5, true),
                    _ => c.solve(a, b, params.h, params.inv_h, params.max_push, 0.5, false),
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
            let got: Vec<_> = bundle
                .step_totals()
                .map(|(id, t, p)| (id, t, p.collect::<Vec<_>>()))
                .collect();
            let want: Vec<_> = scalar
                .iter()
                .filter(|c| c.force_threshold.is_finite())
                .map(|c| {
                    let p = c.points.iter().map(|p| p.step_totals());
                    (c.contact, c.force_threshold, p.collect::<Vec<_>>())
                })
                .collect();
            assert_eq!(got, want, "{lanes} lanes, pass {pass}: step totals");
        }
    }
}
