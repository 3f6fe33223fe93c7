//! The per-material-pair table: pair entries override the mixing rules, in either body
//! order, for new and existing contacts, and survive a snapshot.

use crate::common::{DT, G, world};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::material::{MaterialId, MixRule, SurfaceMaterial};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

const ICE: MaterialId = MaterialId(1);
const RUBBER: MaterialId = MaterialId(2);

fn surface(friction: f32, restitution: f32) -> SurfaceMaterial {
    SurfaceMaterial {
        friction,
        restitution,
    }
}

/// Static ground (top face y = 0) of material `material` with friction 0.5.
fn ground(w: &mut World, material: MaterialId) -> BodyId {
    w.create_body(&BodyDesc {
        friction: 0.5,
        material,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(50.0, 0.5, 50.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        )
    })
    .unwrap()
}

/// A box of material `material` (friction 0.5) resting on the ground, sliding at `v0`.
fn slider(w: &mut World, material: MaterialId, v0: f32) -> BodyId {
    w.create_body(&BodyDesc {
        friction: 0.5,
        material,
        linear_velocity: Vec3::new(v0, 0.0, 0.0),
        ..BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(-20.0, 0.5, 0.0),
        )
    })
    .unwrap()
}

/// Deceleration of a box sliding at 10 m/s, measured over 0.5 s after 10 settling steps.
fn deceleration(w: &mut World, b: BodyId) -> f32 {
    for _ in 0..10 {
        w.step(DT);
    }
    let v1 = w.linear_velocity(b).unwrap().x;
    for _ in 0..30 {
        w.step(DT);
    }
    let v2 = w.linear_velocity(b).unwrap().x;
    (v1 - v2) / (30.0 * DT)
}

#[test]
fn a_pair_entry_replaces_the_mixed_friction() {
    // Coulomb: a sliding box decelerates at mu * g, mu the contact's friction.
    // Without an entry mu = sqrt(0.5 * 0.5) = 0.5; with the entry mu = 0.1.
    let mut plain = world(1);
    ground(&mut plain, MaterialId::DEFAULT);
    let b = slider(&mut plain, ICE, 10.0);
    let a = deceleration(&mut plain, b);
    assert!((a - 0.5 * G).abs() <= 0.02 * 0.5 * G, "a = {a}");

    // The entry is keyed (ground, ice); bodies are created (ground, ice) here and
    // (ice, ground) below, so both orders of the pair are exercised.
    for ice_first in [false, true] {
        let mut w = world(1);
        w.set_material_pair(MaterialId::DEFAULT, ICE, surface(0.1, 0.0))
            .unwrap();
        let b = if ice_first {
            let b = slider(&mut w, ICE, 10.0);
            ground(&mut w, MaterialId::DEFAULT);
            b
        } else {
            ground(&mut w, MaterialId::DEFAULT);
            slider(&mut w, ICE, 10.0)
        };
        let a = deceleration(&mut w, b);
        assert!(
            (a - 0.1 * G).abs() <= 0.02 * 0.1 * G,
            "ice first {ice_first}: a = {a}, expected {}",
            0.1 * G
        );
    }
}

#[test]
fn changing_the_table_changes_contacts_that_already_exist() {
    // The box slides on a frictionless pair entry (no deceleration), then the entry is
    // replaced mid-slide: from then on it decelerates at 0.3 g. Removing the entry brings
    // the mixed 0.5 back.
    let mut w = world(1);
    w.set_material_pair(ICE, ICE, surface(0.0, 0.0)).unwrap();
    ground(&mut w, ICE);
    let b = slider(&mut w, ICE, 10.0);
    let a = deceleration(&mut w, b);
    assert!(a.abs() < 1e-3, "frictionless: a = {a}");
    assert!(
        w.contact_count() > 0,
        "the contact exists before the change"
    );

    w.set_material_pair(ICE, ICE, surface(0.3, 0.0)).unwrap();
    let a = deceleration(&mut w, b);
    assert!((a - 0.3 * G).abs() <= 0.02 * 0.3 * G, "a = {a}");

    assert!(w.remove_material_pair(ICE, ICE));
    let a = deceleration(&mut w, b);
    assert!((a - 0.5 * G).abs() <= 0.02 * 0.5 * G, "a = {a}");
}

