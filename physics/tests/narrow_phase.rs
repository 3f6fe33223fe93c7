//! Narrow-phase routines against analytic cases.

use joule_physics::math::{Isometry, Quat, Vec3, Vec3A};
use joule_physics::narrow_phase::{ContactManifold, collide};
use joule_physics::shape::Shape;

const M: f32 = 0.02;

fn at(x: f32, y: f32, z: f32) -> Isometry {
    Isometry::from_translation(Vec3A::new(x, y, z))
}

fn run(a: &Shape, ia: &Isometry, b: &Shape, ib: &Isometry) -> Option<ContactManifold> {
    let mut m = ContactManifold::default();
    collide(a, ia, b, ib, M, &mut m).then_some(m)
}

fn min_sep(m: &ContactManifold) -> f32 {
    m.points
        .iter()
        .map(|p| p.separation)
        .fold(f32::MAX, f32::min)
}

#[test]
fn sphere_pairs_resting_penetrating_speculative_and_apart() {
    let s = Shape::sphere(0.5).unwrap();
    // Centres 1.0 apart: touching, separation 0, normal +x (from A to B).
    let m = run(&s, &at(0.0, 0.0, 0.0), &s, &at(1.0, 0.0, 0.0)).unwrap();
    assert!(min_sep(&m).abs() < 1e-6 && (m.normal - Vec3A::X).length() < 1e-6);
    // 0.9 apart: 0.1 deep.
    assert!(
        (min_sep(&run(&s, &at(0.0, 0.0, 0.0), &s, &at(0.9, 0.0, 0.0)).unwrap()) + 0.1).abs() < 1e-6
    );
    // 1.01 apart: speculative point with separation +0.01.
    assert!(
        (min_sep(&run(&s, &at(0.0, 0.0, 0.0), &s, &at(1.01, 0.0, 0.0)).unwrap()) - 0.01).abs()
            < 1e-6
    );
    // 1.05 apart: beyond the 2 cm margin, no manifold.
    assert!(run(&s, &at(0.0, 0.0, 0.0), &s, &at(1.05, 0.0, 0.0)).is_none());
    // Swapping A and B flips the normal.
    let m2 = run(&s, &at(1.0, 0.0, 0.0), &s, &at(0.0, 0.0, 0.0)).unwrap();
    assert!((m2.normal + Vec3A::X).length() < 1e-6);
}

#[test]
fn box_resting_on_a_box_face_gives_four_points_at_the_right_depth() {
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    // Cube bottom at y = -0.01: 1 cm deep.
    let m = run(&ground, &at(0.0, -0.5, 0.0), &cube, &at(0.3, 0.49, -0.2)).unwrap();
    assert_eq!(m.points.len(), 4);
    assert!((m.normal - Vec3A::Y).length() < 1e-5);
    for p in &m.points {
        assert!(
            (p.separation + 0.01).abs() < 1e-4,
            "separation {}",
            p.separation
        );
    }
    // The same pose a hair away gives the same feature ids (warm starting).
    let m2 = run(
        &ground,
        &at(0.0, -0.5, 0.0),
        &cube,
        &at(0.3001, 0.4899, -0.2),
    )
    .unwrap();
    let ids: Vec<u32> = m.points.iter().map(|p| p.feature).collect();
    let ids2: Vec<u32> = m2.points.iter().map(|p| p.feature).collect();
    assert_eq!(ids, ids2);
    // Separated by 1 cm: speculative points; by 5 cm: none.
    assert!(
        (min_sep(&run(&ground, &at(0.0, -0.5, 0.0), &cube, &at(0.0, 0.51, 0.0)).unwrap()) - 0.01)
            .abs()
            < 1e-4
    );
    assert!(run(&ground, &at(0.0, -0.5, 0.0), &cube, &at(0.0, 0.55, 0.0)).is_none());
}

