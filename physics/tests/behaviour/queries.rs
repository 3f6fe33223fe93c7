//! World queries: ray casts (closest and all) and AABB overlap.

use crate::common::world;
use joule_physics::aabb::Aabb;
use joule_physics::body::BodyDesc;
use joule_physics::math::{Quat, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::shape::Shape;

#[test]
fn rays_hit_every_shape_in_order_and_report_normals() {
    let mut w = world(0);
    // Shapes along +x, each 3 m apart, every one 0.5 m "thick" on the ray's line y = 0.
    let shapes = [
        Shape::sphere(0.5).unwrap(),
        Shape::cuboid(Vec3::splat(0.5)).unwrap(),
        Shape::capsule(0.5, 0.5).unwrap(),
        Shape::cylinder(0.5, 0.5).unwrap(),
        Shape::convex_hull(&[
            Vec3::new(-0.5, -0.5, -0.5),
            Vec3::new(0.5, -0.5, -0.5),
            Vec3::new(-0.5, 0.5, -0.5),
            Vec3::new(0.5, 0.5, -0.5),
            Vec3::new(-0.5, -0.5, 0.5),
            Vec3::new(0.5, -0.5, 0.5),
            Vec3::new(-0.5, 0.5, 0.5),
            Vec3::new(0.5, 0.5, 0.5),
        ])
        .unwrap(),
    ];
    let ids: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            w.create_body(&BodyDesc {
                rotation: Quat::from_rotation_y(0.0),
                ..BodyDesc::fixed(s.clone(), Vec3::new(3.0 * (i as f32 + 1.0), 0.0, 0.0))
            })
            .unwrap()
        })
        .collect();
    let f = QueryFilter::default();
    let hit = w
        .cast_ray(Vec3::ZERO, Vec3::new(20.0, 0.0, 0.0), &f)
        .unwrap();
    assert_eq!(hit.body, ids[0]);
    assert!((hit.point.x - 2.5).abs() < 1e-4 && (hit.normal - Vec3::NEG_X).length() < 1e-4);
    assert!((hit.fraction - 2.5 / 20.0).abs() < 1e-5);
    let all = w.cast_ray_all(Vec3::ZERO, Vec3::new(20.0, 0.0, 0.0), &f);
    assert_eq!(
        all.iter().map(|h| h.body).collect::<Vec<_>>(),
        ids,
        "closest first"
    );
    for (k, h) in all.iter().enumerate() {
        let expected = 3.0 * (k as f32 + 1.0) - 0.5;
        assert!(
            (h.point.x - expected).abs() < 1e-3,
            "shape {k}: hit at {}",
            h.point.x
        );
        assert!((h.normal - Vec3::NEG_X).length() < 1e-3);
    }
    // A ray that passes above everything.
    assert!(
        w.cast_ray(Vec3::new(0.0, 3.0, 0.0), Vec3::new(20.0, 0.0, 0.0), &f)
            .is_none()
    );
    // Excluding the first body finds the second.
    let skip = QueryFilter {
        exclude: Some(ids[0]),
        ..QueryFilter::default()
    };
    assert_eq!(
        w.cast_ray(Vec3::ZERO, Vec3::new(20.0, 0.0, 0.0), &skip)
            .unwrap()
            .body,
        ids[1]
    );
    // AABB overlap: a box around the 2nd and 3rd bodies.
    let found = w.overlap_aabb(
        &Aabb::new(Vec3A::new(5.0, -1.0, -1.0), Vec3A::new(9.5, 1.0, 1.0)),
        &f,
    );
    assert_eq!(found, vec![ids[1], ids[2]]);
}
