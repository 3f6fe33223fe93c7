//! Images of impossible worlds (made by breaking a world's invariants in memory, then
//! writing it) are refused as `Corrupt` for the right reason: the checks a restore relies
//! on to never panic later each fire.

use std::sync::Arc;

use joule_jobs::JobSystem;

use crate::body::{BodyDesc, BodyId};
use crate::math::Vec3;
use crate::shape::Shape;
use crate::world::{World, WorldDesc};

use super::SnapshotError;

/// Ground, a hull and boxes in contact after a few steps, one body removed, one pair
/// excluded. Returns the world and a live body that shares its set with others.
fn world() -> (World, BodyId) {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(10.0, 0.5, 10.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
    let hull = Shape::convex_hull(&[
        Vec3::new(-0.5, 0.0, -0.5),
        Vec3::new(0.5, 0.0, -0.5),
        Vec3::new(0.0, 0.0, 0.5),
        Vec3::new(0.0, 0.8, 0.0),
    ])
    .unwrap();
    let ids: Vec<BodyId> = (0..4)
        .map(|i| {
            let shape = if i == 1 {
                hull.clone()
            } else {
                Shape::cuboid(Vec3::splat(0.5)).unwrap()
            };
            let desc = BodyDesc::dynamic(shape, Vec3::new(0.0, 0.5 + 1.1 * i as f32, 0.0));
            w.create_body(&desc).unwrap()
        })
        .collect();
    for _ in 0..10 {
        w.step(1.0 / 60.0);
    }
    w.remove_body(ids[3]).unwrap();
    w.exclude_pair(ids[0], ids[2]).unwrap();
    (w, ids[1])
}

/// Breaks a fresh world with `f`, writes it, and returns why its image is refused.
fn refusal(f: impl FnOnce(&mut World, BodyId)) -> SnapshotError {
    let (mut w, id) = world();
    assert!(World::from_snapshot(w.snapshot().as_bytes(), JobSystem::new(0).unwrap()).is_ok());
    f(&mut w, id);
    let image = w.snapshot();
    World::from_snapshot(image.as_bytes(), JobSystem::new(0).unwrap())
        .expect_err("the image of a broken world is refused")
}

fn corrupt(what: &'static str) -> SnapshotError {
    SnapshotError::Corrupt(what)
}

#[test]
fn broken_body_links_are_corrupt() {
    assert_eq!(
        refusal(|w, id| w.bodies.bodies[id.index() as usize].local ^= 1),
        corrupt("a body's set and position do not point back at it")
    );
    assert_eq!(
        refusal(|w, _| {
            let again = w.bodies.free[0];
            w.bodies.free.push(again);
        }),
        corrupt("the free slot list is not the removed slots")
    );
    assert_eq!(
        refusal(|w, _| w.bodies.free_sets.push(1)),
        corrupt("the free set list names a set in use")
    );
    assert_eq!(
        refusal(|w, id| w.bodies.sim_mut(id).unwrap().linear_velocity.x = f32::NAN),
        corrupt("a non-finite velocity")
    );
    assert_eq!(
        refusal(|w, id| w.bodies.get_mut(id).unwrap().layer = 7),
        corrupt("a body's layer is not in the layer table")
    );
}

#[test]
fn broken_hulls_are_corrupt() {
    assert_eq!(
        refusal(|w, id| {
            let body = w.bodies.get_mut(id).unwrap();
            let Shape::ConvexHull(h) = &body.shape else {
                unreachable!("body 1 is the hull")
            };
            let mut broken = (**h).clone();
            broken.faces[2].vertices[1] = 99;
            body.shape = Shape::ConvexHull(Arc::new(broken));
        }),
        corrupt("a convex hull is malformed")
    );
}

#[test]
fn broken_broad_phase_trees_are_corrupt() {
    const TREE: SnapshotError = SnapshotError::Corrupt("a broad-phase tree is malformed");
    assert_eq!(
        refusal(|w, _| {
            let tree = &mut w.broad_phase.moving_tree;
            let root = tree.root as usize;
            tree.nodes[root].child2 = tree.root;
        }),
        TREE,
        "a cycle"
    );
    assert_eq!(
        refusal(|w, _| {
            let tree = &mut w.broad_phase.moving_tree;
            let root = tree.root as usize;
            tree.nodes[root].height += 1;
        }),
        TREE,
        "a wrong height"
    );
    assert_eq!(
        refusal(|w, _| w.broad_phase.moving_tree.leaves += 1),
        corrupt("a broad-phase tree's leaf count is wrong")
    );
    assert_eq!(
        refusal(|w, id| {
            let proxy = w.bodies.get(id).unwrap().proxy.unwrap();
            w.broad_phase
                .moved_flag
                .resize(proxy.id.0 as usize + 1, false);
            w.broad_phase.moved_flag[proxy.id.0 as usize] = true;
        }),
        corrupt("the move flags do not match the move buffer")
    );
}

#[test]
fn contacts_and_exclusions_naming_removed_bodies_are_corrupt() {
    assert_eq!(
        refusal(|w, _| {
            let c = w.contacts.contacts.iter_mut().find(|c| c.alive).unwrap();
            c.id_a = BodyId::new(c.id_a.index(), c.id_a.generation() + 1);
        }),
        corrupt("a contact names bodies that are not there")
    );
    assert_eq!(
        refusal(|w, _| {
            let c = w.contacts.contacts.iter().position(|c| c.alive).unwrap();
            w.contacts.free.push(c as u32);
        }),
        corrupt("the free contact list is not the destroyed contacts")
    );
    assert_eq!(
        refusal(|w, id| {
            let gone = BodyId::new(4, 0);
            assert!(!w.contains(gone));
            w.exclusions.insert(id, gone);
        }),
        corrupt("an excluded pair names a removed body")
    );
}
