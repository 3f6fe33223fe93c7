//! Resting, stacking and pyramids: stability over time, and sleeping. Each test runs on
//! the default solver and on the stiff preset, at the same bounds.

use crate::common::{DT, cube, ground, run, world_with};
use joule_physics::math::Vec3;
use joule_physics::solver::SolverSettings;
use joule_physics::world::{World, WorldDesc};

fn world(threads: usize, solver: SolverSettings) -> World {
    world_with(
        WorldDesc {
            solver,
            ..WorldDesc::default()
        },
        threads,
    )
}

#[test]
fn a_resting_box_stays_within_a_millimetre_and_falls_asleep() {
    for solver in [SolverSettings::default(), SolverSettings::stiff()] {
        resting_box(solver);
    }
}

fn resting_box(solver: SolverSettings) {
    let mut w = world(1, solver);
    ground(&mut w, 0.5);
    let b = cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    let mut max_dev = 0.0f32;
    for _ in 0..300 {
        w.step(DT);
        max_dev = max_dev.max((w.position(b).unwrap().y - 0.5).abs());
    }
    assert!(max_dev < 1e-3, "box moved {max_dev} m from rest");
    assert!(
        w.is_sleeping(b).unwrap(),
        "a resting box sleeps after 0.5 s of rest"
    );
    assert_eq!(w.awake_body_count(), 0);
}

#[test]
fn a_ten_box_stack_stands_ten_seconds_and_sleeps() {
    for solver in [SolverSettings::default(), SolverSettings::stiff()] {
        ten_box_stack(solver);
    }
}

fn ten_box_stack(solver: SolverSettings) {
    let mut w = world(2, solver);
    ground(&mut w, 0.5);
    let boxes: Vec<_> = (0..10)
        .map(|i| cube(&mut w, 0.5, Vec3::new(0.0, 0.5 + i as f32, 0.0)))
        .collect();
    let top = *boxes.last().unwrap();
    let start = w.position(top).unwrap();
    run(&mut w, 600);
    let drift = (w.position(top).unwrap() - start).length();
    assert!(drift < 0.01, "top box drifted {drift} m");
    assert!(
        boxes.iter().all(|&b| w.is_sleeping(b).unwrap()),
        "the stack sleeps"
    );
}

/// Stacks of flat boards, each turned 90° about the vertical from the one below and
/// released with a gap under it, land and stand (issue 13, item 4).
///
/// Physics: every board's centre of mass is over its support, and a board that lands
/// flat on another gets no torque from the landing, so each falls through its gap, stops
/// and stays: the stack ends where it was released, lower by the gaps. What breaks this
/// is the solver: solving a manifold's points one after another let the first corner
/// take the landing, and a long board's corners are so coupled that it left spinning
/// (a 2 x 0.5 m board dropped 5 cm onto the ground turned at 0.4 rad/s), and ten-high
/// stacks fell over within seconds (see `Patch` in the solver). The boards are nudged
/// off the ideal (up to 1 cm sideways and 1.4° of yaw) so the landings are not exactly
/// symmetric. Bounds, over 10 s: no board tilts more than 1° (measured at most 0.18°;
/// before the fix 6-40° where the stack fell) and none moves more than 1 cm sideways
/// (measured 3 mm), and every board ends at rest.
#[test]
fn dropped_crossed_stacks_land_and_stand() {
    for solver in [SolverSettings::default(), SolverSettings::stiff()] {
        for friction in [0.3, 0.6] {
            for half in [
                Vec3::new(1.0, 0.1, 0.25),
                Vec3::new(0.5, 0.05, 0.2),
                Vec3::new(0.6, 0.2, 0.3),
                Vec3::new(1.5, 0.1, 0.3),
            ] {
                for height in [3, 6, 10] {
                    for gap in [0.0, 0.01, 0.02, 0.03] {
                        crossed_stack(solver, friction, half, height, gap);
                    }
                }
            }
        }
    }
}

