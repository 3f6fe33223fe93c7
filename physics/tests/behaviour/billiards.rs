//! A billiards break never gains energy (issue 13: "kinetic energy must never grow
//! through contacts in any scene"): 15 balls in a triangle, touching, frictionless between
//! themselves, on a wide table with friction, hit by a cue ball at 10 m/s. Contacts may
//! only take energy away, so the total (kinetic, rotational and potential, from the
//! table's top) never rises above its start; tolerance 1e-4 of the start for f32
//! rounding. Checked over ball sizes (a real ball to a half-metre one), restitutions up
//! to 1 and thread counts.

use crate::common::{DT, G, world};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

fn ball(w: &mut World, r: f32, e: f32, p: Vec3, v: Vec3) -> BodyId {
    w.create_body(&BodyDesc {
        friction: 0.0,
        restitution: e,
        linear_velocity: v,
        ..BodyDesc::dynamic(Shape::sphere(r).unwrap(), p)
    })
    .unwrap()
}

/// Total mechanical energy of the balls: translation, rotation (solid sphere) and height
/// above the table.
fn energy(w: &World, balls: &[BodyId], r: f32) -> f32 {
    balls
        .iter()
        .map(|&b| {
            let m = w.mass(b).unwrap();
            let v = w.linear_velocity(b).unwrap();
            let om = w.angular_velocity(b).unwrap();
            0.5 * m * v.length_squared()
                + 0.5 * 0.4 * m * r * r * om.length_squared()
                + m * G * (w.position(b).unwrap().y - r)
        })
        .sum()
}

#[test]
fn a_break_never_gains_energy() {
    for threads in [0, 2] {
        for r in [0.028_575f32, 0.28] {
            for e in [0.5f32, 0.9, 1.0] {
                let mut w = world(threads);
                w.create_body(&BodyDesc {
                    friction: 0.2,
                    ..BodyDesc::fixed(
                        Shape::cuboid(Vec3::new(500.0, 0.5, 500.0)).unwrap(),
                        Vec3::new(0.0, -0.5, 0.0),
                    )
                })
                .unwrap();
                let mut balls = Vec::new();
                for row in 0..5 {
                    for k in 0..=row {
                        let x = 20.0 * r + row as f32 * r * 3f32.sqrt();
                        let z = (k as f32 - row as f32 * 0.5) * 2.0 * r;
                        balls.push(ball(&mut w, r, e, Vec3::new(x, r, z), Vec3::ZERO));
                    }
                }
                balls.push(ball(
                    &mut w,
                    r,
                    e,
                    Vec3::new(0.0, r, 0.0),
                    Vec3::new(10.0, 0.0, 0.0),
                ));
                let start = energy(&w, &balls, r);
                for step in 0..180 {
                    w.step(DT);
                    let now = energy(&w, &balls, r);
                    assert!(
                        now <= start * (1.0 + 1e-4),
                        "{threads} workers, r {r}, e {e}, step {step}: energy {now} > start {start}"
                    );
                }
                // And the break happened: the cue ball gave its speed away.
                let cue = w.linear_velocity(*balls.last().unwrap()).unwrap().length();
                assert!(cue < 5.0, "r {r} e {e}: the cue ball still runs at {cue}");
            }
        }
    }
}
