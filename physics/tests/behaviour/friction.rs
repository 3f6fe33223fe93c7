//! Friction: sliding deceleration and the slope threshold.

use crate::common::{DT, G, ground, world};
use joule_physics::body::BodyDesc;
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;

#[test]
fn a_sliding_box_decelerates_at_mu_g_and_stops_on_time() {
    // Coulomb friction: v(t) = v0 - mu g t, stopping at t = v0 / (mu g).
    let (v0, mu) = (20.0f32, 0.8485f32);
    let mut w = world(1);
    ground(&mut w, mu);
    let b = w
        .create_body(&BodyDesc {
            friction: mu,
            linear_velocity: Vec3::new(v0, 0.0, 0.0),
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(-40.0, 0.5, 0.0),
            )
        })
        .unwrap();
    let t_stop = v0 / (mu * G);
    let mut stopped_at = None;
    for step in 1..=400 {
        w.step(DT);
        let t = step as f32 * DT;
        let v = w.linear_velocity(b).unwrap().x;
        let expected = (v0 - mu * G * t).max(0.0);
        if expected > 2.0 {
            assert!(
                (v - expected).abs() <= 0.02 * expected,
                "t = {t}: v = {v}, expected {expected}"
            );
        }
        if stopped_at.is_none() && v.abs() < 1e-3 {
            stopped_at = Some(step);
        }
    }
    let expected_step = (t_stop / DT).round() as i32;
    let s = stopped_at.expect("the box stops");
    assert!(
        (s - expected_step).abs() <= 3,
        "stopped at step {s}, expected {expected_step}"
    );
}

fn slope_run(mu: f32) -> (f32, Vec3, Vec3) {
    // A box on a plane tilted 30 degrees about z. Mixed friction = sqrt(mu * mu) = mu.
    let theta = 30f32.to_radians();
    let rot = Quat::from_rotation_z(theta);
    let mut w = world(1);
    w.create_body(&BodyDesc {
        friction: mu,
        rotation: rot,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(50.0, 0.5, 10.0)).unwrap(),
            Vec3::ZERO,
        )
    })
    .unwrap();
    // Rest the box on the slope's top face (local y = 0.5 + 0.5).
    let p = rot * Vec3::new(0.0, 1.0, 0.0);
    let b = w
        .create_body(&BodyDesc {
            friction: mu,
            rotation: rot,
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), p)
        })
        .unwrap();
    let down_slope = rot * Vec3::new(-1.0, 0.0, 0.0);
    // Let contact settle, then measure speed gained along the slope over 1 s.
    for _ in 0..30 {
        w.step(DT);
    }
    let v1 = w.linear_velocity(b).unwrap().dot(down_slope);
    let p1 = w.position(b).unwrap();
    for _ in 0..60 {
        w.step(DT);
    }
    let v2 = w.linear_velocity(b).unwrap().dot(down_slope);
    ((v2 - v1) / (60.0 * DT), p1, w.position(b).unwrap())
}

#[test]
fn a_box_on_a_30_degree_slope_accelerates_at_g_sin_minus_mu_cos() {
    let theta = 30f32.to_radians();
    let mu = 0.3;
    let expected = G * (theta.sin() - mu * theta.cos());
    let (a, _, _) = slope_run(mu);
    assert!(
        (a - expected).abs() <= 0.03 * expected,
        "a = {a}, expected {expected}"
    );
}

#[test]
fn a_box_on_a_30_degree_slope_with_mu_07_stays_put() {
    // tan(30) = 0.577 < 0.7: static friction holds.
    let (_, p1, p2) = slope_run(0.7);
    assert!((p2 - p1).length() < 0.01, "moved {} m", (p2 - p1).length());
}
