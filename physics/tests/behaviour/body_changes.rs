//! Bodies changed at runtime (issue 30, items 1 and 7): `body_desc` read back, the simple
//! setters with their typed errors, filters asked again for existing pairs, motion types,
//! shapes, enable and disable, bulk creation; each keeps the body's id.

use crate::common::{DT, G, ground, run, world};
use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, BodyId, MotionQuality, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::events::ContactEventKind;
use joule_physics::filter::{CollisionFilter, LayerTable};
use joule_physics::joint::{AxisDrive, JointDesc, JointKind};
use joule_physics::mass::MassSpec;
use joule_physics::material::MaterialId;
use joule_physics::math::{Isometry, Quat, Vec3, Vec3A};
use joule_physics::ray::Ray;
use joule_physics::shape::{CompoundChild, Shape};
use joule_physics::snapshot::DynamicSnapshot;
use joule_physics::world::World;

/// A crate of half extent 0.5 resting on the ground (30 steps to settle).
fn resting_crate(w: &mut World) -> (BodyId, BodyId) {
    let g = ground(w, 0.5);
    let c = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(0.0, 0.5, 0.0),
        ))
        .unwrap();
    run(w, 30);
    assert_eq!(w.contact_count(), 1, "the crate rests on the ground");
    (g, c)
}

/// A description with every field away from its default.
fn unusual_desc() -> BodyDesc {
    BodyDesc::dynamic(Shape::capsule(0.8, 0.3).unwrap(), Vec3::new(1.0, 2.0, 3.0))
        .rotation(Quat::from_rotation_z(0.3))
        .linear_velocity(Vec3::new(0.5, -1.0, 2.0))
        .angular_velocity(Vec3::new(0.1, 0.2, -0.3))
        .density(750.0)
        .friction(0.9)
        .restitution(0.25)
        .rolling_friction(0.01, 0.02)
        .material(MaterialId(3))
        .damping(0.1, 0.2)
        .gravity_scale(0.5)
        .sensor(false)
        .filter(CollisionFilter {
            group: 0b10,
            mask: 0b11,
        })
        .allow_sleep(false)
        .motion_quality(MotionQuality::LinearCast)
        .user_data(42)
}

/// `body_desc` reads back every field; a body made from it in a fresh world is
/// bit-identical (same state hash, same snapshot bytes).
#[test]
fn body_desc_reads_back_what_made_the_body() {
    let desc = BodyDesc {
        center_of_mass_offset: Vec3::new(0.0, -0.1, 0.0),
        ..unusual_desc()
    };
    let mut a = world(0);
    let id = a.create_body(&desc).unwrap();
    let back = a.body_desc(id).unwrap();
    assert_eq!(
        format!("{back:?}"),
        format!("{desc:?}"),
        "every field read back"
    );
    let mut b = world(0);
    let copy = b.create_body(&back).unwrap();
    assert_eq!(copy, id);
    assert_eq!(a.state_hash(), b.state_hash());
    assert!(
        a.snapshot() == b.snapshot(),
        "the two worlds' images are equal"
    );
}

/// Each simple setter shows in `body_desc`; a bad value is refused naming its field, what
/// it must be and what came, and changes nothing.
#[test]
fn simple_setters_validate_and_apply() {
    let mut w = world(0);
    let id = w.create_body(&unusual_desc()).unwrap();
    w.set_friction(id, 0.3).unwrap();
    w.set_restitution(id, 0.7).unwrap();
    w.set_material(id, MaterialId(5)).unwrap();
    w.set_gravity_scale(id, -1.0).unwrap();
    w.set_damping(id, 0.0, 1.5).unwrap();
    w.set_motion_quality(id, MotionQuality::Discrete).unwrap();
    w.set_allow_sleep(id, true).unwrap();
    let d = w.body_desc(id).unwrap();
    assert_eq!(
        (d.friction, d.restitution, d.material, d.gravity_scale),
        (0.3, 0.7, MaterialId(5), -1.0)
    );
    assert_eq!((d.linear_damping, d.angular_damping), (0.0, 1.5));
    assert_eq!(d.motion_quality, MotionQuality::Discrete);
    assert!(d.allow_sleep);

    let before = format!("{:?}", w.body_desc(id).unwrap());
    let refused = [
        (w.set_friction(id, -0.1), "friction", -0.1),
        (w.set_friction(id, f32::INFINITY), "friction", f32::INFINITY),
        (w.set_restitution(id, 1.5), "restitution", 1.5),
        (w.set_damping(id, -1.0, 0.0), "linear_damping", -1.0),
        (w.set_damping(id, 0.0, -2.0), "angular_damping", -2.0),
    ];
    for (result, field, value) in refused {
        match result {
            Err(PhysicsError::InvalidBodySetting {
                field: f,
                value: v,
                expected,
            }) => {
                assert_eq!((f, v), (field, value));
                let message = PhysicsError::InvalidBodySetting {
                    field: f,
                    value: v,
                    expected,
                }
                .to_string();
                assert!(
                    message.contains(field) && message.contains(expected),
                    "{message}"
                );
            }
            other => panic!("{field} = {value}: {other:?}"),
        }
    }
    assert!(matches!(
        w.set_gravity_scale(id, f32::NAN),
        Err(PhysicsError::InvalidBodySetting {
            field: "gravity_scale",
            ..
        })
    ));
    assert_eq!(w.set_layer(id, 1), Err(PhysicsError::InvalidLayer(1)));
    assert_eq!(
        format!("{:?}", w.body_desc(id).unwrap()),
        before,
        "refused values changed nothing"
    );
    w.remove_body(id).unwrap();
    assert_eq!(
        w.set_friction(id, 0.5),
        Err(PhysicsError::StaleBodyId(id)),
        "a removed body's id is stale"
    );
}

