//! Filtering, sensors and events.

use crate::common::{DT, cube, ground, run, world, world_with};
use joule_physics::body::{BodyDesc, MotionType};
use joule_physics::events::ContactEventKind;
use joule_physics::filter::{CollisionFilter, LayerTable};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::WorldDesc;

#[test]
fn begin_persist_end_for_a_box_that_lands_and_is_lifted() {
    // Persist events are off by default (they cost time every step); this test asks.
    let mut w = world_with(
        WorldDesc {
            report_persist_events: true,
            ..WorldDesc::default()
        },
        1,
    );
    let g = ground(&mut w, 0.5);
    // Kept awake: a sleeping pair reports no persist events (see the next test).
    let b = w
        .create_body(&BodyDesc {
            allow_sleep: false,
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 1.0, 0.0),
            )
        })
        .unwrap();
    let mut begins = 0;
    let mut persists = 0;
    for _ in 0..60 {
        w.step(DT);
        for e in &w.events().contacts {
            assert_eq!((e.body_a, e.body_b), (g, b), "lower id first");
            match e.kind {
                ContactEventKind::Begin => begins += 1,
                ContactEventKind::Persist => persists += 1,
                ContactEventKind::End => panic!("no end while resting"),
            }
        }
    }
    assert_eq!(begins, 1, "exactly one begin");
    assert!(persists > 30, "persist events while touching");
    w.set_position(b, Vec3::new(0.0, 10.0, 0.0)).unwrap();
    w.step(DT);
    let ends: Vec<_> = w
        .events()
        .contacts
        .iter()
        .filter(|e| e.kind == ContactEventKind::End)
        .collect();
    assert_eq!(ends.len(), 1, "one end when lifted away");
}

#[test]
fn persist_events_are_off_unless_asked_for() {
    // Rapier's and Jolt's default: begin and end only, since a persist event per touching
    // pair per step costs time whether or not anyone reads it.
    assert!(!WorldDesc::default().report_persist_events);
    let mut w = world(1);
    ground(&mut w, 0.5);
    cube(&mut w, 0.5, Vec3::new(0.0, 0.6, 0.0));
    let mut kinds = Vec::new();
    for _ in 0..60 {
        w.step(DT);
        kinds.extend(w.events().contacts.iter().map(|e| e.kind));
    }
    assert_eq!(
        kinds,
        vec![ContactEventKind::Begin],
        "one begin, no persists"
    );
}

#[test]
fn a_sleeping_contact_is_not_visited_and_resumes_on_wake() {
    // Contacts of sleeping islands cost nothing per step: they are not updated and report
    // no persist events; the contact itself is kept, so waking reports no new begin.
    let mut w = world_with(
        WorldDesc {
            report_persist_events: true,
            ..WorldDesc::default()
        },
        1,
    );
    ground(&mut w, 0.5);
    let b = cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    let mut steps = 0;
    while !w.is_sleeping(b).unwrap() {
        w.step(DT);
        steps += 1;
        assert!(steps < 300, "the box falls asleep");
    }
    for _ in 0..30 {
        w.step(DT);
        assert!(w.events().contacts.is_empty(), "no events while asleep");
        assert_eq!(w.contact_count(), 1, "the contact is kept");
    }
    w.apply_impulse(b, Vec3::new(0.0, 0.0, 1.0)).unwrap();
    w.step(DT);
    let kinds: Vec<_> = w.events().contacts.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![ContactEventKind::Persist],
        "awake again, same contact"
    );
}

#[test]
fn a_sensor_reports_overlap_and_never_pushes() {
    let mut w = world(1);
    let sensor = w
        .create_body(&BodyDesc {
            is_sensor: true,
            ..BodyDesc::fixed(
                Shape::cuboid(Vec3::new(2.0, 0.5, 2.0)).unwrap(),
                Vec3::new(0.0, 5.0, 0.0),
            )
        })
        .unwrap();
    let ball = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.25).unwrap(),
            Vec3::new(0.0, 7.0, 0.0),
        ))
        .unwrap();
    let (mut begin, mut end) = (0, 0);
    let mut min_vy = 0.0f32;
    for _ in 0..120 {
        let v_before = w.linear_velocity(ball).unwrap().y;
        w.step(DT);
        let v_after = w.linear_velocity(ball).unwrap().y;
        // Free fall only: the sensor never applies an impulse.
        assert!((v_after - (v_before - 9.81 * DT)).abs() < 1e-4);
        min_vy = min_vy.min(v_after);
        for e in &w.events().sensors {
            assert_eq!((e.sensor, e.visitor), (sensor, ball));
            if e.begin {
                begin += 1;
            } else {
                end += 1;
            }
        }
        assert!(
            w.events().contacts.is_empty(),
            "sensors make no contact events"
        );
    }
    assert_eq!((begin, end), (1, 1), "entered once and left once");
    assert!(w.position(ball).unwrap().y < 4.0, "fell through");
}

