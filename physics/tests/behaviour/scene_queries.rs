//! The queries a character controller needs (issue 31): colliding a shape with the world
//! (every contact with its depth, each part of a mesh with its own normal), casting a
//! shape through several bodies, filtering by layers, an exclusion list and a predicate,
//! and querying from step listeners and from jobs.

use std::sync::{Arc, Mutex};

use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::filter::LayerTable;
use joule_physics::listener::{StepListenerContext, StepPhase};
use joule_physics::math::{Isometry, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::ray::Ray;
use joule_physics::shape::Shape;
use joule_physics::shape_query::{ShapeCastOptions, ShapeContact};
use joule_physics::world::WorldDesc;

use crate::common::{self, DT};

fn at(p: Vec3) -> Isometry {
    Isometry::from_translation(Vec3A::from(p))
}

/// A corner of one level mesh: a floor (y = 0) and a wall (x = 1) facing -X.
fn corner_mesh() -> Shape {
    let v = [
        Vec3::new(-3.0, 0.0, -3.0),
        Vec3::new(-3.0, 0.0, 3.0),
        Vec3::new(1.0, 0.0, 3.0),
        Vec3::new(1.0, 0.0, -3.0),
        Vec3::new(1.0, 3.0, 3.0),
        Vec3::new(1.0, 3.0, -3.0),
    ];
    let t = [[0, 1, 2], [0, 2, 3], [3, 2, 4], [3, 4, 5]];
    Shape::triangle_mesh(&v, &t, None).unwrap()
}

#[test]
fn collide_shape_reports_each_part_of_a_mesh_with_its_own_normal_and_depth() {
    let mut w = common::world(0);
    let level = w
        .create_body(&BodyDesc::fixed(corner_mesh(), Vec3::ZERO))
        .unwrap();
    // A sphere of radius 0.5 sunk 0.05 m into the floor and 0.02 m into the wall.
    let ball = Shape::sphere(0.5).unwrap();
    let pose = at(Vec3::new(0.52, 0.45, 0.0));
    let mut out: Vec<ShapeContact> = Vec::new();
    w.collide_shape(&ball, pose, 0.0, &QueryFilter::default(), &mut out);
    let floor = out.iter().find(|c| c.normal.y > 0.99).expect("the floor");
    let wall = out.iter().find(|c| c.normal.x < -0.99).expect("the wall");
    assert!(out.iter().all(|c| c.body == level));
    assert_ne!(floor.sub_shape, wall.sub_shape, "two triangles, two parts");
    // Depths from the geometry: radius minus distance to each plane.
    assert!(
        (floor.depth - 0.05).abs() < 1e-4,
        "floor depth {}",
        floor.depth
    );
    assert!(
        (wall.depth - 0.02).abs() < 1e-4,
        "wall depth {}",
        wall.depth
    );
    assert!((floor.point.y).abs() < 1e-4 && (wall.point.x - 1.0).abs() < 1e-4);
    // With a margin, a gap shows as negative depth: the sphere 0.1 m above the floor.
    w.collide_shape(
        &ball,
        at(Vec3::new(-1.0, 0.6, 1.5)),
        0.2,
        &QueryFilter::default(),
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
    assert!((out[0].depth + 0.1).abs() < 1e-4, "gap {}", out[0].depth);
    // Without the margin, nothing.
    w.collide_shape(
        &ball,
        at(Vec3::new(-1.0, 0.6, 1.5)),
        0.0,
        &QueryFilter::default(),
        &mut out,
    );
    assert!(out.is_empty());
    // A non-convex query shape and a negative distance are refused with no contacts.
    w.collide_shape(&corner_mesh(), pose, 0.0, &QueryFilter::default(), &mut out);
    assert!(out.is_empty());
    w.collide_shape(&ball, pose, -1.0, &QueryFilter::default(), &mut out);
    assert!(out.is_empty());
}

#[test]
fn collide_shape_depth_against_a_box_and_a_half_space_capsule() {
    let mut w = common::world(0);
    let ground = w
        .create_body(&BodyDesc::fixed(
            Shape::half_space(Vec3::Y, 0.0).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
    let wall = w
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.5, 2.0, 2.0)).unwrap(),
            Vec3::new(2.0, 2.0, 0.0),
        ))
        .unwrap();
    // A standing capsule (half height 0.5, radius 0.3): lowest point at y = -0.03,
    // right side at x = 1.53 against the wall's face at x = 1.5.
    let capsule = Shape::capsule(0.5, 0.3).unwrap();
    let mut out = Vec::new();
    w.collide_shape(
        &capsule,
        at(Vec3::new(1.23, 0.77, 0.0)),
        0.0,
        &QueryFilter::default(),
        &mut out,
    );
    let deepest = |body: BodyId| {
        out.iter()
            .filter(|c| c.body == body)
            .map(|c| c.depth)
            .fold(f32::NEG_INFINITY, f32::max)
    };
    assert!((deepest(ground) - 0.03).abs() < 1e-4, "{out:?}");
    assert!((deepest(wall) - 0.03).abs() < 1e-4, "{out:?}");
    assert!(
        out.iter()
            .filter(|c| c.body == wall)
            .all(|c| c.normal.x < -0.999)
    );
    assert!(
        out.windows(2)
            .all(|p| (p[0].body, p[0].sub_shape) <= (p[1].body, p[1].sub_shape))
    );
}