#[test]
fn a_pair_entry_replaces_the_mixed_restitution() {
    // Bounce height after a drop from 2 m is e^2 * 2 m (see restitution.rs); the bodies'
    // own restitution is 0, the pair entry's 0.5, so the ball comes back to 0.5 m.
    let mut w = world(1);
    w.set_material_pair(RUBBER, MaterialId::DEFAULT, surface(0.5, 0.5))
        .unwrap();
    ground(&mut w, MaterialId::DEFAULT);
    let ball = w
        .create_body(&BodyDesc {
            material: RUBBER,
            ..BodyDesc::dynamic(Shape::sphere(0.25).unwrap(), Vec3::new(0.0, 2.25, 0.0))
        })
        .unwrap();
    let mut hit = false;
    let mut apex: f32 = 0.0;
    for _ in 0..240 {
        w.step(DT);
        let v = w.linear_velocity(ball).unwrap().y;
        let h = w.position(ball).unwrap().y - 0.25;
        if v > 0.0 {
            hit = true;
        }
        if hit {
            apex = apex.max(h);
        }
    }
    assert!(hit, "the ball bounced");
    assert!((apex - 0.5).abs() < 0.1, "apex {apex}, expected 0.5");
}

#[test]
fn mixing_rules_can_be_replaced() {
    // With friction mixed by Min, a 0.5 box on a 0.1 ground slides with mu = 0.1; the
    // default geometric mean would give sqrt(0.05) = 0.224.
    let mut w = world(1);
    w.set_mixing_rules(MixRule::Min, MixRule::Max);
    w.create_body(&BodyDesc {
        friction: 0.1,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(50.0, 0.5, 50.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        )
    })
    .unwrap();
    let b = slider(&mut w, MaterialId::DEFAULT, 10.0);
    let a = deceleration(&mut w, b);
    assert!((a - 0.1 * G).abs() <= 0.02 * 0.1 * G, "a = {a}");
    assert_eq!(w.material_mixing().friction_rule(), MixRule::Min);
}

#[test]
fn a_body_surface_change_reaches_its_contacts() {
    // Raising the slider's own friction from 0.5 to 0.98 mid-slide: mixed with the
    // ground's 0.5 it becomes sqrt(0.49) = 0.7.
    let mut w = world(1);
    ground(&mut w, MaterialId::DEFAULT);
    let b = slider(&mut w, MaterialId::DEFAULT, 15.0);
    let a = deceleration(&mut w, b);
    assert!((a - 0.5 * G).abs() <= 0.02 * 0.5 * G, "a = {a}");
    w.set_surface(b, surface(0.98, 0.0)).unwrap();
    let a = deceleration(&mut w, b);
    assert!((a - 0.7 * G).abs() <= 0.02 * 0.7 * G, "a = {a}");
    assert_eq!(w.surface(b).unwrap().0, surface(0.98, 0.0));
}

#[test]
fn bad_materials_and_stale_ids_are_refused_and_change_nothing() {
    let mut w = world(0);
    ground(&mut w, MaterialId::DEFAULT);
    let b = slider(&mut w, MaterialId::DEFAULT, 0.0);
    for bad in [
        surface(-1.0, 0.0),
        surface(f32::NAN, 0.0),
        surface(0.5, 1.01),
        surface(0.5, f32::INFINITY),
    ] {
        let field = if bad.friction == 0.5 {
            "restitution"
        } else {
            "friction"
        };
        for err in [w.set_material_pair(ICE, RUBBER, bad), w.set_surface(b, bad)] {
            assert!(
                matches!(err, Err(PhysicsError::InvalidMaterial { field: f, .. }) if f == field),
                "{err:?}"
            );
        }
    }
    assert_eq!(w.material_mixing().pairs().len(), 0);
    assert_eq!(w.surface(b).unwrap().0, surface(0.5, 0.0));
    w.remove_body(b).unwrap();
    assert_eq!(w.set_material(b, ICE), Err(PhysicsError::StaleBodyId(b)));
    assert_eq!(
        w.set_surface(b, surface(0.1, 0.1)),
        Err(PhysicsError::StaleBodyId(b))
    );
}

#[test]
fn the_table_and_material_ids_survive_a_snapshot() {
    // A restored world steps in lockstep with the original only if the table, the rules
    // and every body's material id came back: the slider decelerates at the entry's 0.1 g,
    // not the mixed 0.5 g.
    let mut w = world(1);
    w.set_mixing_rules(MixRule::Average, MixRule::Max);
    w.set_material_pair(MaterialId::DEFAULT, ICE, surface(0.1, 0.0))
        .unwrap();
    w.set_material_pair(RUBBER, RUBBER, surface(1.0, 0.9))
        .unwrap();
    ground(&mut w, MaterialId::DEFAULT);
    let b = slider(&mut w, ICE, 10.0);
    w.step(DT);
    let saved = w.snapshot();
    let mut copy =
        World::from_snapshot(saved.as_bytes(), joule_jobs::JobSystem::new(2).unwrap()).unwrap();
    assert_eq!(copy.material_mixing(), w.material_mixing());
    assert_eq!(copy.surface(b).unwrap(), w.surface(b).unwrap());
    for _ in 0..60 {
        w.step(DT);
        copy.step(DT);
        assert_eq!(copy.state_hash(), w.state_hash());
    }
    let a = deceleration(&mut copy, b);
    assert!((a - 0.1 * G).abs() <= 0.02 * 0.1 * G, "a = {a}");
}

