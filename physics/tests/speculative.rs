//! Speculative contacts that grow with speed (issue 13, item 1).
//!
//! A ball dropped from rest from height `h` hits the ground at `sqrt(2 g h)` and, with
//! restitution `e`, leaves at `e` times that, so its first apex is `e² h` (energy
//! conservation in flight). The contact must exist before the ball reaches the ground,
//! whatever the step, or the ball sinks in and its rebound starts below the surface (with
//! a fixed 2 cm margin a 2 m drop at e = 0.3 came back to 0.068 h instead of 0.09 h).

mod common;

use common::{G, ground, world};
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;

/// Drops a ball of radius 0.5 with its bottom at `height`; returns the first rebound
/// apex of its bottom and the deepest its bottom went below the ground's top.
fn drop(e: f32, height: f32, dt: f32) -> (f32, f32) {
    let mut w = world(0);
    ground(&mut w, 0.5);
    let r = 0.5;
    let b = w
        .create_body(&BodyDesc {
            restitution: e,
            ..BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::new(0.0, height + r, 0.0))
        })
        .unwrap();
    let (mut bounced, mut apex, mut deepest) = (false, 0f32, 0f32);
    for _ in 0..(4.0 * (2.0 * height / G).sqrt() / dt) as usize + 10 {
        w.step(dt);
        let v = w.linear_velocity(b).unwrap().y;
        let y = w.position(b).unwrap().y - r;
        deepest = deepest.min(y);
        if v > 0.0 {
            bounced = true;
        }
        if bounced {
            // The apex of the flight that starts here (ballistic), not a sample of it:
            // sampling at step ends would read up to g dt² / 8 low.
            apex = y + v * v / (2.0 * G);
            break;
        }
    }
    assert!(
        bounced || e == 0.0,
        "e = {e}, h = {height}, dt = {dt}: no bounce"
    );
    (apex, deepest)
}

#[test]
fn rebounds_reach_e_squared_h_over_drop_heights_steps_and_restitutions() {
    let mut worst = 0f32;
    for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0] {
        for height in [0.5f32, 2.0, 5.0] {
            for e in [0.3f32, 0.5, 0.8] {
                let (apex, deepest) = drop(e, height, dt);
                let expected = e * e * height;
                // 2.5 %: the impact speed is read at the substep where the gap closes,
                // so it misses part of one substep's gravity (measured: 0.1 % to 2.1 %,
                // the most at 30 Hz from 0.5 m, always low; with the fixed margin it was
                // 24 % low at 60 Hz from 2 m).
                let tol = 0.025 * expected;
                let err = (apex - expected) / expected;
                worst = worst.max(err.abs());
                assert!(
                    (apex - expected).abs() < tol,
                    "e = {e}, h = {height}, dt = {dt}: apex {apex}, e²h = {expected}"
                );
                // The contact exists before the ball arrives, so it stops at the surface
                // instead of sinking in at its step's travel (10 cm per step for 2 m at
                // 60 Hz); what is left is the soft contact's give: 5 mm.
                assert!(
                    deepest > -0.005,
                    "e = {e}, h = {height}, dt = {dt}: sank {deepest}"
                );
            }
        }
    }
    println!("worst relative apex error {worst}");
}

#[test]
fn a_fast_ball_does_not_sink_into_the_ground_before_its_first_contact() {
    // 5 m drop at 30 Hz: 33 cm per step, 16 times the fixed margin. Inelastic, so the
    // ball should stop on the surface: its bottom never goes more than 5 mm below it.
    let (_, deepest) = drop(0.0, 5.0, 1.0 / 30.0);
    assert!(deepest > -0.005, "sank {deepest}");
}