/// A new friction applies to the existing contact at once: a box sliding at 2 m/s on a
/// frictionless setting keeps its speed, where with friction 0.5 it would stop in
/// v / (mu g) = 0.41 s.
#[test]
fn a_new_friction_applies_to_existing_contacts() {
    let mut w = world(0);
    let (g, c) = resting_crate(&mut w);
    w.set_friction(g, 0.0).unwrap();
    w.set_friction(c, 0.0).unwrap();
    w.set_linear_velocity(c, Vec3::new(2.0, 0.0, 0.0)).unwrap();
    run(&mut w, 60);
    let v = w.linear_velocity(c).unwrap().x;
    assert!((v - 2.0).abs() < 1e-3, "the box slides on at {v} m/s");
}

/// The test: a crate resting on the floor whose mask stops accepting the floor's
/// group loses its contact in the call (with an end event) and falls from the next step,
/// as in free fall: y drops by g t^2 / 2 (to the integrator's O(dt) error).
#[test]
fn a_crate_whose_mask_changes_falls_through_the_floor_at_once() {
    let mut w = world(0);
    let (g, c) = resting_crate(&mut w);
    w.set_collision_filter(
        g,
        CollisionFilter {
            group: 0b01,
            mask: u32::MAX,
        },
    )
    .unwrap();
    assert_eq!(
        w.contact_count(),
        1,
        "group 1 still passes the crate's mask"
    );
    let y0 = w.position(c).unwrap().y;
    w.set_collision_filter(
        c,
        CollisionFilter {
            group: u32::MAX,
            mask: 0b10,
        },
    )
    .unwrap();
    assert_eq!(w.contact_count(), 0, "the contact is dropped in the call");
    assert!(
        w.events()
            .contacts
            .iter()
            .any(|e| e.kind == ContactEventKind::End && (e.body_a, e.body_b) == (g, c)),
        "its end is reported: {:?}",
        w.events().contacts
    );
    run(&mut w, 30);
    assert_eq!(w.contact_count(), 0, "no contact forms again");
    let t = 30.0 * DT;
    let fall = y0 - w.position(c).unwrap().y;
    let expected = 0.5 * G * t * t;
    assert!(
        (fall - expected).abs() < 0.03 * expected,
        "fell {fall} m in {t} s, free fall gives {expected} m"
    );
}

/// A mask that starts accepting again forms the pair at the next step although nothing
/// moved: two overlapping boxes floating in zero gravity push apart.
#[test]
fn a_filter_that_accepts_again_forms_the_pair_at_the_next_step() {
    let mut w = world(0);
    w.set_gravity(Vec3::ZERO).unwrap();
    let shape = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let ghost = CollisionFilter {
        group: 0b01,
        mask: 0,
    };
    let a = w
        .create_body(&BodyDesc::dynamic(shape.clone(), Vec3::ZERO).filter(ghost))
        .unwrap();
    let b = w
        .create_body(&BodyDesc::dynamic(shape, Vec3::new(0.8, 0.0, 0.0)))
        .unwrap();
    run(&mut w, 10);
    assert_eq!(w.contact_count(), 0, "a mask of 0 collides with nothing");
    w.set_collision_filter(a, CollisionFilter::default())
        .unwrap();
    w.step(DT);
    assert_eq!(w.contact_count(), 1, "found at the next step");
    run(&mut w, 60);
    let gap = w.position(b).unwrap().x - w.position(a).unwrap().x;
    assert!(gap > 0.95, "the overlap is pushed apart: {gap} m");
}

