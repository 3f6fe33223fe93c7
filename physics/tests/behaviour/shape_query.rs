//! Shape casts, shape overlap and the batched query forms, against closed forms.

use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::{Isometry, Quat, Vec2, Vec3, Vec3A};
use joule_physics::narrow_phase::closest_points;
use joule_physics::query::QueryFilter;
use joule_physics::ray::Ray;
use joule_physics::shape::Shape;
use joule_physics::shape_query::{RayQuery, ShapeCastOptions, ShapeCastQuery};
use joule_physics::world::{World, WorldDesc};

fn world(threads: usize) -> World {
    World::new(
        WorldDesc {
            gravity: Vec3::ZERO,
            ..WorldDesc::default()
        },
        JobSystem::new(threads).unwrap(),
    )
}

fn fixed(w: &mut World, shape: Shape, p: Vec3) -> BodyId {
    w.create_body(&BodyDesc::fixed(shape, p)).unwrap()
}

fn at(p: Vec3) -> Isometry {
    Isometry::from_translation(p)
}

/// SplitMix64 in [0, 1).
fn next(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
}

#[test]
fn sphere_and_box_casts_hit_at_the_closed_form_fraction() {
    let mut w = world(0);
    let target = fixed(&mut w, Shape::sphere(1.0).unwrap(), Vec3::ZERO);
    let f = QueryFilter::default();
    // Sphere r = 0.5 from x = -5 over 10 m: touches when the centres are 1.5 apart.
    let ball = Shape::sphere(0.5).unwrap();
    let hit = w
        .cast_shape(
            &ball,
            at(Vec3::new(-5.0, 0.0, 0.0)),
            Vec3::new(10.0, 0.0, 0.0),
            &f,
        )
        .unwrap();
    assert_eq!(hit.body, target);
    assert!((hit.fraction - 0.35).abs() < 1e-4, "{}", hit.fraction);
    assert!((hit.normal - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-3);
    assert!((hit.point - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-3);
    // Sphere–sphere in random directions: the centre path's closest approach decides.
    let mut seed = 7u64;
    for _ in 0..50 {
        let dir = Vec3::new(
            next(&mut seed) - 0.5,
            next(&mut seed) - 0.5,
            next(&mut seed) - 0.5,
        )
        .normalize();
        let start = -dir * 6.0 + Vec3::new(0.0, 0.3, -0.2);
        let hit = w.cast_shape(&ball, at(start), dir * 12.0, &f).unwrap();
        // Solve |start + t d| = 1.5 for the first t (d = 12 dir).
        let (b, c) = (start.dot(dir * 12.0), start.length_squared() - 2.25);
        let a = 144.0;
        let t = (-b - (b * b - a * c).sqrt()) / a;
        assert!(
            (hit.fraction - t).abs() * 12.0 < 1e-3,
            "{} vs {t}",
            hit.fraction
        );
    }
    // A box of half extent 0.5 against a box of half extent 1 (face to face, rotated
    // about the sweep axis: the faces stay parallel): 3.5 m of 10.
    let mut w = world(0);
    fixed(&mut w, Shape::cuboid(Vec3::splat(1.0)).unwrap(), Vec3::ZERO);
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let pose = Isometry::new(Vec3A::new(-5.0, 0.2, 0.1), Quat::from_rotation_x(0.4));
    let hit = w
        .cast_shape(&cube, pose, Vec3::new(10.0, 0.0, 0.0), &f)
        .unwrap();
    assert!((hit.fraction - 0.35).abs() < 1e-4, "{}", hit.fraction);
    assert!((hit.normal.x + 1.0).abs() < 1e-3, "{}", hit.normal);
}

#[test]
fn casts_against_a_half_space_overlaps_and_misses() {
    let mut w = world(0);
    let ground = fixed(&mut w, Shape::half_space(Vec3::Y, 0.0).unwrap(), Vec3::ZERO);
    let f = QueryFilter::default();
    let capsule = Shape::capsule(0.5, 0.25).unwrap();
    // Capsule upright, bottom at y = 5 - 0.75 = 4.25, dropped 10 m: fraction 0.425.
    let hit = w
        .cast_shape(
            &capsule,
            at(Vec3::new(0.0, 5.0, 0.0)),
            Vec3::new(0.0, -10.0, 0.0),
            &f,
        )
        .unwrap();
    assert_eq!(hit.body, ground);
    assert!((hit.fraction - 0.425).abs() < 1e-4, "{}", hit.fraction);
    assert!((hit.normal - Vec3::Y).length() < 1e-4);
    // Moving away or parallel: no hit. Starting inside: fraction 0.
    assert!(
        w.cast_shape(
            &capsule,
            at(Vec3::new(0.0, 5.0, 0.0)),
            Vec3::new(3.0, 1.0, 0.0),
            &f
        )
        .is_none()
    );
    let inside = w
        .cast_shape(
            &capsule,
            at(Vec3::new(0.0, 0.5, 0.0)),
            Vec3::new(3.0, 0.0, 0.0),
            &f,
        )
        .unwrap();
    assert_eq!(inside.fraction, 0.0);
    // Not finite: no answer rather than a panic.
    assert!(
        w.cast_shape(&capsule, at(Vec3::new(f32::NAN, 0.0, 0.0)), Vec3::X, &f)
            .is_none()
    );
    assert_eq!(
        w.overlap_shape(&capsule, at(Vec3::new(0.0, 0.7, 0.0)), &f),
        vec![ground]
    );
    assert!(
        w.overlap_shape(&capsule, at(Vec3::new(0.0, 0.8, 0.0)), &f)
            .is_empty()
    );
}

#[test]
fn a_small_fast_sphere_cast_never_passes_a_thin_wall() {
    let mut w = world(0);
    let wall = fixed(
        &mut w,
        Shape::cuboid(Vec3::new(0.025, 10.0, 10.0)).unwrap(),
        Vec3::ZERO,
    );
    let ball = Shape::sphere(0.1).unwrap();
    let mut seed = 11u64;
    for _ in 0..100 {
        let phi = next(&mut seed) * std::f32::consts::TAU;
        let c = 0.3 + 0.7 * next(&mut seed);
        let s = (1.0 - c * c).sqrt();
        let dir = Vec3::new(c, s * phi.cos(), s * phi.sin());
        let start = Vec3::new(-1.0, 0.0, 0.0);
        let hit = w
            .cast_shape(&ball, at(start), dir * 10.0, &QueryFilter::default())
            .expect("the wall is in the way");
        assert_eq!(hit.body, wall);
        // The centre stops 0.1 before the face at x = -0.025.
        let centre = start + dir * 10.0 * hit.fraction;
        assert!((centre.x + 0.125).abs() < 1e-3, "centre {centre}");
    }
}

#[test]
fn world_casts_pick_the_nearest_body_and_respect_the_filter() {
    let mut w = world(0);
    let near = fixed(
        &mut w,
        Shape::cuboid(Vec3::splat(0.5)).unwrap(),
        Vec3::new(3.0, 0.0, 0.0),
    );
    let far = fixed(
        &mut w,
        Shape::sphere(0.5).unwrap(),
        Vec3::new(6.0, 0.0, 0.0),
    );
    let ball = Shape::sphere(0.25).unwrap();
    let sweep = Vec3::new(10.0, 0.0, 0.0);
    let hit = w
        .cast_shape(&ball, at(Vec3::ZERO), sweep, &QueryFilter::default())
        .unwrap();
    assert_eq!(hit.body, near);
    assert!((hit.fraction - 0.225).abs() < 1e-4);
    let skip_near = QueryFilter {
        exclude: Some(near),
        ..QueryFilter::default()
    };
    let hit = w
        .cast_shape(&ball, at(Vec3::ZERO), sweep, &skip_near)
        .unwrap();
    assert_eq!(hit.body, far);
    assert!((hit.fraction - 0.525).abs() < 1e-4);
}

#[test]
fn overlap_shape_matches_brute_force() {
    let mut w = world(0);
    let mut seed = 3u64;
    let mut bodies = Vec::new();
    for i in 0..60 {
        let p = Vec3::new(
            next(&mut seed) * 10.0 - 5.0,
            next(&mut seed) * 10.0 - 5.0,
            next(&mut seed) * 10.0 - 5.0,
        );
        let shape = match i % 3 {
            0 => Shape::sphere(0.4).unwrap(),
            1 => Shape::cuboid(Vec3::new(0.5, 0.3, 0.2)).unwrap(),
            _ => Shape::capsule(0.4, 0.2).unwrap(),
        };
        bodies.push((fixed(&mut w, shape.clone(), p), shape, at(p)));
    }
    let probe = Shape::cuboid(Vec3::new(1.0, 0.5, 0.75)).unwrap();
    let mut total = 0;
    for _ in 0..100 {
        let pose = Isometry::new(
            Vec3A::new(
                next(&mut seed) * 10.0 - 5.0,
                next(&mut seed) * 10.0 - 5.0,
                next(&mut seed) * 10.0 - 5.0,
            ),
            Quat::from_euler(
                glam::EulerRot::XYZ,
                next(&mut seed) * 3.0,
                next(&mut seed),
                0.5,
            ),
        );
        let got = w.overlap_shape(&probe, pose, &QueryFilter::default());
        let mut want: Vec<BodyId> = bodies
            .iter()
            .filter(|(_, s, iso)| {
                closest_points(
                    probe.as_convex().unwrap(),
                    &pose,
                    s.as_convex().unwrap(),
                    iso,
                )
                .separation
                    <= 0.0
            })
            .map(|(id, _, _)| *id)
            .collect();
        want.sort_unstable();
        assert_eq!(got, want);
        total += got.len();
    }
    assert!(total > 10, "the poses did overlap bodies ({total})");
}

#[test]
fn batched_casts_equal_single_casts_at_any_thread_count() {
    let build = |threads: usize| {
        let mut w = world(threads);
        let mut seed = 5u64;
        for _ in 0..80 {
            let p = Vec3::new(
                next(&mut seed) * 20.0 - 10.0,
                next(&mut seed) * 20.0 - 10.0,
                next(&mut seed) * 20.0 - 10.0,
            );
            fixed(&mut w, Shape::cuboid(Vec3::splat(0.6)).unwrap(), p);
        }
        w
    };
    let ball = Shape::sphere(0.3).unwrap();
    let mut seed = 9u64;
    let mut rays = Vec::new();
    let mut casts = Vec::new();
    for _ in 0..300 {
        let o = Vec3::new(
            next(&mut seed) * 4.0 - 2.0,
            next(&mut seed) * 4.0 - 2.0,
            0.0,
        );
        let d = Vec3::new(
            next(&mut seed) - 0.5,
            next(&mut seed) - 0.5,
            next(&mut seed) - 0.5,
        ) * 40.0;
        rays.push(RayQuery {
            origin: o,
            direction: d,
        });
        casts.push(ShapeCastQuery {
            shape: &ball,
            pose: at(o),
            translation: d,
        });
    }
    let f = QueryFilter::default();
    let reference = build(0);
    // The batch casts segments: a ray of length 1 in units of the direction, so its toi
    // is the batch's fraction.
    let key = |h: Option<(BodyId, u32, f32, Vec3, Vec3)>| h;
    let single_rays: Vec<_> = rays
        .iter()
        .map(|r| {
            key(reference
                .ray_cast(&Ray::new(r.origin, r.direction, 1.0), &f)
                .map(|h| (h.body, h.sub_shape, h.toi, h.point, h.normal)))
        })
        .collect();
    let single_casts: Vec<_> = casts
        .iter()
        .map(|c| reference.cast_shape(c.shape, c.pose, c.translation, &f))
        .collect();
    assert!(single_casts.iter().filter(|h| h.is_some()).count() > 30);
    for threads in [0, 1, 4] {
        let w = build(threads);
        let (mut r, mut c) = (Vec::new(), Vec::new());
        w.cast_rays(&rays, &f, &mut r);
        w.cast_shapes(&casts, &f, &mut c);
        let r: Vec<_> = r
            .iter()
            .map(|h| h.map(|h| (h.body, h.sub_shape, h.fraction, h.point, h.normal)))
            .collect();
        assert_eq!(r, single_rays, "rays, {threads} workers");
        assert_eq!(c, single_casts, "shape casts, {threads} workers");
    }
}

/// Casts a capsule resting at `pose` (on the ground at y = 0, or a little in it) up,
/// sideways and down with and without `ignore_initial_contacts_moving_away`, on a world
/// with a wall whose face is at x = 4.5. `reach` is how far the capsule reaches from its
/// centre along +x and down.
fn casts_from_rest(
    w: &World,
    capsule: &Shape,
    pose: Isometry,
    reach: Vec2,
    ground: BodyId,
    wall: BodyId,
    filter: &QueryFilter,
) {
    let away = ShapeCastOptions {
        ignore_initial_contacts_moving_away: true,
    };
    let cast = |dir: Vec3, options: &ShapeCastOptions| {
        w.cast_shape_with(capsule, pose, dir, filter, options)
    };
    // Closed form: how far the lowest point starts below y = 0.
    let depth = (reach.y - pose.translation.y).max(0.0);
    // Up, sideways away from the wall, and up and sideways: nothing in the way.
    for dir in [
        Vec3::new(0.0, 2.0, 0.0),
        Vec3::new(-10.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 3.0),
        Vec3::new(-2.0, 1.0, 2.0),
    ] {
        assert_eq!(cast(dir, &away), None, "moving {dir} away from the ground");
        // The default still reports the contact it starts in, flagged as such.
        let start = cast(dir, &ShapeCastOptions::default()).expect("starts in contact");
        assert_eq!(start.body, ground);
        assert!(
            start.started_in_contact && start.fraction == 0.0,
            "{start:?}"
        );
    }
    // Sideways towards the wall: the next real hit, where the capsule reaches x = 4.5.
    let hit = cast(Vec3::new(10.0, 0.0, 0.0), &away).expect("the wall");
    assert_eq!(hit.body, wall);
    let want = (4.5 - reach.x - pose.translation.x) / 10.0;
    assert!(
        (hit.fraction - want).abs() < 1e-4,
        "{} vs {want}",
        hit.fraction
    );
    assert!(!hit.started_in_contact && hit.depth == 0.0, "{hit:?}");
    assert!((hit.normal - Vec3::NEG_X).length() < 1e-3, "{}", hit.normal);
    // Down, and down and sideways: into the ground at once.
    for dir in [Vec3::new(0.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.5)] {
        let hit = cast(dir, &away).expect("moving into the ground");
        assert_eq!(hit.body, ground);
        assert_eq!(hit.fraction, 0.0);
        assert!(hit.started_in_contact, "{hit:?}");
        assert!(hit.normal.dot(Vec3::Y) > 0.999, "normal {}", hit.normal);
        assert!(
            (hit.depth - depth).abs() < 2e-4,
            "depth {} vs {depth}",
            hit.depth
        );
    }
}

#[test]
fn a_cast_that_starts_in_contact_moves_away_freely() {
    // Issue 28 item 10: a resting capsule cast up or sideways reported fraction 0 against
    // the ground it rests on. With `ignore_initial_contacts_moving_away` only the contacts
    // the motion pushes into count (Rapier's `stop_at_penetration: false`, Avian's
    // `ignore_origin_penetration`).
    let flat_field = Shape::height_field(9, 9, Vec2::splat(2.0), vec![0.0; 81], None).unwrap();
    let grounds = [
        (Shape::cuboid(Vec3::new(20.0, 0.5, 20.0)).unwrap(), -0.5),
        (Shape::half_space(Vec3::Y, 0.0).unwrap(), 0.0),
        (flat_field, 0.0),
    ];
    let capsule = Shape::capsule(0.5, 0.25).unwrap();
    let f = QueryFilter::default();
    for (shape, y) in grounds.into_iter().chain([(flat_mesh(), 0.0)]) {
        let mut w = world(0);
        let ground = fixed(&mut w, shape, Vec3::new(0.0, y, 0.0));
        let wall = fixed(
            &mut w,
            Shape::cuboid(Vec3::new(0.5, 1.0, 5.0)).unwrap(),
            Vec3::new(5.0, 1.0, 0.0),
        );
        // Upright, 0.05 mm above the ground, touching it, and 2 mm into it; inside a
        // cell, over a grid vertex, and over a cell's diagonal (the seams of the
        // heightfield and the mesh, where the triangles beside the one under the capsule
        // are within touching distance too).
        for gap in [5e-5, 0.0, -2e-3] {
            for (x, z) in [(0.3, -0.2), (0.0, 0.0), (1.0, -1.0)] {
                let pose = at(Vec3::new(x, 0.75 + gap, z));
                casts_from_rest(&w, &capsule, pose, Vec2::new(0.25, 0.75), ground, wall, &f);
            }
        }
    }
}

/// A flat mesh at y = 0 over [-8, 8]², cells of 2 m split along the heightfield's
/// diagonals.
fn flat_mesh() -> Shape {
    let vertices: Vec<Vec3> = (0..9)
        .flat_map(|j| {
            (0..9).map(move |i| Vec3::new(-8.0 + 2.0 * i as f32, 0.0, -8.0 + 2.0 * j as f32))
        })
        .collect();
    let id = |i: u32, j: u32| j * 9 + i;
    let mut triangles = Vec::new();
    for j in 0..8 {
        for i in 0..8 {
            triangles.push([id(i, j), id(i, j + 1), id(i + 1, j)]);
            triangles.push([id(i + 1, j), id(i, j + 1), id(i + 1, j + 1)]);
        }
    }
    Shape::triangle_mesh(&vertices, &triangles, None).unwrap()
}

#[test]
fn a_cast_from_rest_stops_at_a_ramp_of_the_same_heightfield() {
    // Flat for x <= 2, then a ramp of slope 1/2: moving along the ground the capsule
    // starts on, the cast goes on, and stops where the ramp is.
    let slope = 0.5;
    let heights: Vec<f32> = (0..9)
        .flat_map(|_| (0..9).map(|i| (slope * (-8.0 + 2.0 * i as f32 - 2.0)).max(0.0)))
        .collect();
    let field = Shape::height_field(9, 9, Vec2::splat(2.0), heights, None).unwrap();
    let mut w = world(0);
    let ground = fixed(&mut w, field, Vec3::ZERO);
    let capsule = Shape::capsule(0.5, 0.25).unwrap();
    let away = ShapeCastOptions {
        ignore_initial_contacts_moving_away: true,
    };
    let f = QueryFilter::default();
    // The bottom sphere (r = 0.25, centre at height 0.25) touches the ramp's plane
    // y = s (x - 2) where its centre is r from it: x = 2 + r (1 - sqrt(1 + s²)) / s.
    let r = 0.25;
    let touch_x = 2.0 + r * (1.0 - (1.0 + slope * slope).sqrt()) / slope;
    for gap in [5e-5, 0.0] {
        let pose = at(Vec3::new(0.3, 0.75 + gap, 0.1));
        for dir in [Vec3::Y, Vec3::NEG_X * 10.0, Vec3::Z * 3.0] {
            assert_eq!(w.cast_shape_with(&capsule, pose, dir, &f, &away), None);
        }
        let hit = w
            .cast_shape_with(&capsule, pose, Vec3::X * 10.0, &f, &away)
            .expect("the ramp ahead");
        assert_eq!(hit.body, ground);
        let want = (touch_x - 0.3) / 10.0;
        // 2 mm of the 10 m: the cast stops where the capsule would be 0.5 mm deeper in
        // the field than it started.
        assert!(
            (hit.fraction - want).abs() < 2e-4,
            "{} vs {want}",
            hit.fraction
        );
        assert!(!hit.started_in_contact);
        let n = Vec3::new(-slope, 1.0, 0.0).normalize();
        assert!(hit.normal.dot(n) > 0.999, "normal {}", hit.normal);
    }
}

#[test]
fn a_capsule_resting_on_a_heightfield_casts_away_from_it() {
    // A lying capsule settled by the solver on a flat heightfield (its rest depth
    // is whatever the solver leaves, up to the contact slop).
    let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
    let field = Shape::height_field(9, 9, Vec2::splat(2.0), vec![0.0; 81], None).unwrap();
    let ground = fixed(&mut w, field, Vec3::ZERO);
    let wall = fixed(
        &mut w,
        Shape::cuboid(Vec3::new(0.5, 1.0, 5.0)).unwrap(),
        Vec3::new(5.0, 1.0, 0.0),
    );
    let capsule = Shape::capsule(0.5, 0.25).unwrap();
    let lying = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let body = w
        .create_body(&BodyDesc {
            rotation: lying,
            ..BodyDesc::dynamic(capsule.clone(), Vec3::new(0.3, 0.3, -0.2))
        })
        .unwrap();
    for _ in 0..120 {
        w.step(1.0 / 60.0);
    }
    let pose = w.body(body).unwrap().transform();
    let y = pose.translation.y;
    assert!((y - 0.25).abs() < 0.01, "resting on the field: y = {y}");
    let f = QueryFilter {
        exclude: Some(body),
        ..QueryFilter::default()
    };
    // Lying along X: reaches half height + radius towards the wall.
    casts_from_rest(&w, &capsule, pose, Vec2::new(0.75, 0.25), ground, wall, &f);
}

#[test]
fn a_cast_that_starts_penetrating_reports_its_depth() {
    let mut w = world(0);
    let ground = fixed(
        &mut w,
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    );
    let ball = Shape::sphere(0.5).unwrap();
    let f = QueryFilter::default();
    // Centre 0.4 above the top face: 0.1 deep (closed form: radius minus height).
    let pose = at(Vec3::new(1.0, 0.4, 2.0));
    for options in [
        ShapeCastOptions::default(),
        ShapeCastOptions {
            ignore_initial_contacts_moving_away: true,
        },
    ] {
        let hit = w
            .cast_shape_with(&ball, pose, Vec3::new(0.5, -1.0, 0.0), &f, &options)
            .expect("moving into the ground");
        assert_eq!(hit.body, ground);
        assert_eq!(hit.fraction, 0.0);
        assert!(hit.started_in_contact);
        assert!((hit.depth - 0.1).abs() < 1e-3, "depth {}", hit.depth);
        assert!(hit.normal.dot(Vec3::Y) > 0.999, "normal {}", hit.normal);
    }
    let options = ShapeCastOptions {
        ignore_initial_contacts_moving_away: true,
    };
    assert_eq!(
        w.cast_shape_with(&ball, pose, Vec3::new(0.0, 1.0, 0.0), &f, &options),
        None
    );
    // The plain call is the default options.
    assert_eq!(
        w.cast_shape(&ball, pose, Vec3::new(0.0, 1.0, 0.0), &f),
        w.cast_shape_with(
            &ball,
            pose,
            Vec3::new(0.0, 1.0, 0.0),
            &f,
            &ShapeCastOptions::default()
        )
    );
}