fn falls_through(
    setup: impl FnOnce(
        &mut joule_physics::world::World,
        joule_physics::body::BodyId,
        joule_physics::body::BodyId,
    ),
) -> bool {
    let mut w = world_with(
        WorldDesc {
            layers: {
                let mut t = LayerTable::all_colliding(2);
                t.set(0, 1, false);
                t
            },
            ..WorldDesc::default()
        },
        1,
    );
    let g = ground(&mut w, 0.5);
    let b = cube(&mut w, 0.5, Vec3::new(0.0, 1.0, 0.0));
    setup(&mut w, g, b);
    run(&mut w, 90);
    w.position(b).unwrap().y < -1.0
}

#[test]
fn layers_group_masks_and_exclusions_filter_pairs() {
    assert!(!falls_through(|_, _, _| {}), "default: the box lands");
    // Layer 1 does not collide with layer 0 (the ground's).
    let mut w = world_with(
        WorldDesc {
            layers: {
                let mut t = LayerTable::all_colliding(2);
                t.set(0, 1, false);
                t
            },
            ..WorldDesc::default()
        },
        1,
    );
    ground(&mut w, 0.5);
    let b = w
        .create_body(&BodyDesc {
            layer: 1,
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 1.0, 0.0),
            )
        })
        .unwrap();
    run(&mut w, 90);
    assert!(
        w.position(b).unwrap().y < -1.0,
        "layer table filters the pair"
    );

    // Group/mask: the box's mask excludes the ground's group.
    let mut w = world(1);
    w.create_body(&BodyDesc {
        filter: CollisionFilter {
            group: 0b10,
            mask: u32::MAX,
        },
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(50.0, 0.5, 50.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        )
    })
    .unwrap();
    let b = w
        .create_body(&BodyDesc {
            filter: CollisionFilter {
                group: 0b01,
                mask: 0b01,
            },
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 1.0, 0.0),
            )
        })
        .unwrap();
    run(&mut w, 90);
    assert!(
        w.position(b).unwrap().y < -1.0,
        "group/mask filters the pair"
    );

    // Exclusion list, set after the contact exists: the box falls through from then on.
    assert!(falls_through(|w, g, b| {
        run(w, 30);
        w.exclude_pair(g, b).unwrap();
    }));
}

#[test]
fn kinematic_and_static_bodies_do_not_collide_with_each_other() {
    let mut w = world(1);
    ground(&mut w, 0.5);
    let k = w
        .create_body(&BodyDesc {
            linear_velocity: Vec3::new(0.0, -1.0, 0.0),
            ..BodyDesc::kinematic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 1.0, 0.0),
            )
        })
        .unwrap();
    assert_eq!(w.motion_type(k).unwrap(), MotionType::Kinematic);
    run(&mut w, 120);
    // A kinematic body follows its velocity through the static ground.
    assert!((w.position(k).unwrap().y - (1.0 - 2.0)).abs() < 1e-3);
    assert_eq!(w.contact_count(), 0);
}

#[test]
fn resting_contacts_keep_their_impulses_from_step_to_step() {
    // Warm starting: a resting box's contact points keep their feature ids, so each step
    // starts from last step's accumulated impulses; at rest the total normal impulse per
    // substep balances the weight: m g h with h = dt / substeps.
    let mut w = world(1);
    ground(&mut w, 0.5);
    let b = cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    w.set_linear_velocity(b, Vec3::ZERO).unwrap();
    run(&mut w, 20);
    let c = w.contacts();
    assert_eq!(c.len(), 1);
    let total: f32 = c[0].normal_impulses.iter().sum();
    let h = DT / w.desc().solver.substeps as f32;
    let expected = w.mass(b).unwrap() * 9.81 * h;
    assert!(
        (total - expected).abs() < 0.02 * expected,
        "impulse {total} vs weight {expected}"
    );
    w.step(DT);
    let again: f32 = w.contacts()[0].normal_impulses.iter().sum();
    assert!(
        (again - total).abs() < 0.01 * expected,
        "impulses persist: {total} then {again}"
    );
}

