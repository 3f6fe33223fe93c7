//! Contact force events: a pair reports the step's total impulses when its average
//! normal force passes the lower of its bodies' thresholds, and never below.

use crate::common::{DT, G, ground, world};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::event_queue::EventKind;
use joule_physics::events::ContactForceEvent;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

/// A 1 m box of `mass` kg resting on the ground (kept awake: a sleeping pair is not
/// solved, so it reports nothing).
fn resting_box(w: &mut World, mass: f32, threshold: f32) -> BodyId {
    w.create_body(
        &BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), Vec3::Y * 0.5)
            .density(mass)
            .allow_sleep(false)
            .contact_force_threshold(threshold),
    )
    .unwrap()
}

/// The force events of each of `steps` steps.
fn per_step(w: &mut World, steps: usize) -> Vec<Vec<ContactForceEvent>> {
    (0..steps)
        .map(|_| {
            w.step(DT);
            w.events().forces.clone()
        })
        .collect()
}

#[test]
fn a_resting_box_reports_its_weight_every_step_above_and_never_below_it() {
    let weight = 10.0 * G;
    // Just below the weight: every step, with the weight's impulse.
    let mut w = world(1);
    let g = ground(&mut w, 0.5);
    let b = resting_box(&mut w, 10.0, 0.98 * weight);
    let steps = per_step(&mut w, 240);
    for (k, events) in steps.iter().enumerate() {
        assert_eq!(events.len(), 1, "step {k}: one event for the one pair");
        let e = events[0];
        assert_eq!((e.body_a, e.body_b), (g, b));
        assert!(e.normal.y > 0.999, "the ground pushes up: {e:?}");
        let expected = weight * DT;
        assert!(
            (e.normal_impulse - expected).abs() < 0.01 * expected,
            "step {k}: total normal impulse {} N·s, expected m g dt = {expected}",
            e.normal_impulse
        );
        assert!((e.normal_force - e.normal_impulse / DT).abs() < 1e-3 * weight);
        assert!(
            e.friction_impulse.length() < 1e-3 * expected,
            "no friction at rest on level ground: {e:?}"
        );
    }
    // Just above: never.
    let mut w = world(1);
    ground(&mut w, 0.5);
    resting_box(&mut w, 10.0, 1.02 * weight);
    let steps = per_step(&mut w, 240);
    assert!(
        steps.iter().all(Vec::is_empty),
        "below the threshold nothing fires"
    );
}

#[test]
fn a_landing_ball_reports_its_impact_impulse_once() {
    // 1 kg, restitution 0.5, from 2 m: lands at v = sqrt(2 g h), leaves at e v.
    let (h, e, r) = (2.0f32, 0.5f32, 0.1f32);
    let v = (2.0 * G * h).sqrt();
    let mut w = world(1);
    let g = w
        .create_body(&BodyDesc {
            restitution: e,
            ..BodyDesc::fixed(
                Shape::cuboid(Vec3::new(50.0, 0.5, 50.0)).unwrap(),
                Vec3::new(0.0, -0.5, 0.0),
            )
        })
        .unwrap();
    let volume = 4.0 / 3.0 * std::f32::consts::PI * r * r * r;
    let ball = w
        .create_body(
            &BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::new(0.0, h + r, 0.0))
                .density(1.0 / volume)
                .restitution(e)
                // Far above the weight (9.8 N), far below the landing (hundreds of N).
                .contact_force_threshold(50.0),
        )
        .unwrap();
    let mut impacts = Vec::new();
    let mut impact_steps = Vec::new();
    // Until just before the second landing (the bounce takes 2 e v / g = 0.64 s).
    for k in 0..(((h / G * 2.0).sqrt() + 2.0 * e * v / G) / DT) as usize {
        w.step(DT);
        for ev in &w.events().forces {
            assert_eq!((ev.body_a, ev.body_b), (g, ball));
            impacts.push(*ev);
            impact_steps.push(k);
        }
    }
    assert!(!impacts.is_empty(), "the landing fires");
    assert!(
        impact_steps.windows(2).all(|s| s[1] == s[0] + 1) && impacts.len() <= 2,
        "one landing, in one step or two consecutive ones: steps {impact_steps:?}"
    );
    let total: f32 = impacts.iter().map(|e| e.normal_impulse).sum();
    // m (1 + e) v, plus the weight over the impact's steps.
    let expected = (1.0 + e) * v;
    assert!(
        (total - expected).abs() < 0.05 * expected,
        "impact impulse {total} N·s, expected m (1 + e) v = {expected}"
    );
}