/// A body moved to a layer the table keeps from the floor's drops its contact at once.
#[test]
fn a_new_layer_drops_refused_contacts_at_once() {
    let mut w = world(0);
    let mut table = LayerTable::all_colliding(2);
    table.set(0, 1, false);
    w.set_layer_table(table).unwrap();
    let (_, c) = resting_crate(&mut w);
    w.set_layer(c, 1).unwrap();
    assert_eq!(w.layer(c).unwrap(), 1);
    assert_eq!(w.contact_count(), 0);
    run(&mut w, 30);
    assert!(w.position(c).unwrap().y < -0.5, "it falls through");
    w.set_layer(c, 0).unwrap();
    assert_eq!(w.body_desc(c).unwrap().layer, 0);
}

/// A crate made a sensor falls through the floor (a sensor is never pushed) and the floor
/// is reported inside it; made solid again above a second floor, it lands there.
#[test]
fn a_body_made_a_sensor_stops_pushing_and_reports_overlaps() {
    let mut w = world(0);
    let (g, c) = resting_crate(&mut w);
    w.set_sensor(c, true).unwrap();
    assert_eq!(w.contact_count(), 0, "the solid contact ends in the call");
    w.step(DT);
    assert!(
        w.events()
            .sensors
            .iter()
            .any(|e| e.begin && e.sensor == c && e.visitor == g),
        "the floor is reported inside the sensor: {:?}",
        w.events().sensors
    );
    run(&mut w, 30);
    assert!(w.position(c).unwrap().y < -0.5, "it falls through");
    w.set_sensor(c, false).unwrap();
    assert!(!w.body_desc(c).unwrap().is_sensor);
}

/// The id of a body whose mass was set stays valid for `body_desc`, which reads back the
/// mass source as given.
#[test]
fn body_desc_reads_back_set_mass_properties() {
    let mut w = world(0);
    let id = w.create_body(&BodyDesc::default()).unwrap();
    w.set_mass_properties(id, MassSpec::Mass(3.0), Vec3::new(0.1, 0.0, 0.0))
        .unwrap();
    let d = w.body_desc(id).unwrap();
    assert_eq!(d.mass, MassSpec::Mass(3.0));
    assert_eq!(d.center_of_mass_offset, Vec3::new(0.1, 0.0, 0.0));
    assert_eq!(d.motion_type, MotionType::Dynamic);
}

/// The test: a door standing fixed in its frame on a hinge, turned dynamic, keeps
/// its id and its hinge. Fixed, it refuses a push; dynamic (mass = density x volume =
/// 1000 x 1 x 2 x 0.1 = 200 kg), pushed at its free edge, it swings about the hinge while
/// its hinge edge stays on the axis (within 5 mm, under gravity) and it does not drop.
#[test]
fn a_door_turned_dynamic_keeps_its_hinge() {
    let mut w = world(0);
    let frame = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.05, 1.0, 0.05)).unwrap(),
            Vec3::new(0.0, 1.0, 0.0),
        ))
        .unwrap();
    let door = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.5, 1.0, 0.05)).unwrap(),
            Vec3::new(0.6, 1.0, 0.0),
        ))
        .unwrap();
    let hinge_point = Vec3::new(0.1, 1.0, 0.0);
    let (fa, fb) = w
        .joint_frames_at(Some(frame), door, hinge_point, Vec3::Y)
        .unwrap();
    let hinge = w
        .create_joint(&JointDesc::new(
            JointKind::Hinge(AxisDrive::default()),
            Some(frame),
            door,
            fa,
            fb,
        ))
        .unwrap();
    run(&mut w, 10);
    assert_eq!(
        w.apply_impulse(door, Vec3::Z),
        Err(PhysicsError::WrongMotionType),
        "a fixed door cannot be pushed"
    );
    w.set_motion_type(door, MotionType::Dynamic).unwrap();
    assert_eq!(w.motion_type(door).unwrap(), MotionType::Dynamic);
    let mass = w.mass(door).unwrap();
    assert!((mass - 200.0).abs() < 1e-3, "mass {mass} kg");
    assert!(w.contains_joint(hinge), "the hinge is kept");
    w.apply_impulse_at(door, Vec3::new(0.0, 0.0, -100.0), Vec3::new(1.1, 1.0, 0.0))
        .unwrap();
    let edge_local = Vec3::new(-0.5, 0.0, 0.0);
    for _ in 0..60 {
        w.step(DT);
        let t = w.transform(door).unwrap();
        let edge = Vec3::from(t.transform_point(edge_local.into()));
        assert!(
            (edge - hinge_point).length() < 5e-3,
            "the hinge edge stays on the axis: {edge}"
        );
    }
    let (axis, angle) = w.rotation(door).unwrap().to_axis_angle();
    assert!(
        angle > 0.2 && axis.y.abs() > 0.999,
        "the door swung {angle} rad about {axis}"
    );
    // And back: fixed again, it stops where it is.
    let pose = w.transform(door).unwrap();
    w.set_motion_type(door, MotionType::Fixed).unwrap();
    run(&mut w, 10);
    assert_eq!(w.transform(door).unwrap(), pose, "a fixed door stays put");
    assert_eq!(w.linear_velocity(door).unwrap(), Vec3::ZERO);
    assert_eq!(w.mass(door).unwrap(), 0.0);
}

