//! Mass properties set by the user (issue 13, item 6) and bodies without shapes (item 8).
//!
//! Expected values are closed forms: a cuboid's inertia about its centre is
//! `m (b² + c²) / 3` for half extents `b`, `c` across the axis; an impulse `J` at offset
//! `r` from the centre of mass changes the angular velocity by `I⁻¹ (r × J)`; the
//! parallel-axis theorem gives the inertia about a shifted centre. Tolerances are f32
//! rounding of the few operations involved (1e-5 relative) unless a test says otherwise.

use crate::common::{DT, G, ground, run, world};
use joule_physics::aabb::Aabb;
use joule_physics::body::BodyDesc;
use joule_physics::error::PhysicsError;
use joule_physics::mass::MassSpec;
use joule_physics::math::{Mat3A, Quat, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::ray::Ray;
use joule_physics::shape::{MassProperties, Shape};
use joule_physics::solver::SolverSettings;

fn close(a: Mat3A, b: Mat3A, tol: f32) -> bool {
    let scale = b.to_cols_array().iter().fold(0f32, |m, x| m.max(x.abs()));
    (a - b)
        .to_cols_array()
        .iter()
        .all(|d| d.abs() <= tol * scale.max(1.0))
}

fn props(mass: f32, inertia: Mat3A, center: Vec3) -> MassProperties {
    MassProperties {
        mass,
        center_of_mass: center.into(),
        inertia,
    }
}

#[test]
fn a_mass_override_keeps_the_shapes_inertia_distribution() {
    let mut w = world(0);
    let half = Vec3::new(0.5, 1.0, 1.5);
    let id = w
        .create_body(&BodyDesc {
            mass: MassSpec::Mass(12.0),
            ..BodyDesc::dynamic(Shape::cuboid(half).unwrap(), Vec3::ZERO)
        })
        .unwrap();
    assert_eq!(w.mass(id).unwrap(), 12.0);
    // Closed form for a uniform cuboid of mass 12.
    let expect = Vec3::new(
        12.0 * (1.0 + 2.25) / 3.0,
        12.0 * (0.25 + 2.25) / 3.0,
        12.0 * (0.25 + 1.0) / 3.0,
    );
    let inertia = w.inertia_local(id).unwrap().unwrap();
    assert!(
        close(inertia, Mat3A::from_diagonal(expect), 1e-5),
        "{inertia:?}"
    );
    let (moments, _) = w.principal_inertia(id).unwrap().unwrap();
    let mut sorted = expect.to_array();
    sorted.sort_by(f32::total_cmp);
    assert!((moments - Vec3::from_array(sorted)).abs().max_element() < 1e-4 * 13.0);
}

#[test]
fn full_mass_properties_are_used_as_given_and_read_back_in_both_frames() {
    let mut w = world(0);
    // A non-diagonal tensor: diag(2, 3, 4) turned by 0.6 rad about a skew axis.
    let turn = Mat3A::from_quat(Quat::from_axis_angle(
        Vec3::new(1.0, 1.0, 0.0).normalize(),
        0.6,
    ));
    let inertia = turn * Mat3A::from_diagonal(Vec3::new(2.0, 3.0, 4.0)) * turn.transpose();
    let rotation = Quat::from_rotation_z(0.9);
    let id = w
        .create_body(&BodyDesc {
            mass: MassSpec::Properties(props(5.0, inertia, Vec3::new(0.1, 0.0, 0.0))),
            rotation,
            ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::new(0.0, 3.0, 0.0))
        })
        .unwrap();
    assert_eq!(w.mass(id).unwrap(), 5.0);
    assert_eq!(
        w.local_center_of_mass(id).unwrap(),
        Vec3::new(0.1, 0.0, 0.0)
    );
    assert!(close(w.inertia_local(id).unwrap().unwrap(), inertia, 1e-5));
    assert!(close(
        w.inverse_inertia_local(id).unwrap(),
        inertia.inverse(),
        1e-5
    ));
    let r = Mat3A::from_quat(rotation);
    let world_inertia = r * inertia * r.transpose();
    assert!(close(
        w.inertia_world(id).unwrap().unwrap(),
        world_inertia,
        1e-5
    ));
    assert!(close(
        w.inverse_inertia_world(id).unwrap(),
        world_inertia.inverse(),
        1e-5
    ));
    let (moments, axes) = w.principal_inertia(id).unwrap().unwrap();
    assert!((moments - Vec3::new(2.0, 3.0, 4.0)).abs().max_element() < 1e-4);
    let back =
        Mat3A::from_quat(axes) * Mat3A::from_diagonal(moments) * Mat3A::from_quat(axes).transpose();
    assert!(close(back, inertia, 1e-5));

    // Dynamics use it: an impulse J at offset r from the centre of mass turns the body
    // by I_world⁻¹ (r × J).
    let center = w.center_of_mass(id).unwrap();
    let (j, r_off) = (Vec3::new(0.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 0.0));
    w.apply_impulse_at(id, j, center + r_off).unwrap();
    let expect = world_inertia.inverse() * Vec3A::from(r_off.cross(j));
    let got = Vec3A::from(w.angular_velocity(id).unwrap());
    assert!(
        (got - expect).length() < 1e-5 * expect.length(),
        "{got:?} vs {expect:?}"
    );
}