/// A flat mesh floor (top y = 0) of 1 m squares over x, z in [-20, 20], each square two
/// triangles; squares with x < 0 have material `west`, the others `east`.
fn two_material_floor(w: &mut World, west: u32, east: u32) -> BodyId {
    let n = 40usize;
    let mut vertices = Vec::new();
    for i in 0..=n {
        for k in 0..=n {
            vertices.push(Vec3::new(i as f32 - 20.0, 0.0, k as f32 - 20.0));
        }
    }
    let at = |i: usize, k: usize| (i * (n + 1) + k) as u32;
    let (mut triangles, mut materials) = (Vec::new(), Vec::new());
    for i in 0..n {
        for k in 0..n {
            let m = if (i as f32) < 20.0 { west } else { east };
            // Counter-clockwise seen from above (+y).
            triangles.push([at(i, k), at(i, k + 1), at(i + 1, k)]);
            triangles.push([at(i + 1, k), at(i, k + 1), at(i + 1, k + 1)]);
            materials.extend([m, m]);
        }
    }
    w.create_body(&BodyDesc::fixed(
        Shape::triangle_mesh(&vertices, &triangles, Some(&materials)).unwrap(),
        Vec3::ZERO,
    ))
    .unwrap()
}

#[test]
fn each_triangle_of_a_mesh_mixes_with_its_own_material() {
    // Coulomb: a box sliding on the floor decelerates at mu * g. The box's friction is 1
    // and the rule is the geometric mean, so on a triangle of material ICE (friction
    // 0.04) mu = 0.2 and on RUBBER (0.64) mu = 0.8: the same mesh, two decelerations.
    // Tolerance 2%, as for the pair table above (the soft contact's small bias).
    let mut w = world(1);
    w.set_part_surface(ICE, surface(0.04, 0.0)).unwrap();
    w.set_part_surface(RUBBER, surface(0.64, 0.0)).unwrap();
    two_material_floor(&mut w, u32::from(ICE.0), u32::from(RUBBER.0));
    let sliding_box = |w: &mut World, x: f32| {
        w.create_body(&BodyDesc {
            friction: 1.0,
            linear_velocity: Vec3::new(8.0, 0.0, 0.0),
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.25)).unwrap(),
                Vec3::new(x, 0.25, 0.0),
            )
        })
        .unwrap()
    };
    let on_ice = sliding_box(&mut w, -15.0);
    let on_rubber = sliding_box(&mut w, 1.0);
    for _ in 0..10 {
        w.step(DT);
    }
    let v1 = [on_ice, on_rubber].map(|b| w.linear_velocity(b).unwrap().x);
    for _ in 0..15 {
        w.step(DT);
    }
    let v2 = [on_ice, on_rubber].map(|b| w.linear_velocity(b).unwrap().x);
    let a = [0, 1].map(|k| (v1[k] - v2[k]) / (15.0 * DT));
    for (k, mu) in [(0, 0.2), (1, 0.8)] {
        assert!(
            (a[k] - mu * G).abs() <= 0.02 * mu * G,
            "box {k}: a = {}, expected {}",
            a[k],
            mu * G
        );
    }
    assert!(
        w.position(on_ice).unwrap().x < 0.0,
        "the ice box stayed on the ice"
    );
    // Without part surfaces the triangles take the floor body's own values (friction
    // 0.5, mu = sqrt(0.5)): the materials are keys, not values.
    assert!(w.remove_part_surface(ICE));
    let v1 = w.linear_velocity(on_ice).unwrap().x;
    for _ in 0..5 {
        w.step(DT);
    }
    let v2 = w.linear_velocity(on_ice).unwrap().x;
    let a = (v1 - v2) / (5.0 * DT);
    let mu = 0.5f32.sqrt();
    assert!(
        (a - mu * G).abs() <= 0.03 * mu * G,
        "after removal: a = {a}"
    );
}