/// A fixed platform carrying a sleeping crate becomes dynamic and the crate wakes with
/// it: both fall, the crate still on the platform.
#[test]
fn a_motion_type_change_wakes_what_rests_on_the_body() {
    let mut w = world(0);
    let platform = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(2.0, 0.1, 2.0)).unwrap(),
            Vec3::new(0.0, 5.0, 0.0),
        ))
        .unwrap();
    let c = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(0.0, 5.6, 0.0),
        ))
        .unwrap();
    run(&mut w, 120);
    assert!(
        w.is_sleeping(c).unwrap(),
        "the crate sleeps on the platform"
    );
    w.set_motion_type(platform, MotionType::Dynamic).unwrap();
    assert!(!w.is_sleeping(c).unwrap(), "the crate wakes");
    run(&mut w, 30);
    let (yp, yc) = (w.position(platform).unwrap().y, w.position(c).unwrap().y);
    assert!(yp < 4.0, "the platform falls: y = {yp}");
    assert!(
        (yc - yp - 0.6).abs() < 0.02,
        "the crate rides it down: {yc} over {yp}"
    );
    assert_eq!(
        w.set_motion_type(c, MotionType::Dynamic),
        Ok(()),
        "the same type is no change"
    );
}

/// A fixed half-space cannot move, and a zero density cannot give a mass: both are
/// refused and change nothing.
#[test]
fn motion_type_changes_that_cannot_work_are_refused() {
    let mut w = world(0);
    let plane = w
        .create_body(&BodyDesc::fixed(
            Shape::half_space(Vec3::Y, 0.0).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
    assert_eq!(
        w.set_motion_type(plane, MotionType::Dynamic),
        Err(PhysicsError::InfiniteShapeOnMovingBody)
    );
    let light = w
        .create_body(&BodyDesc::fixed(Shape::sphere(0.5).unwrap(), Vec3::Y).density(0.0))
        .unwrap();
    assert_eq!(
        w.set_motion_type(light, MotionType::Dynamic),
        Err(PhysicsError::NonPositiveDensity)
    );
    assert_eq!(w.motion_type(light).unwrap(), MotionType::Fixed);
}

/// The test: a standing capsule crouches (its shape becomes a shorter capsule,
/// moved down so its feet stay on the ground). It keeps its id, its ground contact and
/// that contact's warm-start impulse: no end or begin is reported, and it stays at rest.
#[test]
fn a_crouching_capsule_keeps_its_id_and_contacts() {
    let mut w = world(0);
    let g = ground(&mut w, 0.5);
    let player = w
        .create_body(&BodyDesc {
            mass: MassSpec::Mass(80.0),
            ..BodyDesc::dynamic(Shape::capsule(0.5, 0.3).unwrap(), Vec3::new(0.0, 0.8, 0.0))
                .damping(0.0, 5.0)
        })
        .unwrap();
    run(&mut w, 60);
    let contact = |w: &World| {
        let all = w.contacts();
        assert_eq!(all.len(), 1, "one contact: {all:?}");
        assert_eq!((all[0].body_a, all[0].body_b), (g, player));
        all[0].normal_impulses.iter().sum::<f32>()
    };
    let standing = contact(&w);
    assert!(standing > 0.0);
    w.set_shape(player, Shape::capsule(0.2, 0.3).unwrap())
        .unwrap();
    w.set_position(player, Vec3::new(0.0, 0.5, 0.0)).unwrap();
    assert_eq!(w.mass(player).unwrap(), 80.0, "the mass given is kept");
    assert_eq!(
        contact(&w),
        standing,
        "the contact and its warm start are kept"
    );
    for _ in 0..30 {
        w.step(DT);
        assert!(
            w.events().contacts.is_empty(),
            "no begin or end: {:?}",
            w.events().contacts
        );
        contact(&w);
    }
    let y = w.position(player).unwrap().y;
    assert!((y - 0.5).abs() < 0.01, "it rests crouched, y = {y}");
    // The stored impulse is the last substep's: m g h with h = dt / substeps.
    let impulse = contact(&w);
    let weight = 80.0 * G * DT / w.solver_settings().substeps as f32;
    assert!(
        (impulse - weight).abs() < 0.05 * weight,
        "the ground carries its weight: {impulse} N s per substep, m g h = {weight}"
    );
}

/// A dynamic body's mass follows a new shape by its density; a half-space is refused on a
/// moving body.
#[test]
fn a_new_shape_recomputes_the_mass() {
    let mut w = world(0);
    let id = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
    assert!((w.mass(id).unwrap() - 1000.0).abs() < 1e-2);
    w.set_shape(id, Shape::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap())
        .unwrap();
    assert!(
        (w.mass(id).unwrap() - 2000.0).abs() < 1e-2,
        "twice the volume"
    );
    assert_eq!(
        w.set_shape(id, Shape::half_space(Vec3::Y, 0.0).unwrap()),
        Err(PhysicsError::InfiniteShapeOnMovingBody)
    );
    assert!((w.mass(id).unwrap() - 2000.0).abs() < 1e-2, "unchanged");
}

fn child(h: f32, x: f32) -> CompoundChild {
    CompoundChild {
        shape: Shape::cuboid(Vec3::splat(h)).unwrap(),
        pose: Isometry::from_translation(Vec3A::new(x, 0.0, 0.0)),
        material: 0,
    }
}

/// A compound's children are added, removed and replaced: the mass (density 1000) and
/// the shape's tree follow, and a ray finds the new child and misses the removed one.
#[test]
fn compound_children_are_added_removed_and_replaced() {
    let mut w = world(0);
    w.set_gravity(Vec3::ZERO).unwrap();
    let id = w
        .create_body(&BodyDesc::dynamic(
            Shape::compound(vec![child(0.5, -1.0), child(0.5, 1.0)]).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
    let mass = |w: &World| w.mass(id).unwrap();
    assert!((mass(&w) - 2000.0).abs() < 0.1);
    let hits = |w: &World, x: f32| {
        w.ray_cast(
            &Ray::new(Vec3::new(x, 5.0, 0.0), Vec3::NEG_Y, 10.0),
            &Default::default(),
        )
        .is_some()
    };
    assert!(hits(&w, 1.0) && !hits(&w, 3.0));
    assert_eq!(w.add_compound_child(id, child(0.5, 3.0)).unwrap(), 2);
    assert!((mass(&w) - 3000.0).abs() < 0.1);
    assert!(hits(&w, 3.0), "the added child is hit");
    w.remove_compound_child(id, 1).unwrap();
    assert!((mass(&w) - 2000.0).abs() < 0.1);
    assert!(!hits(&w, 1.0), "the removed child is missed");
    w.replace_compound_child(id, 0, child(1.0, -1.0)).unwrap();
    assert!((mass(&w) - 9000.0).abs() < 0.5, "8000 + 1000");
    assert_eq!(
        w.remove_compound_child(id, 2),
        Err(PhysicsError::CompoundChildOutOfRange { index: 2, count: 2 })
    );
    w.remove_compound_child(id, 1).unwrap();
    assert!(matches!(
        w.remove_compound_child(id, 0),
        Err(PhysicsError::InvalidShape(_))
    ));
    let ball = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y))
        .unwrap();
    assert_eq!(
        w.add_compound_child(ball, child(0.5, 0.0)).map(|_| ()),
        Err(PhysicsError::NotACompound(ball))
    );
}

/// A disabled crate keeps its id but leaves the step: its ground contact ends (with an end
/// event), gravity no longer moves it, rays pass through it. Enabled again, it collides at
/// the next step and falls back to rest on the ground.
#[test]
fn a_disabled_body_takes_no_part_until_enabled() {
    let mut w = world(0);
    let (g, c) = resting_crate(&mut w);
    w.set_position(c, Vec3::new(0.0, 2.0, 0.0)).unwrap();
    w.set_enabled(c, false).unwrap();
    assert!(!w.is_enabled(c).unwrap());
    assert_eq!(w.contact_count(), 0);
    run(&mut w, 30);
    assert_eq!(w.position(c).unwrap(), Vec3::new(0.0, 2.0, 0.0), "it hangs");
    assert_eq!(w.awake_body_count(), 0);
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, 10.0),
            &Default::default(),
        )
        .unwrap();
    assert_eq!(hit.body, g, "the ray passes through it to the ground");
    w.set_enabled(c, true).unwrap();
    run(&mut w, 60);
    let y = w.position(c).unwrap().y;
    assert!(
        (y - 0.5).abs() < 0.01,
        "it falls back to the ground: y = {y}"
    );
    assert_eq!(w.contact_count(), 1);
}