#[test]
fn a_centre_of_mass_offset_moves_the_centre_and_shifts_the_inertia() {
    let mut w = world(0);
    let half = Vec3::new(1.0, 0.25, 0.5);
    let offset = Vec3::new(0.0, -0.2, 0.1);
    let plain = w
        .create_body(&BodyDesc::dynamic(Shape::cuboid(half).unwrap(), Vec3::ZERO))
        .unwrap();
    let shifted = w
        .create_body(&BodyDesc {
            center_of_mass_offset: offset,
            ..BodyDesc::dynamic(Shape::cuboid(half).unwrap(), Vec3::new(5.0, 0.0, 0.0))
        })
        .unwrap();
    let m = w.mass(plain).unwrap();
    assert_eq!(w.mass(shifted).unwrap(), m);
    assert_eq!(w.local_center_of_mass(shifted).unwrap(), offset);
    // Parallel axis: I + m (|d|² E - d dᵀ).
    let d = Vec3A::from(offset);
    let outer = Mat3A::from_cols(d * d.x, d * d.y, d * d.z);
    let expect = w.inertia_local(plain).unwrap().unwrap()
        + (Mat3A::from_diagonal(Vec3::splat(d.dot(d))) - outer) * m;
    assert!(close(
        w.inertia_local(shifted).unwrap().unwrap(),
        expect,
        1e-5
    ));
    // With no gravity and a spin, the centre of mass stays put while the origin circles
    // it: the body turns about its (shifted) centre of mass.
    w.set_linear_velocity(shifted, Vec3::ZERO).unwrap();
    let c0 = w.center_of_mass(shifted).unwrap();
    assert!((c0 - (Vec3::new(5.0, 0.0, 0.0) + offset)).length() < 1e-6);
}

#[test]
fn a_spinning_body_turns_about_its_shifted_centre_of_mass() {
    let mut w = crate::common::world_with(
        joule_physics::world::WorldDesc {
            gravity: Vec3::ZERO,
            ..Default::default()
        },
        0,
    );
    let offset = Vec3::new(0.3, 0.0, 0.0);
    let id = w
        .create_body(&BodyDesc {
            center_of_mass_offset: offset,
            angular_velocity: Vec3::new(0.0, 2.0, 0.0),
            ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::ZERO)
        })
        .unwrap();
    let c0 = w.center_of_mass(id).unwrap();
    run(&mut w, 60);
    // The centre of mass does not move (momentum 0); the origin stays |offset| from it.
    let c1 = w.center_of_mass(id).unwrap();
    assert!((c1 - c0).length() < 1e-5, "centre moved {:?}", c1 - c0);
    let r = (w.position(id).unwrap() - c1).length();
    assert!((r - 0.3).abs() < 1e-5, "origin at {r} from the centre");
    // It did turn (about 2 rad in 1 s), so the origin moved.
    assert!(w.position(id).unwrap().length() > 0.2);
}

