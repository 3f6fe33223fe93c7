//! Compound shapes, triangle meshes and heightfields: mass, resting contact, queries,
//! CCD, bad input and snapshots. Default gravity, 60 Hz.

use crate::common::level;

use std::f32::consts::PI;

use crate::common::{DT, ground, run, world};
use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, MotionQuality};
use joule_physics::error::PhysicsError;
use joule_physics::math::{Isometry, Quat, Vec2, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::ray::Ray;
use joule_physics::shape::{CompoundChild, Shape, ShapeError};
use joule_physics::world::World;

use level::{dumbbell, grid_mesh, height_field};

#[test]
fn compound_mass_is_the_sum_of_its_children_about_the_true_centre() {
    let mut w = world(0);
    let id = w
        .create_body(&BodyDesc::dynamic(dumbbell(), Vec3::ZERO))
        .unwrap();
    // Closed form at density 1000 (BodyDesc's default): two spheres 4/3 π r³ ρ and a
    // bar 8 hx hy hz ρ, overlap counted twice.
    let sphere = 4.0 / 3.0 * PI * 0.35f32.powi(3) * 1000.0;
    let bar = 8.0 * 0.5 * 0.1 * 0.1 * 1000.0;
    let m = w.mass(id).unwrap();
    assert!((m - (2.0 * sphere + bar)).abs() < 1e-3 * m, "mass {m}");
    assert!(w.center_of_mass(id).unwrap().length() < 1e-6);

    // One sphere off the origin: the centre of mass is the sphere's centre.
    let offset = Shape::compound(vec![CompoundChild {
        shape: Shape::sphere(0.5).unwrap(),
        pose: Isometry::from_translation(Vec3A::new(1.0, 2.0, 0.0)),
        material: 0,
    }])
    .unwrap();
    let id = w
        .create_body(&BodyDesc::dynamic(offset, Vec3::new(0.0, 10.0, 0.0)))
        .unwrap();
    let c = w.center_of_mass(id).unwrap();
    assert!((c - Vec3::new(1.0, 12.0, 0.0)).length() < 1e-5, "{c}");
}

#[test]
fn dumbbell_comes_to_rest_on_its_spheres() {
    let mut w = world(1);
    ground(&mut w, 0.6);
    let id = w
        .create_body(&BodyDesc::dynamic(dumbbell(), Vec3::new(0.0, 1.0, 0.0)))
        .unwrap();
    run(&mut w, 180);
    // Resting on both spheres: the centre sits one sphere radius (0.35) above y = 0,
    // level (the bar's ends stay 0.25 m above the ground).
    let p = w.position(id).unwrap();
    assert!((p.y - 0.35).abs() < 0.02, "height {}", p.y);
    let axis = w.rotation(id).unwrap() * Vec3::X;
    assert!(axis.y.abs() < 0.02, "tilted: {axis}");
    assert!(w.linear_velocity(id).unwrap().length() < 0.05);
}

#[test]
fn primitives_rest_on_a_mesh_and_on_a_heightfield_at_their_size() {
    for surface in [
        grid_mesh(10, 10, 1.0, -5.0, -5.0),
        height_field(11, 1.0, |_, _| 0.0),
    ] {
        let mut w = world(1);
        w.create_body(&BodyDesc::fixed(surface, Vec3::ZERO))
            .unwrap();
        // (shape, resting height of its centre above y = 0)
        let cases = [
            (Shape::sphere(0.5).unwrap(), 0.5),
            (Shape::cuboid(Vec3::splat(0.4)).unwrap(), 0.4),
            (Shape::capsule(0.5, 0.3).unwrap(), 0.8),
            (Shape::cylinder(0.3, 0.4).unwrap(), 0.3),
            (dumbbell(), 0.35),
        ];
        let ids: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(k, (s, _))| {
                let p = Vec3::new(-3.3 + 1.7 * k as f32, 1.5, 0.3);
                w.create_body(&BodyDesc::dynamic(s.clone(), p)).unwrap()
            })
            .collect();
        run(&mut w, 240);
        for (id, (s, h)) in ids.iter().zip(&cases) {
            let y = w.position(*id).unwrap().y;
            assert!(
                (y - h).abs() < 0.02,
                "{:?} rests at {y}, expected {h}",
                s.kind()
            );
        }
    }
}