/// Joints to a disabled body are kept but not solved: a ball hung below a disabled ball
/// falls freely (g t^2 / 2), and the disabled ball's own joint to the world is kept too.
#[test]
fn joints_to_a_disabled_body_hold_nothing() {
    let mut w = world(0);
    let top = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.2).unwrap(),
            Vec3::new(0.0, 5.0, 0.0),
        ))
        .unwrap();
    let low = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.2).unwrap(),
            Vec3::new(0.0, 4.5, 0.0),
        ))
        .unwrap();
    let (fa, fb) = w
        .joint_frames_at(None, top, Vec3::new(0.0, 5.0, 0.0), Vec3::X)
        .unwrap();
    let to_world = w
        .create_joint(&JointDesc::new(JointKind::Ball, None, top, fa, fb))
        .unwrap();
    let (fa, fb) = w
        .joint_frames_at(Some(top), low, Vec3::new(0.0, 5.0, 0.0), Vec3::X)
        .unwrap();
    let link = w
        .create_joint(&JointDesc::new(JointKind::Ball, Some(top), low, fa, fb))
        .unwrap();
    run(&mut w, 30);
    let y0 = w.position(low).unwrap().y;
    assert!((y0 - 4.5).abs() < 0.01, "the chain hangs: {y0}");
    w.set_enabled(top, false).unwrap();
    w.set_linear_velocity(low, Vec3::ZERO).unwrap();
    run(&mut w, 30);
    let t = 30.0 * DT;
    let fall = y0 - w.position(low).unwrap().y;
    let expected = 0.5 * G * t * t;
    assert!(
        (fall - expected).abs() < 0.03 * expected,
        "fell {fall} m, free fall gives {expected} m"
    );
    assert!(w.contains_joint(to_world) && w.contains_joint(link));
    assert_eq!(w.joint_count(), 2);
}