#[test]
fn a_triangle_material_keys_the_pair_table_and_sets_restitution() {
    // Bounce height after a drop is e^2 * h (see restitution.rs). Ball and floor have
    // restitution 0; the pair entry (ball's material, BOUNCY triangles) has 0.6, so a
    // ball dropped on the bouncy half rebounds to 0.36 h and one on the dead half stays.
    let bouncy = MaterialId(7);
    let mut w = world(1);
    w.set_material_pair(RUBBER, bouncy, surface(0.5, 0.6))
        .unwrap();
    two_material_floor(&mut w, 1, u32::from(bouncy.0));
    let ball = |w: &mut World, x: f32| {
        w.create_body(&BodyDesc {
            material: RUBBER,
            ..BodyDesc::dynamic(Shape::sphere(0.25).unwrap(), Vec3::new(x, 2.25, 0.5))
        })
        .unwrap()
    };
    let (dead, live) = (ball(&mut w, -5.5), ball(&mut w, 5.5));
    let mut apex = [0f32; 2];
    let mut bounced = [false; 2];
    for _ in 0..240 {
        w.step(DT);
        for (k, b) in [dead, live].into_iter().enumerate() {
            let v = w.linear_velocity(b).unwrap().y;
            let y = w.position(b).unwrap().y - 0.25;
            if v > 0.05 {
                bounced[k] = true;
            }
            if bounced[k] && !apex[k].is_nan() {
                apex[k] = apex[k].max(y + v.max(0.0) * v.max(0.0) / (2.0 * G));
            }
        }
    }
    let expected = 0.36 * 2.0;
    assert!(
        (apex[1] - expected).abs() < 0.03 * expected,
        "bouncy half: apex {}",
        apex[1]
    );
    assert!(apex[0] < 0.02, "dead half: apex {}", apex[0]);
}

#[test]
fn a_compound_child_material_mixes_like_a_triangle() {
    use joule_physics::math::{Isometry, Quat};
    use joule_physics::shape::CompoundChild;
    // A compound sled with two runners: the runner touching the ground decides. Both
    // runners have material ICE here, so the sled (friction 1) on the ground (0.5) slides
    // with mu = sqrt(0.5 * 0.08) = 0.2 instead of sqrt(0.5).
    let mut w = world(1);
    w.set_part_surface(ICE, surface(0.08, 0.0)).unwrap();
    ground(&mut w, MaterialId::DEFAULT);
    let runner = |x: f32| CompoundChild {
        shape: Shape::cuboid(Vec3::new(0.1, 0.1, 1.0)).unwrap(),
        pose: Isometry::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY),
        material: u32::from(ICE.0),
    };
    let sled = w
        .create_body(&BodyDesc {
            friction: 1.0,
            linear_velocity: Vec3::new(8.0, 0.0, 0.0),
            ..BodyDesc::dynamic(
                Shape::compound(vec![runner(-0.5), runner(0.5)]).unwrap(),
                Vec3::new(-20.0, 0.1, 0.0),
            )
        })
        .unwrap();
    let a = deceleration(&mut w, sled);
    assert!((a - 0.2 * G).abs() <= 0.02 * 0.2 * G, "a = {a}");
}

#[test]
fn part_surfaces_and_part_materials_survive_a_snapshot() {
    // Mid-slide on the ice half of a two-material mesh: the restored world steps in
    // lockstep (its contacts kept the part materials, its table the part surfaces) and
    // the box keeps decelerating at the ice's mu = 0.2.
    let mut w = world(1);
    w.set_part_surface(ICE, surface(0.04, 0.0)).unwrap();
    two_material_floor(&mut w, u32::from(ICE.0), u32::from(RUBBER.0));
    let b = w
        .create_body(&BodyDesc {
            friction: 1.0,
            linear_velocity: Vec3::new(8.0, 0.0, 0.0),
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.25)).unwrap(),
                Vec3::new(-15.0, 0.25, 0.0),
            )
        })
        .unwrap();
    for _ in 0..5 {
        w.step(DT);
    }
    let mut copy = World::from_snapshot(
        w.snapshot().as_bytes(),
        joule_jobs::JobSystem::new(2).unwrap(),
    )
    .unwrap();
    assert_eq!(copy.material_mixing(), w.material_mixing());
    for _ in 0..30 {
        w.step(DT);
        copy.step(DT);
        assert_eq!(copy.state_hash(), w.state_hash());
    }
    let a = deceleration(&mut copy, b);
    assert!((a - 0.2 * G).abs() <= 0.02 * 0.2 * G, "a = {a}");
}
