//! The contact modifier: one-way platforms, conveyor belts and per-contact friction, each
//! against its closed form, and the same bits at any thread count.

use joule_physics::prelude::*;

const DT: f32 = 1.0 / 60.0;
const G: f32 = 9.81;

fn world(threads: usize) -> World {
    World::new(WorldDesc::default(), JobSystem::new(threads).unwrap())
}

/// A 4 m wide, 0.2 m thick platform whose top is at y = 2.
fn platform(w: &mut World) -> BodyId {
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(2.0, 0.1, 2.0)).unwrap(),
        Vec3::new(0.0, 1.9, 0.0),
    ))
    .unwrap()
}

/// One-way: contacts of the platform count only while the other body is above it
/// (the normal from the platform points up, within 45°).
fn one_way(w: &mut World, platform: BodyId) {
    w.set_contact_modifier(move |c| {
        if let Some(n) = c.normal_from(platform)
            && n.y < std::f32::consts::FRAC_1_SQRT_2
        {
            c.disable();
        }
    });
}

#[test]
fn a_ball_jumps_up_through_a_one_way_platform_and_lands_on_it() {
    // Launched at 9 m/s from y = 0.5 (ballistic apex 0.5 + 81 / 2g = 4.63 m), the ball
    // (r = 0.25) passes the platform from below, flies on and lands on its top: it ends
    // resting with its centre at 2.25. Without the modifier it bounces off the underside
    // and never gets above y = 1.8 - r.
    for modified in [true, false] {
        let mut w = world(1);
        let p = platform(&mut w);
        if modified {
            one_way(&mut w, p);
        }
        let ball = w
            .create_body(&BodyDesc {
                linear_velocity: Vec3::new(0.0, 9.0, 0.0),
                ..BodyDesc::dynamic(Shape::sphere(0.25).unwrap(), Vec3::new(0.0, 0.5, 0.0))
            })
            .unwrap();
        let mut highest = f32::MIN;
        for _ in 0..240 {
            w.step(DT);
            highest = highest.max(w.position(ball).unwrap().y);
        }
        let y = w.position(ball).unwrap().y;
        if modified {
            let apex = 0.5 + 81.0 / (2.0 * G);
            assert!(
                (highest - apex).abs() < 0.05,
                "flew through to {highest}, expected {apex}"
            );
            assert!((y - 2.25).abs() < 0.01, "rests on the top: y = {y}");
            assert!(w.linear_velocity(ball).unwrap().length() < 0.05);
        } else {
            assert!(
                highest < 1.8 - 0.25 + 0.01,
                "blocked from below: reached {highest}"
            );
        }
    }
}

#[test]
fn a_conveyor_belt_carries_a_box_at_its_speed() {
    // The belt (static) says its surface moves at u = 1.5 m/s along x. A box at rest on
    // it slips, so friction accelerates it at mu g (mu = sqrt(0.5 * 0.5) = 0.5) until it
    // moves at u: v(t) = min(mu g t, u); then it rides at u. Tolerances: 2% on the slope
    // (the soft contact's bias, as in friction.rs), 1% on the final speed.
    let mut w = world(1);
    let belt = w
        .create_body(&BodyDesc {
            friction: 0.5,
            ..BodyDesc::fixed(
                Shape::cuboid(Vec3::new(20.0, 0.5, 2.0)).unwrap(),
                Vec3::new(0.0, -0.5, 0.0),
            )
        })
        .unwrap();
    let u = Vec3::new(1.5, 0.0, 0.0);
    w.set_contact_modifier(move |c| c.set_surface_velocity(belt, u));
    let b = w
        .create_body(&BodyDesc {
            friction: 0.5,
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.25)).unwrap(),
                Vec3::new(-10.0, 0.25, 0.0),
            )
        })
        .unwrap();
    // Settle for 2 steps, then time the slip phase.
    for _ in 0..2 {
        w.step(DT);
    }
    let v0 = w.linear_velocity(b).unwrap().x;
    for _ in 0..12 {
        w.step(DT);
    }
    let v1 = w.linear_velocity(b).unwrap().x;
    let a = (v1 - v0) / (12.0 * DT);
    assert!(
        (a - 0.5 * G).abs() < 0.02 * 0.5 * G,
        "slipping: a = {a}, expected {}",
        0.5 * G
    );
    for _ in 0..60 {
        w.step(DT);
    }
    let v = w.linear_velocity(b).unwrap();
    assert!(
        (v.x - 1.5).abs() < 0.015 && v.z.abs() < 1e-3,
        "riding at {v}"
    );
    // Without the belt's motion the box slows down and stops.
    w.clear_contact_modifier();
    for _ in 0..60 {
        w.step(DT);
    }
    assert!(w.linear_velocity(b).unwrap().length() < 0.01);
}

