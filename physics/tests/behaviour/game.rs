//! The game loop: the fixed-step clock and the interpolated presentation, checked against
//! closed forms (uniform motion is a line and uniform rotation an arc about a fixed axis,
//! so the pose between two steps is known exactly).

use crate::common::{DT, world, world_with};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::game::{FixedStep, Presentation};
use joule_physics::math::{Isometry, Quat, Vec3, Vec3A};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

const ALPHAS: [f32; 7] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999];

fn weightless() -> World {
    world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        },
        0,
    )
}

/// A sphere flying free (no damping, no gravity, nothing to hit).
fn flyer(w: &mut World, p: Vec3, v: Vec3, omega: Vec3, rotation: Quat) -> BodyId {
    w.create_body(&BodyDesc {
        allow_sleep: false,
        linear_velocity: v,
        angular_velocity: omega,
        rotation,
        ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), p)
    })
    .unwrap()
}

/// Angle of the rotation between `a` and `b` (either sign of each).
fn angle_between(a: Quat, b: Quat) -> f32 {
    let r = a.conjugate() * b;
    2.0 * Vec3::new(r.x, r.y, r.z).length().atan2(r.w.abs())
}

fn step_and_record(w: &mut World, p: &mut Presentation, n: usize) {
    for _ in 0..n {
        w.step(DT);
        p.record(w);
    }
}

#[test]
fn interpolation_is_exact_for_uniform_motion_at_any_alpha() {
    // x(t) = x0 + v t: between steps k-1 and k the pose at alpha is x0 + v (k-1+alpha) DT.
    let mut w = weightless();
    let (x0, v) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(3.0, -1.0, 2.0));
    let id = flyer(&mut w, x0, v, Vec3::ZERO, Quat::IDENTITY);
    let mut p = Presentation::new();
    p.record(&w);
    for k in 1..=20 {
        step_and_record(&mut w, &mut p, 1);
        for alpha in ALPHAS {
            let expected = x0 + v * ((k as f32 - 1.0 + alpha) * DT);
            let got: Vec3 = p.pose(id, alpha).unwrap().translation.into();
            // f32 rounding of positions near 4 m over 20 steps of 4 substeps.
            assert!(
                (got - expected).length() < 1e-5,
                "step {k}, alpha {alpha}: {got} vs {expected}"
            );
        }
    }
}

#[test]
fn interpolation_is_exact_for_uniform_rotation_at_any_alpha() {
    // A sphere's angular velocity stays constant (no gyroscopic torque), so each step
    // turns it by the same angle phi about omega: q_k = R(omega, k phi) q0, and between
    // steps k-1 and k the pose at alpha is R(omega, (k-1+alpha) phi) q0.
    let mut w = weightless();
    let omega = Vec3::new(0.5, 2.0, -1.0);
    let q0 = Quat::from_axis_angle(Vec3::new(1.0, 1.0, 0.0).normalize(), 0.7);
    let id = flyer(&mut w, Vec3::ZERO, Vec3::ZERO, omega, q0);
    let mut p = Presentation::new();
    p.record(&w);
    step_and_record(&mut w, &mut p, 1);
    let phi = angle_between(q0, w.rotation(id).unwrap());
    assert!(
        (phi - omega.length() * DT).abs() < 1e-4 * phi,
        "one step turns by |omega| DT: {phi}"
    );
    let axis = omega.normalize();
    for k in 2..=30 {
        step_and_record(&mut w, &mut p, 1);
        for alpha in ALPHAS {
            let expected = Quat::from_axis_angle(axis, (k as f32 - 1.0 + alpha) * phi) * q0;
            let got = p.pose(id, alpha).unwrap().rotation;
            let error = angle_between(got, expected);
            assert!(error < 2e-5, "step {k}, alpha {alpha}: {error} rad off");
        }
    }
}

#[test]
fn extrapolation_by_velocity_lands_on_the_next_step_for_free_flight() {
    let mut w = weightless();
    let omega = Vec3::new(-1.0, 0.3, 2.0);
    let id = flyer(
        &mut w,
        Vec3::new(-2.0, 5.0, 0.0),
        Vec3::new(4.0, 0.5, -1.0),
        omega,
        Quat::IDENTITY,
    );
    let mut p = Presentation::new();
    step_and_record(&mut w, &mut p, 3);
    let guess = p.extrapolated(id, DT).unwrap();
    assert_eq!(p.extrapolated(id, 0.0).unwrap(), p.latest(id).unwrap());
    w.step(DT);
    let next = w.transform(id).unwrap();
    assert!((guess.translation - next.translation).length() < 1e-5);
    // The step integrates the rotation per substep (2 atan(h |omega| / 2)), the
    // extrapolation exactly: they differ by O((h |omega|)^3).
    assert!(angle_between(guess.rotation, next.rotation) < 1e-5);
    assert_eq!(p.linear_velocity(id).unwrap(), Vec3::new(4.0, 0.5, -1.0));
    assert!((p.angular_velocity(id).unwrap() - omega).length() < 1e-6);
}