#[test]
fn rays_hit_meshes_heightfields_and_compounds_where_the_surface_is() {
    let mut w = world(0);
    // A tilted plane y = 0.1 x + 0.2 z as a heightfield: its triangles are exactly the
    // plane, so the hit height is the plane's.
    let plane = |x: f32, z: f32| 0.1 * x + 0.2 * z;
    let hf = w
        .create_body(&BodyDesc::fixed(height_field(21, 1.0, plane), Vec3::ZERO))
        .unwrap();
    let f = QueryFilter::default();
    for &(x, z) in &[(0.3f32, 0.7f32), (-7.25, 3.5), (9.9, -9.9)] {
        let hit = w
            .ray_cast(
                &Ray::new(Vec3::new(x, 50.0, z), Vec3::new(0.0, -100.0, 0.0), 1.0),
                &f,
            )
            .expect("ray hits the heightfield");
        assert_eq!(hit.body, hf);
        assert!((hit.point.y - plane(x, z)).abs() < 1e-4, "{hit:?}");
        let n = Vec3::new(-0.1, 1.0, -0.2).normalize();
        assert!(hit.normal.dot(n) > 0.9999);
    }
    // A slanted ray crossing many cells finds the first crossing: from high above the
    // -x side moving down and to +x.
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(-9.5, 3.0, 0.0), Vec3::new(19.0, -3.0, 0.0), 1.0),
            &f,
        )
        .expect("slanted ray");
    // Solve -9.5 + 19 t = x, 3 - 3 t = 0.1 x: t = (3 + 0.95) / (3 + 1.9).
    let t = 3.95 / 4.9;
    assert!((hit.toi - t).abs() < 1e-4, "{} vs {t}", hit.toi);

    let mut w = world(0);
    let mesh = w
        .create_body(&BodyDesc::fixed(
            grid_mesh(4, 4, 1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ))
        .unwrap();
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(2.5, 5.0, 1.5), Vec3::new(0.0, -10.0, 0.0), 1.0),
            &f,
        )
        .unwrap();
    assert_eq!(hit.body, mesh);
    assert!((hit.toi - 0.4).abs() < 1e-6);
    // Cell (2, 1), cell-local (0.3, 0.7): above its diagonal, its first triangle
    // (2 * (1 * 4 + 2) = 12).
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(2.3, 5.0, 1.7), Vec3::new(0.0, -10.0, 0.0), 1.0),
            &f,
        )
        .unwrap();
    assert_eq!(hit.sub_shape, 12);
    assert!(
        w.ray_cast(
            &Ray::new(Vec3::new(4.5, 5.0, 1.5), Vec3::new(0.0, -10.0, 0.0), 1.0),
            &f
        )
        .is_none(),
        "beside the mesh"
    );

    let mut w = world(0);
    let db = w
        .create_body(&BodyDesc::fixed(dumbbell(), Vec3::ZERO))
        .unwrap();
    // Down onto the +x sphere's top (y = 0.35) and onto the bar (y = 0.1).
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(0.6, 2.0, 0.0), Vec3::new(0.0, -4.0, 0.0), 1.0),
            &f,
        )
        .unwrap();
    assert_eq!(hit.body, db);
    assert!((hit.point.y - 0.35).abs() < 1e-5);
    assert_eq!(hit.sub_shape, 0, "the +x sphere is child 0");
    let hit = w
        .ray_cast(
            &Ray::new(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, -4.0, 0.0), 1.0),
            &f,
        )
        .unwrap();
    assert!((hit.point.y - 0.1).abs() < 1e-5);
    assert_eq!(hit.sub_shape, 2, "the bar is child 2");
}

