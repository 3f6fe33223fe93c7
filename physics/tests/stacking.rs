//! Resting, stacking and pyramids: stability over time, and sleeping. Each test runs on
//! the default solver and on the stiff preset, at the same bounds.

mod common;

use common::{DT, cube, ground, run, world_with};
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
