//! The character course of the `character` example (issue 31), run to the end: every leg
//! that should arrive does, the steep slope stops it, the crates were pushed, the ride on
//! the turntable does not drift, and the stairs are climbed and descended on the ground.

use joule_examples::character_course::{
    PLAZA_TOP, STAIR_RISE, STAIRS, Walker, build_course, run_course,
};
use joule_jobs::JobSystem;
use joule_physics::math::Vec3;
use joule_physics::world::{World, WorldDesc};

/// Centre height of the default capsule standing on y = 0.
const STAND: f32 = 0.92;

#[test]
fn the_character_walks_the_course() {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(1).unwrap());
    let course = build_course(&mut world).unwrap();
    let crates: Vec<Vec3> = course
        .crates
        .iter()
        .map(|c| world.position(*c).unwrap())
        .collect();
    let mut walker = Walker::new(&mut world).unwrap();
    run_course(&mut world, &course, &mut walker, 60 * 120, |_| {});
    assert!(walker.done(), "the script ended");
    let legs = walker.legs().to_vec();
    for (leg, r) in legs.iter().zip(&walker.reports) {
        assert_eq!(r.reached, leg.reachable, "{}: {r:?}", leg.name);
        let by_name = |name: &str| leg.name == name;
        if by_name("into the steep slope") {
            assert!(
                r.highest < PLAZA_TOP + STAND + 0.01,
                "climbed the slope: {r:?}"
            );
        }
        if by_name("up the stairs") {
            #[allow(clippy::cast_precision_loss)]
            let top = PLAZA_TOP + STAIR_RISE * STAIRS as f32 + STAND;
            assert!((r.highest - top).abs() < 0.01, "on the top stair: {r:?}");
        }
        if by_name("down the stairs") || by_name("up the ramp") || by_name("down the ramp") {
            assert_eq!(r.airborne, 0, "{}: left the ground", leg.name);
        }
        if by_name("onto the turntable") {
            assert!(r.ride_drift < 0.01, "drifted on the turntable: {r:?}");
        }
    }
    for (id, start) in course.crates.iter().zip(&crates) {
        let moved = (world.position(*id).unwrap() - *start).length();
        assert!(moved > 0.5, "crate {id:?} was pushed: {moved} m");
    }
}