#[test]
fn a_friction_override_moves_the_slope_threshold() {
    // A box on a 30° slope with friction 1 (mixed) sticks: tan 30° = 0.577 < 1. The
    // modifier sets 0.3 for this contact: it slides at g (sin 30° - 0.3 cos 30°) =
    // 2.356 m/s², within 2%.
    let tilt = Quat::from_rotation_z(30f32.to_radians());
    for (override_mu, expected) in [
        (None, 0.0f32),
        (Some(0.3f32), G * (0.5 - 0.3 * 0.866_025_4)),
    ] {
        let mut w = world(1);
        w.create_body(&BodyDesc {
            friction: 1.0,
            rotation: tilt,
            ..BodyDesc::fixed(
                Shape::cuboid(Vec3::new(20.0, 0.5, 2.0)).unwrap(),
                tilt * Vec3::new(0.0, -0.5, 0.0),
            )
        })
        .unwrap();
        if let Some(mu) = override_mu {
            w.set_contact_modifier(move |c| {
                assert!(
                    (c.friction() - 1.0).abs() < 1e-6,
                    "the mixed value, afresh every step"
                );
                c.set_friction(mu);
            });
        }
        let b = w
            .create_body(&BodyDesc {
                friction: 1.0,
                rotation: tilt,
                ..BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.25)).unwrap(),
                    tilt * Vec3::new(0.0, 0.25, 0.0),
                )
            })
            .unwrap();
        for _ in 0..10 {
            w.step(DT);
        }
        let v0 = w.linear_velocity(b).unwrap().length();
        for _ in 0..30 {
            w.step(DT);
        }
        let v1 = w.linear_velocity(b).unwrap().length();
        let a = (v1 - v0) / (30.0 * DT);
        if expected == 0.0 {
            assert!(v1 < 0.01, "sticks: v = {v1}");
        } else {
            assert!(
                (a - expected).abs() < 0.02 * expected,
                "a = {a}, expected {expected}"
            );
        }
    }
}

#[test]
fn bad_values_from_a_modifier_are_ignored() {
    // NaN friction, restitution above 1 and an infinite belt speed change nothing: the
    // box comes to rest on the ground as without a modifier.
    let mut w = world(1);
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
    w.set_contact_modifier(|c| {
        c.set_friction(f32::NAN);
        c.set_restitution(2.0);
        c.set_tangent_velocity(Vec3::new(f32::INFINITY, 0.0, 0.0));
        assert!(c.friction().is_finite() && c.restitution() <= 1.0);
        assert_eq!(c.tangent_velocity(), Vec3::ZERO);
    });
    let b = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.25)).unwrap(),
            Vec3::new(0.0, 0.5, 0.0),
        ))
        .unwrap();
    for _ in 0..60 {
        w.step(DT);
    }
    let p = w.position(b).unwrap();
    assert!(
        (p.y - 0.25).abs() < 0.005 && p.x.abs() < 1e-3,
        "at rest: {p}"
    );
}

#[test]
fn modified_steps_are_identical_at_any_thread_count() {
    // A belt, a one-way platform and a pile of boxes raining through it: the modifier
    // runs in the narrow phase's jobs, and the state hash must not depend on how many.
    let run = |threads: usize| {
        let mut w = world(threads);
        let belt = w
            .create_body(&BodyDesc::fixed(
                Shape::cuboid(Vec3::new(10.0, 0.5, 10.0)).unwrap(),
                Vec3::new(0.0, -0.5, 0.0),
            ))
            .unwrap();
        let p = platform(&mut w);
        w.set_contact_modifier(move |c| {
            c.set_surface_velocity(belt, Vec3::new(0.8, 0.0, 0.3));
            if let Some(n) = c.normal_from(p)
                && n.y < 0.7
            {
                c.disable();
            }
        });
        for i in 0..60 {
            w.create_body(&BodyDesc {
                linear_velocity: Vec3::new(0.0, if i % 3 == 0 { 7.0 } else { 0.0 }, 0.0),
                ..BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.2)).unwrap(),
                    Vec3::new(
                        (i % 6) as f32 * 0.5 - 1.25,
                        0.5 + (i / 6) as f32 * 0.5,
                        (i % 4) as f32 * 0.3,
                    ),
                )
            })
            .unwrap();
        }
        (0..120)
            .map(|_| {
                w.step(DT);
                w.state_hash()
            })
            .collect::<Vec<_>>()
    };
    let one = run(0);
    for threads in [1, 3] {
        assert_eq!(run(threads), one, "{threads} workers");
    }
}

#[test]
fn a_normal_override_changes_the_push_direction() {
    // A frictionless box on a 30° slope slides down at g sin 30° (4.9 m/s², 2.45 m in
    // the first second). With its contact's normal set straight up, the contact holds
    // gravity along the vertical and the (now horizontal) frictionless tangent plane has
    // nothing to do: the box stays where it is (within 1 cm over 1 s).
    let tilt = Quat::from_rotation_z(30f32.to_radians());
    for override_normal in [false, true] {
        let mut w = world(1);
        let ramp = w
            .create_body(&BodyDesc {
                friction: 0.0,
                rotation: tilt,
                ..BodyDesc::fixed(
                    Shape::cuboid(Vec3::new(20.0, 0.5, 2.0)).unwrap(),
                    tilt * Vec3::new(0.0, -0.5, 0.0),
                )
            })
            .unwrap();
        if override_normal {
            w.set_contact_modifier(move |c| {
                let up_from_ramp = if c.bodies()[0] == ramp {
                    Vec3::Y
                } else {
                    -Vec3::Y
                };
                c.set_normal(up_from_ramp);
                assert_eq!(c.normal_from(ramp), Some(Vec3::Y));
            });
        }
        let start = tilt * Vec3::new(0.0, 0.25, 0.0);
        let b = w
            .create_body(&BodyDesc {
                friction: 0.0,
                rotation: tilt,
                ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.25)).unwrap(), start)
            })
            .unwrap();
        for _ in 0..60 {
            w.step(DT);
        }
        let moved = (w.position(b).unwrap() - start).length();
        if override_normal {
            assert!(moved < 0.01, "held by a vertical normal: moved {moved}");
        } else {
            let expected = 0.5 * G * 0.5;
            assert!(
                (moved - expected).abs() < 0.03 * expected,
                "slid {moved}, expected {expected}"
            );
        }
    }
}
