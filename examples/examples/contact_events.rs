//! Contact data for sounds and damage: a handful of crates and balls dropped on the
//! ground and on each other. Every landing prints its begin event (where, how fast) and
//! its contact force event (the pair's total normal and friction impulse over the step,
//! for every step a contact pushes harder than the bodies' threshold); at the end, what
//! each body at rest rests on, read through `contacts_of` without allocating.
//!
//! A landing that speculative contact points stop a few centimetres short reports its
//! force in the step that stopped it, which can be the step before its begin event.
//!
//! `cargo run --release -p joule-examples --example contact_events`

use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::event_queue::EventKind;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
    world.set_event_queue(true);
    let ground = world.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0))?,
        Vec3::new(0.0, -0.5, 0.0),
    ))?;
    let mut names = vec![(ground, "ground".to_string())];
    // Each body reports pushes above three times its weight: landings, not resting.
    for k in 0..6 {
        let x = (k % 3) as f32 * 0.4 - 0.4;
        let y = 1.0 + k as f32 * 0.9;
        let (shape, name) = if k % 2 == 0 {
            (Shape::cuboid(Vec3::splat(0.25))?, format!("crate {k}"))
        } else {
            (Shape::sphere(0.2)?, format!("ball {k}"))
        };
        let mass = shape.mass_properties(1000.0)?.mass;
        let id = world.create_body(
            &BodyDesc::dynamic(shape, Vec3::new(x, y, 0.1 * k as f32))
                .restitution(0.3)
                .contact_force_threshold(3.0 * mass * 9.81),
        )?;
        names.push((id, name));
    }
    let name = |id: BodyId| {
        names
            .iter()
            .find(|(n, _)| *n == id)
            .map_or("?", |(_, s)| s.as_str())
    };
    let dt = 1.0 / 60.0;
    for _ in 0..240 {
        world.step(dt);
        for e in world.drain_events() {
            let t = e.step as f32 * dt;
            match e.kind {
                EventKind::ContactBegin => println!(
                    "t = {t:5.2} s  begin  {:>8} / {:<8} at ({:5.2}, {:5.2}, {:5.2}), {:4.2} m/s",
                    name(e.body_a),
                    name(e.body_b),
                    e.point.x,
                    e.point.y,
                    e.point.z,
                    e.approach_speed
                ),
                EventKind::ContactForce => println!(
                    "t = {t:5.2} s  impact {:>8} / {:<8} normal {:7.2} N·s, friction {:6.2} N·s ({:8.0} N)",
                    name(e.body_a),
                    name(e.body_b),
                    e.normal_impulse,
                    e.friction_impulse.length(),
                    e.normal_impulse / dt
                ),
                _ => {}
            }
        }
    }
    // The contact view's impulses are the last substep's times the substeps: exact for
    // a body at rest (a rolling ball's can read 0 while it skims the ground).
    println!("at rest:");
    for (id, n) in names.iter().skip(1) {
        if !world.is_sleeping(*id)? {
            continue;
        }
        for c in world.contacts_of(*id)?.filter(|c| c.is_touching()) {
            let pushed: f32 = c.points().map(|p| p.normal_impulse).sum();
            println!(
                "  {n:>8} touches {:<8} at {} points, {:6.2} N·s a step",
                name(c.other(*id)),
                c.points().count(),
                pushed
            );
        }
    }
    Ok(())
}
