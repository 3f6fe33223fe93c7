//! Reading contacts: `World::contacts_of` and `World::contact`, their views' points,
//! normals, depths and impulses, and what counts as touching.

use crate::common::{DT, G, cube, ground, run, world};
use joule_physics::body::BodyDesc;
use joule_physics::contact::TOUCHING_SEPARATION;
use joule_physics::error::PhysicsError;
use joule_physics::event_queue::{Event, EventKind};
use joule_physics::events::ContactEventKind;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;

/// A unit box at rest on the ground: one touching contact with four points (a face on a
/// face), the normal up from the ground, and normal impulses that carry its weight over
/// the step: `m g dt` (Newton's second law at rest), within 1 %.
#[test]
fn a_resting_box_has_one_touching_contact_carrying_its_weight() {
    let mut w = world(0);
    let g = ground(&mut w, 0.6);
    let b = w
        .create_body(&BodyDesc {
            allow_sleep: false,
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), Vec3::Y * 0.5)
        })
        .unwrap();
    run(&mut w, 120);

    let all: Vec<_> = w.contacts_of(b).unwrap().collect();
    assert_eq!(all.len(), 1, "{all:?}");
    let c = all[0];
    assert!(c.is_touching());
    assert_eq!((c.body_a(), c.body_b()), (g, b));
    assert_eq!((c.other(b), c.other(g)), (g, b));
    assert!(
        c.normal().y > 0.999,
        "A (ground) to B (box) is up: {}",
        c.normal()
    );
    assert!(c.normal_from(g).y > 0.999 && c.normal_from(b).y < -0.999);

    let points: Vec<_> = c.points().collect();
    assert_eq!(points.len(), 4, "{points:?}");
    for p in &points {
        assert!(p.position.y.abs() < 1e-3, "on the ground's face: {p:?}");
        assert!((p.position.x.abs() - 0.5).abs() < 1e-3 && (p.position.z.abs() - 0.5).abs() < 1e-3);
        assert!(p.depth >= 0.0 && p.depth < 1e-3 && p.depth == (-p.separation).max(0.0));
        assert!(p.friction_impulse.length() < 1e-4, "nothing slides: {p:?}");
    }
    let weight = w.mass(b).unwrap() * G * DT;
    let total: f32 = points.iter().map(|p| p.normal_impulse).sum();
    assert!(
        (total - weight).abs() < 0.01 * weight,
        "{total} vs m g dt = {weight}"
    );
    assert!((c.total_normal_impulse() - total).abs() < 1e-4 * weight);

    // The pair lookup finds the same contact, whichever way round it is asked.
    let same = w.contact(b, g).unwrap().expect("the pair has a contact");
    assert_eq!((same.body_a(), same.body_b()), (g, b));
    assert_eq!(same.points().count(), 4);
    assert_eq!(w.contacts_of(g).unwrap().count(), 1);
}

/// A box held 2 cm above the ground (no gravity on it) is inside the speculative margin:
/// it has a contact with points, but it is not touching, and it pushes nothing.
#[test]
fn a_speculative_contact_is_not_touching() {
    let mut w = world(0);
    let g = ground(&mut w, 0.6);
    let b = w
        .create_body(&BodyDesc {
            gravity_scale: 0.0,
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), Vec3::Y * 0.52)
        })
        .unwrap();
    run(&mut w, 2);
    let c = w
        .contact(g, b)
        .unwrap()
        .expect("within the speculative margin");
    assert!(!c.is_touching(), "{c:?}");
    assert!(c.points().len() > 0);
    for p in c.points() {
        assert!(
            (p.separation - 0.02).abs() < 1e-3 && p.depth == 0.0,
            "{p:?}"
        );
        assert_eq!(p.normal_impulse, 0.0);
    }
    // A body far from everything has no contacts.
    let far = cube(&mut w, 0.5, Vec3::new(20.0, 5.0, 0.0));
    run(&mut w, 1);
    assert_eq!(w.contacts_of(far).unwrap().count(), 0);
    assert!(w.contact(g, far).unwrap().is_none());
}

/// Ids of removed bodies are refused with the typed error, by both readers.
#[test]
fn stale_ids_are_refused() {
    let mut w = world(0);
    let g = ground(&mut w, 0.6);
    let b = cube(&mut w, 0.5, Vec3::Y * 0.5);
    run(&mut w, 2);
    w.remove_body(b).unwrap();
    assert!(matches!(w.contacts_of(b).err(), Some(PhysicsError::StaleBodyId(id)) if id == b));
    assert!(matches!(w.contact(g, b).err(), Some(PhysicsError::StaleBodyId(id)) if id == b));
    assert!(matches!(w.contact(b, g).err(), Some(PhysicsError::StaleBodyId(id)) if id == b));
    assert_eq!(w.contacts_of(g).unwrap().count(), 0);
}

