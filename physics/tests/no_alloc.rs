//! Once warm, a step allocates nothing: every buffer the step uses is kept from the last
//! step and reused (DESIGN.md: "no allocation per step after warm-up"). Nor does a step
//! run beside the frame (`step_async`, polled until ready or waited on), nor a game's
//! frame around it: the fixed-step clock, recording the presentation and reading every
//! body's interpolated pose, nor reading every body's contacts with `contacts_of`, nor a
//! rollback: saving and restoring a dynamic-state snapshot, and writing a full snapshot
//! into a reused buffer, nor a batch of character controllers updated after the step.
//!
//! The counter is a global allocator wrapping the system one; this file holds a single
//! test so no other test allocates while it counts (each file in tests/ is its own
//! process). It counts allocations on every thread, workers included.

#[path = "behaviour/common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::DT;
use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, MotionQuality};
use joule_physics::character::{
    CharacterController, CharacterDesc, CharacterInput, update_characters,
};
use joule_physics::game::{FixedStep, Presentation};
use joule_physics::joint::{JointDesc, JointKind};
use joule_physics::math::{Isometry, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::shape::Shape;
use joule_physics::snapshot::DynamicSnapshot;
use joule_physics::world::{World, WorldDesc};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counter only
// adds a relaxed increment (its value is read after the counted region is joined).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A scene that uses every stage: a pyramid kept awake (a large island, coloured solver), a resting
/// stack that falls asleep, a box that keeps sliding in circles (kept awake by a step
/// listener's force: listeners run every step), and a LinearCast body bouncing between
/// two walls fast enough that CCD sweeps it every step.
fn scene(threads: usize) -> World {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(60.0, 0.5, 60.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
    for row in 0..8 {
        for i in 0..8 - row {
            let x = i as f32 * 1.02 - (8 - row) as f32 * 0.51;
            // Its contacts report force events above half a box's weight (the lower
            // rows' do, every step).
            w.create_body(&BodyDesc {
                allow_sleep: false,
                contact_force_threshold: 0.5 * 1000.0 * 9.81,
                ..BodyDesc::dynamic(cube.clone(), Vec3::new(x, 0.5 + row as f32, 0.0))
            })
            .unwrap();
        }
    }
    for k in 0..4 {
        w.create_body(&BodyDesc::dynamic(
            cube.clone(),
            Vec3::new(20.0, 0.5 + k as f32, 0.0),
        ))
        .unwrap();
    }
    let slider = w
        .create_body(&BodyDesc {
            allow_sleep: false,
            ..BodyDesc::dynamic(cube.clone(), Vec3::new(-20.0, 0.5, 0.0))
        })
        .unwrap();
    w.add_step_listener(joule_physics::listener::StepPhase::Before, move |cx| {
        let p = cx.position(slider).unwrap();
        let _ = cx.add_force(slider, Vec3::new(-p.z, 0.0, p.x + 20.0) * 200.0);
    });
    for x in [-40.0, -30.0] {
        w.create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.05, 3.0, 3.0)).unwrap(),
            Vec3::new(x, 3.0, 20.0),
        ))
        .unwrap();
    }
    w.create_body(&BodyDesc {
        motion_quality: MotionQuality::LinearCast,
        restitution: 1.0,
        friction: 0.0,
        gravity_scale: 0.0,
        allow_sleep: false,
        linear_velocity: Vec3::new(300.0, 0.0, 0.0),
        ..BodyDesc::dynamic(Shape::sphere(0.1).unwrap(), Vec3::new(-35.0, 2.0, 20.0))
    })
    .unwrap();
    // A chain of ball joints hanging from the world: the joint stages run warm too.
    hang_chain(&mut w, Vec3::new(0.0, 20.0, -20.0), &[0.2; 12]);
    // A flock of 100 bodies gliding apart without gravity: they leave their fat boxes
    // every few steps, so the moving tree is rebuilt now and then.
    for i in 0..100 {
        let (x, z) = ((i % 10) as f32 * 3.0, (i / 10) as f32 * 3.0);
        w.create_body(&BodyDesc {
            allow_sleep: false,
            gravity_scale: 0.0,
            linear_velocity: Vec3::new(x - 13.5, 0.0, z - 13.5) * 0.3,
            ..BodyDesc::dynamic(
                Shape::sphere(0.3).unwrap(),
                Vec3::new(x - 13.5, 60.0, z - 13.5),
            )
        })
        .unwrap();
    }
    // A second chain ending in a heavy load: a ball-joint tree solved exactly.
    hang_chain(
        &mut w,
        Vec3::new(4.0, 20.0, -20.0),
        &[0.2, 0.2, 0.2, 0.2, 0.2, 0.6],
    );
    w
}

