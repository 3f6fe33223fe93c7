//! The pyramids of ../shared/SCENES.md stand for 10 s (no box moves more than 2 cm).

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

fn stands(kind: SceneKind, threads: usize) {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(threads).unwrap());
    let scene = scenes::build(kind, &mut w).unwrap();
    for _ in 0..600 {
        w.step(scenes::DT);
    }
    let moved = scenes::moved_more_than(&w, &scene, 0.02);
    assert_eq!(
        moved,
        0,
        "{}: {moved} boxes moved more than 2 cm in 10 s",
        kind.name()
    );
}

#[test]
#[ignore = "issue 6 open: pyramid20 sags 3 cm at the top with 4 substeps (2 cm required)"]
fn pyramid20_stands_ten_seconds() {
    stands(SceneKind::Pyramid20, 1);
}

#[test]
#[ignore = "issue 6 open: pyramid_big does not stand yet with the default solver settings"]
fn pyramid_big_stands_ten_seconds() {
    stands(SceneKind::PyramidBig, 1);
}
