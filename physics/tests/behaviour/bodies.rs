//! Bodies: generational ids, validation, getters and setters, storage sets.

use crate::common::{DT, ground, world};
use joule_physics::body::{BodyDesc, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;

fn unit_box() -> Shape {
    Shape::cuboid(Vec3::splat(0.5)).unwrap()
}

#[test]
fn a_removed_bodys_id_is_stale_even_after_its_slot_is_reused() {
    let mut w = world(0);
    let a = w
        .create_body(&BodyDesc::dynamic(unit_box(), Vec3::ZERO))
        .unwrap();
    w.remove_body(a).unwrap();
    assert_eq!(
        w.remove_body(a),
        Err(PhysicsError::StaleBodyId(a)),
        "removing twice"
    );
    let b = w
        .create_body(&BodyDesc::dynamic(unit_box(), Vec3::X))
        .unwrap();
    assert_eq!(a.index(), b.index(), "the slot is reused");
    assert_ne!(a, b, "with a new generation");
    assert_eq!(w.position(a), Err(PhysicsError::StaleBodyId(a)));
    assert_eq!(w.position(b).unwrap(), Vec3::X);
    assert_eq!(w.body_count(), 1);
}

#[test]
fn bad_input_is_a_typed_error_and_creates_nothing() {
    let mut w = world(0);
    let hash = w.state_hash();
    let cases: Vec<(BodyDesc, PhysicsError)> = vec![
        (
            BodyDesc::dynamic(unit_box(), Vec3::new(f32::NAN, 0.0, 0.0)),
            PhysicsError::NonFinitePosition,
        ),
        (
            BodyDesc::dynamic(unit_box(), Vec3::new(0.0, f32::INFINITY, 0.0)),
            PhysicsError::NonFinitePosition,
        ),
        (
            BodyDesc {
                rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 2.0),
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::NonNormalizedRotation,
        ),
        (
            BodyDesc {
                rotation: Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::NonFiniteRotation,
        ),
        (
            BodyDesc {
                linear_velocity: Vec3::new(0.0, f32::NAN, 0.0),
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::NonFiniteVelocity,
        ),
        (
            BodyDesc {
                density: 0.0,
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::NonPositiveDensity,
        ),
        (
            BodyDesc {
                density: -5.0,
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::NonPositiveDensity,
        ),
        (
            BodyDesc {
                restitution: 1.5,
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::InvalidMaterial {
                field: "restitution",
                value: 1.5,
                expected: "a value in [0, 1]",
            },
        ),
        (
            BodyDesc {
                layer: 9,
                ..BodyDesc::dynamic(unit_box(), Vec3::ZERO)
            },
            PhysicsError::InvalidLayer(9),
        ),
        (
            BodyDesc::dynamic(Shape::half_space(Vec3::Y, 0.0).unwrap(), Vec3::ZERO),
            PhysicsError::InfiniteShapeOnMovingBody,
        ),
    ];
    for (desc, err) in cases {
        assert_eq!(w.create_body(&desc), Err(err.clone()), "{err}");
    }
    assert_eq!(w.body_count(), 0, "nothing was half-created");
    assert_eq!(w.state_hash(), hash);
    // Invalid shapes are refused when built.
    assert!(Shape::cuboid(Vec3::new(1.0, -1.0, 1.0)).is_err());
    assert!(Shape::sphere(f32::NAN).is_err());
    // A static body needs no density.
    let s = w
        .create_body(&BodyDesc {
            density: 0.0,
            ..BodyDesc::fixed(unit_box(), Vec3::ZERO)
        })
        .unwrap();
    assert_eq!(w.mass(s).unwrap(), 0.0);
}

#[test]
fn setters_validate_and_change_only_what_they_name() {
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc::dynamic(unit_box(), Vec3::ZERO))
        .unwrap();
    let s = w
        .create_body(&BodyDesc::fixed(unit_box(), Vec3::new(5.0, 0.0, 0.0)))
        .unwrap();
    w.set_position(b, Vec3::new(1.0, 2.0, 3.0)).unwrap();
    assert_eq!(w.position(b).unwrap(), Vec3::new(1.0, 2.0, 3.0));
    let q = Quat::from_rotation_y(0.5);
    w.set_rotation(b, q).unwrap();
    assert!(w.rotation(b).unwrap().abs_diff_eq(q, 1e-6));
    assert_eq!(w.position(b).unwrap(), Vec3::new(1.0, 2.0, 3.0));
    w.set_linear_velocity(b, Vec3::X).unwrap();
    w.set_angular_velocity(b, Vec3::Y).unwrap();
    assert_eq!(w.linear_velocity(b).unwrap(), Vec3::X);
    assert_eq!(w.angular_velocity(b).unwrap(), Vec3::Y);
    let before = w.state_hash();
    assert_eq!(
        w.set_position(b, Vec3::splat(f32::NAN)),
        Err(PhysicsError::NonFinitePosition)
    );
    assert_eq!(
        w.set_linear_velocity(b, Vec3::splat(f32::INFINITY)),
        Err(PhysicsError::NonFiniteVelocity)
    );
    assert_eq!(
        w.set_linear_velocity(s, Vec3::X),
        Err(PhysicsError::WrongMotionType)
    );
    assert_eq!(w.state_hash(), before, "a refused call changes nothing");
    assert_eq!(w.motion_type(s).unwrap(), MotionType::Fixed);
}

#[test]
fn a_box_of_2_4_6_at_density_1234_has_the_closed_form_mass() {
    // m = rho * 2 * 4 * 6 = 59,232 kg.
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc {
            density: 1234.0,
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::new(1.0, 2.0, 3.0)).unwrap(), Vec3::ZERO)
        })
        .unwrap();
    assert!((w.mass(b).unwrap() - 59_232.0).abs() < 0.5);
}

#[test]
fn static_and_sleeping_bodies_are_not_in_the_awake_set() {
    let mut w = world(0);
    ground(&mut w, 0.5);
    for i in 0..50 {
        w.create_body(&BodyDesc::fixed(
            unit_box(),
            Vec3::new(i as f32 * 3.0, 5.0, 20.0),
        ))
        .unwrap();
    }
    let b = crate::common::cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    assert_eq!(
        w.awake_body_count(),
        1,
        "static bodies are not awake bodies"
    );
    for _ in 0..120 {
        w.step(DT);
    }
    assert!(w.is_sleeping(b).unwrap());
    assert_eq!(w.awake_body_count(), 0);
    // Waking: setting a velocity wakes the island.
    w.set_linear_velocity(b, Vec3::new(1.0, 0.0, 0.0)).unwrap();
    assert!(!w.is_sleeping(b).unwrap());
    assert_eq!(w.awake_body_count(), 1);
}

#[test]
#[allow(deprecated)]
fn the_old_static_name_still_means_fixed_in_expressions_and_patterns() {
    use joule_physics::body::MotionType;
    let desc = BodyDesc::fixed(Shape::sphere(1.0).unwrap(), Vec3::ZERO);
    assert_eq!(desc.motion_type, MotionType::Fixed);
    assert_eq!(MotionType::Static, MotionType::Fixed);
    let named = match desc.motion_type {
        MotionType::Static => "fixed",
        MotionType::Kinematic => "kinematic",
        MotionType::Dynamic => "dynamic",
    };
    assert_eq!(named, "fixed");
}