#[test]
fn a_teleport_is_shown_as_a_jump_not_a_smear() {
    const FAR: Vec3 = Vec3::new(100.0, 0.0, -50.0);
    let setters: [fn(&mut World, BodyId); 3] = [
        |w, id| w.set_position(id, FAR).unwrap(),
        |w, id| w.set_rotation(id, Quat::from_rotation_y(2.5)).unwrap(),
        |w, id| {
            w.set_transform(id, FAR, Quat::from_rotation_y(2.5))
                .unwrap()
        },
    ];
    for teleport in setters {
        let mut w = weightless();
        let id = flyer(&mut w, Vec3::ZERO, Vec3::X, Vec3::Y, Quat::IDENTITY);
        let mut p = Presentation::new();
        step_and_record(&mut w, &mut p, 3);
        let before = w.teleport_count(id).unwrap();
        teleport(&mut w, id);
        assert_eq!(w.teleport_count(id).unwrap(), before + 1);
        step_and_record(&mut w, &mut p, 1);
        let now = w.transform(id).unwrap();
        for alpha in ALPHAS {
            assert_eq!(p.pose(id, alpha).unwrap(), now, "alpha {alpha}");
        }
        // One step later it moves smoothly again, from the new place.
        step_and_record(&mut w, &mut p, 1);
        let mid = p.pose(id, 0.5).unwrap();
        let expected = now.slerp(&w.transform(id).unwrap(), 0.5);
        assert!((mid.translation - expected.translation).length() < 1e-6);
        assert_ne!(mid, now);
    }
}

#[test]
fn a_new_body_presents_its_first_pose_even_in_a_reused_slot() {
    let mut w = weightless();
    let old = flyer(&mut w, Vec3::ZERO, Vec3::X, Vec3::ZERO, Quat::IDENTITY);
    let mut p = Presentation::new();
    step_and_record(&mut w, &mut p, 2);
    // Created after the last record: not presented yet.
    let fresh = flyer(
        &mut w,
        Vec3::new(0.0, 10.0, 0.0),
        Vec3::Y,
        Vec3::ZERO,
        Quat::IDENTITY,
    );
    assert_eq!(p.pose(fresh, 0.5), Err(PhysicsError::NotPresented(fresh)));
    step_and_record(&mut w, &mut p, 1);
    for alpha in ALPHAS {
        assert_eq!(p.pose(fresh, alpha).unwrap(), w.transform(fresh).unwrap());
    }
    // The old body's slot goes to a new body far away: no smear from the old one's pose.
    w.remove_body(old).unwrap();
    let reuse = flyer(
        &mut w,
        Vec3::new(-30.0, 0.0, 0.0),
        Vec3::ZERO,
        Vec3::ZERO,
        Quat::IDENTITY,
    );
    assert_eq!(reuse.index(), old.index(), "the slot is reused");
    step_and_record(&mut w, &mut p, 1);
    assert_eq!(p.pose(reuse, 0.5).unwrap(), w.transform(reuse).unwrap());
    assert_eq!(p.pose(old, 0.5), Err(PhysicsError::NotPresented(old)));
}

#[test]
fn iter_gives_every_body_in_body_order_as_pose_does() {
    let mut w = weightless();
    let ids: Vec<BodyId> = (0..6)
        .map(|i| {
            let x = i as f32 * 2.0;
            flyer(
                &mut w,
                Vec3::new(x, 0.0, 0.0),
                Vec3::Y * x,
                Vec3::X,
                Quat::IDENTITY,
            )
        })
        .collect();
    w.remove_body(ids[2]).unwrap();
    let mut p = Presentation::new();
    step_and_record(&mut w, &mut p, 2);
    let world_order: Vec<BodyId> = w.bodies().map(|b| b.id()).collect();
    let expected: Vec<BodyId> = ids.iter().copied().filter(|&id| id != ids[2]).collect();
    assert_eq!(world_order, expected);
    let presented: Vec<(BodyId, Isometry)> = p.iter(0.3).collect();
    assert_eq!(p.len(), 5);
    assert_eq!(presented.len(), 5);
    for (&(id, pose), &want) in presented.iter().zip(&expected) {
        assert_eq!(id, want);
        assert_eq!(pose, p.pose(id, 0.3).unwrap());
    }
}