/// A ball dropped from 1 m (its bottom 1 m above the ground) gets exactly one begin, in
/// the step its surface touches and not while its contact is only speculative, carrying
/// the point under the ball, the normal up and the approach speed `sqrt(2 g h)` (free
/// fall) within 2 %; the event queue carries the same.
#[test]
fn a_dropped_ball_begins_once_when_it_touches_with_its_impact_speed() {
    let mut w = world(0);
    w.set_event_queue(true);
    let g = ground(&mut w, 0.6);
    let ball = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.5).unwrap(),
            Vec3::Y * 1.5,
        ))
        .unwrap();
    let mut begins = Vec::new();
    let mut speculative_steps = 0;
    for step in 0..120 {
        w.step(DT);
        let touching = w.contact(g, ball).unwrap().map(|c| c.is_touching());
        speculative_steps += usize::from(touching == Some(false));
        for e in &w.events().contacts {
            assert_eq!((e.body_a, e.body_b), (g, ball));
            match e.kind {
                ContactEventKind::Begin => {
                    let c = w.contact(g, ball).unwrap().expect("a begin has a contact");
                    let gap = c.points().map(|p| p.separation).fold(f32::MAX, f32::min);
                    assert!(gap <= TOUCHING_SEPARATION, "begins when touching: {gap}");
                    begins.push((step, *e));
                }
                kind => panic!("step {step}: a landing ball gets no {kind:?}"),
            }
        }
    }
    assert!(
        speculative_steps >= 1,
        "the ball was speculative before it touched"
    );
    assert_eq!(begins.len(), 1, "{begins:?}");
    let e = begins[0].1;
    let expected = (2.0 * G * 1.0f32).sqrt();
    assert!(
        (e.approach_speed - expected).abs() < 0.02 * expected,
        "approach {} vs sqrt(2 g h) = {expected}",
        e.approach_speed
    );
    assert!(e.normal.y > 0.999, "from the ground up: {}", e.normal);
    assert!(
        e.point.abs().max_element() < 0.01,
        "under the ball: {}",
        e.point
    );

    let queued: Vec<Event> = w
        .drain_events()
        .filter(|e| e.kind == EventKind::ContactBegin)
        .collect();
    assert_eq!(queued.len(), 1);
    assert_eq!(
        (queued[0].point, queued[0].normal, queued[0].approach_speed),
        (e.point, e.normal, e.approach_speed)
    );
}

/// A body held in the speculative margin begins nothing; one that lands afterwards begins
/// once (Box2D v3's begin-touch events mean touching).
#[test]
fn speculative_contacts_begin_nothing() {
    let mut w = world(0);
    let g = ground(&mut w, 0.6);
    let b = w
        .create_body(&BodyDesc {
            gravity_scale: 0.0,
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), Vec3::Y * 0.52)
        })
        .unwrap();
    for _ in 0..30 {
        w.step(DT);
        assert!(w.events().contacts.is_empty(), "{:?}", w.events().contacts);
    }
    assert!(
        w.contact(g, b).unwrap().is_some(),
        "the contact is there, speculative"
    );
    w.set_linear_velocity(b, Vec3::new(0.0, -0.5, 0.0)).unwrap();
    let mut begins = 0;
    for _ in 0..30 {
        w.step(DT);
        begins += w
            .events()
            .contacts
            .iter()
            .filter(|e| e.kind == ContactEventKind::Begin)
            .count();
    }
    assert_eq!(begins, 1);
}

/// Two balls closing at 60 m/s with restitution 1, without CCD, bounce apart across a
/// speculative gap (restitution acts as the points start to push, before the surfaces
/// meet): they collided all the same, so they get one begin, with the 60 m/s closing
/// speed and the normal from A to B, and one end.
#[test]
fn balls_bouncing_apart_across_a_speculative_gap_begin_and_end_once() {
    let mut w = joule_physics::world::World::new(
        joule_physics::world::WorldDesc {
            gravity: Vec3::ZERO,
            ..Default::default()
        },
        joule_jobs::JobSystem::new(0).unwrap(),
    );
    let ball = |w: &mut joule_physics::world::World, x: f32, vx: f32| {
        w.create_body(&BodyDesc {
            linear_velocity: Vec3::new(vx, 0.0, 0.0),
            restitution: 1.0,
            friction: 0.0,
            ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::new(x, 0.0, 0.0))
        })
        .unwrap()
    };
    let a = ball(&mut w, -1.7, 30.0);
    let b = ball(&mut w, 1.7, -30.0);
    let (mut begins, mut ends) = (Vec::new(), 0);
    for _ in 0..20 {
        w.step(DT);
        for e in &w.events().contacts {
            assert_eq!((e.body_a, e.body_b), (a, b));
            match e.kind {
                ContactEventKind::Begin => begins.push(*e),
                ContactEventKind::End => ends += 1,
                ContactEventKind::Persist => {}
            }
        }
    }
    let va = w.linear_velocity(a).unwrap().x;
    assert!((va + 30.0).abs() < 0.3, "A bounced back at {va}");
    assert_eq!((begins.len(), ends), (1, 1), "{begins:?}");
    let e = begins[0];
    assert!(
        (e.approach_speed - 60.0).abs() < 0.6,
        "approach {}",
        e.approach_speed
    );
    assert!(e.normal.x > 0.999, "from A to B: {}", e.normal);
    assert!(e.point.x.abs() < 0.2, "between the balls: {}", e.point);
}
