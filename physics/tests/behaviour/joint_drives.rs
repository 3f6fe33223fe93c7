//! Joint state and drives (issue 30, item 6): hinge, slider, swing and twist read back
//! against closed forms; orientation drives on swing-twist joints against the damped
//! oscillator; motors, limits and the enabled flag changed at runtime.

use crate::common::{DT, G, run, world, world_with};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::joint::{
    AxisDrive, AxisLimit, JointDesc, JointId, JointKind, Motor, OrientationDrive,
};
use joule_physics::math::{Isometry, Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

fn weightless() -> World {
    world_with(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        },
        0,
    )
}

/// A joint of `kind` from the world at `anchor` with its X axis along `axis`.
fn to_world(w: &mut World, kind: JointKind, b: BodyId, anchor: Vec3, axis: Vec3) -> JointId {
    let (fa, fb) = w.joint_frames_at(None, b, anchor, axis).unwrap();
    w.create_joint(&JointDesc::new(kind, None, b, fa, fb))
        .unwrap()
}

fn cube_at(w: &mut World, p: Vec3) -> BodyId {
    w.create_body(&BodyDesc::dynamic(
        Shape::cuboid(Vec3::new(0.3, 0.2, 0.1)).unwrap(),
        p,
    ))
    .unwrap()
}

#[test]
fn a_hinge_driven_at_a_known_speed_reads_angle_omega_t() {
    // A box turning in place about a vertical hinge through its centre, its motor at
    // omega = 1.5 rad/s with ample torque: angle = omega t (the motor reaches its speed
    // within the first substep), speed = omega. Within 1e-3 rad and 1e-4 rad/s.
    let mut w = weightless();
    let b = cube_at(&mut w, Vec3::new(0.0, 1.0, 0.0));
    let motor = Motor::Velocity {
        speed: 1.5,
        max_force: 1e4,
    };
    let hinge = JointKind::Hinge(AxisDrive {
        motor: Some(motor),
        ..AxisDrive::default()
    });
    let j = to_world(&mut w, hinge, b, Vec3::new(0.0, 1.0, 0.0), Vec3::Y);
    let s = w.joint_state(j).unwrap();
    assert_eq!((s.hinge_angle, s.hinge_speed()), (0.0, 0.0));
    for step in 1..=60 {
        w.step(DT);
        let s = w.joint_state(j).unwrap();
        let t = step as f32 * DT;
        assert!((s.hinge_speed() - 1.5).abs() < 1e-4, "step {step}: {s:?}");
        assert!(
            (s.hinge_angle - 1.5 * t).abs() < 1e-3,
            "step {step}: angle {} vs {}",
            s.hinge_angle,
            1.5 * t
        );
    }
    // A new speed set at runtime holds from the next step.
    w.set_joint_motor(
        j,
        Some(Motor::Velocity {
            speed: -0.5,
            max_force: 1e4,
        }),
    )
    .unwrap();
    w.step(DT);
    let s = w.joint_state(j).unwrap();
    assert!((s.hinge_speed() + 0.5).abs() < 1e-4, "{s:?}");
}

/// A slider hanging from the world at `top`, axis straight down, with a 0.2 m box.
fn drop_slider(w: &mut World, top: Vec3, limit: Option<AxisLimit>) -> (BodyId, JointId) {
    let b = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.2)).unwrap(),
            top,
        ))
        .unwrap();
    let slider = JointKind::Slider(AxisDrive {
        limit,
        ..AxisDrive::default()
    });
    (b, to_world(w, slider, b, top, Vec3::NEG_Y))
}

#[test]
fn a_slider_under_gravity_reads_half_g_t_squared_until_its_limit() {
    // Along a vertical slider the box falls freely: after n substeps of h the
    // integrator's position is g h² n (n + 1) / 2 = ½ g t² (1 + 1/n) (symplectic Euler's
    // closed form) and the speed g t. Within 0.1 % and 1e-4 m/s. Then the limit at 1 m
    // stops it there (to 2 mm).
    let mut w = world(0);
    let (_, j) = drop_slider(
        &mut w,
        Vec3::new(0.0, 5.0, 0.0),
        Some(AxisLimit {
            lower: -1.0,
            upper: 1.0,
        }),
    );
    let substeps = w.desc().solver.substeps as f32;
    for step in 1..=20 {
        w.step(DT);
        let s = w.joint_state(j).unwrap();
        let t = step as f32 * DT;
        let n = step as f32 * substeps;
        let x = 0.5 * G * t * t * (1.0 + 1.0 / n);
        assert!(
            (s.slider_position() / x - 1.0).abs() < 1e-3,
            "step {step}: {} vs {x}",
            s.slider_position()
        );
        assert!(
            (s.slider_speed() - G * t).abs() < 1e-4,
            "step {step}: {s:?}"
        );
        assert!(s.offset.y.abs() < 1e-4 && s.offset.z.abs() < 1e-4, "{s:?}");
    }
    run(&mut w, 60);
    let s = w.joint_state(j).unwrap();
    assert!((s.slider_position() - 1.0).abs() < 2e-3, "{s:?}");
    assert!(s.slider_speed().abs() < 1e-2, "{s:?}");
}

