//! Torque-free rotation of rigid bodies (issue 13, item 3): the gyroscopic term.
//!
//! A torque-free body keeps its angular momentum `L = R I Rᵀ w` fixed in world space
//! and its kinetic energy `w·L / 2` constant (Euler's equations; Landau & Lifshitz,
//! Mechanics §37). Spun near its largest or smallest principal axis it stays near it;
//! spun near the intermediate axis it flips periodically (the Dzhanibekov effect, the
//! tennis-racket theorem). The reference for the flip time is an RK4 integration of
//! Euler's equations in f64 at a step 100 times finer than the engine's substep.

use crate::common::{DT, world_with};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::{Vec3, Vec3A};
use joule_physics::shape::Shape;
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

/// A box spun at `spin` (rad/s, world axes = its axes at the start).
fn spinning_box(w: &mut World, half: Vec3, spin: Vec3) -> BodyId {
    w.create_body(&BodyDesc {
        angular_velocity: spin,
        max_angular_speed: 100.0,
        ..BodyDesc::dynamic(Shape::cuboid(half).unwrap(), Vec3::ZERO)
    })
    .unwrap()
}

fn momentum_and_energy(w: &World, id: BodyId) -> (Vec3A, f32) {
    let inertia = w.inertia_world(id).unwrap().unwrap();
    let omega = Vec3A::from(w.angular_velocity(id).unwrap());
    let l = inertia * omega;
    (l, 0.5 * omega.dot(l))
}

/// Angular velocity in body axes.
fn body_omega(w: &World, id: BodyId) -> Vec3 {
    w.rotation(id).unwrap().inverse() * w.angular_velocity(id).unwrap()
}

#[test]
fn angular_momentum_keeps_its_direction_and_energy_never_grows() {
    let mut w = weightless();
    let spin = Vec3::new(1.0, 2.0, 3.0);
    let id = spinning_box(&mut w, Vec3::new(0.5, 0.3, 0.1), spin);
    let (l0, e0) = momentum_and_energy(&w, id);
    let mut e_prev = e0;
    let (mut worst_angle, mut worst_size) = (0f32, 0f32);
    for _ in 0..600 {
        w.step(DT);
        let (l, e) = momentum_and_energy(&w, id);
        // Energy: never up by more than f32 rounding of the sum (1e-6 relative).
        assert!(e <= e_prev * (1.0 + 1e-6), "energy grew {e_prev} -> {e}");
        e_prev = e;
        worst_angle = worst_angle.max(l.angle_between(l0));
        worst_size = worst_size.max((l.length() / l0.length() - 1.0).abs());
    }
    // Without the gyroscopic term L swung by 25° here. Implicit Euler loses energy and
    // momentum slowly (first order in the substep; measured 0.2°, 0.8 % and 2.2 % of the
    // energy over these 10 s): 0.5°, 2 % and 5 % bound it.
    println!(
        "angle {worst_angle} size {worst_size} energy {}",
        e_prev / e0
    );
    assert!(
        worst_angle.to_degrees() < 0.5,
        "L turned {}°",
        worst_angle.to_degrees()
    );
    assert!(worst_size < 0.02, "|L| changed by {worst_size}");
    assert!(e_prev / e0 > 0.95, "energy fell to {}", e_prev / e0);
}

/// Euler's equations in body axes, `I dw/dt = (I w) × w`, by RK4 in f64: the time of
/// the first sign change of `w.y` (the intermediate axis).
fn rk4_flip_time(i: [f64; 3], w0: [f64; 3], dt: f64, t_max: f64) -> f64 {
    let f = |w: [f64; 3]| {
        [
            (i[1] - i[2]) * w[1] * w[2] / i[0],
            (i[2] - i[0]) * w[2] * w[0] / i[1],
            (i[0] - i[1]) * w[0] * w[1] / i[2],
        ]
    };
    let add =
        |a: [f64; 3], b: [f64; 3], s: f64| [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]];
    let mut w = w0;
    let mut t = 0.0;
    while t < t_max {
        let k1 = f(w);
        let k2 = f(add(w, k1, dt / 2.0));
        let k3 = f(add(w, k2, dt / 2.0));
        let k4 = f(add(w, k3, dt));
        let next = [0, 1, 2].map(|j| w[j] + dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]));
        t += dt;
        if next[1].signum() != w[1].signum() {
            return t;
        }
        w = next;
    }
    f64::INFINITY
}

#[test]
fn the_intermediate_axis_flips_when_rk4_says() {
    let mut w = weightless();
    let half = Vec3::new(0.6, 0.3, 0.1);
    // Spin about the intermediate axis (local y) with a small perturbation.
    let spin = Vec3::new(0.02, 4.0, 0.02);
    let id = spinning_box(&mut w, half, spin);
    let i = w.inertia_local(id).unwrap().unwrap();
    let moments = [i.x_axis.x, i.y_axis.y, i.z_axis.z].map(f64::from);
    assert!(
        moments[0] < moments[1] && moments[1] < moments[2]
            || moments[2] < moments[1] && moments[1] < moments[0]
    );
    let reference = rk4_flip_time(
        moments,
        [f64::from(spin.x), f64::from(spin.y), f64::from(spin.z)],
        f64::from(DT) / 1000.0,
        20.0,
    );
    assert!(reference < 10.0, "the reference flips at {reference} s");
    let mut flip = f32::INFINITY;
    for k in 1..=1200 {
        w.step(DT);
        if body_omega(&w, id).y < 0.0 {
            flip = k as f32 * DT;
            break;
        }
    }
    // The flip time depends on how fast the small perturbation grows, which a first
    // order integrator changes slightly (measured 3.050 s against 3.055 s): 3 % of the
    // reference.
    println!("flip {flip} reference {reference}");
    assert!(
        (f64::from(flip) - reference).abs() < 0.03 * reference,
        "flipped at {flip} s, RK4 at {reference} s"
    );
}

#[test]
fn spins_about_the_largest_and_smallest_axes_are_stable() {
    let half = Vec3::new(0.6, 0.3, 0.1);
    // Inertia about x is the smallest (|y|, |z| small), about z the largest.
    for (axis, spin) in [
        (0usize, Vec3::new(4.0, 0.05, 0.05)),
        (2usize, Vec3::new(0.05, 0.05, 4.0)),
    ] {
        let mut w = weightless();
        let id = spinning_box(&mut w, half, spin);
        let start = spin.angle_between(Vec3::AXES[axis]);
        let mut worst = 0f32;
        for _ in 0..600 {
            w.step(DT);
            worst = worst.max(body_omega(&w, id).angle_between(Vec3::AXES[axis]));
        }
        // The body-frame spin precesses in a small cone about the axis (its half angle
        // is set by the perturbation: 1° here); unstable, it would swing to 90° and more.
        println!(
            "axis {axis} start {} worst {}",
            start.to_degrees(),
            worst.to_degrees()
        );
        assert!(
            worst < 3.0 * start.max(0.01),
            "axis {axis}: spin left by {}°",
            worst.to_degrees()
        );
    }
}

#[test]
fn a_sphere_and_a_cube_spin_unchanged() {
    // Isotropic inertia: w × (I w) = 0, so the spin is exactly constant.
    let mut w = weightless();
    let spin = Vec3::new(1.0, -2.0, 0.5);
    let cube = spinning_box(&mut w, Vec3::splat(0.5), spin);
    for _ in 0..60 {
        w.step(DT);
    }
    assert_eq!(w.angular_velocity(cube).unwrap(), spin);
}