#[test]
fn crossed_boxes_edge_to_edge_give_one_point() {
    // Two long thin boxes along x and z, rotated 45 degrees about their long axes so an
    // edge points at the other, crossing at 90 degrees: one point, normal along y.
    let bar = Shape::cuboid(Vec3::new(2.0, 0.5, 0.5)).unwrap();
    let bar_z = Shape::cuboid(Vec3::new(0.5, 0.5, 2.0)).unwrap();
    let h = 0.5 * 2f32.sqrt();
    let ia = Isometry::new(
        Vec3A::ZERO,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
    );
    let ib = Isometry::new(
        Vec3A::new(0.0, 2.0 * h - 0.05, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
    );
    let m = run(&bar, &ia, &bar_z, &ib).unwrap();
    assert_eq!(m.points.len(), 1, "edge-edge contact");
    assert!((m.normal - Vec3A::Y).length() < 1e-3, "normal {}", m.normal);
    assert!((m.points[0].separation + 0.05).abs() < 1e-3);
}

#[test]
fn vertex_on_face_and_rounded_pairs() {
    // A cube balanced on a corner above a ground box: one point at the corner.
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let q = Quat::from_rotation_arc(Vec3::new(1.0, 1.0, 1.0).normalize(), Vec3::Y);
    let corner = 0.5 * 3f32.sqrt();
    let m = run(
        &ground,
        &at(0.0, -0.5, 0.0),
        &cube,
        &Isometry::new(Vec3A::new(0.0, corner - 0.01, 0.0), q),
    )
    .unwrap();
    assert!(!m.points.is_empty());
    assert!((min_sep(&m) + 0.01).abs() < 1e-3);
    // Sphere on a box: separation analytic.
    let s = Shape::sphere(0.3).unwrap();
    let m = run(&cube, &at(0.0, 0.0, 0.0), &s, &at(0.0, 0.75, 0.0)).unwrap();
    assert!((min_sep(&m) + 0.05).abs() < 1e-5 && (m.normal - Vec3A::Y).length() < 1e-5);
    // Capsule lying on a box: two points (its segment), 1 cm deep.
    let cap = Shape::capsule(1.0, 0.25).unwrap();
    let lying = Isometry::new(
        Vec3A::new(0.0, 0.5 + 0.24, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    );
    let m = run(&ground, &at(0.0, 0.0, 0.0), &cap, &lying).unwrap();
    assert_eq!(m.points.len(), 2);
    assert!((min_sep(&m) + 0.01).abs() < 1e-3);
    // Capsules side by side, parallel: two points.
    let m = run(&cap, &at(0.0, 0.0, 0.0), &cap, &at(0.49, 0.0, 0.0)).unwrap();
    assert_eq!(m.points.len(), 2);
    assert!((min_sep(&m) + 0.01).abs() < 1e-5);
    // Sphere against a capsule's side.
    let m = run(&s, &at(0.54, 0.3, 0.0), &cap, &at(0.0, 0.0, 0.0)).unwrap();
    assert!((min_sep(&m) + 0.01).abs() < 1e-5);
}

#[test]
fn general_convex_pairs_through_gjk_and_epa() {
    // Cylinder standing on a box: a cap face, several points, 1 cm deep.
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    let cyl = Shape::cylinder(0.5, 0.4).unwrap();
    let m = run(&ground, &at(0.0, -0.5, 0.0), &cyl, &at(0.0, 0.49, 0.0)).unwrap();
    assert!(m.points.len() >= 3, "a cap rests on several points");
    assert!((min_sep(&m) + 0.01).abs() < 2e-3, "depth {}", min_sep(&m));
    assert!((m.normal - Vec3A::Y).length() < 1e-3);
    // Two unit-box hulls overlapping by 0.1 along x (EPA depth).
    let corners: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -0.5 } else { 0.5 },
                if i & 2 == 0 { -0.5 } else { 0.5 },
                if i & 4 == 0 { -0.5 } else { 0.5 },
            )
        })
        .collect();
    let hull = Shape::convex_hull(&corners).unwrap();
    let m = run(&hull, &at(0.0, 0.0, 0.0), &hull, &at(0.9, 0.05, 0.02)).unwrap();
    assert!(
        (min_sep(&m) + 0.1).abs() < 2e-3,
        "EPA depth {}",
        min_sep(&m)
    );
    assert!((m.normal - Vec3A::X).length() < 1e-3);
    // Separated hulls: GJK distance equals the gap.
    let m = run(&hull, &at(0.0, 0.0, 0.0), &hull, &at(1.015, 0.0, 0.0)).unwrap();
    assert!((min_sep(&m) - 0.015).abs() < 1e-4);
    // Half-space against a box: the four bottom corners.
    let plane = Shape::half_space(Vec3::Y, 0.0).unwrap();
    let m = run(
        &plane,
        &at(0.0, 0.0, 0.0),
        &Shape::cuboid(Vec3::splat(0.5)).unwrap(),
        &at(0.0, 0.49, 0.0),
    )
    .unwrap();
    assert_eq!(m.points.len(), 4);
    assert!((min_sep(&m) + 0.01).abs() < 1e-5);
}

#[test]
fn gjk_distance_matches_brute_force_on_random_hull_pairs() {
    // Brute force for two polytopes: the distance between convex hulls is attained between
    // a vertex and a face or two edges; sampling a dense grid of points on both surfaces
    // bounds it from above, and the exact value is within the grid spacing of that bound.
    let mut state = 12345u64;
    let mut f = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    for _ in 0..20 {
        let pts = |f: &mut dyn FnMut() -> f32| -> Vec<Vec3> {
            (0..12)
                .map(|_| Vec3::new(f() - 0.5, f() - 0.5, f() - 0.5))
                .collect()
        };
        let a = Shape::convex_hull(&pts(&mut f)).unwrap();
        let b = Shape::convex_hull(&pts(&mut f)).unwrap();
        let ia = Isometry::new(Vec3A::ZERO, Quat::from_rotation_y(f() * 6.0));
        let ib = Isometry::new(
            Vec3A::new(1.3 + f() * 0.5, f() * 0.3, f() * 0.3),
            Quat::from_rotation_x(f() * 6.0),
        );
        let mut m = ContactManifold::default();
        let hit = collide(&a, &ia, &b, &ib, 10.0, &mut m);
        assert!(hit);
        let gjk = min_sep(&m);
        // Brute force over vertex pairs gives an upper bound on the distance.
        let (Shape::ConvexHull(ha), Shape::ConvexHull(hb)) = (&a, &b) else {
            unreachable!()
        };
        let mut upper = f32::MAX;
        for va in ha.vertices() {
            for vb in hb.vertices() {
                upper = upper.min((ia.transform_point(*va) - ib.transform_point(*vb)).length());
            }
        }
        assert!(
            gjk <= upper + 1e-4,
            "GJK distance {gjk} above the vertex bound {upper}"
        );
        // Each reported point pair is as far apart as its separation says.
        for p in &m.points {
            let pa = ia.transform_point(p.local_a);
            let pb = ib.transform_point(p.local_b);
            assert!(
                ((pb - pa).length() - p.separation.abs()).abs() < 1e-3,
                "points {pa} {pb} vs {}",
                p.separation
            );
        }
    }
}
