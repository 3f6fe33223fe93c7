//! Locked axes (issue 30, item 4): a locked coordinate never moves, not by torque, not by
//! collisions or joints, not by rounding. Every check here is bit equality with the
//! start value, as the issue asks ("exact").

use crate::common::{DT, ground, run, world};
use joule_physics::body::{BodyDesc, BodyId, LockedAxes};
use joule_physics::joint::{AxisDrive, JointDesc, JointKind};
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::world::World;

fn bits(v: Vec3) -> [u32; 3] {
    v.to_array().map(f32::to_bits)
}

fn quat_bits(q: Quat) -> [u32; 4] {
    q.to_array().map(f32::to_bits)
}

/// Boxes thrown at `target` from the side, at `height`, one every few steps.
fn throw_boxes(w: &mut World, target: Vec3, height: f32, count: usize) -> Vec<BodyId> {
    (0..count)
        .map(|i| {
            let side = if i % 2 == 0 { -1.0 } else { 1.0 };
            let z = 0.3 * (i % 3) as f32 - 0.3;
            let p = target + Vec3::new(3.0 * side, height, z);
            w.create_body(
                &BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.2)).unwrap(), p)
                    .linear_velocity(Vec3::new(-12.0 * side, 1.0, -z * 3.0))
                    .density(2000.0),
            )
            .unwrap()
        })
        .collect()
}

#[test]
fn a_rotation_locked_capsule_never_tips_under_torque_and_impacts() {
    // A standing capsule with every rotation locked, a 1000 N·m torque about a
    // horizontal axis and about the vertical, and boxes thrown at its shoulders: its
    // orientation keeps its bits and its angular velocity stays zero.
    let mut w = world(0);
    ground(&mut w, 0.5);
    let start = Quat::from_rotation_y(0.3);
    let capsule = w
        .create_body(
            &BodyDesc::dynamic(Shape::capsule(0.6, 0.3).unwrap(), Vec3::new(0.0, 0.9, 0.0))
                .rotation(start)
                .locked_axes(LockedAxes::ROTATION)
                .allow_sleep(false),
        )
        .unwrap();
    w.set_constant_torque(capsule, Vec3::new(1000.0, 1000.0, 0.0))
        .unwrap();
    let x0 = w.position(capsule).unwrap();
    let mut hits = 0;
    for step in 0..240 {
        if step % 20 == 0 && step < 160 {
            throw_boxes(&mut w, x0, 0.8 + 0.1 * (step / 20) as f32, 1);
        }
        w.step(DT);
        let b = w.body(capsule).unwrap();
        assert_eq!(
            quat_bits(b.rotation()),
            quat_bits(start),
            "step {step}: rotation moved"
        );
        assert_eq!(b.angular_velocity(), Vec3::ZERO, "step {step}");
        hits += usize::from(w.contacts_of(capsule).unwrap().count() > 1);
    }
    // The boxes did hit it (it slid), so the lock held against real impacts.
    let moved = (w.position(capsule).unwrap() - x0).length();
    assert!(hits > 0 && moved > 0.01, "hits {hits}, moved {moved}");
}

/// The 2D scene: a pile of plane-locked boxes turned about Z, a plane-locked pendulum
/// hinged to the world about Z that swings into the pile, a plane-locked pair joined by a
/// ball joint, and free spheres thrown in with Z velocity.
struct Plane {
    world: World,
    locked: Vec<BodyId>,
}