#[test]
fn a_144_hz_render_loop_over_60_hz_steps_runs_60_steps_a_second_and_moves_every_frame() {
    // The presentation lags one step: at real time t (after the first step) a body in
    // uniform motion is drawn at x0 + v (t - DT).
    let mut w = weightless();
    let (x0, v) = (Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0));
    let id = flyer(&mut w, x0, v, Vec3::ZERO, Quat::IDENTITY);
    let mut clock = FixedStep::new(DT).unwrap();
    let mut p = Presentation::new();
    let frame_time = 1.0 / 144.0;
    let mut steps = 0;
    let mut last_x = f32::NEG_INFINITY;
    for frame in 1..=144 {
        let report = clock.frame(&mut w, &mut p, frame_time);
        assert!(report.steps <= 1 && report.dropped_steps == 0);
        assert!((0.0..1.0).contains(&report.alpha), "alpha {}", report.alpha);
        steps += report.steps;
        let t = frame as f32 * frame_time;
        if t >= 2.0 * DT {
            let x = p.pose(id, report.alpha).unwrap().translation.x;
            let expected = x0.x + v.x * (t - DT);
            assert!(
                (x - expected).abs() < 1e-4,
                "frame {frame}: {x} vs {expected}"
            );
            assert!(x > last_x, "frame {frame} stood still at {x}");
            last_x = x;
        }
    }
    assert!((59..=61).contains(&steps), "{steps} steps in one second");
    assert_eq!(
        p.records(),
        u64::from(steps) + 1,
        "one record per step, plus the first"
    );
}

#[test]
fn a_one_second_hitch_runs_the_cap_and_reports_the_dropped_backlog() {
    let mut w = world(0);
    crate::common::cube(&mut w, 0.5, Vec3::new(0.0, 5.0, 0.0));
    let mut clock = FixedStep::new(DT)
        .unwrap()
        .with_max_steps_per_frame(5)
        .unwrap();
    let mut p = Presentation::new();
    clock.frame(&mut w, &mut p, 0.5 * DT);
    let records = p.records();
    let report = clock.frame(&mut w, &mut p, 1.0);
    assert_eq!(report.steps, 5);
    assert_eq!(p.records() - records, 5, "the world ran the cap, no more");
    // 0.5 DT carried + 60 DT arrived: 60 whole steps due, 5 run, 55 dropped.
    assert_eq!(report.dropped_steps, 55);
    assert!((report.dropped_time - 55.0 * DT).abs() < 1e-5);
    assert!(
        (report.alpha - 0.5).abs() < 1e-3,
        "the fraction is kept: {}",
        report.alpha
    );
    // The next ordinary frame is ordinary: no backlog left to spiral on.
    let next = clock.frame(&mut w, &mut p, DT);
    assert_eq!((next.steps, next.dropped_steps), (1, 0));
}

#[test]
fn slerp_takes_the_short_way_whichever_sign_the_quaternions_have() {
    let a = Isometry::new(Vec3A::ZERO, Quat::from_rotation_z(0.1));
    let b = Isometry::new(Vec3A::X, Quat::from_rotation_z(0.5));
    let b_flipped = Isometry::new(Vec3A::X, -b.rotation);
    for t in [0.2, 0.5, 0.8] {
        let expected = Quat::from_rotation_z(0.1 + 0.4 * t);
        for f in [Isometry::slerp, Isometry::lerp] {
            for to in [b, b_flipped] {
                let got = f(&a, &to, t).rotation;
                assert!(angle_between(got, expected) < 1e-3, "t {t}: {got:?}");
            }
        }
    }
}

#[test]
fn restoring_a_snapshot_counts_as_a_teleport() {
    let mut w = weightless();
    let id = flyer(&mut w, Vec3::ZERO, Vec3::X, Vec3::ZERO, Quat::IDENTITY);
    let saved = w.snapshot();
    let mut p = Presentation::new();
    step_and_record(&mut w, &mut p, 30);
    w.restore(saved.as_bytes()).unwrap();
    assert_eq!(w.teleport_count(id).unwrap(), 1);
    step_and_record(&mut w, &mut p, 1);
    assert_eq!(p.pose(id, 0.5).unwrap(), w.transform(id).unwrap());
}
