//! Rollback: a dynamic-state snapshot restored onto the world it was taken from makes it
//! step exactly as it did the first time, and one that does not fit is refused without
//! touching the world.
//!
//! "Exactly" is checked two ways after every re-simulated step: `state_hash` (every body's
//! pose and velocities) and the full snapshot's bytes, which also cover contacts,
//! warm-start impulses, joint impulses, sleep timers and sets, the broad-phase trees and
//! the step count. The scenes go through what a dynamic snapshot must carry: islands
//! falling asleep and waking inside the window, contacts beginning and ending, joints,
//! and fast bodies swept by CCD.

use crate::common::{DT, cube, ground, run, world};
use joule_physics::body::{BodyDesc, BodyId, MotionQuality};
use joule_physics::error::PhysicsError;
use joule_physics::joint::{JointDesc, JointKind};
use joule_physics::math::{Isometry, Vec3, Vec3A};
use joule_physics::shape::Shape;
use joule_physics::snapshot::DynamicSnapshot;
use joule_physics::world::World;

/// Steps `n` times, returning the hash and full snapshot after each step.
fn trace(w: &mut World, n: usize) -> Vec<(u64, Vec<u8>)> {
    (0..n)
        .map(|_| {
            w.step(DT);
            (w.state_hash(), w.snapshot().into_bytes())
        })
        .collect()
}

/// Asserts two traces are the same, naming the first step that differs.
fn assert_same(first: &[(u64, Vec<u8>)], again: &[(u64, Vec<u8>)], what: &str) {
    assert_eq!(first.len(), again.len());
    for (i, (a, b)) in first.iter().zip(again).enumerate() {
        assert_eq!(a.0, b.0, "{what}: state hash differs {} steps after", i + 1);
        assert!(a.1 == b.1, "{what}: snapshot differs {} steps after", i + 1);
    }
}

/// A pile: a pyramid of boxes, a stack beside it that falls asleep, a chain of ball
/// joints hanging from the world with a box swinging at its end, and a ball rolled at the
/// stack (returned) to wake it later.
fn pile(threads: usize) -> (World, BodyId) {
    let mut w = world(threads);
    ground(&mut w, 0.6);
    for row in 0..6 {
        for i in 0..6 - row {
            let x = i as f32 * 1.02 - (6 - row) as f32 * 0.51;
            cube(&mut w, 0.5, Vec3::new(x, 0.5 + row as f32, 0.0));
        }
    }
    for k in 0..4 {
        cube(&mut w, 0.5, Vec3::new(10.0, 0.5 + k as f32, 0.0));
    }
    let mut prev = None;
    for l in 0..6 {
        let top = Vec3::new(-8.0, 8.0, 0.0);
        let p = top - Vec3::new(0.4 * (l as f32 + 0.5), 0.0, 0.0);
        let b = w
            .create_body(&BodyDesc::dynamic(Shape::sphere(0.2).unwrap(), p))
            .unwrap();
        let frame_a = match prev {
            None => Isometry::from_translation(top),
            Some(_) => Isometry::from_translation(Vec3A::new(-0.2, 0.0, 0.0)),
        };
        let frame_b = Isometry::from_translation(Vec3A::new(0.2, 0.0, 0.0));
        w.create_joint(&JointDesc::new(JointKind::Ball, prev, b, frame_a, frame_b))
            .unwrap();
        prev = Some(b);
    }
    let ball = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.4).unwrap(),
            Vec3::new(30.0, 0.4, 0.0),
        ))
        .unwrap();
    (w, ball)
}

