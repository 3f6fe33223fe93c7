//! What recording costs beside the step it records (issue 17: under 10 % of a
//! pyramid_big step). Group `recording/pyramid_big` has `step` (one step of the warmed-up
//! scene at t1), `record_poses` (one frame of poses and states) and `record_all` (poses,
//! states and contacts: what `pyramid --record` keeps besides the trace), each written to
//! `io::sink()` so disk speed is not measured.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::recording::{RecordOptions, Recorder};
use joule_physics::world::{World, WorldDesc};

fn world() -> World {
    let kind = SceneKind::PyramidBig;
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(0).unwrap());
    scenes::build(kind, &mut w).unwrap();
    for _ in 0..kind.run_lengths().0 {
        w.step(scenes::DT);
    }
    w
}

fn recording_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("recording/pyramid_big");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    let mut w = world();
    g.bench_function("step", |b| b.iter(|| w.step(scenes::DT)));
    let w = world();
    for (name, options) in [
        (
            "record_poses",
            RecordOptions {
                states: true,
                contacts: false,
                trace: false,
            },
        ),
        ("record_all", RecordOptions::default()),
    ] {
        let mut r = Recorder::new(std::io::sink(), &w, scenes::DT, options).unwrap();
        g.bench_function(name, |b| b.iter(|| r.record(&w, None).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, recording_bench);
criterion_main!(benches);
