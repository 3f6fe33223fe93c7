//! The smallest joule program: a box falls onto the ground; its height is printed every
//! half second.
//!
//! `cargo run --release -p joule-examples --example hello`

use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let jobs = JobSystem::new(1)?;
    let mut world = World::new(WorldDesc::default(), jobs);
    world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0))?,
        Vec3::new(0.0, -0.5, 0.0),
    ))?;
    let cube = world.create_body(&BodyDesc::dynamic(
        Shape::cuboid(Vec3::splat(0.5))?,
        Vec3::new(0.0, 4.0, 0.0),
    ))?;
    let dt = 1.0 / 60.0;
    for step in 0..=180 {
        if step % 30 == 0 {
            let p = world.position(cube)?;
            println!(
                "t = {:4.1} s  height = {:6.3} m  asleep = {}",
                step as f32 * dt,
                p.y,
                world.is_sleeping(cube)?
            );
        }
        world.step(dt);
    }
    Ok(())
}