#[test]
fn limits_set_at_runtime_act_in_the_next_step() {
    // A slider falling freely gets a limit at 0.3 m when it is at about 0.35 m, moving
    // at 2.6 m/s: the next step ends with the box at the limit, at rest along the axis.
    let mut w = world(0);
    let (_, j) = drop_slider(&mut w, Vec3::new(0.0, 5.0, 0.0), None);
    run(&mut w, 16);
    let before = w.joint_state(j).unwrap();
    assert!(before.slider_position() > 0.3 && before.slider_speed() > 2.0);
    w.set_joint_limits(
        j,
        Some(AxisLimit {
            lower: -0.3,
            upper: 0.3,
        }),
    )
    .unwrap();
    w.step(DT);
    let s = w.joint_state(j).unwrap();
    assert!(s.slider_speed().abs() < 0.5, "stopped: {s:?}");
    assert!(s.slider_position() < before.slider_position(), "{s:?}");
    run(&mut w, 30);
    let s = w.joint_state(j).unwrap();
    assert!((s.slider_position() - 0.3).abs() < 2e-3, "{s:?}");
    // Removed again, it falls on.
    w.set_joint_limits(j, None).unwrap();
    run(&mut w, 10);
    assert!(w.joint_state(j).unwrap().slider_position() > 0.4);
}

#[test]
fn swing_and_twist_read_back_as_built() {
    // Frame B built as swing(-0.5 rad about Y: X tips toward +Z) * twist(0.3 rad about
    // X) from frame A: the state reads twist 0.3, swing 0.5 and the swing's angles about
    // Y and Z as (-0.5, 0).
    let mut w = weightless();
    let twist = Quat::from_rotation_x(0.3);
    let swing = Quat::from_rotation_y(-0.5);
    let b = w
        .create_body(
            &BodyDesc::dynamic(Shape::sphere(0.2).unwrap(), Vec3::new(1.0, 2.0, 3.0))
                .rotation(swing * twist),
        )
        .unwrap();
    let desc = JointDesc::new(
        JointKind::SwingTwist {
            swing_half_angle: 1.0,
            twist: AxisLimit {
                lower: -1.0,
                upper: 1.0,
            },
        },
        None,
        b,
        Isometry::from_translation(Vec3::new(1.0, 2.0, 3.0)),
        Isometry::IDENTITY,
    );
    let j = w.create_joint(&desc).unwrap();
    let s = w.joint_state(j).unwrap();
    assert!((s.twist - 0.3).abs() < 1e-5, "{s:?}");
    assert!((s.swing - 0.5).abs() < 1e-5, "{s:?}");
    assert!(
        (s.swing_yz[0] + 0.5).abs() < 1e-5 && s.swing_yz[1].abs() < 1e-5,
        "{s:?}"
    );
    assert!(s.rotation.angle_between(swing * twist) < 1e-5);
    assert!(s.offset.length() < 1e-6);
}

/// A box turning in place about a swing-twist joint at its centre (no gravity), driven
/// toward `target`.
fn driven_box(drive: OrientationDrive) -> (World, JointId) {
    let mut w = weightless();
    let b = cube_at(&mut w, Vec3::new(0.0, 1.0, 0.0));
    let kind = JointKind::SwingTwist {
        swing_half_angle: std::f32::consts::PI,
        twist: AxisLimit {
            lower: -std::f32::consts::PI,
            upper: std::f32::consts::PI,
        },
    };
    let j = to_world(&mut w, kind, b, Vec3::new(0.0, 1.0, 0.0), Vec3::X);
    w.set_joint_drive(j, Some(drive)).unwrap();
    (w, j)
}

