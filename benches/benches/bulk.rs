//! Creating many bodies at once against one at a time (issue 30, item 7). Group
//! `bulk/create_10k`: 10,000 dynamic spheres in a grid (free10k's layout, no overlaps)
//! added to an empty world, with members `joule_loop` (`create_body` per body),
//! `joule_batch` (one `create_bodies` call: every description checked first, the proxies
//! built as one subtree) and `rapier_insert` (rapier's body and collider sets, filled one
//! at a time; rapier adds colliders to its broad phase at the next step, so its figure
//! holds no tree work and is a floor, not a like-for-like peer). Group
//! `bulk/add_1k_to_10k` adds a wave of 1,000 spheres above a world that already holds
//! 10,000 (built by `create_bodies` outside the timing), where each single insertion
//! descends a deeper tree. The world is made, and dropped, outside the timed part.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};
use rapier3d::prelude::*;

const SIDE: usize = 22;
const COUNT: usize = 10_000;

fn positions() -> Vec<Vec3> {
    (0..COUNT)
        .map(|i| {
            let (x, y, z) = (i % SIDE, (i / SIDE) % SIDE, i / (SIDE * SIDE));
            Vec3::new(x as f32, y as f32, z as f32) * 1.2 + Vec3::new(0.0, 1.0, 0.0)
        })
        .collect()
}

fn empty_world() -> World {
    World::new(WorldDesc::default(), JobSystem::new(0).expect("job system"))
}

fn bulk_bench(c: &mut Criterion) {
    let ball = Shape::sphere(0.5).expect("a valid radius");
    let descs: Vec<BodyDesc> = positions()
        .into_iter()
        .map(|p| BodyDesc::dynamic(ball.clone(), p))
        .collect();
    let mut g = c.benchmark_group("bulk/create_10k");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_millis(500));
    g.bench_function("joule_loop", |b| {
        b.iter_batched(
            empty_world,
            |mut w| {
                for d in &descs {
                    w.create_body(d).expect("valid description");
                }
                w
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("joule_batch", |b| {
        b.iter_batched(
            empty_world,
            |mut w| {
                w.create_bodies(&descs).expect("valid descriptions");
                w
            },
            BatchSize::LargeInput,
        );
    });
    let points = positions();
    g.bench_function("rapier_insert", |b| {
        b.iter_batched(
            || (RigidBodySet::new(), ColliderSet::new()),
            |(mut bodies, mut colliders)| {
                for p in &points {
                    let h = bodies.insert(
                        RigidBodyBuilder::dynamic()
                            .translation(Vector::new(p.x, p.y, p.z))
                            .build(),
                    );
                    colliders.insert_with_parent(
                        ColliderBuilder::ball(0.5).density(1000.0).build(),
                        h,
                        &mut bodies,
                    );
                }
                (bodies, colliders)
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();

    let populated = || {
        let mut w = empty_world();
        w.create_bodies(&descs).expect("valid descriptions");
        w
    };
    let wave: Vec<BodyDesc> = positions()[..1000]
        .iter()
        .map(|&p| BodyDesc::dynamic(ball.clone(), p + Vec3::new(0.0, 40.0, 0.0)))
        .collect();
    let mut g = c.benchmark_group("bulk/add_1k_to_10k");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_millis(500));
    g.bench_function("joule_loop", |b| {
        b.iter_batched(
            populated,
            |mut w| {
                for d in &wave {
                    w.create_body(d).expect("valid description");
                }
                w
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("joule_batch", |b| {
        b.iter_batched(
            populated,
            |mut w| {
                w.create_bodies(&wave).expect("valid descriptions");
                w
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group!(benches, bulk_bench);
criterion_main!(benches);