#[test]
fn shape_casts_and_overlaps_against_composites() {
    let mut w = world(0);
    let mesh = w
        .create_body(&BodyDesc::fixed(
            grid_mesh(6, 6, 1.0, -3.0, -3.0),
            Vec3::ZERO,
        ))
        .unwrap();
    let f = QueryFilter::default();
    let ball = Shape::sphere(0.5).unwrap();
    let pose = Isometry::from_translation(Vec3A::new(0.2, 3.0, 0.4));
    let hit = w
        .cast_shape(&ball, pose, Vec3::new(0.0, -10.0, 0.0), &f)
        .expect("sphere hits the mesh");
    assert_eq!(hit.body, mesh);
    // The sphere's bottom (y = 2.5) reaches y = 0 after 2.5 m of 10 m (0.1 mm tolerance
    // of the cast).
    assert!((hit.fraction - 0.25).abs() < 1e-4, "{}", hit.fraction);
    assert!(hit.normal.y > 0.999);
    // A dumbbell cast down hits with its spheres (0.35 below its centre).
    let hit = w
        .cast_shape(&dumbbell(), pose, Vec3::new(0.0, -10.0, 0.0), &f)
        .expect("dumbbell hits the mesh");
    assert!((hit.fraction - 0.265).abs() < 1e-4, "{}", hit.fraction);

    let touching = Isometry::from_translation(Vec3A::new(0.0, 0.45, 0.0));
    assert_eq!(w.overlap_shape(&ball, touching, &f), vec![mesh]);
    let above = Isometry::from_translation(Vec3A::new(0.0, 0.6, 0.0));
    assert!(w.overlap_shape(&ball, above, &f).is_empty());
    assert_eq!(
        w.overlap_shape(
            &dumbbell(),
            Isometry::from_translation(Vec3A::new(0.0, 0.3, 0.0)),
            &f
        ),
        vec![mesh]
    );
}

#[test]
fn fast_bodies_do_not_tunnel_through_a_mesh_or_a_heightfield() {
    for surface in [
        grid_mesh(8, 8, 1.0, -4.0, -4.0),
        height_field(9, 1.0, |_, _| 0.0),
    ] {
        let mut w = world(1);
        w.create_body(&BodyDesc::fixed(surface, Vec3::ZERO))
            .unwrap();
        // 150 m/s down: 2.5 m a step, five times the radius; without CCD it passes the
        // zero-thickness surface in one step.
        let ids: Vec<_> = [Shape::sphere(0.25).unwrap(), dumbbell()]
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                w.create_body(&BodyDesc {
                    linear_velocity: Vec3::new(0.0, -150.0, 0.0),
                    motion_quality: MotionQuality::LinearCast,
                    ..BodyDesc::dynamic(s, Vec3::new(-1.5 + 3.0 * k as f32, 4.0, 0.0))
                })
                .unwrap()
            })
            .collect();
        run(&mut w, 90);
        for id in ids {
            let y = w.position(id).unwrap().y;
            assert!(y > 0.2, "body went through: y = {y}");
        }
    }
}

#[test]
fn bad_composite_input_is_a_typed_error() {
    let v = [Vec3::ZERO, Vec3::X, Vec3::Z];
    assert_eq!(
        Shape::triangle_mesh(&v, &[], None).unwrap_err(),
        ShapeError::Empty
    );
    assert_eq!(
        Shape::triangle_mesh(
            &[Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::NAN, 1.0)],
            &[[0, 1, 2]],
            None
        )
        .unwrap_err(),
        ShapeError::NonFinite
    );
    assert_eq!(
        Shape::triangle_mesh(&v, &[[0, 1, 2], [0, 1, 3]], None).unwrap_err(),
        ShapeError::IndexOutOfRange(1)
    );
    assert_eq!(
        Shape::triangle_mesh(&v, &[[0, 1, 1]], None).unwrap_err(),
        ShapeError::DegenerateTriangle(0)
    );
    assert_eq!(
        Shape::triangle_mesh(
            &[Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0)],
            &[[0, 1, 2]],
            None
        )
        .unwrap_err(),
        ShapeError::DegenerateTriangle(0)
    );
    assert_eq!(
        Shape::triangle_mesh(&v, &[[0, 1, 2]], Some(&[1, 2])).unwrap_err(),
        ShapeError::WrongCount {
            list: "materials (one per triangle)",
            expected: 1,
            actual: 2
        }
    );
    assert_eq!(
        Shape::height_field(3, 3, Vec2::ONE, vec![0.0; 8], None).unwrap_err(),
        ShapeError::WrongCount {
            list: "heights (nx * nz)",
            expected: 9,
            actual: 8
        }
    );
    assert_eq!(
        Shape::height_field(3, 3, Vec2::ONE, vec![0.0; 9], Some(&[false; 3])).unwrap_err(),
        ShapeError::WrongCount {
            list: "holes ((nx - 1) * (nz - 1), one per cell)",
            expected: 4,
            actual: 3
        }
    );
    assert_eq!(
        Shape::height_field(3, 3, Vec2::new(1.0, 0.0), vec![0.0; 9], None).unwrap_err(),
        ShapeError::NonPositiveSize
    );
    assert_eq!(
        Shape::height_field(2, 2, Vec2::ONE, vec![0.0, 1.0, f32::INFINITY, 0.0], None).unwrap_err(),
        ShapeError::NonFinite
    );
    assert_eq!(Shape::compound(vec![]).unwrap_err(), ShapeError::Empty);
    let child = |shape| CompoundChild {
        shape,
        pose: Isometry::new(Vec3A::ZERO, Quat::IDENTITY),
        material: 0,
    };
    assert_eq!(
        Shape::compound(vec![child(dumbbell())]).unwrap_err(),
        ShapeError::NonConvexChild
    );
    assert_eq!(
        Shape::compound(vec![child(Shape::half_space(Vec3::Y, 0.0).unwrap())]).unwrap_err(),
        ShapeError::NonConvexChild
    );
    // A mesh has no mass: a dynamic mesh body is refused and nothing is created.
    let mut w = world(0);
    let err = w
        .create_body(&BodyDesc::dynamic(
            grid_mesh(1, 1, 1.0, 0.0, 0.0),
            Vec3::ZERO,
        ))
        .unwrap_err();
    assert_eq!(err, PhysicsError::InvalidShape(ShapeError::InfiniteShape));
    assert_eq!(w.body_count(), 0);
    // Kinematic meshes are fine.
    w.create_body(&BodyDesc::kinematic(
        grid_mesh(1, 1, 1.0, 0.0, 0.0),
        Vec3::ZERO,
    ))
    .unwrap();
}