#[test]
fn a_critically_damped_drive_settles_as_the_closed_form_without_overshoot() {
    // Target: 1 rad about frame Z. At damping ratio 1 the error decays as
    // (1 + w t) e^(-w t), w = 2 pi f, whatever the box's inertia. The solver's spring is
    // an implicit Euler step (a little more damped than the closed form): within
    // 0.02 rad over the whole second, and the angle never passes the target.
    let (hertz, angle) = (1.5f32, 1.0f32);
    let target = Quat::from_rotation_z(angle);
    let (mut w, j) = driven_box(OrientationDrive::Spring {
        target,
        hertz,
        damping_ratio: 1.0,
        max_torque: 1e6,
    });
    let omega = 2.0 * std::f32::consts::PI * hertz;
    let mut worst: f32 = 0.0;
    for step in 1..=90 {
        w.step(DT);
        let t = step as f32 * DT;
        let s = w.joint_state(j).unwrap();
        let error = s.rotation.angle_between(target);
        let expected = angle * (1.0 + omega * t) * (-omega * t).exp();
        worst = worst.max((error - expected).abs());
        assert!(s.swing <= angle + 1e-5, "step {step}: overshoot {s:?}");
        assert!(s.twist.abs() < 1e-4, "step {step}: {s:?}");
    }
    assert!(
        worst < 0.02,
        "largest deviation from the closed form {worst}"
    );
    assert!(w.joint_state(j).unwrap().rotation.angle_between(target) < 1e-3);
}

#[test]
fn a_drive_torque_limit_caps_the_acceleration() {
    // With at most tau = 0.01 N·m on a box of inertia I about Z, the angle after t is at
    // most tau t² / (2 I) (the torque's whole effect), and reaches most of it.
    let (mut w, j) = driven_box(OrientationDrive::Spring {
        target: Quat::from_rotation_z(1.0),
        hertz: 4.0,
        damping_ratio: 1.0,
        max_torque: 0.01,
    });
    let b = w.bodies().next().unwrap().id();
    let inertia = w.inertia_world(b).unwrap().unwrap().z_axis.z;
    run(&mut w, 30);
    let t = 30.0 * DT;
    let bound = 0.01 * t * t / (2.0 * inertia);
    let swing = w.joint_state(j).unwrap().swing;
    assert!(
        swing <= bound * 1.01 && swing > 0.9 * bound,
        "swing {swing}, bound {bound}"
    );
}

#[test]
fn a_velocity_drive_spins_the_limb_at_its_target() {
    let (mut w, j) = driven_box(OrientationDrive::Velocity {
        angular_velocity: Vec3::new(0.0, 0.0, 0.8),
        max_torque: 1e4,
    });
    run(&mut w, 30);
    let s = w.joint_state(j).unwrap();
    assert!(
        (s.angular_velocity - Vec3::new(0.0, 0.0, 0.8)).length() < 1e-4,
        "{s:?}"
    );
    assert!((s.swing - 0.4).abs() < 2e-3, "{s:?}");
    // Removed, the box keeps its spin (nothing brakes it).
    w.set_joint_drive(j, None).unwrap();
    assert_eq!(w.joint_drive(j).unwrap(), None);
    run(&mut w, 10);
    assert!((w.joint_state(j).unwrap().angular_velocity.z - 0.8).abs() < 1e-4);
}

#[test]
fn a_disabled_hinge_lets_the_door_fall_and_holds_it_again_when_enabled() {
    // A door hinged to the world about a vertical axis at its edge. Disabled, it falls
    // freely (½ g t² over 10 steps, within 2 %); enabled again, the hinge pulls it back
    // and holds it (its anchor within 5 mm of the hinge's).
    let mut w = world(0);
    let door = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::new(0.5, 0.8, 0.05)).unwrap(),
            Vec3::new(0.5, 2.0, 0.0),
        ))
        .unwrap();
    let j = to_world(
        &mut w,
        JointKind::Hinge(AxisDrive::default()),
        door,
        Vec3::new(0.0, 2.0, 0.0),
        Vec3::Y,
    );
    run(&mut w, 30);
    let held = w.position(door).unwrap().y;
    assert!((held - 2.0).abs() < 0.01, "held at {held}");
    w.set_joint_enabled(j, false).unwrap();
    assert!(!w.is_joint_enabled(j).unwrap() && w.contains_joint(j));
    run(&mut w, 10);
    let drop = held - w.position(door).unwrap().y;
    let t = 10.0 * DT;
    assert!(
        (drop / (0.5 * G * t * t) - 1.0).abs() < 0.02,
        "fell {drop} in {t} s"
    );
    w.set_joint_enabled(j, true).unwrap();
    run(&mut w, 60);
    let s = w.joint_state(j).unwrap();
    assert!(s.offset.length() < 5e-3, "{s:?}");
    assert!((w.position(door).unwrap().y - 2.0).abs() < 0.01);
}

