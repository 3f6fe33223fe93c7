//! Bodies changed at runtime (issue 30, items 1 and 7): `body_desc` read back, the simple
//! setters with their typed errors, filters asked again for existing pairs, motion types,
//! shapes, enable and disable, bulk creation; each keeps the body's id.

use crate::common::{DT, G, ground, run, world};
use joule_physics::body::{BodyDesc, BodyId, MotionQuality, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::events::ContactEventKind;
use joule_physics::filter::{CollisionFilter, LayerTable};
use joule_physics::mass::MassSpec;
use joule_physics::material::MaterialId;
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
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
