//! Character controllers (issue 31): the update time of 1, 100 and 1,000 characters
//! walking the character course (the terrain level with its plaza, stairs and steep
//! slope; `joule_examples::character_course`), joule's `update_characters` beside
//! Rapier's `KinematicCharacterController::move_shape` doing the same moves in the same
//! run, at 1 and 2 threads (tN: N-1 workers plus the caller for joule; for Rapier, whose
//! controller moves one character per call, a serial loop at t1 and a 2-thread rayon pool
//! over the characters at t2).
//!
//! Both get the same settings (capsule of half height 0.6 and radius 0.3, 2 cm offset,
//! 45° slopes, 0.35 m steps, 0.35 m snap to ground) and the same inputs: character k at
//! update t walks at 2 m/s towards the angle 0.37 k + 0.05 t, gravity when not grounded.
//! The world is not stepped: one iteration is one update of every character.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use joule_benches::rapier_scenes;
use joule_examples::character_course::{PLAZA_TOP, course_desc};
use joule_examples::scenes::{self, DT};
use joule_jobs::JobSystem;
use joule_physics::character::{
    CharacterController, CharacterDesc, CharacterInput, update_characters,
};
use joule_physics::math::Vec3;
use joule_physics::query::QueryFilter;
use joule_physics::world::{World, WorldDesc};
use rapier3d::control::{CharacterAutostep, CharacterLength, KinematicCharacterController};
use rapier3d::prelude::*;
use rayon::prelude::*;

const COUNTS: [usize; 3] = [1, 100, 1000];

/// Start of character k: a grid of 0.9 m over the plaza (x in [-58, -22], z in [21, 44]).
fn start(k: usize) -> Vec3 {
    let (i, j) = (k % 40, k / 40);
    #[allow(clippy::cast_precision_loss)]
    Vec3::new(
        -57.5 + 0.9 * i as f32,
        PLAZA_TOP + 0.93,
        21.5 + 0.9 * j as f32,
    )
}

/// Character k's walking velocity at update t.
fn velocity(k: usize, t: usize) -> Vec3 {
    #[allow(clippy::cast_precision_loss)]
    let a = 0.37 * k as f32 + 0.05 * t as f32;
    Vec3::new(a.cos(), 0.0, a.sin()) * 2.0
}

fn joule(c: &mut Criterion) {
    let mut g = c.benchmark_group("character_update/joule");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for threads in [1usize, 2] {
        let mut world = World::new(WorldDesc::default(), JobSystem::new(threads - 1).unwrap());
        scenes::build_desc(&course_desc(), &mut world).unwrap();
        world.step(DT);
        for n in COUNTS {
            let mut chars: Vec<CharacterController> = (0..n)
                .map(|k| CharacterController::new(CharacterDesc::default(), start(k)).unwrap())
                .collect();
            let mut inputs = vec![CharacterInput::default(); n];
            let mut t = 0;
            g.bench_function(BenchmarkId::new(format!("t{threads}"), n), |b| {
                b.iter(|| {
                    for (k, input) in inputs.iter_mut().enumerate() {
                        input.velocity = velocity(k, t);
                    }
                    t += 1;
                    update_characters(&mut world, &mut chars, &inputs, DT, &QueryFilter::default())
                        .unwrap();
                });
            });
        }
    }
    g.finish();
}

/// One Rapier character: where it is and its vertical speed.
#[derive(Clone, Copy)]
struct RapierCharacter {
    pos: Pose,
    vertical: f32,
}

fn rapier(c: &mut Criterion) {
    let mut g = c.benchmark_group("character_update/rapier");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut rw = rapier_scenes::build_desc(&course_desc()).unwrap();
    rw.step();
    let world = rw.physics_world();
    let controller = KinematicCharacterController {
        offset: CharacterLength::Absolute(0.02),
        autostep: Some(CharacterAutostep {
            max_height: CharacterLength::Absolute(0.35),
            min_width: CharacterLength::Absolute(0.1),
            include_dynamic_bodies: true,
        }),
        snap_to_ground: Some(CharacterLength::Absolute(0.35)),
        ..KinematicCharacterController::default()
    };
    let shape = SharedShape::capsule_y(0.6, 0.3);
    let gravity = -9.81;
    let update = |k: usize, t: usize, ch: &mut RapierCharacter, q: &QueryPipeline| {
        let v = velocity(k, t);
        let desired = Vector::new(v.x * DT, ch.vertical * DT, v.z * DT);
        let moved = controller.move_shape(DT, q, &*shape, &ch.pos, desired, |_| {});
        ch.pos = Pose::from_translation(moved.translation) * ch.pos;
        ch.vertical = if moved.grounded {
            0.0
        } else {
            ch.vertical + gravity * DT
        };
    };
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for n in COUNTS {
            let mut chars: Vec<RapierCharacter> = (0..n)
                .map(|k| {
                    let p = start(k);
                    RapierCharacter {
                        pos: Pose::from_translation(Vector::new(p.x, p.y, p.z)),
                        vertical: 0.0,
                    }
                })
                .collect();
            let mut t = 0;
            g.bench_function(BenchmarkId::new(format!("t{threads}"), n), |b| {
                b.iter(|| {
                    if threads == 1 {
                        let q = world.query_pipeline();
                        for (k, ch) in chars.iter_mut().enumerate() {
                            update(k, t, ch, &q);
                        }
                    } else {
                        pool.install(|| {
                            chars
                                .par_iter_mut()
                                .enumerate()
                                .with_min_len(4)
                                .for_each(|(k, ch)| {
                                    let q = world.query_pipeline();
                                    update(k, t, ch, &q);
                                });
                        });
                    }
                    t += 1;
                });
            });
        }
    }
    g.finish();
}

criterion_group!(benches, joule, rapier);
criterion_main!(benches);