fn plane_scene(threads: usize) -> Plane {
    let mut w = world(threads);
    ground(&mut w, 0.6);
    let mut locked = Vec::new();
    let plane = |shape: Shape, p: Vec3, angle: f32| {
        BodyDesc::dynamic(shape, p)
            .rotation(Quat::from_rotation_z(angle))
            .locked_axes(LockedAxes::PLANE_XY)
    };
    for col in 0..3 {
        for row in 0..4 {
            let p = Vec3::new(0.9 * col as f32, 0.4 + 0.82 * row as f32, 0.0);
            let shape = Shape::cuboid(Vec3::splat(0.4)).unwrap();
            locked.push(
                w.create_body(&plane(shape, p, 0.05 * (col * 4 + row) as f32))
                    .unwrap(),
            );
        }
    }
    // A pendulum from the world, hinged about Z at (-2, 4, 0), starting horizontal.
    let bob = w
        .create_body(&plane(
            Shape::cuboid(Vec3::new(0.9, 0.15, 0.15)).unwrap(),
            Vec3::new(-3.0, 4.0, 0.0),
            0.0,
        ))
        .unwrap();
    let (fa, fb) = w
        .joint_frames_at(None, bob, Vec3::new(-2.0, 4.0, 0.0), Vec3::Z)
        .unwrap();
    w.create_joint(&JointDesc::new(
        JointKind::Hinge(AxisDrive::default()),
        None,
        bob,
        fa,
        fb,
    ))
    .unwrap();
    locked.push(bob);
    // Two plane bodies joined by a ball joint, dropped onto the pile.
    let a = w
        .create_body(&plane(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(0.4, 5.0, 0.0),
            0.0,
        ))
        .unwrap();
    let b = w
        .create_body(&plane(
            Shape::cuboid(Vec3::new(0.3, 0.2, 0.2)).unwrap(),
            Vec3::new(1.2, 5.2, 0.0),
            0.4,
        ))
        .unwrap();
    let (fa, fb) = w
        .joint_frames_at(Some(a), b, Vec3::new(0.8, 5.1, 0.0), Vec3::X)
        .unwrap();
    w.create_joint(&JointDesc::new(JointKind::Ball, Some(a), b, fa, fb))
        .unwrap();
    locked.extend([a, b]);
    // Free spheres flying in with Z velocity: they push the locked boxes along Z.
    for i in 0..6 {
        let p = Vec3::new(-0.5 + 0.6 * i as f32, 1.0 + 0.5 * i as f32, 3.0);
        w.create_body(
            &BodyDesc::dynamic(Shape::sphere(0.25).unwrap(), p)
                .linear_velocity(Vec3::new(0.5, 1.0, -10.0))
                .density(3000.0),
        )
        .unwrap();
    }
    Plane { world: w, locked }
}

#[test]
fn a_plane_locked_pile_keeps_z_and_its_tilt_through_collisions_and_joints() {
    // Every plane-locked body keeps the bits of its centre's Z, its origin's Z and its
    // quaternion's X and Y components (it starts turned about Z only), while the pile
    // is knocked about in X and Y.
    let Plane { mut world, locked } = plane_scene(0);
    let start: Vec<_> = locked
        .iter()
        .map(|&id| {
            let b = world.body(id).unwrap();
            (b.position(), b.center_of_mass(), b.rotation())
        })
        .collect();
    let mut moved: f32 = 0.0;
    for step in 0..300 {
        world.step(DT);
        for (&id, &(p0, c0, q0)) in locked.iter().zip(&start) {
            let b = world.body(id).unwrap();
            let (p, c, q) = (b.position(), b.center_of_mass(), b.rotation());
            assert_eq!(
                p.z.to_bits(),
                p0.z.to_bits(),
                "step {step}: {id:?} origin z"
            );
            assert_eq!(
                c.z.to_bits(),
                c0.z.to_bits(),
                "step {step}: {id:?} centre z"
            );
            assert_eq!(
                [q.x.to_bits(), q.y.to_bits()],
                [q0.x.to_bits(), q0.y.to_bits()],
                "step {step}: {id:?} tilt {q:?}"
            );
            let (v, om) = (b.linear_velocity(), b.angular_velocity());
            assert_eq!((v.z, om.x, om.y), (0.0, 0.0, 0.0), "step {step}: {id:?}");
            moved = moved.max((p - p0).length());
        }
    }
    assert!(moved > 0.5, "the scene moved the locked bodies: {moved}");
    // The hinged pendulum swung (its bob is not where it started) and stayed on its
    // hinge (its centre 1 m from the pivot, to the joint's softness).
    let bob = locked[12];
    let c = world.body(bob).unwrap().center_of_mass();
    let arm = (c - Vec3::new(-2.0, 4.0, 0.0)).length();
    assert!((arm - 1.0).abs() < 0.01, "pendulum arm {arm}");
}

#[test]
fn the_plane_scene_is_deterministic_across_thread_counts() {
    let mut a = plane_scene(0);
    let mut b = plane_scene(2);
    for step in 0..200 {
        a.world.step(DT);
        b.world.step(DT);
        assert_eq!(
            a.world.state_hash(),
            b.world.state_hash(),
            "step {step}: 0 and 2 workers differ"
        );
    }
}