#[test]
fn a_reused_manifold_tracks_small_moves_and_is_recomputed_after_large_ones() {
    // A contact keeps its manifold while the pair's relative pose stays within 1 mm and
    // 1 degree of the last full computation (the pair cache) and then only updates the
    // separations; past that it recomputes. Expected values: a unit box on the ground
    // (top face y = 0) with its centre at y = 0.5 + d has its four bottom corners at
    // separation d; tilted 10 degrees about x with one bottom edge on the ground, the
    // other edge is sin(10°) = 0.17 m up, beyond the 2 cm margin, so only two points.
    let mut w = world(0);
    ground(&mut w, 0.5);
    let b = cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    w.update_collisions();
    let seps = |w: &joule_physics::world::World| -> Vec<f32> {
        w.contacts()[0].points.iter().map(|p| p.1).collect()
    };
    assert_eq!(seps(&w).len(), 4);
    // Within the cache: 0.4 mm up, the same four points, separations follow.
    w.set_position(b, Vec3::new(0.0, 0.5004, 0.0)).unwrap();
    w.update_collisions();
    let s = seps(&w);
    assert_eq!(s.len(), 4);
    assert!(s.iter().all(|d| (d - 0.0004).abs() < 1e-5), "{s:?}");
    // Beyond the cache: tilt about the bottom edge at z = +0.5.
    let q = joule_physics::math::Quat::from_rotation_x(10f32.to_radians());
    let edge = Vec3::new(0.0, 0.0, 0.5);
    let centre = edge + q * (Vec3::new(0.0, 0.5, 0.0) - edge);
    w.set_transform(b, centre, q).unwrap();
    w.update_collisions();
    let s = seps(&w);
    assert_eq!(s.len(), 2, "the lifted edge left the manifold: {s:?}");
    assert!(s.iter().all(|d| d.abs() < 1e-4), "{s:?}");
}

/// Stepping many times between reads loses nothing: the queue holds every step's events,
/// each stamped with its step, in step order, and equal to what `events()` showed step by
/// step (the same events, read the other way).
#[test]
fn queued_events_keep_every_step_until_drained() {
    use joule_physics::event_queue::{Event, EventKind};
    use joule_physics::events::ContactEventKind;

    let mut a = world(1);
    let mut b = world(1);
    for w in [&mut a, &mut b] {
        ground(w, 0.5);
        for k in 0..4 {
            cube(w, 0.5, Vec3::new(3.0 * k as f32, 1.0 + k as f32, 0.0));
        }
    }
    a.set_event_queue(true);
    // b is read after every step, the long way.
    let mut expected = Vec::new();
    for _ in 0..240 {
        a.step(DT);
        b.step(DT);
        for e in &b.events().contacts {
            let kind = match e.kind {
                ContactEventKind::Begin => EventKind::ContactBegin,
                ContactEventKind::Persist => EventKind::ContactPersist,
                ContactEventKind::End => EventKind::ContactEnd,
            };
            expected.push((kind, e.body_a, e.body_b));
        }
        for e in b.sleep_events() {
            let kind = if e.asleep {
                EventKind::Sleep
            } else {
                EventKind::Wake
            };
            expected.push((kind, e.body, e.body));
        }
    }
    let got: Vec<Event> = a.drain_events().collect();
    assert!(got.windows(2).all(|w| w[0].step <= w[1].step), "step order");
    assert_eq!(
        got.iter()
            .map(|e| (e.kind, e.body_a, e.body_b))
            .collect::<Vec<_>>(),
        expected
    );
    let begins = got
        .iter()
        .filter(|e| e.kind == EventKind::ContactBegin)
        .count();
    assert_eq!(begins, 4, "four boxes land, each once");
    assert!(
        got.iter().any(|e| e.kind == EventKind::Sleep),
        "they fall asleep in 4 s"
    );
    assert!(a.queued_events().is_empty(), "drained");
}
