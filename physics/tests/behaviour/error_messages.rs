//! Error messages say which field, what was expected and what was given; ids read as
//! `body 2 (generation 0)`, never in Debug form. The tests pin the content, not the
//! wording.

use crate::common::world;
use joule_physics::body::BodyDesc;
use joule_physics::error::PhysicsError;
use joule_physics::joint::{JointDesc, JointKind};
use joule_physics::math::{Isometry, Quat, Vec2, Vec3};
use joule_physics::shape::{Shape, ShapeError};

fn says(err: &impl std::fmt::Display, parts: &[&str]) {
    let text = err.to_string();
    for p in parts {
        assert!(text.contains(p), "{text:?} should name {p:?}");
    }
    assert!(
        !text.contains("BodyId {") && !text.contains("JointId {"),
        "{text:?}: Debug ids"
    );
}

#[test]
fn body_errors_name_the_field_the_expectation_and_the_value() {
    let mut w = world(0);
    let ball = || BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y);
    let cases = [
        (ball().friction(-2.0), "friction", "-2"),
        (ball().restitution(1.5), "restitution", "1.5"),
        (ball().damping(-0.5, 0.0), "linear_damping", "-0.5"),
        (ball().damping(0.0, -0.25), "angular_damping", "-0.25"),
        (ball().rolling_friction(-3.0, 0.0), "rolling_friction", "-3"),
        (ball().gravity_scale(f32::INFINITY), "gravity_scale", "inf"),
        (
            ball().contact_force_threshold(-7.0),
            "contact_force_threshold",
            "-7",
        ),
    ];
    for (desc, field, value) in cases {
        let err = w.create_body(&desc).unwrap_err();
        says(&err, &[field, "expected", value]);
    }
    assert_eq!(w.body_count(), 0, "nothing created");
}

#[test]
fn ids_read_as_index_and_generation() {
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y))
        .unwrap();
    assert_eq!(b.to_string(), "body 0 (generation 0)");
    w.remove_body(b).unwrap();
    let err = w.position(b).unwrap_err();
    assert_eq!(err, PhysicsError::StaleBodyId(b));
    says(&err, &["body 0 (generation 0)", "expected", "live"]);
}

#[test]
fn joint_errors_name_the_joint_field() {
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y))
        .unwrap();
    let frame = Isometry::IDENTITY;
    let skewed = Isometry::new(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 2.0));
    let mut cases = vec![
        (
            JointDesc::new(JointKind::Ball, None, b, skewed, frame),
            "frame_a",
        ),
        (
            JointDesc::new(JointKind::Ball, None, b, frame, skewed),
            "frame_b",
        ),
        (
            JointDesc::new(JointKind::Cone { half_angle: -0.1 }, None, b, frame, frame),
            "kind",
        ),
        (
            JointDesc::new(JointKind::Ball, Some(b), b, frame, frame),
            "body_b",
        ),
    ];
    let mut breaking = JointDesc::new(JointKind::Ball, None, b, frame, frame);
    breaking.break_force = -1.0;
    cases.push((breaking, "break_force"));
    for (desc, field) in cases {
        let err = w.create_joint(&desc).unwrap_err();
        assert!(
            matches!(err, PhysicsError::InvalidJoint { field: f, .. } if f == field),
            "{err:?}"
        );
        says(&err, &["joint", field, "expected"]);
    }
    let err = w
        .joint_frames_at(None, b, Vec3::ZERO, Vec3::ZERO)
        .unwrap_err();
    says(&err, &["axis", "expected"]);
}

#[test]
fn shape_list_errors_say_which_list_and_both_lengths() {
    let err = Shape::height_field(3, 3, Vec2::ONE, [0.0; 8], None).unwrap_err();
    says(&err, &["heights", "expected 9", "got 8"]);
    let err = Shape::height_field(3, 3, Vec2::ONE, [0.0; 9], Some(&[true; 5])).unwrap_err();
    says(&err, &["holes", "expected 4", "got 5"]);
    let v = [Vec3::ZERO, Vec3::X, Vec3::Z];
    let err = Shape::triangle_mesh(&v, &[[0, 1, 2]], Some(&[1, 2, 3])).unwrap_err();
    assert!(matches!(
        err,
        ShapeError::WrongCount {
            expected: 1,
            actual: 3,
            ..
        }
    ));
    says(&err, &["materials", "expected 1", "got 3"]);
    // Through the world's error, the shape's message is kept whole.
    let mut w = world(0);
    let desc = BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y);
    let bad = BodyDesc {
        rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 3.0),
        ..desc
    };
    says(
        &w.create_body(&bad).unwrap_err(),
        &["rotation", "expected", "unit"],
    );
}

#[test]
fn every_world_error_says_what_was_expected() {
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc::fixed(Shape::sphere(0.5).unwrap(), Vec3::ZERO))
        .unwrap();
    let errors = [
        w.set_position(b, Vec3::NAN).unwrap_err(),
        w.set_linear_velocity(b, Vec3::X).unwrap_err(),
        w.create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO).density(0.0))
            .unwrap_err(),
        w.create_body(&BodyDesc::dynamic(
            Shape::half_space(Vec3::Y, 0.0).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap_err(),
        w.create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO).layer(99))
            .unwrap_err(),
        w.set_gravity(Vec3::NAN).unwrap_err(),
    ];
    for err in &errors {
        says(err, &["expected"]);
    }
    says(&errors[0], &["position"]);
    says(&errors[4], &["layer", "99"]);
}
