//! Physics benchmarks: every standard scene without joints (../shared/SCENES.md), joule
//! against rapier3d built from the same scene description, measured in the same run, plus
//! the collision stages alone (broad phase upkeep for free10k, narrow phase of pyramid20).
//!
//! Groups are named `<scene>/t<N>` with members `joule` and `rapier`; tN means N threads
//! in total (joule: N-1 workers plus the stepping thread; rapier: serial for t1, its
//! `parallel` feature is not enabled here, so its t2 figure is its serial one).

use std::time::Duration;

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

fn scenes_bench(c: &mut Criterion) {
    for kind in SceneKind::ALL {
        for threads in [1usize, 2] {
            let mut g = c.benchmark_group(format!("{}/t{threads}", kind.name()));
            g.sample_size(10)
                .measurement_time(Duration::from_secs(3))
                .warm_up_time(Duration::from_millis(500));
            let mut w = joule_world(kind, threads);
            g.bench_function("joule", |b| b.iter(|| w.step(scenes::DT)));
            let mut r = rapier_scenes::build(kind);
            g.bench_function("rapier", |b| b.iter(|| r.step()));
            g.finish();
        }
    }
}

criterion_group!(benches, scenes_bench);
criterion_main!(benches);
