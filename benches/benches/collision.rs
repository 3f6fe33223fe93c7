//! Collision stages alone (issue 5's figures): broad-phase upkeep plus pair finding for the
//! 10,000 slowly moving bodies of free10k, and the narrow phase over the contacts of a
//! resting pyramid20, at 1 and 2 threads (tN: N-1 workers plus the caller).

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use joule_examples::scenes::{self, SceneKind, SplitMix64};
use joule_jobs::JobSystem;
use joule_physics::aabb::Aabb;
use joule_physics::broad_phase::{BodyPair, BroadPhase, BroadPhaseProxy, ProxyKind};
use joule_physics::math::{Isometry, Vec3A};
use joule_physics::narrow_phase::{ContactManifold, collide};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn broad_phase_free10k(c: &mut Criterion) {
    // free10k's positions and velocities (SCENES.md), boxes of half extent 0.5 moving
    // one 60 Hz step per iteration; pair finding over the moved proxies in parallel chunks.
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0001);
    let mut bodies: Vec<(Vec3A, Vec3A)> = Vec::with_capacity(10_000);
    for i in 0..25 {
        for j in 0..16 {
            for k in 0..25 {
                let v = Vec3A::new(
                    rng.range(-0.04, 0.04),
                    rng.range(-0.04, 0.04),
                    rng.range(-0.04, 0.04),
                );
                for _ in 0..3 {
                    rng.range(-1.0, 1.0);
                }
                bodies.push((
                    Vec3A::new(2.0 * i as f32, 2.0 * j as f32, 2.0 * k as f32),
                    v,
                ));
            }
        }
    }
    for t in [1usize, 2] {
        let jobs = JobSystem::new(t - 1).unwrap();
        let mut bp = BroadPhase::new();
        let half = Vec3A::splat(0.5);
        let proxies: Vec<BroadPhaseProxy> = bodies
            .iter()
            .enumerate()
            .map(|(i, (p, _))| {
                bp.create_proxy(
                    Aabb::from_center_half_extents(*p, half),
                    i as u32,
                    ProxyKind::Moving,
                )
            })
            .collect();
        let mut pairs = Vec::new();
        bp.update_pairs(&mut pairs);
        let mut pos: Vec<Vec3A> = bodies.iter().map(|b| b.0).collect();
        let mut chunks: Vec<Vec<BodyPair>> = vec![Vec::new(); 64];
        let mut g = c.benchmark_group(format!("broad_phase_free10k/t{t}"));
        g.sample_size(30).measurement_time(Duration::from_secs(2));
        g.bench_function("joule", |b| {
            b.iter(|| {
                for ((p, (_, v)), proxy) in pos.iter_mut().zip(&bodies).zip(&proxies) {
                    let d = *v / 60.0;
                    *p += d;
                    bp.update_proxy(*proxy, Aabb::from_center_half_extents(*p, half), d);
                }
                bp.sort_moved();
                let moved = bp.moved_proxies();
                let per = moved.len().div_ceil(chunks.len()).max(1);
                let bpr = &bp;
                jobs.scope(|s| {
                    for (m, out) in moved.chunks(per).zip(chunks.iter_mut()) {
                        out.clear();
                        s.spawn(move |_| bpr.find_pairs_for(m, out));
                    }
                });
                BroadPhase::finish_pairs(chunks.iter_mut(), &mut pairs);
                bp.clear_moved();
            })
        });
        g.finish();
    }
}

fn narrow_phase_pyramid20(c: &mut Criterion) {
    // The contact pairs of a settled pyramid20 (boxes within 2 cm of each other or the
    // ground), each collided once per iteration, in parallel blocks.
    let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
    scenes::build(SceneKind::Pyramid20, &mut w).unwrap();
    for _ in 0..60 {
        w.step(scenes::DT);
    }
    let unit = Shape::cuboid(joule_physics::math::Vec3::splat(0.5)).unwrap();
    let ground = Shape::cuboid(joule_physics::math::Vec3::new(16.0, 0.5, 7.0)).unwrap();
    let mut placed: Vec<(Shape, Isometry)> = vec![(
        ground,
        Isometry::from_translation(Vec3A::new(0.0, -0.5, 0.0)),
    )];
    for info in w.contacts() {
        for id in [info.body_a, info.body_b] {
            let iso = w.transform(id).unwrap();
            if !placed.iter().any(|(_, p)| *p == iso) {
                placed.push((unit.clone(), iso));
            }
        }
    }
    let mut pairs = Vec::new();
    for a in 0..placed.len() {
        for b in a + 1..placed.len() {
            let mut m = ContactManifold::default();
            if collide(
                &placed[a].0,
                &placed[a].1,
                &placed[b].0,
                &placed[b].1,
                0.02,
                &mut m,
            ) {
                pairs.push((a, b));
            }
        }
    }
    for t in [1usize, 2] {
        let jobs = JobSystem::new(t - 1).unwrap();
        let mut out: Vec<ContactManifold> = vec![ContactManifold::default(); pairs.len()];
        let mut g = c.benchmark_group(format!("narrow_phase_pyramid20/t{t}"));
        g.sample_size(30).measurement_time(Duration::from_secs(2));
        g.bench_function("joule", |b| {
            b.iter(|| {
                let (placed, pairs) = (&placed, &pairs);
                jobs.parallel_for_slice(&mut out, 64, |offset, ms| {
                    for (k, m) in ms.iter_mut().enumerate() {
                        let (a, b) = pairs[offset + k];
                        collide(
                            &placed[a].0,
                            &placed[a].1,
                            &placed[b].0,
                            &placed[b].1,
                            0.02,
                            m,
                        );
                    }
                });
            })
        });
        g.finish();
    }
    println!("narrow_phase_pyramid20: {} contact pairs", pairs.len());
}

criterion_group!(benches, broad_phase_free10k, narrow_phase_pyramid20);
criterion_main!(benches);