#[test]
fn cast_shape_all_reports_every_body_along_the_sweep_in_order() {
    let mut w = common::world(0);
    let ids: Vec<BodyId> = [6.0, 2.0, 4.0]
        .iter()
        .map(|&x| {
            w.create_body(&BodyDesc::fixed(
                Shape::sphere(0.5).unwrap(),
                Vec3::new(x, 0.0, 0.0),
            ))
            .unwrap()
        })
        .collect();
    let ball = Shape::sphere(0.25).unwrap();
    let sweep = Vec3::new(10.0, 0.0, 0.0);
    let hits = w.cast_shape_all(
        &ball,
        at(Vec3::ZERO),
        sweep,
        &QueryFilter::default(),
        &ShapeCastOptions::default(),
    );
    assert_eq!(
        hits.iter().map(|h| h.body).collect::<Vec<_>>(),
        [ids[1], ids[2], ids[0]]
    );
    // Contact when the centres are 0.75 apart: fractions (x - 0.75) / 10.
    for (h, x) in hits.iter().zip([2.0f32, 4.0, 6.0]) {
        assert!((h.fraction - (x - 0.75) / 10.0).abs() < 1e-4, "{h:?}");
        assert!((h.normal.x + 1.0).abs() < 1e-3);
    }
    // The first of them is what cast_shape returns.
    let first = w
        .cast_shape(&ball, at(Vec3::ZERO), sweep, &QueryFilter::default())
        .unwrap();
    assert_eq!(first, hits[0]);
    // A sweep that stops short sees only the first.
    let short = w.cast_shape_all(
        &ball,
        at(Vec3::ZERO),
        Vec3::new(3.0, 0.0, 0.0),
        &QueryFilter::default(),
        &ShapeCastOptions::default(),
    );
    assert_eq!(short.len(), 1);
}

#[test]
fn query_filter_layers_exclusion_list_and_predicate() {
    let mut w = common::world_with(
        WorldDesc {
            layers: LayerTable::all_colliding(3),
            ..WorldDesc::default()
        },
        0,
    );
    let ids: Vec<BodyId> = (0..3u16)
        .map(|k| {
            w.create_body(&BodyDesc {
                layer: k,
                ..BodyDesc::fixed(
                    Shape::sphere(0.5).unwrap(),
                    Vec3::new(2.0 + 2.0 * f32::from(k), 0.0, 0.0),
                )
            })
            .unwrap()
        })
        .collect();
    let ray = |f: &QueryFilter| {
        w.ray_cast(&Ray::new(Vec3::ZERO, Vec3::X, 10.0), f)
            .map(|h| h.body)
    };
    assert_eq!(ray(&QueryFilter::default()), Some(ids[0]));
    let layers = [2u16];
    assert_eq!(
        ray(&QueryFilter {
            layers: Some(&layers),
            ..QueryFilter::default()
        }),
        Some(ids[2])
    );
    let skip = [ids[0], ids[1]];
    assert_eq!(
        ray(&QueryFilter {
            exclude_bodies: &skip,
            ..QueryFilter::default()
        }),
        Some(ids[2])
    );
    let not_first = |id: BodyId| id != ids[0];
    assert_eq!(
        ray(&QueryFilter {
            predicate: Some(&not_first),
            ..QueryFilter::default()
        }),
        Some(ids[1])
    );
    let none = |_: BodyId| false;
    assert_eq!(
        ray(&QueryFilter {
            predicate: Some(&none),
            ..QueryFilter::default()
        }),
        None
    );
    // The same filter applies to shape queries.
    let mut out = Vec::new();
    let ball = Shape::sphere(3.5).unwrap();
    w.collide_shape(
        &ball,
        at(Vec3::new(4.0, 0.0, 0.0)),
        0.0,
        &QueryFilter {
            exclude_bodies: &skip,
            ..QueryFilter::default()
        },
        &mut out,
    );
    assert!(!out.is_empty() && out.iter().all(|c| c.body == ids[2]));
}