/// A chain of spheres of the given radii, 0.5 m apart, hanging from the world at `top` on
/// ball joints.
fn hang_chain(w: &mut World, top: Vec3, radii: &[f32]) {
    let mut prev = None;
    for (l, &r) in radii.iter().enumerate() {
        let p = top - Vec3::new(0.0, 0.5 * (l as f32 + 0.5), 0.0);
        let b = w
            .create_body(&BodyDesc {
                allow_sleep: false,
                ..BodyDesc::dynamic(Shape::sphere(r).unwrap(), p)
            })
            .unwrap();
        let frame_a = match prev {
            None => Isometry::from_translation(top),
            Some(_) => Isometry::from_translation(Vec3A::new(0.0, -0.25, 0.0)),
        };
        let frame_b = Isometry::from_translation(Vec3A::new(0.0, 0.25, 0.0));
        w.create_joint(&JointDesc::new(JointKind::Ball, prev, b, frame_a, frame_b))
            .unwrap();
        prev = Some(b);
    }
}

#[test]
fn a_warm_step_allocates_nothing() {
    for threads in [0, 1, 2, 4] {
        let mut w = scene(threads);
        // Events are queued and drained every step, contact force events included.
        w.set_event_queue(true);
        let mut forces = 0usize;
        // Warm-up: the pyramid settles and the stack falls asleep, so every buffer has
        // reached the size this scene needs.
        for _ in 0..240 {
            w.step(DT);
            w.drain_events().for_each(drop);
        }
        let awake = w.awake_body_count();
        assert!(
            awake > 30,
            "the pyramid, slider, bullet and chain are awake ({awake})"
        );
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for _ in 0..60 {
            w.step(DT);
            forces += w
                .drain_events()
                .filter(|e| e.kind == joule_physics::event_queue::EventKind::ContactForce)
                .count();
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(
            forces >= 60,
            "{threads} threads: the pyramid's base reports forces ({forces})"
        );
        assert_eq!(n, 0, "{threads} threads: {n} allocations in 60 warm steps");
        w.set_event_queue(false);

        // The step beside the frame: `step_async`, then polled until ready (the game's
        // work would go between polls) or waited on, every other frame. It reuses the
        // step graph's run state, warm from the steps above.
        for _ in 0..4 {
            w.step_async(DT).wait();
        }
        let (mut polls, before) = (0usize, w.step_count());
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for frame in 0..60 {
            let mut step = w.step_async(DT);
            if frame % 2 == 0 {
                while step.poll().is_pending() {
                    polls += 1;
                    std::hint::spin_loop();
                }
                drop(step);
            } else {
                step.wait();
            }
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(
            w.step_count(),
            before + 60,
            "{threads} threads: 60 async steps"
        );
        assert_eq!(
            n, 0,
            "{threads} threads: {n} allocations in 60 warm async steps ({polls} pending polls)"
        );

        // Reading every body's contacts, points and impulses included, and looking each
        // pair up again, allocates nothing either.
        let (mut touching, mut impulse) = (0usize, 0.0f32);
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for body in w.bodies() {
            for c in w.contacts_of(body.id()).unwrap() {
                touching += usize::from(c.is_touching());
                impulse += c.points().map(|p| p.normal_impulse).sum::<f32>();
                let again = w.contact(c.other(body.id()), body.id()).unwrap();
                impulse += again.map_or(0.0, |c| c.normal_from(body.id()).y);
            }
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(touching > 30 && impulse.is_finite(), "{touching} touching");
        assert_eq!(n, 0, "{threads} threads: {n} allocations reading contacts");

        // A 144 Hz render loop over the same world: once both presentation buffers have
        // grown to the world's slots, frames, records and reads allocate nothing.
        let mut clock = FixedStep::new(DT).unwrap();
        let mut presentation = Presentation::new();
        for _ in 0..4 {
            clock.frame(&mut w, &mut presentation, DT);
        }
        let first = w.bodies().nth(1).map(|b| b.id()).unwrap();
        let mut drawn = 0.0;
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for _ in 0..144 {
            let frame = clock.frame(&mut w, &mut presentation, 1.0 / 144.0);
            for (_, pose) in presentation.iter(frame.alpha) {
                drawn += pose.translation.y;
            }
            let ahead = presentation.extrapolated(first, frame.alpha * DT).unwrap();
            drawn += ahead.translation.y;
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(drawn.is_finite());
        assert_eq!(
            n, 0,
            "{threads} threads: {n} allocations in 144 warm frames"
        );

        // The same frames with the last step beside the game (`frame_async`): polled
        // while the game reads its presentation, then finished and recorded.
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for _ in 0..144 {
            let mut frame = clock.frame_async(&mut w, &mut presentation, 1.0 / 144.0);
            while frame.poll().is_pending() {
                drawn += presentation.latest(first).unwrap().translation.y;
            }
            let report = frame.finish(&mut presentation);
            for (_, pose) in presentation.iter(report.alpha) {
                drawn += pose.translation.y;
            }
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(drawn.is_finite());
        assert_eq!(
            n, 0,
            "{threads} threads: {n} allocations in 144 warm frame_async frames"
        );

        // Rollback every 8 steps: restore, save, replay, write the full image. The first
        // rounds size the snapshot, the buffer and the world's buffers for this window.
        let mut saved = DynamicSnapshot::new();
        let mut image = Vec::new();
        w.save_dynamic(&mut saved);
        let rollback = |w: &mut World, saved: &mut DynamicSnapshot, image: &mut Vec<u8>| {
            w.restore_dynamic(saved).unwrap();
            w.save_dynamic(saved);
            for _ in 0..8 {
                w.step(DT);
            }
            w.snapshot_into(image);
            w.state_hash()
        };
        let warm = [0; 3].map(|_| rollback(&mut w, &mut saved, &mut image));
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        let counted = [0; 5].map(|_| rollback(&mut w, &mut saved, &mut image));
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(
            warm.iter().chain(&counted).all(|&h| h == warm[0]),
            "{threads} threads: every replay reaches the same state"
        );
        assert_eq!(
            n, 0,
            "{threads} threads: {n} allocations in 5 warm rollbacks of 8 steps"
        );

        // Characters walking around the pyramid and into the stack, updated as a
        // parallel batch after each step: their scratch is warm after a few updates.
        let mut chars: Vec<CharacterController> = (0..12)
            .map(|k| {
                let a = k as f32 * 0.52;
                let p = Vec3::new(9.0 * a.cos(), 1.0, 9.0 * a.sin());
                CharacterController::new(CharacterDesc::default(), p).unwrap()
            })
            .collect();
        let inputs: Vec<CharacterInput> = (0..12)
            .map(|k| CharacterInput {
                velocity: Vec3::new(-(k as f32 * 0.52).cos(), 0.0, -(k as f32 * 0.52).sin()) * 3.0,
                ..CharacterInput::default()
            })
            .collect();
        let all = QueryFilter::default();
        for _ in 0..30 {
            w.step(DT);
            update_characters(&mut w, &mut chars, &inputs, DT, &all).unwrap();
        }
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for _ in 0..60 {
            w.step(DT);
            update_characters(&mut w, &mut chars, &inputs, DT, &all).unwrap();
        }
        COUNTING.store(false, Ordering::Relaxed);
        let n = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(
            n, 0,
            "{threads} threads: {n} allocations in 60 character updates"
        );
    }
}
