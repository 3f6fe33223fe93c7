//! Bodies changed while the world runs, each keeping its id (issue 30): a door fixed in
//! its frame is turned dynamic and swings on its hinge; a crate's mask stops accepting
//! the floor and it falls through at once; a standing capsule crouches into a shorter one
//! and keeps its ground contact; a crate is disabled and enabled; and a row of boxes is
//! made in one batch. Each stage prints what it checks and fails loudly if it does not
//! hold.
//!
//! `cargo run --release -p joule-examples --example runtime_changes`

use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, MotionType};
use joule_physics::filter::CollisionFilter;
use joule_physics::joint::{AxisDrive, JointDesc, JointKind};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

const DT: f32 = 1.0 / 60.0;

fn run(world: &mut World, steps: usize) {
    for _ in 0..steps {
        world.step(DT);
    }
}

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        println!("  ok: {what}");
        Ok(())
    } else {
        Err(format!("failed: {what}"))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
    let floor = world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0))?,
        Vec3::new(0.0, -0.5, 0.0),
    ))?;

    println!("a door turned dynamic keeps its hinge");
    let frame = world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(0.05, 1.0, 0.05))?,
        Vec3::new(-5.0, 1.1, 0.0),
    ))?;
    let door = world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(0.5, 1.0, 0.05))?,
        Vec3::new(-4.4, 1.1, 0.0),
    ))?;
    let hinge_point = Vec3::new(-4.9, 1.1, 0.0);
    let (fa, fb) = world.joint_frames_at(Some(frame), door, hinge_point, Vec3::Y)?;
    let hinge = world.create_joint(&JointDesc::new(
        JointKind::Hinge(AxisDrive::default()),
        Some(frame),
        door,
        fa,
        fb,
    ))?;
    world.set_motion_type(door, MotionType::Dynamic)?;
    world.apply_impulse_at(door, Vec3::new(0.0, 0.0, -50.0), Vec3::new(-3.9, 1.1, 0.0))?;
    run(&mut world, 30);
    let (_, angle) = world.rotation(door)?.to_axis_angle();
    let edge = Vec3::from(
        world
            .transform(door)?
            .transform_point(Vec3::new(-0.5, 0.0, 0.0).into()),
    );
    println!(
        "  mass {:.0} kg, swung {angle:.2} rad, hinge edge {:.1} mm off its axis",
        world.mass(door)?,
        (edge - hinge_point).length() * 1e3
    );
    check(world.contains_joint(hinge), "the hinge is still there")?;
    check(angle > 0.1, "the door swings")?;
    check((edge - hinge_point).length() < 5e-3, "on its hinge")?;

    println!("a crate whose mask changes falls through the floor at once");
    let crate_ = world.create_body(&BodyDesc::dynamic(
        Shape::cuboid(Vec3::splat(0.5))?,
        Vec3::new(0.0, 0.5, 0.0),
    ))?;
    run(&mut world, 30);
    world.set_collision_filter(
        floor,
        CollisionFilter {
            group: 0b01,
            mask: u32::MAX,
        },
    )?;
    world.set_collision_filter(
        crate_,
        CollisionFilter {
            group: u32::MAX,
            mask: 0b10,
        },
    )?;
    let ended = world.events().contacts.len();
    run(&mut world, 30);
    let y = world.position(crate_)?.y;
    println!("  {ended} end event, y = {y:.2} m half a second later");
    check(y < -0.5, "it fell through")?;

    println!("a capsule crouches and keeps its contact");
    let player = world.create_body(
        &BodyDesc::dynamic(Shape::capsule(0.5, 0.3)?, Vec3::new(5.0, 0.8, 0.0)).damping(0.0, 5.0),
    )?;
    run(&mut world, 60);
    let touching = |w: &World| w.contacts().iter().any(|c| c.body_b == player);
    world.set_shape(player, Shape::capsule(0.2, 0.3)?)?;
    world.set_position(player, Vec3::new(5.0, 0.5, 0.0))?;
    check(touching(&world), "the contact is kept through the change")?;
    run(&mut world, 30);
    let y = world.position(player)?.y;
    println!("  crouched at y = {y:.3} m");
    check(
        touching(&world) && (y - 0.5).abs() < 0.01,
        "it rests crouched",
    )?;

    println!("a disabled crate waits outside the step");
    let boxed = world.create_body(&BodyDesc::dynamic(
        Shape::cuboid(Vec3::splat(0.5))?,
        Vec3::new(10.0, 3.0, 0.0),
    ))?;
    world.set_enabled(boxed, false)?;
    run(&mut world, 30);
    check(
        world.position(boxed)?.y == 3.0,
        "it hangs in the air while disabled",
    )?;
    world.set_enabled(boxed, true)?;
    run(&mut world, 90);
    let y = world.position(boxed)?.y;
    println!("  enabled again, it landed at y = {y:.3} m");
    check((y - 0.5).abs() < 0.01, "it fell to the floor")?;

    println!("a row of boxes made in one batch");
    let descs: Vec<BodyDesc> = (0..20)
        .map(|i| {
            BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.25)).expect("a valid box"),
                Vec3::new(i as f32 - 10.0, 2.0, 5.0),
            )
        })
        .collect();
    let ids = world.create_bodies(&descs)?;
    run(&mut world, 90);
    let resting = ids
        .iter()
        .filter(|&&id| world.position(id).is_ok_and(|p| (p.y - 0.25).abs() < 0.01))
        .count();
    println!("  {resting} of {} boxes rest on the floor", ids.len());
    check(resting == ids.len(), "every box of the batch landed")?;
    Ok(())
}