#[test]
fn wrong_kinds_and_bad_values_are_refused_by_name() {
    let mut w = weightless();
    let b = cube_at(&mut w, Vec3::ZERO);
    let hinge = to_world(
        &mut w,
        JointKind::Hinge(AxisDrive::default()),
        b,
        Vec3::ZERO,
        Vec3::X,
    );
    let drive = OrientationDrive::Velocity {
        angular_velocity: Vec3::X,
        max_torque: 1.0,
    };
    let err = w.set_joint_drive(hinge, Some(drive)).unwrap_err();
    assert!(matches!(
        err,
        PhysicsError::WrongJointKind { found: "hinge", .. }
    ));
    assert!(err.to_string().contains("swing-twist"), "{err}");
    let c = cube_at(&mut w, Vec3::new(2.0, 0.0, 0.0));
    let cone = to_world(
        &mut w,
        JointKind::Cone { half_angle: 0.5 },
        c,
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::X,
    );
    let err = w
        .set_joint_drive(
            cone,
            Some(OrientationDrive::Spring {
                target: Quat::IDENTITY,
                hertz: -1.0,
                damping_ratio: 1.0,
                max_torque: 1.0,
            }),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "joint setting hertz: expected finite and > 0, got -1"
    );
    assert_eq!(
        w.joint_drive(cone).unwrap(),
        None,
        "an error changes nothing"
    );
    let err = w
        .set_joint_limits(
            hinge,
            Some(AxisLimit {
                lower: 1.0,
                upper: 0.0,
            }),
        )
        .unwrap_err();
    assert!(matches!(
        err,
        PhysicsError::InvalidJointSetting {
            field: "limit.lower",
            ..
        }
    ));
    assert!(matches!(
        w.set_joint_motor(cone, None),
        Err(PhysicsError::WrongJointKind { found: "cone", .. })
    ));
}

#[test]
fn a_disabled_joint_no_longer_keeps_its_bodies_in_one_island() {
    // Two crates on the ground joined by a rigid 3 m distance joint; a constant force
    // drags the first, so the second is dragged along and neither sleeps. Disabled, the
    // joint lets the second stop and fall asleep while the first slides on: their
    // islands split as if the joint were gone. It keeps its id and holds once enabled.
    let mut w = world(0);
    crate::common::ground(&mut w, 0.5);
    let crate_at = |w: &mut World, x: f32| {
        w.create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.25)).unwrap(),
            Vec3::new(x, 0.25, 0.0),
        ))
        .unwrap()
    };
    let (a, b) = (crate_at(&mut w, 0.0), crate_at(&mut w, -3.0));
    let (fa, _) = w
        .joint_frames_at(Some(a), b, Vec3::new(0.0, 0.25, 0.0), Vec3::X)
        .unwrap();
    let (_, fb) = w
        .joint_frames_at(Some(a), b, Vec3::new(-3.0, 0.25, 0.0), Vec3::X)
        .unwrap();
    let rope = JointKind::Distance {
        min: 3.0,
        max: 3.0,
        spring: None,
    };
    let j = w
        .create_joint(&JointDesc::new(rope, Some(a), b, fa, fb))
        .unwrap();
    // Friction on both is 0.5 * m g; pull with more than both.
    let weight = w.mass(a).unwrap() * G;
    w.set_constant_force(a, Vec3::new(1.5 * weight, 0.0, 0.0))
        .unwrap();
    run(&mut w, 120);
    assert!(!w.is_sleeping(a).unwrap() && !w.is_sleeping(b).unwrap());
    assert!(w.linear_velocity(b).unwrap().x > 0.5, "b is dragged");
    w.set_joint_enabled(j, false).unwrap();
    run(&mut w, 180);
    assert!(w.is_sleeping(b).unwrap(), "b stopped and sleeps alone");
    assert!(!w.is_sleeping(a).unwrap(), "a slides on");
    assert!(w.contains_joint(j) && !w.is_joint_enabled(j).unwrap());
}
