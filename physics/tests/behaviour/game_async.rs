//! The step beside the game (`World::step_async`): the same bits as `step` at every
//! thread count, a poll that ends ready with the world usable, a panicking listener
//! re-raised with the world whole, a dropped handle that finishes its step, and the
//! fixed-step driver's `frame_async` leaving what `frame` leaves. The borrow
//! rule (no touching the world while the step runs) is the `compile_fail` doctest of
//! `world::step_async`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{DT, ground, world};
use joule_physics::body::BodyDesc;
use joule_physics::game::{FixedStep, FrameReport, Presentation};
use joule_physics::listener::StepPhase;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

/// A small pile: a 6-wide pyramid of boxes and a few spheres dropped on it, on ground.
fn pile(threads: usize) -> World {
    let mut w = world(threads);
    ground(&mut w, 0.6);
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    for row in 0..6 {
        let n = 6 - row;
        for j in 0..n {
            let x = j as f32 - (n as f32 - 1.0) / 2.0 + 0.01 * row as f32;
            w.create_body(&BodyDesc::dynamic(
                cube.clone(),
                Vec3::new(x, 0.5 + row as f32, 0.0),
            ))
            .unwrap();
        }
    }
    for k in 0..4 {
        let p = Vec3::new(-1.5 + k as f32, 8.0 + k as f32, 0.2 * k as f32);
        w.create_body(&BodyDesc::dynamic(Shape::sphere(0.4).unwrap(), p))
            .unwrap();
    }
    w
}

const STEPS: usize = 120;

fn blocking_hashes(mut w: World) -> Vec<u64> {
    (0..STEPS)
        .map(|_| {
            w.step(DT);
            w.state_hash()
        })
        .collect()
}

#[test]
fn step_async_is_bit_identical_to_step_at_any_thread_count() {
    let reference = blocking_hashes(pile(0));
    assert_ne!(reference[0], reference[STEPS - 1], "the pile moves");
    for threads in [0, 1, 2, 4] {
        let mut w = pile(threads);
        for (i, want) in reference.iter().enumerate() {
            // Alternate the two ways of finishing: wait, and poll until ready.
            if i % 2 == 0 {
                w.step_async(DT).wait();
            } else {
                let mut step = w.step_async(DT);
                while step.poll().is_pending() {
                    std::hint::spin_loop();
                }
            }
            assert_eq!(
                w.state_hash(),
                *want,
                "{threads} workers: step_async diverges from step at step {i}"
            );
        }
    }
}

#[test]
fn poll_ends_ready_and_the_world_is_usable_after() {
    for threads in [0, 1, 2] {
        let mut w = pile(threads);
        let ball = w
            .create_body(&BodyDesc::dynamic(
                Shape::sphere(0.5).unwrap(),
                Vec3::new(20.0, 10.0, 0.0),
            ))
            .unwrap();
        let mut presentation = Presentation::new();
        presentation.record(&w);
        let mut polls = 0u64;
        {
            let mut step = w.step_async(DT);
            // The game reads the presentation of the last finished step meanwhile.
            while step.poll().is_pending() {
                assert_eq!(presentation.latest(ball).unwrap().translation.y, 10.0);
                polls += 1;
                assert!(
                    polls < 100_000_000,
                    "{threads} workers: the step never ends"
                );
            }
            assert!(step.is_done());
            assert!(step.poll().is_ready(), "ready stays ready");
        }
        if threads == 0 {
            assert_eq!(polls, 0, "with no workers the first poll runs the step");
        }
        presentation.record(&w);
        let y = w.position(ball).unwrap().y;
        assert!(y < 10.0, "{threads} workers: the ball fell, y = {y}");
        assert_eq!(presentation.latest(ball).unwrap().translation.y, y);
        // Usable: changed, stepped again both ways.
        w.set_position(ball, Vec3::new(20.0, 5.0, 0.0)).unwrap();
        w.step(DT);
        w.step_async(DT).wait();
        assert!(w.position(ball).unwrap().y < 5.0);
    }
}