#[test]
fn a_body_locked_in_y_does_not_fall_and_is_not_pushed_down() {
    // Gravity and a box landing on it: y keeps its bits, the velocity's Y stays zero,
    // and X and Z stay free (a sideways push moves it).
    let mut w = world(0);
    let p0 = Vec3::new(0.0, 2.0, 0.0);
    let shelf = w
        .create_body(
            &BodyDesc::dynamic(Shape::cuboid(Vec3::new(1.0, 0.1, 1.0)).unwrap(), p0)
                .locked_axes(LockedAxes::TRANSLATION_Y | LockedAxes::ROTATION),
        )
        .unwrap();
    let load = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.3)).unwrap(),
            Vec3::new(0.2, 3.5, 0.1),
        ))
        .unwrap();
    for step in 0..180 {
        w.step(DT);
        let b = w.body(shelf).unwrap();
        assert_eq!(b.position().y.to_bits(), p0.y.to_bits(), "step {step}");
        assert_eq!(b.linear_velocity().y, 0.0, "step {step}");
    }
    // The load rests on the shelf (0.1 + 0.3 above its centre, to the contact's sag).
    let y = w.position(load).unwrap().y;
    assert!((y - 2.4).abs() < 0.01, "load at {y}");
    w.apply_impulse(shelf, Vec3::new(4000.0, -4000.0, 0.0))
        .unwrap();
    run(&mut w, 10);
    let p = w.position(shelf).unwrap();
    assert_eq!(p.y.to_bits(), p0.y.to_bits());
    assert!(p.x > 0.1, "X is free: {p}");
}

#[test]
fn locks_set_at_runtime_take_hold_at_once_and_read_back() {
    let mut w = world(0);
    let b = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(0.0, 10.0, 0.0),
        ))
        .unwrap();
    run(&mut w, 30);
    assert!(w.body(b).unwrap().linear_velocity().y < -4.0);
    let axes = LockedAxes::TRANSLATION_Y | LockedAxes::TRANSLATION_Z;
    w.set_locked_axes(b, axes).unwrap();
    assert_eq!(w.body(b).unwrap().locked_axes(), axes);
    assert_eq!(w.locked_axes(b).unwrap(), axes);
    assert_eq!(w.body(b).unwrap().linear_velocity().y, 0.0);
    let y = w.position(b).unwrap().y;
    run(&mut w, 60);
    assert_eq!(w.position(b).unwrap().y.to_bits(), y.to_bits());
    // Unlocked again, it falls again: a free fall from rest, y = y0 - g t² / 2 (to the
    // integrator's first-order start, 2 %).
    w.set_locked_axes(b, LockedAxes::empty()).unwrap();
    run(&mut w, 30);
    let fall = y - w.position(b).unwrap().y;
    let expected = 0.5 * 9.81 * 0.25;
    assert!(
        (fall / expected - 1.0).abs() < 0.02,
        "fell {fall}, expected {expected}"
    );
    // A stale id is an error.
    w.remove_body(b).unwrap();
    assert!(w.set_locked_axes(b, axes).is_err());
}

#[test]
fn a_spin_about_a_free_axis_is_kept_and_the_locked_ones_never_start() {
    // A plane-locked box spun about Z keeps spinning about Z only (a 2D body has no
    // gyroscopic coupling), and an off-axis initial spin loses its locked components at
    // creation.
    let mut w = world(0);
    let b = w
        .create_body(
            &BodyDesc::dynamic(
                Shape::cuboid(Vec3::new(0.5, 0.2, 0.1)).unwrap(),
                Vec3::new(0.0, 5.0, 0.0),
            )
            .angular_velocity(Vec3::new(3.0, -2.0, 4.0))
            .gravity_scale(0.0)
            .locked_axes(LockedAxes::PLANE_XY),
        )
        .unwrap();
    assert_eq!(
        bits(w.body(b).unwrap().angular_velocity()),
        bits(Vec3::new(0.0, 0.0, 4.0))
    );
    run(&mut w, 60);
    let body = w.body(b).unwrap();
    let spin = body.angular_velocity();
    // The gyroscopic step's energy rescale rounds in the last bits (f32, 1e-5).
    assert_eq!((spin.x, spin.y), (0.0, 0.0));
    assert!((spin.z - 4.0).abs() < 1e-4, "spin {spin}");
    let q = body.rotation();
    assert_eq!((q.x, q.y), (0.0, 0.0));
    // Turned by 4 rad about Z in one second (to the integrator's rounding).
    let (axis, angle) = q.to_axis_angle();
    let turned = if axis.z < 0.0 {
        std::f32::consts::TAU - angle
    } else {
        angle
    };
    assert!((turned - 4.0).abs() < 1e-3, "turned {turned}");
}