#[test]
fn snapshots_carry_composite_shapes_bit_for_bit() {
    let build = || {
        let mut w = world(1);
        w.create_body(&BodyDesc::fixed(
            height_field(17, 1.0, |x, z| 0.3 * (0.5 * x).sin() * (0.4 * z).cos()),
            Vec3::ZERO,
        ))
        .unwrap();
        let holes: Vec<bool> = (0..9).map(|c| c == 4).collect();
        w.create_body(&BodyDesc::fixed(
            Shape::height_field(4, 4, Vec2::new(1.0, 1.5), vec![0.5; 16], Some(&holes)).unwrap(),
            Vec3::new(20.0, 0.0, 0.0),
        ))
        .unwrap();
        w.create_body(&BodyDesc::fixed(
            grid_mesh(3, 3, 1.0, 0.0, 0.0),
            Vec3::new(-20.0, 0.0, 0.0),
        ))
        .unwrap();
        for k in 0..6 {
            let shape = if k % 2 == 0 {
                dumbbell()
            } else {
                Shape::cuboid(Vec3::splat(0.3)).unwrap()
            };
            w.create_body(&BodyDesc::dynamic(
                shape,
                Vec3::new(-2.5 + k as f32, 2.0 + 0.3 * k as f32, 0.5),
            ))
            .unwrap();
        }
        w
    };
    let mut a = build();
    run(&mut a, 30);
    let image = a.snapshot();
    let mut b = World::from_snapshot(image.as_bytes(), JobSystem::new(1).unwrap()).unwrap();
    assert_eq!(b.snapshot().as_bytes(), image.as_bytes());
    for _ in 0..60 {
        a.step(DT);
        b.step(DT);
        assert_eq!(a.state_hash(), b.state_hash());
    }
    assert_eq!(a.snapshot().as_bytes(), b.snapshot().as_bytes());
}

