//! The scenes of ../shared/SCENES.md: the pyramids stand for 10 s (no box moves more than
//! 2 cm), rain4k ends with every body on or above the ground, and the terrain keeps its
//! bodies on the level.

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
fn pyramid20_stands_ten_seconds() {
    stands(SceneKind::Pyramid20, 1);
}

#[test]
fn pyramid_big_stands_ten_seconds() {
    stands(SceneKind::PyramidBig, 1);
}

#[test]
fn rain4k_ends_with_no_body_below_the_ground() {
    // SCENES.md's sanity line: after 600 steps no body's centre is below y = 0 (the
    // ground's top), i.e. nothing fell through the ground or was pushed into it.
    let kind = SceneKind::Rain4k;
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(1).unwrap());
    let scene = scenes::build(kind, &mut w).unwrap();
    for _ in 0..600 {
        w.step(scenes::DT);
    }
    let below = scene
        .bodies
        .iter()
        .filter(|&&id| w.position(id).unwrap().y < 0.0)
        .count();
    assert_eq!(below, 0, "{below} bodies ended below the ground");
    // And nothing was flung away: 4,000 unit bodies on 400 m² pile about 10 m high at
    // most (started up to 31.5 m).
    let highest = scene
        .bodies
        .iter()
        .map(|&id| w.position(id).unwrap().y)
        .fold(f32::MIN, f32::max);
    assert!(highest < 12.0, "highest body at y = {highest}");
}

#[test]
fn chain_joints_stretches_less_than_a_millimetre() {
    // SCENES.md's run (60 warm-up + 300 timed steps): the largest link stretch at the end
    // is under the 1 mm (Box3D 1.2 mm, Rapier 3.6 mm, Jolt 33 mm on this scene),
    // and the chains hang below their start height (they swing, so no exact y).
    let mut w = World::new(WorldDesc::default(), JobSystem::new(1).unwrap());
    let scene = scenes::build(SceneKind::ChainJoints, &mut w).unwrap();
    assert_eq!(scene.bodies.len(), 2000);
    let mut worst: f32 = 0.0;
    for _ in 0..360 {
        w.step(scenes::DT);
        worst = worst.max(scenes::chain_stretch(&w, &scene).0);
    }
    let (stretch, lowest) = scenes::chain_stretch(&w, &scene);
    println!("chain_joints: stretch {stretch} m at the end, {worst} m during the run");
    assert!(stretch < 1e-3, "largest link stretch {stretch} m");
    assert!(lowest < 20.0 && lowest > 9.0, "lowest y {lowest}");
}

#[test]
fn ragdolls_land_on_the_pile_without_coming_apart() {
    // 100 ragdolls fall 4 m onto the pile: after SCENES.md's 360 steps nothing is below
    // the ground, no joint's anchors came more than 10 cm apart in the impacts (4.8 cm
    // measured: a soft joint gives under a 9 m/s landing, a joint that let go would be
    // metres apart) and at the end all are within 2 cm.
    let mut w = World::new(WorldDesc::default(), JobSystem::new(1).unwrap());
    let scene = scenes::build(SceneKind::Ragdolls, &mut w).unwrap();
    assert_eq!(scene.bodies.len(), 162 + 100 * 11);
    assert_eq!(scene.joints.len(), 100 * 10);
    let mut worst: f32 = 0.0;
    for _ in 0..360 {
        w.step(scenes::DT);
        worst = worst.max(scenes::largest_joint_gap(&w, &scene));
    }
    let below = scene
        .bodies
        .iter()
        .filter(|&&b| w.position(b).unwrap().y < 0.0)
        .count();
    let end = scenes::largest_joint_gap(&w, &scene);
    println!("ragdolls: largest joint gap during the run {worst} m, at the end {end} m");
    assert_eq!(below, 0);
    assert!(worst < 0.1, "a joint opened to {worst} m");
    assert!(end < 0.02, "a joint is {end} m open at the end");
}

#[test]
fn terrain_keeps_every_body_on_the_level() {
    // SCENES.md's terrain sanity line after its 1 + 600 steps: no body's centre lies more
    // than 0.1 m below the heightfield h(x, z) (nothing fell through the terrain, the mesh
    // ramp or the bowl, which all lie above it) and none left the walls (|x|, |z| < 64).
    let kind = SceneKind::Terrain;
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(1).unwrap());
    let scene = scenes::build(kind, &mut w).unwrap();
    let (warmup, timed) = kind.run_lengths();
    for _ in 0..warmup + timed {
        w.step(scenes::DT);
    }
    let positions: Vec<_> = scene
        .bodies
        .iter()
        .map(|&id| w.position(id).unwrap())
        .collect();
    assert_eq!(positions.len(), 2000);
    let below = positions
        .iter()
        .filter(|p| p.y < scenes::terrain_height(p.x, p.z) - 0.1)
        .count();
    assert_eq!(below, 0, "{below} bodies ended below the terrain surface");
    let outside = positions
        .iter()
        .filter(|p| p.x.abs() > 64.0 || p.z.abs() > 64.0)
        .count();
    assert_eq!(outside, 0, "{outside} bodies left the walls");
}