/// The test: snapshots carry every new state. A world is changed in every way
/// (motion types, shapes, a compound edit, filters, a layer, a sensor, settings, a
/// disabled body), saved, changed again and stepped, then restored: the hash, the image
/// and every body's description come back, and the restored world steps in lockstep with
/// a copy made from the image.
#[test]
fn snapshots_carry_every_runtime_change() {
    let mut w = world(0);
    let mut table = LayerTable::all_colliding(2);
    table.set(0, 1, false);
    w.set_layer_table(table).unwrap();
    let (g, c) = resting_crate(&mut w);
    let door = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.5, 1.0, 0.05)).unwrap(),
            Vec3::new(3.0, 1.0, 0.0),
        ))
        .unwrap();
    let pile = w
        .create_body(&BodyDesc::dynamic(
            Shape::compound(vec![child(0.3, -0.5), child(0.3, 0.5)]).unwrap(),
            Vec3::new(-3.0, 1.0, 0.0),
        ))
        .unwrap();
    let ghost = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(6.0, 1.0, 0.0),
        ))
        .unwrap();
    let hidden = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(-6.0, 3.0, 0.0),
        ))
        .unwrap();
    run(&mut w, 10);
    w.set_motion_type(door, MotionType::Dynamic).unwrap();
    w.set_shape(c, Shape::cuboid(Vec3::new(0.6, 0.4, 0.5)).unwrap())
        .unwrap();
    w.add_compound_child(pile, child(0.2, 0.0)).unwrap();
    w.set_collision_filter(
        g,
        CollisionFilter {
            group: 1,
            mask: u32::MAX,
        },
    )
    .unwrap();
    w.set_layer(ghost, 1).unwrap();
    w.set_sensor(hidden, true).unwrap();
    w.set_friction(c, 0.1).unwrap();
    w.set_damping(pile, 0.3, 0.4).unwrap();
    w.set_gravity_scale(ghost, 0.5).unwrap();
    w.set_motion_quality(pile, MotionQuality::LinearCast)
        .unwrap();
    w.set_allow_sleep(c, false).unwrap();
    w.set_enabled(hidden, false).unwrap();
    run(&mut w, 5);
    let ids = [g, c, door, pile, ghost, hidden];
    let descs = |w: &World| -> Vec<String> {
        ids.iter()
            .map(|&id| {
                format!(
                    "{:?} {}",
                    w.body_desc(id).unwrap(),
                    w.is_enabled(id).unwrap()
                )
            })
            .collect()
    };
    let (hash, image, before) = (w.state_hash(), w.snapshot(), descs(&w));

    w.set_enabled(hidden, true).unwrap();
    w.set_motion_type(door, MotionType::Kinematic).unwrap();
    w.set_shape(c, Shape::sphere(0.5).unwrap()).unwrap();
    w.set_collision_filter(c, CollisionFilter { group: 1, mask: 0 })
        .unwrap();
    w.set_sensor(hidden, false).unwrap();
    run(&mut w, 20);
    assert_ne!(w.state_hash(), hash);

    w.restore(image.as_bytes()).unwrap();
    assert_eq!(w.state_hash(), hash, "the hash comes back");
    assert!(w.snapshot() == image, "the image comes back byte for byte");
    assert_eq!(descs(&w), before, "every body's description comes back");
    let mut copy = World::from_snapshot(image.as_bytes(), JobSystem::new(2).unwrap()).unwrap();
    for step in 0..60 {
        w.step(DT);
        copy.step(DT);
        assert_eq!(w.state_hash(), copy.state_hash(), "step {step}");
    }
    assert!(!w.is_enabled(hidden).unwrap() && !copy.is_enabled(hidden).unwrap());
}

