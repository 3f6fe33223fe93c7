//! The scenes of ../shared/SCENES.md: the pyramids stand (on the stiff preset no box
//! moves more than 2 cm in 10 s; on the default solver the top sags less than half what
//! the peers' does and no box creeps sideways), rain4k ends with every body on or above
//! the ground, and the terrain keeps its bodies on the level.

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::math::Vec3;
use joule_physics::solver::SolverSettings;
use joule_physics::world::{World, WorldDesc};

fn scene_world(kind: SceneKind, solver: SolverSettings) -> (World, scenes::Scene) {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        solver,
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(1).unwrap());
    let scene = scenes::build(kind, &mut w).unwrap();
    (w, scene)
}

/// The stiff preset's bound, unchanged since the solver was built: no box moves more than
/// 2 cm in 10 s.
fn stands_stiff(kind: SceneKind) {
    let (mut w, scene) = scene_world(kind, SolverSettings::stiff());
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
fn pyramid20_stands_ten_seconds_on_the_stiff_preset() {
    stands_stiff(SceneKind::Pyramid20);
}

#[test]
fn pyramid_big_stands_ten_seconds_on_the_stiff_preset() {
    stands_stiff(SceneKind::PyramidBig);
}

fn horizontal(a: Vec3, b: Vec3) -> f32 {
    (a - b).with_y(0.0).length()
}

/// The default solver: after 6 s the top sags less than `max_sag` (the stretch
/// target is half the best peer's sag: Rapier, Box3D and Jolt sag 10.8-11.5 cm on
/// pyramid_big and 2.6-2.7 cm on pyramid20), no box moves more than 1.5 cm sideways in
/// 30 s, and no box creeps: its mean sideways position over 20-30 s is within 5 mm of
/// its mean over 10-20 s. (Means over ten seconds, sampled every second, because
/// pyramid_big, a wall one box thick, rocks in its thin direction with a period near
/// 18 s and an amplitude of a few millimetres that decays over a minute: two single
/// instants ten seconds apart see that sway as up to 8 mm of "creep". A pile that
/// creeps or leans over, as this wall did at 5 substeps before a kept manifold kept its
/// lever arms (issue 33), moves centimetres between the two windows: measured 6-60 cm.)
fn stands_default(kind: SceneKind, max_sag: f32) {
    stands(kind, SolverSettings::default(), max_sag);
}

/// [`stands_default`]'s bounds on the solver settings `solver`.
fn stands(kind: SceneKind, solver: SolverSettings, max_sag: f32) {
    let (mut w, scene) = scene_world(kind, solver);
    let n = scene.bodies.len();
    // Sums of the horizontal positions sampled over each window.
    let mut windows = [vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]];
    let mut drift = 0.0f32;
    for step in 1..=1800 {
        w.step(scenes::DT);
        if step == 360 {
            for &(top, y0) in &scene.tops {
                let sag = y0 - w.position(top).unwrap().y;
                assert!(
                    sag < max_sag,
                    "{}: the top sagged {sag} m in 6 s",
                    kind.name()
                );
            }
        }
        if step % 60 == 0 {
            for (k, (&b, &p0)) in scene.bodies.iter().zip(&scene.start).enumerate() {
                let p = w.position(b).unwrap();
                drift = drift.max(horizontal(p, p0));
                if step > 600 {
                    windows[(step - 601) / 600][k] += p.with_y(0.0);
                }
            }
        }
    }
    let creep = windows[0]
        .iter()
        .zip(&windows[1])
        .map(|(&a, &b)| ((b - a) / 10.0).length())
        .fold(0.0f32, f32::max);
    assert!(
        drift < 0.015,
        "{}: a box moved {drift} m sideways",
        kind.name()
    );
    assert!(
        creep < 0.005,
        "{}: a box's mean position crept {creep} m in 10 s",
        kind.name()
    );
}

#[test]
fn pyramid20_stands_thirty_seconds_on_the_default_solver() {
    stands_default(SceneKind::Pyramid20, 0.013);
}

#[test]
fn pyramid_big_stands_thirty_seconds_on_the_default_solver() {
    stands_default(SceneKind::PyramidBig, 0.054);
}

/// The peers' pass count (`SolverSettings::fast`, 4 substeps): the piles stand with the
/// default's drift and creep bounds and sag no more than the peers' (Rapier, Box3D and
/// Jolt: 10.8-11.5 cm on pyramid_big, 2.6-2.7 cm on pyramid20). Before a kept manifold
/// kept its lever arms (issue 33), pyramid_big's wall leaned over and fell at 4 substeps.
#[test]
fn pyramid_big_stands_thirty_seconds_at_the_peers_pass_count() {
    stands(SceneKind::PyramidBig, SolverSettings::fast(), 0.10);
}

#[test]
fn pyramid20_stands_thirty_seconds_at_the_peers_pass_count() {
    stands(SceneKind::Pyramid20, SolverSettings::fast(), 0.027);
}

#[test]
fn rain4k_ends_with_no_body_through_the_ground() {
    // SCENES.md's sanity line counts bodies whose centre ends below y = 0 (the ground's
    // top): what it is after is a body that fell through the ground or was pushed into
    // it, so that is what this asserts: none below y = 0 over the ground (its top is
    // 200 x 200 m). A body can also leave the ground at its edge: bodies falling 30 m hit
    // the pile at up to 25 m/s, a glancing hit turns that into sideways speed, and a
    // sphere rolls on without loss (no rolling resistance in this scene). One sphere,
    // thrown sideways at 13 m/s by two glancing hits 0.5 s into the run, rolls 80 m and
    // off the edge at step 578; that it happens at all depends on the last bit of every
    // collision, so it is counted (as below the ground) only when it is over the ground.
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
    let through = scene
        .bodies
        .iter()
        .map(|&id| w.position(id).unwrap())
        .filter(|p| p.y < 0.0 && p.x.abs() < 100.0 && p.z.abs() < 100.0)
        .count();
    assert_eq!(through, 0, "{through} bodies ended below the ground's top");
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
