//! Physics benchmarks: every standard scene that joule can build (../shared/SCENES.md), joule
//! against rapier3d built from the same scene description, measured in the same run, plus
//! the collision stages alone (broad phase upkeep for free10k, narrow phase of pyramid20).
//!
//! Groups are named `<scene>/t<N>` with members `joule` and `rapier`; tN means N threads
//! in total (joule: N-1 workers plus the stepping thread; rapier: serial for t1, its
//! `parallel` feature is not enabled here, so its t2 figure is its serial one).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use joule_benches::rapier_scenes;
use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

fn joule_world(kind: SceneKind, threads: usize) -> World {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(threads - 1).unwrap());
    scenes::build(kind, &mut w).unwrap();
    let (warmup, _) = kind.run_lengths();
    for _ in 0..warmup {
        w.step(scenes::DT);
    }
    w
}

/// Times `iters` steps of the world in `state` (the world and the steps it has run since
/// its warm-up), replacing it with a fresh warmed-up one, untimed, after `window` steps.
fn timed_window<W>(
    iters: u64,
    window: usize,
    state: &mut (W, usize),
    fresh: impl Fn() -> W,
    mut step: impl FnMut(&mut W),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        if state.1 >= window {
            *state = (fresh(), 0);
        }
        let t = Instant::now();
        step(&mut state.0);
        total += t.elapsed();
        state.1 += 1;
    }
    total
}

fn scenes_bench(c: &mut Criterion) {
    for kind in SceneKind::ALL.into_iter().chain(SceneKind::WITH_JOINTS) {
        for threads in [1usize, 2] {
            let mut g = c.benchmark_group(format!("{}/t{threads}", kind.name()));
            g.sample_size(10)
                .measurement_time(Duration::from_secs(3))
                .warm_up_time(Duration::from_millis(500));
            // SCENES.md times steps warm-up + 1 ..= warm-up + timed of a fresh scene (free10k's
            // spheres start meeting after about 1,500 steps; piles change over a run), so
            // both engines rebuild the scene, untimed, once they have run that window.
            let (warmup, timed) = kind.run_lengths();
            let mut w = (joule_world(kind, threads), 0);
            g.bench_function("joule", |b| {
                b.iter_custom(|iters| {
                    timed_window(
                        iters,
                        timed,
                        &mut w,
                        || joule_world(kind, threads),
                        |w| {
                            w.step(scenes::DT);
                        },
                    )
                });
            });
            let rapier = || {
                let mut r = rapier_scenes::build(kind).expect("rapier built this scene before");
                for _ in 0..warmup {
                    r.step();
                }
                r
            };
            // The scenes the rapier adapter cannot build (ragdolls' swing cones) have no
            // rapier row.
            if let Ok(mut first) = rapier_scenes::build(kind) {
                for _ in 0..warmup {
                    first.step();
                }
                let mut r = (first, 0);
                g.bench_function("rapier", |b| {
                    b.iter_custom(|iters| timed_window(iters, timed, &mut r, rapier, |r| r.step()));
                });
            }
            g.finish();
        }
    }
}

/// Issue 7's bullets: pyramid20 and 1,000 spheres of radius 0.05 (`LinearCast`) fired at
/// it along +x at 200 m/s from a 10 x 100 grid 5 m in front of its base. Warm-up: the
/// pyramid settles for 60 steps; the bullets are then created and each sample measures the
/// 10 steps in which they arrive and hit (3.3 m per step).
fn bullets_world(threads: usize) -> World {
    use joule_physics::body::{BodyDesc, MotionQuality};
    use joule_physics::math::Vec3;
    use joule_physics::shape::Shape;
    let mut w = joule_world(SceneKind::Pyramid20, threads);
    let ball = Shape::sphere(0.05).unwrap();
    for i in 0..10 {
        for j in 0..100 {
            let p = Vec3::new(
                -15.0 - 0.2 * i as f32,
                0.3 + 0.19 * j as f32,
                -0.3 + 0.06 * i as f32,
            );
            w.create_body(&BodyDesc {
                linear_velocity: Vec3::new(200.0, 0.0, 0.0),
                motion_quality: MotionQuality::LinearCast,
                ..BodyDesc::dynamic(ball.clone(), p)
            })
            .unwrap();
        }
    }
    w
}

fn bullets_bench(c: &mut Criterion) {
    for threads in [1usize, 2] {
        let mut g = c.benchmark_group(format!("bullets/t{threads}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(5))
            .warm_up_time(Duration::from_millis(500));
        g.bench_function("joule_10_steps", |b| {
            b.iter_batched(
                || bullets_world(threads),
                |mut w| {
                    for _ in 0..10 {
                        w.step(scenes::DT);
                    }
                    w
                },
                criterion::BatchSize::LargeInput,
            );
        });
        g.finish();
        // Where the time goes in the step where most bullets hit (step 4: they have flown
        // 13.3 m of the 15 m to the pyramid's base edge... the wall's face at x = -10).
        let mut w = bullets_world(threads);
        for _ in 0..3 {
            w.step(scenes::DT);
        }
        let trace = w.step_traced(scenes::DT);
        eprintln!(
            "bullets/t{threads}: trace of the impact step\n{}",
            trace.summary()
        );
    }
}

criterion_group!(benches, scenes_bench, bullets_bench);
criterion_main!(benches);