#[test]
fn a_fixed_joint_holds_the_free_rotation_of_a_plane_locked_body() {
    // Welded to the world, a plane body under a torque about Z and a force along X stays
    // put: the joint's angular and point blocks are singular along the locked axes and
    // are inverted on the free ones (without that they would be dropped whole and the
    // body would spin and slide away).
    let mut w = world(0);
    let p0 = Vec3::new(0.0, 2.0, 0.0);
    let b = w
        .create_body(
            &BodyDesc::dynamic(Shape::cuboid(Vec3::new(0.4, 0.2, 0.1)).unwrap(), p0)
                .locked_axes(LockedAxes::PLANE_XY),
        )
        .unwrap();
    let (fa, fb) = w.joint_frames_at(None, b, p0, Vec3::X).unwrap();
    w.create_joint(&JointDesc::new(JointKind::Fixed, None, b, fa, fb))
        .unwrap();
    w.set_constant_torque(b, Vec3::new(30.0, 30.0, 30.0))
        .unwrap();
    w.set_constant_force(b, Vec3::new(100.0, 0.0, 100.0))
        .unwrap();
    run(&mut w, 120);
    let body = w.body(b).unwrap();
    let (axis, angle) = body.rotation().to_axis_angle();
    assert!(angle < 1e-3, "turned {angle} about {axis}");
    assert!(
        (body.position() - p0).length() < 1e-3,
        "{}",
        body.position()
    );
    assert_eq!(body.position().z.to_bits(), p0.z.to_bits());
}

/// A kinematic body keeps the locks it was given (they bind dynamic bodies only), reads
/// them back, and the moment it turns dynamic its locked velocity components are gone:
/// its rotation then keeps its bits through a spin it had as a kinematic body.
#[test]
fn a_kinematic_body_turned_dynamic_takes_up_its_locks() {
    let mut w = world(0);
    ground(&mut w, 0.5);
    let id = w
        .create_body(
            &BodyDesc::kinematic(
                Shape::cuboid(Vec3::splat(0.3)).unwrap(),
                Vec3::new(0.0, 2.0, 0.0),
            )
            .angular_velocity(Vec3::new(0.0, 3.0, 1.0))
            .locked_axes(LockedAxes::ROTATION),
        )
        .unwrap();
    assert_eq!(w.body_desc(id).unwrap().locked_axes, LockedAxes::ROTATION);
    run(&mut w, 10);
    assert_ne!(
        w.rotation(id).unwrap(),
        Quat::IDENTITY,
        "the kinematic body spun"
    );
    w.set_motion_type(id, joule_physics::body::MotionType::Dynamic)
        .unwrap();
    assert_eq!(bits(w.angular_velocity(id).unwrap()), bits(Vec3::ZERO));
    let q = w.rotation(id).unwrap();
    run(&mut w, 120);
    assert_eq!(quat_bits(w.rotation(id).unwrap()), quat_bits(q));
    assert!(w.position(id).unwrap().y < 0.5, "it fell to the ground");
    assert_eq!(w.body_desc(id).unwrap().locked_axes, LockedAxes::ROTATION);
}

/// Velocity setters and impulses drop a dynamic body's locked components at once: what
/// is read back is what the step will use.
#[test]
fn velocities_set_on_a_locked_body_read_back_without_their_locked_parts() {
    let mut w = world(0);
    let id = w
        .create_body(
            &BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.3)).unwrap(),
                Vec3::new(0.0, 2.0, 0.0),
            )
            .locked_axes(LockedAxes::PLANE_XY),
        )
        .unwrap();
    w.set_linear_velocity(id, Vec3::new(1.0, 2.0, 3.0)).unwrap();
    w.set_angular_velocity(id, Vec3::new(4.0, 5.0, 6.0))
        .unwrap();
    assert_eq!(w.linear_velocity(id).unwrap(), Vec3::new(1.0, 2.0, 0.0));
    assert_eq!(w.angular_velocity(id).unwrap(), Vec3::new(0.0, 0.0, 6.0));
    w.apply_impulse_at(id, Vec3::new(0.0, 0.0, 50.0), Vec3::new(0.3, 2.3, 0.0))
        .unwrap();
    let (v, a) = (
        w.linear_velocity(id).unwrap(),
        w.angular_velocity(id).unwrap(),
    );
    assert_eq!(
        (v.z.to_bits(), a.x.to_bits(), a.y.to_bits()),
        (0, 0, 0),
        "{v} {a}"
    );
}