/// A rain of fast bodies (CCD-swept spheres and boxes) onto the ground.
fn rain(threads: usize) -> World {
    let mut w = world(threads);
    ground(&mut w, 0.5);
    for i in 0..120 {
        let (x, z) = ((i % 12) as f32 * 1.1 - 6.0, (i / 12) as f32 * 1.1 - 5.0);
        let shape = if i % 2 == 0 {
            Shape::sphere(0.3).unwrap()
        } else {
            Shape::cuboid(Vec3::splat(0.3)).unwrap()
        };
        w.create_body(&BodyDesc {
            motion_quality: MotionQuality::LinearCast,
            linear_velocity: Vec3::new(0.0, -40.0 - i as f32 * 0.5, 0.0),
            ..BodyDesc::dynamic(shape, Vec3::new(x, 4.0 + (i % 7) as f32 * 1.5, z))
        })
        .unwrap();
    }
    w
}

/// Saves, runs `n` steps, restores and runs them again: the same states at every step.
fn replays_exactly(w: &mut World, n: usize, what: &str) {
    let mut saved = DynamicSnapshot::new();
    w.save_dynamic(&mut saved);
    let (hash, bytes) = (w.state_hash(), w.snapshot().into_bytes());
    let first = trace(w, n);
    w.restore_dynamic(&saved).unwrap();
    assert_eq!(w.state_hash(), hash, "{what}: restored hash");
    assert!(
        w.snapshot().as_bytes() == bytes,
        "{what}: restored snapshot"
    );
    let again = trace(w, n);
    assert_same(&first, &again, what);
    // Restoring twice from one snapshot works as well (it is not consumed).
    w.restore_dynamic(&saved).unwrap();
    assert_same(&first, &trace(w, n), what);
}

#[test]
fn a_pile_replays_exactly_while_islands_sleep_and_wake() {
    for threads in [0, 2] {
        let (mut w, ball) = pile(threads);
        // In motion: the pyramid settles, the chain swings, the stack falls asleep in
        // the window.
        run(&mut w, 20);
        replays_exactly(&mut w, 120, "settling pile");
        run(&mut w, 200);
        assert!(
            w.is_sleeping(cube_id(&w, 22)).unwrap(),
            "the stack sleeps before the ball comes"
        );
        // Asleep at the save; the ball wakes the stack inside the window.
        w.set_linear_velocity(ball, Vec3::new(-12.0, 0.0, 0.0))
            .unwrap();
        replays_exactly(&mut w, 150, "stack woken by a ball");
        assert!(!w.is_sleeping(cube_id(&w, 22)).unwrap(), "the ball woke it");
    }
}

/// The id of the `n`-th body created (ground is 0).
fn cube_id(w: &World, n: usize) -> BodyId {
    w.bodies().nth(n).unwrap().id()
}

#[test]
fn a_rain_with_ccd_replays_exactly() {
    for threads in [0, 2] {
        let mut w = rain(threads);
        replays_exactly(&mut w, 40, "rain from the start");
        run(&mut w, 5);
        replays_exactly(&mut w, 60, "rain mid-fall");
    }
}

#[test]
fn a_mispredicted_input_replays_to_the_corrected_result() {
    let (mut w, ball) = pile(1);
    run(&mut w, 30);
    let mut saved = DynamicSnapshot::new();
    w.save_dynamic(&mut saved);
    let truth = |w: &mut World, impulse: Vec3| {
        w.apply_impulse(ball, impulse).unwrap();
        add_force_then_run(w)
    };
    let predicted = truth(&mut w, Vec3::new(-1.0, 0.0, 0.0));
    w.restore_dynamic(&saved).unwrap();
    let corrected = truth(&mut w, Vec3::new(-3.0, 0.0, 0.0));
    assert_ne!(predicted, corrected, "the input matters");
    w.restore_dynamic(&saved).unwrap();
    assert_eq!(truth(&mut w, Vec3::new(-3.0, 0.0, 0.0)), corrected);
    w.restore_dynamic(&saved).unwrap();
    assert_eq!(truth(&mut w, Vec3::new(-1.0, 0.0, 0.0)), predicted);
}

/// A force added after a restore acts like one added the first time (restore clears the
/// forces of the abandoned future).
fn add_force_then_run(w: &mut World) -> u64 {
    let first = w.bodies().nth(1).unwrap().id();
    w.add_force(first, Vec3::new(0.0, 50.0, 0.0)).unwrap();
    run(w, 8);
    w.state_hash()
}