#[test]
fn step_listeners_query_the_world_before_and_after_the_step() {
    let mut w = common::world(1);
    common::ground(&mut w, 0.5);
    let ball = w
        .create_body(&BodyDesc::dynamic(
            Shape::sphere(0.5).unwrap(),
            Vec3::new(0.0, 5.0, 0.0),
        ))
        .unwrap();
    let seen: Arc<Mutex<Vec<(StepPhase, f32, f32)>>> = Arc::default();
    for phase in [StepPhase::Before, StepPhase::After] {
        let seen = seen.clone();
        w.add_step_listener(
            phase,
            Box::new(move |cx: &mut StepListenerContext<'_>| {
                let y = cx.position(ball).unwrap().y;
                let skip = QueryFilter {
                    exclude: Some(ball),
                    ..QueryFilter::default()
                };
                let q = cx.queries();
                let hit = q
                    .cast_ray(Vec3::new(0.0, y, 0.0), Vec3::new(0.0, -10.0, 0.0), &skip)
                    .expect("the ground is below");
                seen.lock().unwrap().push((cx.phase(), y, hit.point.y));
            }),
        );
    }
    common::run(&mut w, 30);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 60);
    for &(_, y, ground_y) in seen.iter() {
        assert!(
            y < 5.0 + 1e-6 && ground_y.abs() < 1e-5,
            "ground top at 0: {ground_y}"
        );
    }
    // Before and after see the ball where the world says it was at that moment.
    let last_after = seen[59];
    assert_eq!(last_after.0, StepPhase::After);
    assert_eq!(last_after.1, w.position(ball).unwrap().y);
}

#[test]
fn queries_from_jobs_match_the_main_thread_at_any_thread_count() {
    let mut results = Vec::new();
    for threads in [0, 1, 3] {
        let mut w = common::world(threads);
        w.create_body(&BodyDesc::fixed(
            common::level::height_field(17, 1.0, |x, z| 0.3 * (0.5 * x).sin() * (0.4 * z).cos()),
            Vec3::ZERO,
        ))
        .unwrap();
        let capsule = Shape::capsule(0.4, 0.3).unwrap();
        let poses: Vec<Isometry> = (0..64)
            .map(|k| at(Vec3::new(-6.0 + 0.2 * k as f32, 0.5, -3.0 + 0.1 * k as f32)))
            .collect();
        let mut out: Vec<Vec<ShapeContact>> = vec![Vec::new(); poses.len()];
        let scene = w.scene_query();
        w.jobs().parallel_for_slice(&mut out, 4, |start, chunk| {
            for (k, contacts) in chunk.iter_mut().enumerate() {
                scene.collide_shape(
                    &capsule,
                    poses[start + k],
                    0.05,
                    &QueryFilter::default(),
                    contacts,
                );
            }
        });
        // The main thread's answer, pose by pose.
        let mut serial = Vec::new();
        for (k, pose) in poses.iter().enumerate() {
            w.collide_shape(&capsule, *pose, 0.05, &QueryFilter::default(), &mut serial);
            assert_eq!(serial, out[k]);
        }
        assert!(
            out.iter().filter(|c| !c.is_empty()).count() > 10,
            "the capsules touch the field"
        );
        results.push(out);
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
    let _ = DT;
}