/// A dynamic snapshot saved before a change of motion type, shape, filter or presence no
/// longer fits the world, and says so.
#[test]
fn runtime_changes_are_changes_of_structure() {
    let mut w = world(0);
    let (_, c) = resting_crate(&mut w);
    let changes: [fn(&mut World, BodyId); 5] = [
        |w, c| w.set_motion_type(c, MotionType::Kinematic).unwrap(),
        |w, c| w.set_shape(c, Shape::sphere(0.5).unwrap()).unwrap(),
        |w, c| {
            w.set_collision_filter(c, CollisionFilter { group: 1, mask: 1 })
                .unwrap()
        },
        |w, c| w.set_sensor(c, true).unwrap(),
        |w, c| w.set_enabled(c, false).unwrap(),
    ];
    for change in changes {
        let mut saved = DynamicSnapshot::default();
        w.save_dynamic(&mut saved);
        change(&mut w, c);
        assert_eq!(
            w.restore_dynamic(&saved),
            Err(PhysicsError::SnapshotStructureChanged)
        );
    }
}

/// A pile of boxes and spheres over a ground, with a few fixed posts among them.
fn pile_descs() -> Vec<BodyDesc> {
    let mut descs = vec![BodyDesc::fixed(
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    )];
    for i in 0..150 {
        let (x, z, y) = ((i % 6) as f32, ((i / 6) % 5) as f32, (i / 30) as f32);
        let p = Vec3::new(x * 1.1 - 3.0, 0.6 + y * 1.2, z * 1.1 - 2.5);
        descs.push(if i % 3 == 0 {
            BodyDesc::dynamic(Shape::sphere(0.45).unwrap(), p)
        } else if i % 17 == 0 {
            BodyDesc::fixed(Shape::cuboid(Vec3::splat(0.3)).unwrap(), p)
        } else {
            BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.45)).unwrap(), p)
        });
    }
    descs
}

/// A batch gives the ids a loop of `create_body` gives, and the same world: stepped side
/// by side the two stay bit-identical (the pair search sorts what the trees find, so the
/// batch's tree shape never reaches results), with one world on 2 workers.
#[test]
fn a_batch_behaves_like_bodies_made_one_at_a_time() {
    let descs = pile_descs();
    let mut one = world(0);
    let singles: Vec<BodyId> = descs.iter().map(|d| one.create_body(d).unwrap()).collect();
    let mut batch = world(2);
    let ids = batch.create_bodies(&descs).unwrap();
    assert_eq!(ids, singles);
    assert_eq!(batch.body_count(), descs.len());
    assert_eq!(batch.state_hash(), one.state_hash());
    for step in 0..120 {
        one.step(DT);
        batch.step(DT);
        assert_eq!(batch.state_hash(), one.state_hash(), "step {step}");
    }
    assert!(batch.contact_count() > 100, "the pile is in contact");
    // A second batch lands in the slots a removal freed, as single creations would.
    one.remove_bodies(&singles[10..20]).unwrap();
    batch.remove_bodies(&ids[10..20]).unwrap();
    let more = batch.create_bodies(&descs[1..6]).unwrap();
    let singles: Vec<BodyId> = descs[1..6]
        .iter()
        .map(|d| one.create_body(d).unwrap())
        .collect();
    assert_eq!(more, singles);
    for step in 0..30 {
        one.step(DT);
        batch.step(DT);
        assert_eq!(
            batch.state_hash(),
            one.state_hash(),
            "after refill, step {step}"
        );
    }
}