#[test]
fn scaled_meshes_and_heightfields_are_the_scaled_surface() {
    let f = QueryFilter::default();
    // A tilted plane y = 0.1 x + 0.2 z scaled by (2, 3, 0.5) is y' = 3 (0.1 x'/2 + 0.2 z'/0.5).
    let plane = |x: f32, z: f32| 0.1 * x + 0.2 * z;
    let scale = Vec3::new(2.0, 3.0, 0.5);
    let scaled_plane = |x: f32, z: f32| 3.0 * plane(x / 2.0, z / 0.5);
    for shape in [
        height_field(21, 1.0, plane),
        level::grid_mesh_with(20, 20, 1.0, -10.0, -10.0, plane),
    ] {
        let mut w = world(0);
        w.create_body(&BodyDesc::fixed(shape.scaled(scale).unwrap(), Vec3::ZERO))
            .unwrap();
        for &(x, z) in &[(3.3f32, 1.7f32), (-15.0, -4.0)] {
            let hit = w
                .ray_cast(
                    &Ray::new(Vec3::new(x, 80.0, z), Vec3::new(0.0, -160.0, 0.0), 1.0),
                    &f,
                )
                .expect("hits the scaled surface");
            assert!((hit.point.y - scaled_plane(x, z)).abs() < 1e-4, "{hit:?}");
        }
    }
    assert_eq!(
        Shape::sphere(1.0).unwrap().scaled(Vec3::ONE).unwrap_err(),
        ShapeError::NotScalable
    );
    assert_eq!(
        height_field(3, 1.0, plane)
            .scaled(Vec3::new(1.0, -1.0, 1.0))
            .unwrap_err(),
        ShapeError::NonPositiveSize
    );
}

#[test]
fn convex_hulls_serve_as_compound_children() {
    // A unit cube as a hull child offset by +1 in x: mass 1000 kg at (1, 0, 0), resting
    // with its bottom face on the ground (centre 0.5 up).
    let hull = Shape::convex_hull(&[
        Vec3::new(-0.5, -0.5, -0.5),
        Vec3::new(0.5, -0.5, -0.5),
        Vec3::new(-0.5, 0.5, -0.5),
        Vec3::new(0.5, 0.5, -0.5),
        Vec3::new(-0.5, -0.5, 0.5),
        Vec3::new(0.5, -0.5, 0.5),
        Vec3::new(-0.5, 0.5, 0.5),
        Vec3::new(0.5, 0.5, 0.5),
    ])
    .unwrap();
    let c = Shape::compound(vec![CompoundChild {
        shape: hull,
        pose: Isometry::from_translation(Vec3A::new(1.0, 0.0, 0.0)),
        material: 0,
    }])
    .unwrap();
    let mut w = world(0);
    ground(&mut w, 0.5);
    let id = w
        .create_body(&BodyDesc::dynamic(c, Vec3::new(0.0, 1.0, 0.0)))
        .unwrap();
    assert!((w.mass(id).unwrap() - 1000.0).abs() < 0.1);
    run(&mut w, 120);
    let com = w.center_of_mass(id).unwrap();
    assert!((com.y - 0.5).abs() < 0.02, "{com}");
}

#[test]
fn a_level_is_bit_identical_at_any_thread_count() {
    // Heightfield hills, a mesh bowl and 120 mixed bodies landing on them: the state hash
    // after every step must not depend on the worker count (DESIGN.md's determinism rule).
    let run_with = |threads: usize| {
        let mut w = world(threads);
        w.create_body(&BodyDesc::fixed(
            height_field(33, 0.5, |x, z| 0.5 * (0.7 * x).sin() * (0.5 * z).cos()),
            Vec3::ZERO,
        ))
        .unwrap();
        w.create_body(&BodyDesc::fixed(
            level::grid_mesh_with(8, 8, 0.5, -2.0, -2.0, |x, z| 0.2 * (x * x + z * z)),
            Vec3::new(0.0, 1.0, 0.0),
        ))
        .unwrap();
        for k in 0..120 {
            let shape = match k % 4 {
                0 => Shape::sphere(0.3).unwrap(),
                1 => Shape::cuboid(Vec3::splat(0.25)).unwrap(),
                2 => Shape::capsule(0.3, 0.2).unwrap(),
                _ => dumbbell(),
            };
            let p = Vec3::new(
                -6.0 + 1.5 * (k % 9) as f32,
                3.0 + 0.8 * (k / 81) as f32,
                -6.0 + 1.5 * ((k / 9) % 9) as f32,
            );
            w.create_body(&BodyDesc {
                rotation: Quat::from_rotation_y(0.37 * k as f32),
                ..BodyDesc::dynamic(shape, p)
            })
            .unwrap();
        }
        (0..150)
            .map(|_| {
                w.step(DT);
                w.state_hash()
            })
            .collect::<Vec<u64>>()
    };
    let one = run_with(0);
    assert_eq!(one, run_with(1));
    assert_eq!(one, run_with(3));
}