#[test]
fn bad_mass_properties_are_typed_errors_that_create_nothing() {
    let mut w = world(0);
    let ball = Shape::sphere(0.5).unwrap();
    let indefinite = Mat3A::from_diagonal(Vec3::new(1.0, -1.0, 1.0));
    let singular = Mat3A::from_diagonal(Vec3::new(1.0, 0.0, 1.0));
    let asymmetric = Mat3A::from_cols(Vec3A::X, Vec3A::new(0.5, 1.0, 0.0), Vec3A::Z);
    let bad = [
        BodyDesc {
            mass: MassSpec::Mass(0.0),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            mass: MassSpec::Mass(f32::NAN),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            mass: MassSpec::Properties(props(1.0, indefinite, Vec3::ZERO)),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            mass: MassSpec::Properties(props(1.0, singular, Vec3::ZERO)),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            mass: MassSpec::Properties(props(1.0, asymmetric, Vec3::ZERO)),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            mass: MassSpec::Properties(props(-2.0, Mat3A::IDENTITY, Vec3::ZERO)),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            center_of_mass_offset: Vec3::new(f32::INFINITY, 0.0, 0.0),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        // A dynamic body without a shape needs explicit properties.
        BodyDesc {
            shapeless: true,
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
        BodyDesc {
            shapeless: true,
            mass: MassSpec::Mass(3.0),
            ..BodyDesc::dynamic(ball.clone(), Vec3::ZERO)
        },
    ];
    for desc in &bad {
        assert_eq!(
            w.create_body(desc),
            Err(PhysicsError::InvalidMassProperties),
            "{desc:?}"
        );
    }
    assert_eq!(w.body_count(), 0);

    // At run time too: a refused change leaves the body as it was.
    let id = w.create_body(&BodyDesc::dynamic(ball, Vec3::ZERO)).unwrap();
    let (m, i) = (w.mass(id).unwrap(), w.inertia_local(id).unwrap());
    assert_eq!(
        w.set_mass_properties(id, MassSpec::Mass(-1.0), Vec3::ZERO),
        Err(PhysicsError::InvalidMassProperties)
    );
    assert_eq!((w.mass(id).unwrap(), w.inertia_local(id).unwrap()), (m, i));
    w.set_mass_properties(id, MassSpec::Mass(2.0 * m), Vec3::ZERO)
        .unwrap();
    assert_eq!(w.mass(id).unwrap(), 2.0 * m);
    assert!(close(
        w.inertia_local(id).unwrap().unwrap(),
        i.unwrap() * 2.0,
        1e-5
    ));
}

#[test]
fn a_static_anchor_is_never_collided_with_nor_hit_by_queries() {
    let mut w = world(0);
    let anchor = w
        .create_body(&BodyDesc::anchor(Vec3::new(0.0, 2.0, 0.0)))
        .unwrap();
    assert!(!w.has_shape(anchor).unwrap());
    // A ball dropped through the anchor's position falls freely past it: after 1 s it
    // is where free fall puts it (the substep integrator's closed form; see
    // free_fall.rs), to 1 mm.
    let ball = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.5).unwrap(),
            Vec3::new(0.0, 3.0, 0.0),
        ))
        .unwrap();
    run(&mut w, 60);
    let y = w.position(ball).unwrap().y;
    let expect = 3.0 - 0.5 * G * 1.0 * (1.0 + DT / SolverSettings::default().substeps as f32);
    assert!((y - expect).abs() < 1e-3, "y = {y}, free fall {expect}");
    assert_eq!(w.contact_count(), 0);
    let f = QueryFilter::default();
    assert!(
        w.ray_cast(
            &Ray::new(Vec3::new(-5.0, 2.0, 0.0), Vec3::X * 10.0, 1.0),
            &f
        )
        .is_none()
    );
    let around = Aabb::new(Vec3A::new(-1.0, 1.0, -1.0), Vec3A::new(1.0, 3.0, 1.0));
    assert!(!w.overlap_aabb(&around, &f).contains(&anchor));
    assert_eq!(w.position(anchor).unwrap(), Vec3::new(0.0, 2.0, 0.0));
}

#[test]
fn a_shapeless_dynamic_body_falls_freely_through_the_ground() {
    let mut w = world(1);
    ground(&mut w, 0.5);
    let mp = props(
        2.0,
        Mat3A::from_diagonal(Vec3::new(0.1, 0.2, 0.3)),
        Vec3::ZERO,
    );
    let id = w
        .create_body(&BodyDesc::shapeless(Vec3::new(0.0, 1.0, 0.0), mp))
        .unwrap();
    assert_eq!(w.mass(id).unwrap(), 2.0);
    run(&mut w, 60);
    // 1 s of free fall from y = 1 ends well below the ground's top (y = 0): nothing
    // stopped it. Same closed form as above, to 1 mm.
    let y = w.position(id).unwrap().y;
    let expect = 1.0 - 0.5 * G * (1.0 + DT / SolverSettings::default().substeps as f32);
    assert!((y - expect).abs() < 1e-3, "y = {y}, free fall {expect}");
    assert_eq!(w.contact_count(), 0);
    assert!(!w.has_shape(id).unwrap());
}

#[test]
fn shapeless_bodies_survive_a_snapshot() {
    let mut w = world(0);
    ground(&mut w, 0.5);
    w.create_body(&BodyDesc::anchor(Vec3::new(1.0, 2.0, 0.0)))
        .unwrap();
    let mp = props(
        2.0,
        Mat3A::from_diagonal(Vec3::new(0.1, 0.2, 0.3)),
        Vec3::ZERO,
    );
    let free = w
        .create_body(&BodyDesc::shapeless(Vec3::new(0.0, 1.0, 0.0), mp))
        .unwrap();
    w.set_constant_force(free, Vec3::new(1.0, 30.0, 0.0))
        .unwrap();
    w.set_constant_torque(free, Vec3::new(0.0, 0.0, 0.2))
        .unwrap();
    run(&mut w, 10);
    let image = w.snapshot();
    let mut copy = world(0);
    copy.restore(image.as_bytes()).unwrap();
    assert_eq!(
        copy.constant_force(free).unwrap(),
        Vec3::new(1.0, 30.0, 0.0)
    );
    assert!(!copy.has_shape(free).unwrap());
    run(&mut w, 30);
    run(&mut copy, 30);
    assert_eq!(w.state_hash(), copy.state_hash());
}