/// A batch with one bad description adds nothing and names it; removing with a stale or
/// repeated id removes nothing.
#[test]
fn a_bad_batch_changes_nothing() {
    let mut w = world(0);
    let mut descs = pile_descs();
    descs[3].friction = -1.0;
    let earlier = world(0).create_body(&BodyDesc::default()).unwrap();
    let mut ids = vec![earlier];
    let err = w.create_bodies_into(&descs, &mut ids).unwrap_err();
    assert!(
        matches!(
            &err,
            PhysicsError::InvalidBatchBody { index: 3, error }
                if matches!(**error, PhysicsError::InvalidMaterial { field: "friction", .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("body 3 of the batch"), "{err}");
    assert_eq!((w.body_count(), ids.len()), (0, 1), "nothing was created");
    descs[3].friction = 0.5;
    let ids = w.create_bodies(&descs).unwrap();
    let count = w.body_count();
    assert_eq!(
        w.remove_bodies(&[ids[1], ids[2], ids[1]]),
        Err(PhysicsError::StaleBodyId(ids[1]))
    );
    w.remove_body(ids[5]).unwrap();
    assert_eq!(
        w.remove_bodies(&[ids[1], ids[5]]),
        Err(PhysicsError::StaleBodyId(ids[5]))
    );
    assert_eq!(
        w.body_count(),
        count - 1,
        "only the single removal happened"
    );
    assert!(w.contains(ids[1]) && w.contains(ids[2]));
}

/// A long random run of every runtime change (motion types, shapes, compound edits,
/// filters, sensors, enable and disable, batches and removals) between steps, driven by
/// a fixed seed: nothing panics, every full snapshot restores onto a copy that matches,
/// and a world on 2 workers stays bit-identical to one on none.
#[test]
fn random_runtime_changes_stay_deterministic() {
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }
    let shapes = || {
        [
            Shape::sphere(0.4).unwrap(),
            Shape::cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap(),
            Shape::capsule(0.3, 0.2).unwrap(),
            Shape::compound(vec![child(0.25, -0.3), child(0.25, 0.3)]).unwrap(),
        ]
    };
    let mut worlds = [world(0), world(2)];
    let mut ids: Vec<BodyId> = Vec::new();
    for w in &mut worlds {
        ground(w, 0.5);
    }
    let mut rng = Rng(11);
    for round in 0..400 {
        let op = rng.below(12);
        let pick = if ids.is_empty() {
            0
        } else {
            rng.below(ids.len())
        };
        let shape = shapes()[rng.below(4)].clone();
        let x = rng.below(9) as f32 - 4.0;
        let flag = rng.below(2) == 0;
        let mut results = Vec::new();
        for w in &mut worlds {
            let id = ids.get(pick).copied();
            let r: Result<(), PhysicsError> = match (op, id) {
                (0 | 1, _) => {
                    let descs: Vec<BodyDesc> = (0..1 + (round % 3))
                        .map(|k| {
                            BodyDesc::dynamic(
                                shape.clone(),
                                Vec3::new(x + k as f32 * 0.9, 2.0 + k as f32, 0.0),
                            )
                        })
                        .collect();
                    w.create_bodies(&descs).map(|_| ())
                }
                (2, Some(id)) => w.set_motion_type(
                    id,
                    [
                        MotionType::Dynamic,
                        MotionType::Kinematic,
                        MotionType::Fixed,
                    ][round % 3],
                ),
                (3, Some(id)) => w.set_shape(id, shape.clone()),
                (4, Some(id)) => w.add_compound_child(id, child(0.2, x * 0.1)).map(|_| ()),
                (5, Some(id)) => w.remove_compound_child(id, 0),
                (6, Some(id)) => w.set_enabled(id, flag),
                (7, Some(id)) => w.set_sensor(id, flag),
                (8, Some(id)) => w.set_collision_filter(
                    id,
                    CollisionFilter {
                        group: 1 + flag as u32,
                        mask: if flag { u32::MAX } else { 1 },
                    },
                ),
                (9, Some(id)) => w.remove_bodies(&[id]),
                (10, Some(id)) => w.set_position(id, Vec3::new(x, 1.5, 0.0)),
                _ => Ok(()),
            };
            results.push(r);
        }
        assert_eq!(
            results[0], results[1],
            "round {round}: both worlds answer alike"
        );
        if let (0 | 1, Ok(())) = (op, &results[0]) {
            ids = worlds[0].bodies().map(|b| b.id()).collect();
        }
        if op == 9 && !ids.is_empty() && results[0].is_ok() {
            ids.remove(pick);
        }
        for w in &mut worlds {
            w.step(DT);
        }
        assert_eq!(
            worlds[0].state_hash(),
            worlds[1].state_hash(),
            "round {round}, op {op}"
        );
        if round % 50 == 49 {
            let image = worlds[0].snapshot();
            let copy = World::from_snapshot(image.as_bytes(), JobSystem::new(0).unwrap()).unwrap();
            assert_eq!(copy.state_hash(), worlds[0].state_hash());
            assert!(copy.snapshot() == image);
        }
    }
    assert!(worlds[0].body_count() > 20, "{}", worlds[0].body_count());
}
