//! The smallest case of issue 33 item 1: a one-box-deep pyramid wall (pyramid_big's
//! geometry, `base` boxes wide at the bottom) stepped at 1/60 s, printing once a second
//! the top box's sideways lean across the wall's thin axis (z), the worst sideways drift
//! of any box and the top's sag, for joule with chosen solver settings or for Box3D
//! (with `--features peer-box3d`) at its defaults (4 substeps, 30 Hz); FRICTION sets the
//! boxes' friction coefficient (the scene's by default), GAP the space between the boxes
//! of a row (0 by default: they touch, as in pyramid_big).
//!
//! `cargo run --release -p joule-benches --features peer-box3d --bin wall_probe --
//! ENGINE BASE SECONDS [SUBSTEPS HERTZ [FRICTION [GAP]]]`, ENGINE `joule`, `box3d` or
//! `box3d-norecycle` (Box3D with the contact recycle distance of `BOX3D_RECYCLE`, 0 m
//! unless set); `joulepts` prints
//! instead the manifolds (points, separations, normal and friction impulses) of one
//! second-row box after 2 s of joule, `box3dpts` the same box's in Box3D.

use joule_benches::peers::Engine;
use joule_benches::peers::joule::JouleEngine;
use joule_examples::scenes::{BodySpec, SceneDesc, SceneKind, ShapeDesc};
use joule_physics::dynamics::solver::SolverSettings;
use joule_physics::math::Vec3;

/// pyramid_big's wall, `base` boxes at the bottom, on a ground box whose top is y = 0.
fn wall(base: usize, friction: Option<f32>, gap: f32) -> SceneDesc {
    let mut desc = SceneDesc::new(SceneKind::PyramidBig);
    let ground = desc.add_shape(ShapeDesc::Cuboid {
        half: Vec3::new(base as f32 / 2.0 + 6.0, 0.5, 7.0),
    });
    desc.add_body(BodySpec::fixed(ground, Vec3::new(0.0, -0.5, 0.0)));
    let unit = desc.add_shape(ShapeDesc::Cuboid {
        half: Vec3::splat(0.5),
    });
    for row in 0..base {
        let n = base - row;
        for j in 0..n {
            let x = (j as f32 - (n as f32 - 1.0) / 2.0) * (1.0 + gap);
            desc.add_body(BodySpec {
                can_sleep: false,
                ..BodySpec::dynamic(unit, Vec3::new(x, 0.5 + row as f32, 0.0))
            });
            if let Some(f) = friction {
                desc.bodies.last_mut().expect("just added").friction = f;
            }
        }
    }
    desc.tops.push(desc.bodies.len() - 1);
    desc
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let engine_name = arg(1, "joule");
    let base: usize = arg(2, "40").parse().expect("BASE: a whole number");
    let seconds: f32 = arg(3, "20").parse().expect("SECONDS: a number");
    let substeps: u32 = arg(4, "4").parse().expect("SUBSTEPS: a whole number");
    let hertz: f32 = arg(5, "30").parse().expect("HERTZ: a number");
    let friction: Option<f32> = args.get(6).map(|f| f.parse().expect("FRICTION: a number"));
    let gap: f32 = args
        .get(7)
        .map_or(0.0, |g| g.parse().expect("GAP: a number"));
    let desc = wall(base, friction, gap);
    let mut engine: Box<dyn Engine> = match engine_name.as_str() {
        "joule" => {
            let solver = SolverSettings {
                substeps,
                contact_hertz: hertz,
                ..SolverSettings::default()
            };
            Box::new(JouleEngine::with_solver(&desc, 1, solver).expect("joule builds the wall"))
        }
        "joulepts" => {
            // Diagnostic: the manifolds of the bottom-row middle box after 2 s.
            let mut world = joule_physics::world::World::new(
                joule_physics::world::WorldDesc {
                    gravity: desc.gravity,
                    solver: SolverSettings {
                        substeps,
                        contact_hertz: hertz,
                        ..SolverSettings::default()
                    },
                    ..Default::default()
                },
                joule_jobs::JobSystem::new(0).expect("jobs"),
            );
            let scene = joule_examples::scenes::build_desc(&desc, &mut world).expect("scene");
            for _ in 0..120 {
                world.step(desc.dt);
            }
            let probe = scene.bodies[base / 2 + base];
            println!("body at {:?}", world.position(probe).expect("live"));
            for c in world.contacts_of(probe).expect("live") {
                println!(
                    "normal {:?} touching {}",
                    c.normal_from(probe),
                    c.is_touching()
                );
                for p in c.points() {
                    println!(
                        "  at {:?} sep {:.5} n {:.3} f {:?}",
                        p.position, p.separation, p.normal_impulse, p.friction_impulse
                    );
                }
            }
            return;
        }
        #[cfg(feature = "peer-box3d")]
        "box3dpts" => {
            // Box3D's manifolds of the box `joulepts` prints, after 2 s.
            let mut e = joule_benches::peers::box3d::Box3dEngine::new(&desc, 1)
                .expect("Box3D builds the wall");
            for _ in 0..120 {
                e.step();
            }
            print!("{}", e.contact_dump(base / 2 + base));
            return;
        }
        #[cfg(feature = "peer-box3d")]
        "box3d-norecycle" => {
            let mut e = joule_benches::peers::box3d::Box3dEngine::new(&desc, 1)
                .expect("Box3D builds the wall");
            let distance = std::env::var("BOX3D_RECYCLE")
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0.0);
            e.set_contact_recycle_distance(distance);
            Box::new(e)
        }
        #[cfg(feature = "peer-box3d")]
        "box3d" => Box::new(
            joule_benches::peers::box3d::Box3dEngine::new(&desc, 1).expect("Box3D builds the wall"),
        ),
        other => panic!("unknown engine {other} (box3d needs --features peer-box3d)"),
    };
    let start = engine.dynamic_positions();
    let top = start.len() - 1;
    let steps_per_second = (1.0 / desc.dt).round() as usize;
    println!("engine {engine_name} base {base} substeps {substeps} hertz {hertz}");
    println!("t_s\ttop_lean_cm\tworst_drift_cm\ttop_sag_cm");
    for second in 1..=seconds.ceil() as usize {
        for _ in 0..steps_per_second {
            engine.step();
        }
        let now = engine.dynamic_positions();
        let drift = now
            .iter()
            .zip(&start)
            .map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[2] - q[2]).powi(2)).sqrt())
            .fold(0.0f32, f32::max);
        println!(
            "{second}\t{:.2}\t{:.2}\t{:.2}",
            100.0 * (now[top][2] - start[top][2]),
            100.0 * drift,
            100.0 * (start[top][1] - now[top][1]),
        );
    }
}
