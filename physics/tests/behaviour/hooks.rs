//! The pair filter hook: refused pairs never touch, the step stays deterministic, and
//! setting a filter ends the contacts it refuses.

use joule_physics::event_queue::EventKind;
use joule_physics::prelude::*;

const DT: f32 = 1.0 / 60.0;

fn world(threads: usize) -> (World, BodyId) {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    let ground = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(20.0, 0.5, 20.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .unwrap();
    (w, ground)
}

/// A refused pair never makes a contact: the ghost falls freely through the ground,
/// y(t) = y0 - g t^2 / 2 (the integrator's closed form, to 1 mm after 1 s), while its
/// twin rests on it.
#[test]
fn a_refused_pair_falls_through_and_the_rest_collide() {
    let (mut w, ground) = world(1);
    let ball = Shape::sphere(0.5).unwrap();
    let ghost = w
        .create_body(&BodyDesc::dynamic(ball.clone(), Vec3::new(-2.0, 1.0, 0.0)))
        .unwrap();
    let solid = w
        .create_body(&BodyDesc::dynamic(ball, Vec3::new(2.0, 1.0, 0.0)))
        .unwrap();
    w.set_pair_filter(move |a, b| {
        assert!(a < b, "the filter is asked with the lower id first");
        !(a == ground && b == ghost)
    });
    for _ in 0..60 {
        w.step(DT);
    }
    // The substep integrator's closed form (free_fall.rs): n substeps of h fall
    // g h² n (n + 1) / 2, i.e. g t² / 2 (1 + h), to 1 mm.
    let t = 1.0f32;
    let h = DT / SolverSettings::default().substeps as f32;
    let expected = 1.0 - 0.5 * 9.81 * t * t * (1.0 + h);
    let y = w.body(ghost).unwrap().position().y;
    assert!(
        (y - expected).abs() < 0.001,
        "ghost at {y}, free fall gives {expected}"
    );
    let rest = w.body(solid).unwrap().position().y;
    assert!(
        (rest - 0.5).abs() < 0.02,
        "the other ball rests on the ground: {rest}"
    );
}

/// Pure filters keep the step deterministic: the same state hash at 1 and 4 threads for a
/// pile where every second pair of boxes is refused.
#[test]
fn filtered_steps_are_identical_at_any_thread_count() {
    let run = |threads: usize| {
        let (mut w, _) = world(threads);
        let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
        for k in 0..60 {
            let (x, z) = ((k % 5) as f32 * 0.9, (k / 5 % 3) as f32 * 0.9);
            w.create_body(&BodyDesc::dynamic(
                cube.clone(),
                Vec3::new(x, 0.5 + (k / 15) as f32 * 1.2, z),
            ))
            .unwrap();
        }
        w.set_pair_filter(|a, b| (a.index() + b.index()) % 2 == 0 || a.index() == 0);
        let mut hashes = Vec::new();
        for _ in 0..90 {
            w.step(DT);
            hashes.push(w.state_hash());
        }
        hashes
    };
    assert_eq!(run(0), run(3));
}

/// Setting a filter that refuses a touching pair ends its contact now, with an End event.
#[test]
fn setting_a_filter_ends_refused_contacts() {
    let (mut w, ground) = world(0);
    let b = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(0.0, 0.5, 0.0),
        ))
        .unwrap();
    w.set_event_queue(true);
    for _ in 0..10 {
        w.step(DT);
    }
    assert_eq!(w.contact_count(), 1);
    w.set_pair_filter(|_, _| false);
    assert_eq!(w.contact_count(), 0, "the refused contact is gone");
    assert!(
        w.events()
            .contacts
            .iter()
            .any(|e| e.kind == ContactEventKind::End && (e.body_a, e.body_b) == (ground, b))
    );
    for _ in 0..30 {
        w.step(DT);
    }
    assert!(w.body(b).unwrap().position().y < 0.0, "it falls through");
    w.clear_pair_filter();
    let begins = w
        .drain_events()
        .filter(|e| e.kind == EventKind::ContactBegin)
        .count();
    assert_eq!(begins, 1, "the first landing only");
}