#[test]
fn a_pair_uses_the_lower_threshold_and_the_setter_switches_events() {
    let weight = 10.0 * G;
    let mut w = world(1);
    let g = ground(&mut w, 0.5);
    let b = resting_box(&mut w, 10.0, f32::INFINITY);
    assert_eq!(w.contact_force_threshold(b).unwrap(), f32::INFINITY);
    assert!(
        per_step(&mut w, 30).iter().all(Vec::is_empty),
        "off by default"
    );
    // The ground's threshold alone is enough.
    w.set_contact_force_threshold(g, 0.5 * weight).unwrap();
    assert!(per_step(&mut w, 30).iter().all(|e| e.len() == 1));
    // The lower of the two: the box's high one does not hide the ground's.
    w.set_contact_force_threshold(b, 2.0 * weight).unwrap();
    assert!(per_step(&mut w, 30).iter().all(|e| e.len() == 1));
    w.set_contact_force_threshold(g, f32::INFINITY).unwrap();
    assert!(
        per_step(&mut w, 30).iter().all(Vec::is_empty),
        "2 m g is above the weight"
    );
    w.set_contact_force_threshold(b, 0.0).unwrap();
    assert!(per_step(&mut w, 30).iter().all(|e| e.len() == 1));
}

#[test]
fn force_events_go_through_the_event_queue() {
    let mut w = world(1);
    w.set_event_queue(true);
    ground(&mut w, 0.5);
    let b = resting_box(&mut w, 10.0, 1.0);
    for _ in 0..3 {
        w.step(DT);
    }
    let forces: Vec<_> = w
        .drain_events()
        .filter(|e| e.kind == EventKind::ContactForce)
        .collect();
    assert_eq!(forces.len(), 3, "one a step");
    for (k, e) in forces.iter().enumerate() {
        assert_eq!(e.step, k as u64 + 1);
        assert_eq!(e.body_b, b);
        assert!((e.normal_impulse - 10.0 * G * DT).abs() < 0.02 * 10.0 * G * DT);
    }
}

#[test]
fn invalid_thresholds_are_refused_with_the_field_named() {
    let mut w = world(1);
    let desc =
        BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y).contact_force_threshold(-1.0);
    let err = w.create_body(&desc).unwrap_err();
    assert!(matches!(
        err,
        PhysicsError::InvalidBodySetting {
            field: "contact_force_threshold",
            ..
        }
    ));
    let text = err.to_string();
    assert!(
        text.contains("contact_force_threshold") && text.contains("-1") && text.contains(">= 0"),
        "{text}"
    );
    let b = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y))
        .unwrap();
    assert!(w.set_contact_force_threshold(b, f32::NAN).is_err());
    assert_eq!(
        w.contact_force_threshold(b).unwrap(),
        f32::INFINITY,
        "unchanged on error"
    );
}

#[test]
fn force_events_are_the_same_at_any_thread_count_and_survive_a_snapshot() {
    let run = |threads: usize| {
        let mut w = world(threads);
        ground(&mut w, 0.6);
        // A pile: boxes dropped on each other, each reporting above its weight.
        for i in 0..40 {
            let p = Vec3::new(
                (i % 4) as f32 * 0.9 - 1.3,
                0.6 + (i / 4) as f32 * 1.05,
                (i % 3) as f32 * 0.2,
            );
            w.create_body(
                &BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.4)).unwrap(), p)
                    .contact_force_threshold(0.512 * 1000.0 * G),
            )
            .unwrap();
        }
        let events: Vec<_> = per_step(&mut w, 90).into_iter().flatten().collect();
        (w, events)
    };
    let (w1, one) = run(1);
    let (_, four) = run(4);
    assert!(one.len() > 100, "the pile reports: {}", one.len());
    let bits = |v: &[ContactForceEvent]| {
        v.iter()
            .map(|e| {
                (
                    e.body_a,
                    e.body_b,
                    e.normal_impulse.to_bits(),
                    e.friction_impulse.to_array().map(f32::to_bits),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&one), bits(&four), "bit-identical at 1 and 4 threads");
    // The thresholds travel in a snapshot.
    let copy = World::from_snapshot(
        w1.snapshot().as_bytes(),
        joule_jobs::JobSystem::new(0).unwrap(),
    )
    .unwrap();
    for id in w1.bodies().map(|b| b.id()) {
        assert_eq!(
            copy.contact_force_threshold(id).unwrap(),
            w1.contact_force_threshold(id).unwrap()
        );
    }
}

#[test]
fn a_resting_ball_reports_its_weight_too() {
    // One-point manifolds share bundles with others of their point count: the tallies
    // and the contact view agree there too.
    let mut w = world(1);
    let g = ground(&mut w, 0.5);
    let r = 0.5f32;
    let mass = 1000.0 * 4.0 / 3.0 * std::f32::consts::PI * r * r * r;
    let ball = w
        .create_body(
            &BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::Y * r)
                .allow_sleep(false)
                .contact_force_threshold(0.98 * mass * G),
        )
        .unwrap();
    let steps = per_step(&mut w, 120);
    for (k, events) in steps.iter().enumerate() {
        assert_eq!(events.len(), 1, "step {k}");
        let e = events[0];
        assert_eq!((e.body_a, e.body_b), (g, ball));
        assert!(
            (e.normal_impulse - mass * G * DT).abs() < 0.01 * mass * G * DT,
            "step {k}: {e:?}, expected {}",
            mass * G * DT
        );
    }
    let view = w.contact(g, ball).unwrap().expect("resting");
    let held: f32 = view.points().map(|p| p.normal_impulse).sum();
    assert!(
        (held - mass * G * DT).abs() < 0.01 * mass * G * DT,
        "the contact view reads the same push: {held}"
    );
}