#[test]
fn a_panicking_listener_reaches_wait_and_poll_with_the_world_whole() {
    for threads in [0, 1, 2] {
        let mut w = pile(threads);
        let bodies = w.body_count();
        let before = w.state_hash();
        let id = w.add_step_listener(StepPhase::Before, |_| panic!("listener boom"));
        let caught = catch_unwind(AssertUnwindSafe(|| {
            w.step_async(DT).wait();
        }));
        let message = caught.expect_err("wait re-raises the listener's panic");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"listener boom"));
        assert_eq!(
            w.body_count(),
            bodies,
            "{threads} workers: the parts came back"
        );
        assert_eq!(w.state_hash(), before, "the aborted step moved nothing");
        // The same through poll.
        let caught = catch_unwind(AssertUnwindSafe(|| {
            let mut step = w.step_async(DT);
            while step.poll().is_pending() {}
        }));
        assert!(caught.is_err(), "poll re-raises the listener's panic");
        assert_eq!(w.body_count(), bodies);
        assert!(w.remove_step_listener(id));
        w.step_async(DT).wait();
        assert_ne!(w.state_hash(), before, "the world steps again");
    }
}

#[test]
fn a_dropped_handle_finishes_its_step() {
    for threads in [0, 2] {
        let mut reference = pile(threads);
        reference.step(DT);
        let mut w = pile(threads);
        let ran = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&ran);
        w.add_step_listener(StepPhase::After, move |_| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
        drop(w.step_async(DT));
        assert_eq!(ran.load(Ordering::Relaxed), 1, "the step ran to its end");
        assert_eq!(w.body_count(), reference.body_count());
        assert_eq!(w.state_hash(), reference.state_hash());
    }
}

/// Frame times of a game at a varying rate: 144 Hz, 60 Hz, a 30 Hz dip, a hitch of a
/// quarter second (past the cap of 4 steps) and idle frames shorter than a step.
const FRAMES: [f32; 12] = [
    1.0 / 144.0,
    1.0 / 144.0,
    1.0 / 60.0,
    1.0 / 30.0,
    0.25,
    1.0 / 144.0,
    0.0,
    1.0 / 60.0,
    1.0 / 45.0,
    0.05,
    1.0 / 144.0,
    1.0 / 30.0,
];

/// Every body's presented pose at a few alphas, as bits: the presentation compared whole.
fn presented(w: &World, presentation: &Presentation) -> Vec<u32> {
    let mut bits = Vec::new();
    for body in w.bodies() {
        for alpha in [0.0, 0.3, 0.99] {
            let pose = presentation.pose(body.id(), alpha).unwrap();
            bits.extend(pose.translation.to_array().map(f32::to_bits));
            bits.extend(pose.rotation.to_array().map(f32::to_bits));
        }
    }
    bits
}

#[test]
fn frame_async_leaves_what_frame_leaves_at_any_thread_count() {
    let mut reference = pile(0);
    let mut reference_clock = FixedStep::default();
    let mut reference_presentation = Presentation::new();
    let mut expected: Vec<(FrameReport, u64, Vec<u32>)> = Vec::new();
    for _ in 0..4 {
        for elapsed in FRAMES {
            let report =
                reference_clock.frame(&mut reference, &mut reference_presentation, elapsed);
            let seen = presented(&reference, &reference_presentation);
            expected.push((report, reference.state_hash(), seen));
        }
    }
    assert!(
        expected.iter().any(|(r, ..)| r.steps == 0),
        "a frame with no step"
    );
    assert!(
        expected.iter().any(|(r, ..)| r.steps > 1),
        "a frame of several steps"
    );
    assert!(
        expected.iter().any(|(r, ..)| r.dropped_steps > 0),
        "a capped frame"
    );
    assert_ne!(
        expected[0].1,
        expected[expected.len() - 1].1,
        "the pile moves"
    );
    for threads in [0, 1, 2] {
        let mut w = pile(threads);
        let mut clock = FixedStep::default();
        let mut presentation = Presentation::new();
        for (i, (want_report, want_hash, want_seen)) in expected.iter().enumerate() {
            let mut step = clock.frame_async(&mut w, &mut presentation, FRAMES[i % FRAMES.len()]);
            assert_eq!(
                step.report(),
                *want_report,
                "frame {i}: the same report up front"
            );
            // The game's frame work: with no workers, polling is what runs the step.
            if i % 2 == 0 {
                while step.poll().is_pending() {
                    std::hint::spin_loop();
                }
                assert!(step.is_done());
            }
            let report = step.finish(&mut presentation);
            assert_eq!(report, *want_report, "{threads} workers, frame {i}");
            assert_eq!(
                w.state_hash(),
                *want_hash,
                "{threads} workers: frame_async diverges from frame at frame {i}"
            );
            assert!(
                presented(&w, &presentation) == *want_seen,
                "{threads} workers, frame {i}: the presentation differs from frame's"
            );
        }
    }
}
