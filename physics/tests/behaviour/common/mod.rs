//! Shared fixture for the physics behaviour tests (Jolt's `PhysicsTestContext` idea).
#![allow(dead_code)]

pub mod level;

use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

/// 60 Hz, the step every test uses unless it says otherwise.
pub const DT: f32 = 1.0 / 60.0;
/// Gravity used by the tests (the default).
pub const G: f32 = 9.81;

/// A world with default settings on `threads` worker threads.
pub fn world(threads: usize) -> World {
    World::new(
        WorldDesc::default(),
        JobSystem::new(threads).expect("job system"),
    )
}

/// A world with custom settings.
pub fn world_with(desc: WorldDesc, threads: usize) -> World {
    World::new(desc, JobSystem::new(threads).expect("job system"))
}

/// A static ground box whose top face is y = 0, with the given friction.
pub fn ground(world: &mut World, friction: f32) -> BodyId {
    world
        .create_body(&BodyDesc {
            friction,
            ..BodyDesc::fixed(
                Shape::cuboid(Vec3::new(50.0, 0.5, 50.0)).unwrap(),
                Vec3::new(0.0, -0.5, 0.0),
            )
        })
        .unwrap()
}

/// A dynamic box of half extent `h` at `p`.
pub fn cube(world: &mut World, h: f32, p: Vec3) -> BodyId {
    world
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(h)).unwrap(),
            p,
        ))
        .unwrap()
}

/// Steps `n` times.
pub fn run(world: &mut World, n: usize) {
    for _ in 0..n {
        world.step(DT);
    }
}