#[test]
fn forces_added_after_the_save_are_cleared_by_restore() {
    let (mut w, _) = pile(0);
    run(&mut w, 10);
    let mut saved = DynamicSnapshot::new();
    w.save_dynamic(&mut saved);
    let bytes = w.snapshot().into_bytes();
    let first = w.bodies().nth(1).unwrap().id();
    w.add_force(first, Vec3::new(0.0, 500.0, 0.0)).unwrap();
    w.restore_dynamic(&saved).unwrap();
    assert!(w.snapshot().as_bytes() == bytes, "the force is gone");
}

#[test]
fn a_snapshot_that_does_not_fit_is_refused_and_changes_nothing() {
    let (mut w, ball) = pile(0);
    run(&mut w, 10);
    let refused = |w: &mut World, s: &DynamicSnapshot, what: &str| {
        let (hash, bytes) = (w.state_hash(), w.snapshot().into_bytes());
        assert_eq!(
            w.restore_dynamic(s),
            Err(PhysicsError::SnapshotStructureChanged),
            "{what}"
        );
        assert_eq!(w.state_hash(), hash, "{what}: the world is unchanged");
        assert!(w.snapshot().as_bytes() == bytes, "{what}: unchanged");
    };
    let empty = DynamicSnapshot::new();
    assert!(empty.is_empty() && empty.step_count().is_none());
    refused(&mut w, &empty, "an empty snapshot");

    let (other, _) = pile(0);
    let mut theirs = DynamicSnapshot::new();
    other.save_dynamic(&mut theirs);
    refused(&mut w, &theirs, "another world's snapshot");

    let mut saved = DynamicSnapshot::new();
    w.save_dynamic(&mut saved);
    assert_eq!(saved.step_count(), Some(10));
    run(&mut w, 3);
    let extra = cube(&mut w, 0.5, Vec3::new(-20.0, 0.5, 0.0));
    refused(&mut w, &saved, "a body added since");
    w.remove_body(extra).unwrap();
    refused(
        &mut w,
        &saved,
        "added then removed: the slot's generation moved on",
    );

    w.save_dynamic(&mut saved);
    w.remove_body(ball).unwrap();
    refused(&mut w, &saved, "a body removed since");

    w.save_dynamic(&mut saved);
    let a = cube_id(&w, 1);
    let j = w
        .create_joint(&JointDesc::new(
            JointKind::Ball,
            None,
            a,
            Isometry::IDENTITY,
            Isometry::IDENTITY,
        ))
        .unwrap();
    refused(&mut w, &saved, "a joint created since");
    w.save_dynamic(&mut saved);
    w.remove_joint(j).unwrap();
    refused(&mut w, &saved, "a joint removed since");

    w.save_dynamic(&mut saved);
    let image = w.snapshot();
    w.restore(image.as_bytes()).unwrap();
    refused(&mut w, &saved, "a full restore since");

    // Still usable: a fresh save after the change restores.
    w.save_dynamic(&mut saved);
    let hash = w.state_hash();
    run(&mut w, 5);
    w.restore_dynamic(&saved).unwrap();
    assert_eq!(w.state_hash(), hash);
}

#[test]
fn snapshot_into_writes_the_image_into_the_same_buffer() {
    let mut w = rain(0);
    run(&mut w, 10);
    let mut buffer = Vec::new();
    w.snapshot_into(&mut buffer);
    assert!(buffer == w.snapshot().into_bytes());
    let (ptr, capacity) = (buffer.as_ptr(), buffer.capacity());
    run(&mut w, 3);
    w.snapshot_into(&mut buffer);
    assert!(
        buffer == w.snapshot().into_bytes(),
        "the whole image, replaced"
    );
    assert_eq!(
        (buffer.as_ptr(), buffer.capacity()),
        (ptr, capacity),
        "the buffer was reused"
    );
}