fn crossed_stack(solver: SolverSettings, friction: f32, half: Vec3, height: usize, gap: f32) {
    use joule_physics::body::BodyDesc;
    use joule_physics::math::Quat;
    use joule_physics::shape::Shape;

    let mut w = world(1, solver);
    ground(&mut w, friction);
    // A fixed pseudo-random nudge in [-1, 1] per board and use.
    let nudge = |i: usize, k: usize| ((i * 7919 + k * 104_729) % 1000) as f32 / 500.0 - 1.0;
    let mut y = 0.0;
    let boards: Vec<_> = (0..height)
        .map(|i| {
            y += gap + half.y;
            let turn = if i % 2 == 1 {
                std::f32::consts::FRAC_PI_2
            } else {
                0.0
            };
            let rotation = Quat::from_rotation_y(turn + 0.025 * nudge(i, 1));
            let at = Vec3::new(0.01 * nudge(i, 2), y, 0.01 * nudge(i, 3));
            y += half.y;
            w.create_body(&BodyDesc {
                friction,
                rotation,
                ..BodyDesc::dynamic(Shape::cuboid(half).unwrap(), at)
            })
            .unwrap()
        })
        .collect();
    let start: Vec<Vec3> = boards.iter().map(|&b| w.position(b).unwrap()).collect();
    let case = format!(
        "{} substeps, friction {friction}, half extents {half}, {height} high, gap {gap} m",
        solver.substeps
    );
    for _ in 0..600 {
        w.step(DT);
        for (&b, &p0) in boards.iter().zip(&start) {
            let p = w.position(b).unwrap();
            let sideways = (p - p0).with_y(0.0).length();
            let up = w.rotation(b).unwrap() * Vec3::Y;
            let tilt = up.y.clamp(-1.0, 1.0).acos().to_degrees();
            assert!(
                sideways < 0.01,
                "{case}: a board moved {sideways} m sideways"
            );
            assert!(tilt < 1.0, "{case}: a board tilted {tilt}°");
        }
    }
    for &b in &boards {
        let v = w.linear_velocity(b).unwrap().length();
        assert!(
            v < 0.01,
            "{case}: a board still moves at {v} m/s after 10 s"
        );
    }
}

/// A wall one box deep (a pyramid of unit boxes in x, `base` boxes wide at the bottom,
/// 1 m thick in z, friction 0.5, never asleep) at 4 substeps, 30 Hz: Box3D's pass count
/// and stiffness (issue 33, item 1). Returns the top box's largest sideways lean across
/// the thin axis over `seconds`.
fn wall_lean(base: usize, seconds: usize) -> f32 {
    let mut w = world(
        1,
        SolverSettings {
            substeps: 4,
            contact_hertz: 30.0,
            ..SolverSettings::default()
        },
    );
    ground(&mut w, 0.5);
    let mut top = None;
    for row in 0..base {
        let n = base - row;
        for j in 0..n {
            let x = j as f32 - (n as f32 - 1.0) / 2.0;
            let desc = joule_physics::body::BodyDesc {
                friction: 0.5,
                allow_sleep: false,
                ..joule_physics::body::BodyDesc::dynamic(
                    joule_physics::shape::Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                    Vec3::new(x, 0.5 + row as f32, 0.0),
                )
            };
            top = Some(w.create_body(&desc).unwrap());
        }
    }
    let top = top.unwrap();
    let z0 = w.position(top).unwrap().z;
    let mut lean = 0.0f32;
    for _ in 0..seconds {
        run(&mut w, 60);
        lean = lean.max((w.position(top).unwrap().z - z0).abs());
    }
    lean
}

/// A one-box-deep wall 30 boxes wide at the base stands at 4 substeps, 30 Hz.
///
/// Physics: the wall is symmetric about its mid-plane, so nothing pushes it over; it
/// stays upright unless the solver makes its tilt unstable. A soft contact resists a
/// box's tilt only with its springs (stiffness `ω² m_eff`, independent of the load),
/// and if the normal forces' lever arms turn with the tilting box they add a moment
/// `load × height × tilt` that tips it further: above about `N² = ω² / (4 g)` layers (30
/// at 30 Hz) that wins and the wall leans over exponentially. While a manifold is kept,
/// its lever arms are the ones it was computed with (`PairCache` in the contact module),
/// which removes that moment. Bound: the top leans under 1 cm in 20 s (measured
/// 0.25 cm; with turning anchors 28 cm and growing 2.5-fold every 4 s).
#[test]
fn a_one_box_deep_wall_30_wide_stands_at_4_substeps_30_hz() {
    let lean = wall_lean(30, 20);
    println!("the wall's top leaned {lean} m at most");
    assert!(
        lean < 0.01,
        "the wall's top leaned {lean} m across its thin axis"
    );
}
