//! Restitution: bounce heights and an elastic head-on collision.

use crate::common::{DT, ground, world};
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::solver::SolverSettings;
use joule_physics::world::WorldDesc;

fn rebound_height(e: f32) -> f32 {
    // Dropped from rest with its bottom at 2 m; the first bounce apex of the bottom.
    // Energy: v_impact = sqrt(2 g h), v_out = e v_impact, apex = e^2 h.
    let mut w = world(1);
    ground(&mut w, 0.5);
    let r = 0.5;
    let b = w
        .create_body(&BodyDesc {
            restitution: e,
            ..BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::new(0.0, 2.0 + r, 0.0))
        })
        .unwrap();
    let mut bounced = false;
    let mut apex = 0.0f32;
    for _ in 0..240 {
        w.step(DT);
        let v = w.linear_velocity(b).unwrap().y;
        let y = w.position(b).unwrap().y - r;
        if v > 0.0 {
            bounced = true;
        }
        if bounced {
            apex = apex.max(y);
            if v < 0.0 {
                break;
            }
        }
    }
    assert!(bounced, "the sphere bounced (e = {e})");
    apex
}

#[test]
fn bounce_height_is_e_squared_times_drop_height() {
    for e in [0.3f32, 0.5, 0.8] {
        let apex = rebound_height(e);
        let expected = e * e * 2.0;
        assert!(
            (apex - expected).abs() < 0.1,
            "e = {e}: apex {apex}, expected {expected}"
        );
    }
    let apex = rebound_height(1.0);
    assert!(
        (apex - 2.0).abs() < 0.02 * 2.0,
        "e = 1: apex {apex}, expected 2"
    );
}

#[test]
fn equal_spheres_meeting_head_on_with_e_1_swap_velocities() {
    // Equal masses, perfectly elastic: velocities are exchanged (momentum and energy).
    let mut w = crate::common::world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        },
        1,
    );
    let s = Shape::sphere(0.5).unwrap();
    let a = w
        .create_body(&BodyDesc {
            restitution: 1.0,
            linear_velocity: Vec3::new(3.0, 0.0, 0.0),
            ..BodyDesc::dynamic(s.clone(), Vec3::new(-2.0, 0.0, 0.0))
        })
        .unwrap();
    let b = w
        .create_body(&BodyDesc {
            restitution: 1.0,
            linear_velocity: Vec3::new(-1.0, 0.0, 0.0),
            ..BodyDesc::dynamic(s, Vec3::new(2.0, 0.0, 0.0))
        })
        .unwrap();
    for _ in 0..120 {
        w.step(DT);
    }
    let (va, vb) = (w.linear_velocity(a).unwrap(), w.linear_velocity(b).unwrap());
    assert!(
        (va - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-3,
        "va = {va}"
    );
    assert!((vb - Vec3::new(3.0, 0.0, 0.0)).length() < 1e-3, "vb = {vb}");
}

/// A ball that landed without bouncing (e = 0) and came to rest keeps no memory of its
/// impact speed: when its contact's restitution is raised later (by the contact modifier)
/// it stays at rest, since a resting contact has nothing to bounce from. Only the
/// approach of a point stopped short of touching at the end of a step is carried to the
/// next step (`ContactImpulse::approach`); carried on every step it would compound into
/// the lowest approach the contact ever saw, and this ball would jump at e times its
/// landing speed (4.5 m/s), gaining energy.
#[test]
fn a_resting_contact_forgets_its_landing_speed() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut w = world(1);
    ground(&mut w, 0.5);
    let r = 0.5;
    let b = w
        .create_body(&BodyDesc {
            restitution: 0.0,
            allow_sleep: false,
            ..BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::new(0.0, 2.0 + r, 0.0))
        })
        .unwrap();
    let bouncy = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&bouncy);
    w.set_contact_modifier(move |c| {
        // Relaxed: the flag is set between steps, which the step's job joins order.
        if flag.load(Ordering::Relaxed) {
            c.set_restitution(0.8);
        }
    });
    for _ in 0..120 {
        w.step(DT);
    }
    assert!(
        w.linear_velocity(b).unwrap().length() < 0.05,
        "the ball came to rest"
    );
    bouncy.store(true, Ordering::Relaxed);
    for _ in 0..60 {
        w.step(DT);
        let v = w.linear_velocity(b).unwrap();
        assert!(v.length() < 0.05, "the resting ball moved at {v}");
    }
}

/// A ball thrown at a fixed wall 10 cm away at `speed`, no gravity: its x velocity
/// after 0.5 s.
fn off_a_wall(speed: f32, threshold: f32) -> f32 {
    let mut w = crate::common::world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            solver: SolverSettings {
                restitution_threshold: threshold,
                ..SolverSettings::default()
            },
            ..Default::default()
        },
        0,
    );
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(0.5, 2.0, 2.0)).unwrap(),
        Vec3::new(1.1, 0.0, 0.0),
    ))
    .unwrap();
    let b = w
        .create_body(&BodyDesc {
            restitution: 0.5,
            friction: 0.0,
            allow_sleep: false,
            linear_velocity: Vec3::new(speed, 0.0, 0.0),
            ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO)
        })
        .unwrap();
    for _ in 0..30 {
        w.step(DT);
    }
    w.linear_velocity(b).unwrap().x
}

/// Issue 28, item 11: an approach at exactly `restitution_threshold` bounces (Box2D v3's
/// and Box3D's rule), one just below it does not; with no gravity the approach at the
/// contact is exactly the speed thrown. Checked at the default threshold and another.
#[test]
fn restitution_applies_from_the_threshold_up() {
    for threshold in [1.0f32, 2.5] {
        let at = off_a_wall(threshold, threshold);
        assert!(
            (at + 0.5 * threshold).abs() < 0.02 * threshold,
            "threshold {threshold}: thrown at it, the ball left at {at}"
        );
        let below = off_a_wall(threshold.next_down(), threshold);
        assert!(
            below.abs() < 0.02 * threshold,
            "threshold {threshold}: thrown just below it, the ball left at {below}"
        );
    }
}
