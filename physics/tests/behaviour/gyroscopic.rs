//! Torque-free rotation of rigid bodies (issue 13, item 3): the gyroscopic term; and
//! (issue 28, item 6) that it neither loses nor gains |L| or energy.
//!
//! A torque-free body keeps its angular momentum `L = R I Rᵀ w` fixed in world space
//! and its kinetic energy `w·L / 2` constant (Euler's equations; Landau & Lifshitz,
//! Mechanics §37). Spun near its largest or smallest principal axis it stays near it;
//! spun near the intermediate axis it flips periodically (the Dzhanibekov effect, the
//! tennis-racket theorem). The references for the flips are an RK4 integration of
//! Euler's equations in f64 at a step 100 times finer than the engine's substep (the
//! first flip) and the closed form of the period, `2 K(k) / ω_p` (the flips after it).

use crate::common::{DT, world_with};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::{Quat, Vec3};
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

/// Angular velocity in body axes.
fn body_omega(w: &World, id: BodyId) -> Vec3 {
    w.rotation(id).unwrap().inverse() * w.angular_velocity(id).unwrap()
}

#[test]
fn angular_momentum_keeps_its_direction_and_energy_never_grows() {
    let mut w = weightless();
    let spin = Vec3::new(1.0, 2.0, 3.0);
    let id = spinning_box(&mut w, Vec3::new(0.5, 0.3, 0.1), spin);
    let d = worst_drift(&mut w, id, 600);
    // Without the gyroscopic term L swung by 25° here; backward Euler kept it to 0.35°
    // and the midpoint step to 0.18° (measured in f64).
    // The energy is conserved now, so "never grows" cannot be checked step by step
    // against f32 rounding of the state (it wanders by 1e-6 either way from step to step,
    // which the old integrator's loss of 2e-5 a step hid): it must never rise above its
    // start by more than what rounding walks in 10 s.
    println!(
        "angle {}° size {} energy {} rise {}",
        d.direction.to_degrees(),
        d.momentum,
        d.energy,
        d.energy_rise
    );
    assert!(
        d.direction.to_degrees() < 0.5,
        "L turned {}°",
        d.direction.to_degrees()
    );
    assert!(
        d.energy_rise <= ENERGY_ROUNDING,
        "energy rose by {}",
        d.energy_rise
    );
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

/// `L` in world axes and the kinetic energy, in f64 from the body's f32 state (sums in
/// f32 round by a few 1e-7, as much as the changes the conservation checks look for).
fn momentum_and_energy_f64(w: &World, id: BodyId) -> ([f64; 3], f64) {
    let q = w.rotation(id).unwrap();
    let (qv, qw) = ([q.x, q.y, q.z].map(f64::from), f64::from(q.w));
    let n = qw * qw + qv.iter().map(|c| c * c).sum::<f64>();
    // v' = v (w² - b·b) + 2 b (v·b) + 2 w (b × v), for the unit quaternion (w, b).
    let rotate = |v: [f64; 3], b: [f64; 3]| {
        let dot = v[0] * b[0] + v[1] * b[1] + v[2] * b[2];
        let cross = [
            b[1] * v[2] - b[2] * v[1],
            b[2] * v[0] - b[0] * v[2],
            b[0] * v[1] - b[1] * v[0],
        ];
        let bb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        [0, 1, 2].map(|j| (v[j] * (qw * qw - bb) + 2.0 * b[j] * dot + 2.0 * qw * cross[j]) / n)
    };
    let omega = w.angular_velocity(id).unwrap().to_array().map(f64::from);
    let body = rotate(omega, qv.map(|c| -c));
    let i = w.inertia_local(id).unwrap().unwrap();
    let cols = [i.x_axis, i.y_axis, i.z_axis].map(|c| [c.x, c.y, c.z].map(f64::from));
    let l_body = [0, 1, 2].map(|r| (0..3).map(|c| cols[c][r] * body[c]).sum::<f64>());
    let e = 0.5 * (0..3).map(|j| body[j] * l_body[j]).sum::<f64>();
    (rotate(l_body, qv), e)
}

/// How far above its start rounding may take a conserved energy in 10 s: the f32 state
/// (spin and rotation) rounds by about 1e-7 at each of the 3,600 substeps, both ways,
/// which walks some 1e-5 at most; a systematic gain would be 1e-4 and more.
const ENERGY_ROUNDING: f64 = 2e-5;

/// The worst relative changes over a run: of |L|, of the energy (either way), and the
/// largest rise of the energy above its start.
struct Drift {
    /// The largest angle (rad) between `L` and its start.
    direction: f64,
    momentum: f64,
    energy: f64,
    energy_rise: f64,
}

/// Steps `id` for `steps` steps, checking that its state stays finite, and returns how
/// far |L| and the energy strayed from their starting values.
fn worst_drift(w: &mut World, id: BodyId, steps: usize) -> Drift {
    let size = |l: [f64; 3]| l.iter().map(|c| c * c).sum::<f64>().sqrt();
    let (l0, e0) = momentum_and_energy_f64(w, id);
    let mut drift = Drift {
        direction: 0.0,
        momentum: 0.0,
        energy: 0.0,
        energy_rise: 0.0,
    };
    for k in 0..steps {
        w.step(DT);
        let (l, e) = momentum_and_energy_f64(w, id);
        assert!(l.iter().all(|c| c.is_finite()), "step {k}: L {l:?}");
        drift.momentum = drift.momentum.max((size(l) / size(l0) - 1.0).abs());
        let cos = (0..3).map(|j| l[j] * l0[j]).sum::<f64>() / (size(l) * size(l0));
        drift.direction = drift.direction.max(cos.clamp(-1.0, 1.0).acos());
        drift.energy = drift.energy.max((e / e0 - 1.0).abs());
        drift.energy_rise = drift.energy_rise.max(e / e0 - 1.0);
    }
    drift
}

#[test]
fn free_bodies_keep_the_size_of_their_angular_momentum_and_their_energy() {
    // Issue 28, item 6: at the default settings a box spun at a few rad/s about a skew
    // axis lost 5 % of |L| and 13 % of its energy in 10 s to the implicit (backward
    // Euler) gyroscopic step. Both are invariants of Euler's equations; the target is
    // 0.5 % over 10 s, for boxes, a cylinder, a capsule and an irregular hull (whose
    // inertia is not diagonal in its own axes), turned and not.
    let turned = Quat::from_axis_angle(Vec3::new(0.4, -1.1, 0.7).normalize(), 1.3);
    let hull = Shape::convex_hull(&[
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.9, 0.1, 0.0),
        Vec3::new(0.2, 0.5, 0.1),
        Vec3::new(0.1, 0.2, 0.3),
        Vec3::new(0.7, 0.4, 0.25),
        Vec3::new(-0.2, 0.3, -0.1),
    ])
    .unwrap();
    let cases = [
        (
            "box",
            Shape::cuboid(Vec3::new(0.5, 0.3, 0.1)).unwrap(),
            Quat::IDENTITY,
            Vec3::new(1.0, 2.0, 3.0),
        ),
        (
            "turned box",
            Shape::cuboid(Vec3::new(0.6, 0.3, 0.1)).unwrap(),
            turned,
            Vec3::new(3.0, -1.0, 2.0),
        ),
        (
            "near the middle axis",
            Shape::cuboid(Vec3::new(0.6, 0.3, 0.1)).unwrap(),
            Quat::IDENTITY,
            Vec3::new(0.3, 5.0, 0.3),
        ),
        (
            "cylinder",
            Shape::cylinder(0.5, 0.2).unwrap(),
            turned,
            Vec3::new(2.0, 4.0, 1.0),
        ),
        (
            "capsule",
            Shape::capsule(0.4, 0.1).unwrap(),
            Quat::IDENTITY,
            Vec3::new(5.0, 1.0, -2.0),
        ),
        ("hull", hull, turned, Vec3::new(4.0, 1.0, -2.0)),
    ];
    let mut failed = Vec::new();
    for (name, shape, rotation, spin) in cases {
        let mut w = weightless();
        let id = w
            .create_body(&BodyDesc {
                rotation,
                angular_velocity: spin,
                ..BodyDesc::dynamic(shape, Vec3::ZERO)
            })
            .unwrap();
        let d = worst_drift(&mut w, id, 600);
        println!(
            "{name}: L turned {:.3}°, |L| {:.4} %, energy {:.4} %, energy rise {:.2e}",
            d.direction.to_degrees(),
            100.0 * d.momentum,
            100.0 * d.energy,
            d.energy_rise
        );
        if d.momentum > 0.005 || d.energy > 0.005 || d.energy_rise > ENERGY_ROUNDING {
            failed.push(format!(
                "{name}: |L| by {}, energy by {} (rise {})",
                d.momentum, d.energy, d.energy_rise
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn a_thin_rod_spun_fast_about_a_skew_axis_stays_bounded() {
    // A 2 m rod 4 cm by 10 cm across at 64 rad/s: its inertias differ by a factor of 400,
    // which is what made the explicit gyroscopic step blow up (Catto, GDC 2015). It must
    // stay bounded with its energy never growing, and keep |L| and the energy as any
    // other free body does.
    let mut w = weightless();
    let id = w
        .create_body(&BodyDesc {
            angular_velocity: Vec3::new(20.0, 10.0, 60.0),
            max_angular_speed: 100.0,
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::new(0.02, 0.05, 1.0)).unwrap(),
                Vec3::ZERO,
            )
        })
        .unwrap();
    let d = worst_drift(&mut w, id, 600);
    println!(
        "rod: |L| {:.4} %, energy {:.4} %, energy rise {:.2e}",
        100.0 * d.momentum,
        100.0 * d.energy,
        d.energy_rise
    );
    assert!(
        d.momentum < 0.005 && d.energy < 0.005 && d.energy_rise <= ENERGY_ROUNDING,
        "|L| by {}, energy by {} (rise {})",
        d.momentum,
        d.energy,
        d.energy_rise
    );
}

/// The complete elliptic integral of the first kind, `K(k) = π / (2 agm(1, √(1 - k²)))`.
fn elliptic_k(k2: f64) -> f64 {
    let (mut a, mut b) = (1.0, (1.0 - k2).sqrt());
    while (a - b).abs() > 1e-15 * a {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    std::f64::consts::PI / (2.0 * a)
}

/// The time between two sign changes of the intermediate-axis component of a
/// torque-free top's spin, `2 K(k) / ω_p` (Landau & Lifshitz, Mechanics §37: with
/// `I1 < I2 < I3` and `L² > 2 E I2`, `ω2 ∝ sn(ω_p t, k)`; for `L² < 2 E I2` the
/// suffixes 1 and 3 swap). `i` and `w` are in principal axes, `i[1]` the intermediate.
fn half_flip_period(i: [f64; 3], w: [f64; 3]) -> f64 {
    let l2: f64 = (0..3).map(|j| (i[j] * w[j]).powi(2)).sum();
    let e2: f64 = (0..3).map(|j| i[j] * w[j] * w[j]).sum();
    let (small, large) = if i[0] < i[2] {
        (i[0], i[2])
    } else {
        (i[2], i[0])
    };
    let (i1, i3) = if l2 > e2 * i[1] {
        (small, large)
    } else {
        (large, small)
    };
    let i2 = i[1];
    let k2 = (i2 - i1) * (e2 * i3 - l2) / ((i3 - i2) * (l2 - e2 * i1));
    let rate = ((i3 - i2) * (l2 - e2 * i1) / (i1 * i2 * i3)).sqrt();
    2.0 * elliptic_k(k2) / rate
}

#[test]
fn the_intermediate_axis_flips_with_the_closed_form_period() {
    // Beyond the first flip (above), the flips must keep coming at the period of the
    // torque-free top: an integrator that loses energy moves the body to another orbit,
    // whose period differs, and the flips drift. Averaged over the flips of 20 s.
    let half = Vec3::new(0.6, 0.3, 0.1);
    let spin = Vec3::new(0.3, 5.0, 0.3);
    let mut w = weightless();
    let id = spinning_box(&mut w, half, spin);
    let i = w.inertia_local(id).unwrap().unwrap();
    let moments = [i.x_axis.x, i.y_axis.y, i.z_axis.z].map(f64::from);
    let expected = half_flip_period(
        moments,
        [f64::from(spin.x), f64::from(spin.y), f64::from(spin.z)],
    );
    let mut flips = Vec::new();
    let mut y = body_omega(&w, id).y;
    for k in 1..=1200 {
        w.step(DT);
        let next = body_omega(&w, id).y;
        if next.signum() != y.signum() {
            // Linear interpolation of the crossing within the step.
            flips.push((k as f32 - next / (next - y)) * DT);
        }
        y = next;
    }
    assert!(flips.len() >= 4, "flips at {flips:?}");
    let measured = f64::from(flips[flips.len() - 1] - flips[0]) / (flips.len() - 1) as f64;
    println!("flips at {flips:?}: every {measured} s, closed form {expected} s");
    assert!(
        (measured - expected).abs() < 0.01 * expected,
        "flips every {measured} s, the closed form says {expected} s"
    );
}
