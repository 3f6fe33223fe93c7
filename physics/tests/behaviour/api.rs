//! The everyday surface: the prelude, builder setters and the body view agree with the
//! long forms they shorten.

use joule_physics::prelude::*;

fn world() -> World {
    World::new(WorldDesc::default(), JobSystem::new(0).unwrap())
}

#[test]
fn builder_setters_give_the_same_body_as_a_literal() {
    let shape = Shape::capsule(0.5, 0.25).unwrap();
    let q = Quat::from_rotation_z(0.3);
    let built = BodyDesc::dynamic(shape.clone(), Vec3::new(1.0, 2.0, 3.0))
        .rotation(q)
        .linear_velocity(Vec3::X)
        .angular_velocity(Vec3::Y)
        .density(500.0)
        .friction(0.9)
        .restitution(0.25)
        .damping(0.1, 0.2)
        .gravity_scale(0.5)
        .allow_sleep(false)
        .motion_quality(MotionQuality::LinearCast)
        .user_data(42);
    let literal = BodyDesc {
        rotation: q,
        linear_velocity: Vec3::X,
        angular_velocity: Vec3::Y,
        density: 500.0,
        friction: 0.9,
        restitution: 0.25,
        linear_damping: 0.1,
        angular_damping: 0.2,
        gravity_scale: 0.5,
        allow_sleep: false,
        motion_quality: MotionQuality::LinearCast,
        user_data: 42,
        ..BodyDesc::dynamic(shape, Vec3::new(1.0, 2.0, 3.0))
    };
    let (mut a, mut b) = (world(), world());
    let ia = a.create_body(&built).unwrap();
    let ib = b.create_body(&literal).unwrap();
    for _ in 0..30 {
        a.step(1.0 / 60.0);
        b.step(1.0 / 60.0);
    }
    assert_eq!(a.state_hash(), b.state_hash(), "same inputs, same state");
    assert_eq!(a.body(ia).unwrap().user_data(), 42);
    assert_eq!(b.body(ib).unwrap().friction(), 0.9);
}

#[test]
fn builder_values_are_still_validated() {
    let mut w = world();
    let bad = BodyDesc::dynamic(Shape::sphere(1.0).unwrap(), Vec3::ZERO).friction(-1.0);
    let err = w.create_body(&bad).unwrap_err();
    assert!(
        matches!(err, PhysicsError::InvalidMaterial { field: "friction", value, .. } if value == -1.0),
        "{err:?}"
    );
    assert_eq!(w.body_count(), 0, "nothing created");
}

#[test]
fn body_view_reads_what_the_getters_read() {
    let mut w = world();
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
    let id = w
        .create_body(
            &BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(0.0, 3.0, 0.0),
            )
            .angular_velocity(Vec3::new(0.0, 1.0, 0.0)),
        )
        .unwrap();
    for _ in 0..20 {
        w.step(1.0 / 60.0);
    }
    let b = w.body(id).unwrap();
    assert_eq!(b.id(), id);
    assert_eq!(b.position(), w.position(id).unwrap());
    assert_eq!(b.rotation(), w.rotation(id).unwrap());
    assert_eq!(b.linear_velocity(), w.linear_velocity(id).unwrap());
    assert_eq!(b.angular_velocity(), w.angular_velocity(id).unwrap());
    assert_eq!(b.center_of_mass(), w.center_of_mass(id).unwrap());
    assert_eq!(b.mass(), w.mass(id).unwrap());
    // A unit box of density 1000 weighs 1000 kg (m = rho V).
    assert!((b.mass() - 1000.0).abs() < 1e-3);
    assert_eq!(b.is_sleeping(), w.is_sleeping(id).unwrap());
    assert_eq!(b.aabb(), w.body_aabb(id).unwrap());
    assert_eq!(b.motion_type(), MotionType::Dynamic);
    w.remove_body(id).unwrap();
    assert!(matches!(w.body(id), Err(PhysicsError::StaleBodyId(_))));
}

/// `ray_cast(&Ray)` and `cast_ray(origin, direction)` describe the same hit: with
/// `direction = dir * max_toi`, `toi = fraction * max_toi`. The box's near face at
/// x = 4.5 is 4.5 m from the origin (closed form), i.e. toi 2.25 for a dir of length 2.
#[test]
fn ray_struct_and_whole_ray_cast_agree() {
    let mut w = world();
    let target = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(5.0, 0.0, 0.0),
        ))
        .unwrap();
    let ray = Ray::new(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), 10.0);
    let hit = w.ray_cast(&ray, &QueryFilter::default()).unwrap();
    assert_eq!(hit.body, target);
    assert!((hit.toi - 2.25).abs() < 1e-5, "{}", hit.toi);
    assert!((ray.point_at(hit.toi) - hit.point).length() < 1e-5);
    assert!((hit.normal - Vec3::NEG_X).length() < 1e-5);
    // A direction that is not unit: toi is in its units (here a fraction of 20 m).
    let whole = w
        .ray_cast(
            &Ray::new(Vec3::ZERO, Vec3::new(20.0, 0.0, 0.0), 1.0),
            &QueryFilter::default(),
        )
        .unwrap();
    assert!((whole.toi * 10.0 - hit.toi).abs() < 1e-5);
    let short = Ray::new(Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), 2.0);
    assert!(
        w.ray_cast(&short, &QueryFilter::default()).is_none(),
        "4 m < 4.5 m"
    );
    let bad = Ray::new(Vec3::ZERO, Vec3::X, f32::NAN);
    assert!(w.ray_cast(&bad, &QueryFilter::default()).is_none());
    assert_eq!(w.ray_cast_all(&ray, &QueryFilter::default()).len(), 1);
}
