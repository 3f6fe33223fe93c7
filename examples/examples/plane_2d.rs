//! A 2D game in the XY plane (issue 30, item 4): crates locked to the plane (no
//! translation along Z, no rotation about X or Y) and a capsule player that never tips
//! (every rotation locked, and Z), run right by scripted input, jumping twice, shoving
//! the crates. Every half second it prints the player and the crates' spread; at the end
//! it checks that no locked coordinate moved by a single bit.
//!
//! `cargo run --release -p joule-examples --example plane_2d`

use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, LockedAxes};
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
    world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(30.0, 0.5, 2.0))?,
        Vec3::new(0.0, -0.5, 0.0),
    ))?;
    // A stack of crates, each turned a little about Z (the plane's only rotation).
    let mut crates = Vec::new();
    for col in 0..3 {
        for row in 0..(4 - col) {
            let p = Vec3::new(4.0 + 0.85 * col as f32, 0.4 + 0.81 * row as f32, 0.0);
            crates.push(
                world.create_body(
                    &BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.4))?, p)
                        .rotation(Quat::from_rotation_z(0.02 * row as f32))
                        .locked_axes(LockedAxes::PLANE_XY),
                )?,
            );
        }
    }
    let player = world.create_body(
        &BodyDesc::dynamic(Shape::capsule(0.5, 0.3)?, Vec3::new(-2.0, 0.8, 0.0))
            .friction(0.2)
            .density(400.0)
            .locked_axes(LockedAxes::ROTATION | LockedAxes::TRANSLATION_Z)
            .allow_sleep(false),
    )?;
    let start: Vec<_> = crates
        .iter()
        .chain([&player])
        .map(|&id| (id, world.position(id).unwrap(), world.rotation(id).unwrap()))
        .collect();

    let dt = 1.0 / 60.0;
    for step in 0..=360 {
        // Input: run right at 4 m/s; jump at 1 s and 3 s.
        let v = world.linear_velocity(player)?;
        let jump = step == 60 || step == 180;
        let vy = if jump { 5.0 } else { v.y };
        world.set_linear_velocity(player, Vec3::new(4.0, vy, v.z))?;
        if step % 30 == 0 {
            let p = world.position(player)?;
            let spread = crates
                .iter()
                .map(|&c| world.position(c).unwrap().x)
                .fold(f32::NEG_INFINITY, f32::max);
            println!(
                "t = {:3.1} s  player x = {:6.2} y = {:5.2}  farthest crate x = {:6.2}",
                step as f32 * dt,
                p.x,
                p.y,
                spread
            );
        }
        world.step(dt);
    }
    for (id, p0, q0) in start {
        let (p, q) = (world.position(id)?, world.rotation(id)?);
        assert_eq!(p.z.to_bits(), p0.z.to_bits(), "{id:?} left the plane");
        assert_eq!(
            [q.x.to_bits(), q.y.to_bits()],
            [q0.x.to_bits(), q0.y.to_bits()],
            "{id:?} tipped out of the plane"
        );
        if id == player {
            assert_eq!(
                q.to_array().map(f32::to_bits),
                q0.to_array().map(f32::to_bits)
            );
        }
    }
    println!("every body stayed in the plane, bit for bit; the player never tipped");
    Ok(())
}
