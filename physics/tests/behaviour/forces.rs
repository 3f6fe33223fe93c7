//! Forces that persist (issue 13, item 7) and what step listeners can do with them.
//!
//! Expected values are the substep integrator's closed forms in free flight (as in
//! free_fall.rs): with `n` substeps of length `h` under a constant acceleration `a`, the
//! velocity is `a n h` and the displacement `a h² n (n + 1) / 2`; a constant torque `τ`
//! on a sphere (isotropic inertia `I = 2/5 m r²`, so no gyroscopic term) spins it up to
//! `τ t / I`. Tolerances cover f32 rounding over a few hundred substeps (1e-4 relative).

use crate::common::{DT, world_with};
use joule_physics::body::BodyDesc;
use joule_physics::error::PhysicsError;
use joule_physics::listener::StepPhase;
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::solver::SolverSettings;
use joule_physics::world::{World, WorldDesc};

fn weightless() -> World {
    world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..Default::default()
        },
        0,
    )
}

fn ball(w: &mut World) -> joule_physics::body::BodyId {
    w.create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO))
        .unwrap()
}

#[test]
fn a_constant_force_acts_every_step_until_changed() {
    let mut w = weightless();
    let id = ball(&mut w);
    let m = w.mass(id).unwrap();
    let a = 2.0;
    w.set_constant_force(id, Vec3::new(m * a, 0.0, 0.0))
        .unwrap();
    for _ in 0..60 {
        w.step(DT);
    }
    let substeps = SolverSettings::default().substeps as f32;
    let n = 60.0 * substeps;
    let h = DT / substeps;
    let v = w.linear_velocity(id).unwrap().x;
    let x = w.position(id).unwrap().x;
    assert!((v - a * n * h).abs() < 1e-4 * a, "v = {v}");
    let expect = a * h * h * n * (n + 1.0) / 2.0;
    assert!(
        (x - expect).abs() < 1e-4 * expect,
        "x = {x}, expected {expect}"
    );
    // Cleared: the velocity stays as it was.
    w.set_constant_force(id, Vec3::ZERO).unwrap();
    w.step(DT);
    assert!((w.linear_velocity(id).unwrap().x - v).abs() < 1e-6);
    assert_eq!(w.constant_force(id).unwrap(), Vec3::ZERO);
}

#[test]
fn add_force_lasts_one_step_and_a_constant_force_adds_to_it() {
    let mut w = weightless();
    let id = ball(&mut w);
    let m = w.mass(id).unwrap();
    w.set_constant_force(id, Vec3::new(m, 0.0, 0.0)).unwrap();
    w.add_force(id, Vec3::new(m, 0.0, 0.0)).unwrap();
    w.step(DT);
    // First step: both forces (2 m/s² for DT), second: only the constant one.
    assert!((w.linear_velocity(id).unwrap().x - 2.0 * DT).abs() < 1e-6);
    w.step(DT);
    assert!((w.linear_velocity(id).unwrap().x - 3.0 * DT).abs() < 1e-6);
}

#[test]
fn a_constant_torque_spins_a_sphere_up_linearly() {
    let mut w = weightless();
    let id = ball(&mut w);
    let m = w.mass(id).unwrap();
    let inertia = 0.4 * m * 0.25;
    let tau = Vec3::new(0.0, 0.0, 3.0 * inertia);
    w.set_constant_torque(id, tau).unwrap();
    for _ in 0..60 {
        w.step(DT);
    }
    let wz = w.angular_velocity(id).unwrap().z;
    assert!((wz - 3.0).abs() < 1e-4 * 3.0, "w = {wz}");
    assert_eq!(w.constant_torque(id).unwrap(), tau);
}

#[test]
fn non_finite_forces_are_refused_and_change_nothing() {
    let mut w = weightless();
    let id = ball(&mut w);
    w.set_constant_force(id, Vec3::X).unwrap();
    for bad in [
        Vec3::new(f32::NAN, 0.0, 0.0),
        Vec3::new(0.0, f32::INFINITY, 0.0),
    ] {
        assert_eq!(
            w.set_constant_force(id, bad),
            Err(PhysicsError::NonFiniteVelocity)
        );
        assert_eq!(
            w.set_constant_torque(id, bad),
            Err(PhysicsError::NonFiniteVelocity)
        );
    }
    assert_eq!(w.constant_force(id).unwrap(), Vec3::X);
    assert_eq!(w.constant_torque(id).unwrap(), Vec3::ZERO);
    let fixed = w
        .create_body(&BodyDesc::fixed(Shape::sphere(1.0).unwrap(), Vec3::Y * 5.0))
        .unwrap();
    assert_eq!(
        w.set_constant_force(fixed, Vec3::X),
        Err(PhysicsError::WrongMotionType)
    );
}

#[test]
fn listeners_add_torque_read_rotation_and_set_velocities() {
    let mut w = weightless();
    let id = ball(&mut w);
    let m = w.mass(id).unwrap();
    let inertia = 0.4 * m * 0.25;
    // A listener that spins the ball up with a torque each step, then (once it reads an
    // angular velocity above 1 rad/s) stops it and sets a linear velocity instead.
    w.add_step_listener(StepPhase::Before, move |cx| {
        let wv = cx.angular_velocity(id).unwrap();
        // (0.99: two steps of 30 rad/s² sum their substeps' increments to 1 within rounding.)
        if wv.z < 0.99 {
            cx.add_torque(id, Vec3::new(0.0, 0.0, 30.0 * inertia))
                .unwrap();
        } else {
            cx.set_angular_velocity(id, Vec3::ZERO).unwrap();
            cx.set_linear_velocity(id, Vec3::new(0.0, 0.0, 1.0))
                .unwrap();
        }
        assert!(cx.rotation(id).unwrap().is_normalized());
    });
    // 30 rad/s² reaches 1 rad/s after 2 steps (1/30 s).
    w.step(DT);
    assert!((w.angular_velocity(id).unwrap().z - 0.5).abs() < 1e-4);
    w.step(DT);
    let turned = w.rotation(id).unwrap();
    assert!(turned.angle_between(Quat::IDENTITY) > 0.0);
    w.step(DT);
    assert_eq!(w.angular_velocity(id).unwrap(), Vec3::ZERO);
    assert_eq!(w.linear_velocity(id).unwrap(), Vec3::new(0.0, 0.0, 1.0));
}
