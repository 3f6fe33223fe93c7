//! Narrow-phase behaviour: every pair routine against analytic cases, GJK/EPA against
//! brute force on polytopes, dedicated routines against GJK/EPA, feature-id stability
//! and robustness on degenerate poses.
//!
//! Where expected values come from:
//! - analytic cases place B touching A along a known unit direction `n` (distances from
//!   the shapes' dimensions), then move B by `δ n`: the separation must be `δ` and the
//!   normal `n`; beyond the 2 cm margin there must be no manifold;
//! - brute force on polytopes: the distance of two disjoint convex polytopes is attained
//!   between a vertex and a face or between two edges, so the minimum of the exact
//!   point–triangle and segment–segment distances over all such pairs is the distance;
//!   the penetration depth of two overlapping polytopes is the smallest overlap of their
//!   projections over the face normals of their Minkowski difference, which are the face
//!   normals of both and the cross products of their edge directions (the separating
//!   axis theorem is exact on that axis set).

use joule_physics::math::{Isometry, Quat, Vec3, Vec3A};
use joule_physics::narrow_phase::{
    ContactManifold, DEFAULT_MARGIN, closest_points, collide, collide_convex,
};
use joule_physics::shape::{ConvexHull, Shape};

const M: f32 = DEFAULT_MARGIN;

fn at(x: f32, y: f32, z: f32) -> Isometry {
    Isometry::from_translation(Vec3A::new(x, y, z))
}

fn posed(t: Vec3A, q: Quat) -> Isometry {
    Isometry::new(t, q)
}

fn run(a: &Shape, ia: &Isometry, b: &Shape, ib: &Isometry) -> Option<ContactManifold> {
    let mut m = ContactManifold::default();
    let hit = collide(a, ia, b, ib, M, &mut m);
    assert_eq!(
        hit,
        !m.points.is_empty(),
        "return value says whether points exist"
    );
    hit.then_some(m)
}

fn min_sep(m: &ContactManifold) -> f32 {
    m.points
        .iter()
        .map(|p| p.separation)
        .fold(f32::MAX, f32::min)
}

fn ids(m: &ContactManifold) -> Vec<u32> {
    let mut v: Vec<u32> = m.points.iter().map(|p| p.feature).collect();
    v.sort_unstable();
    v
}

/// What every manifold must satisfy: finite values, a unit normal, at most 4 points with
/// unique ids, and surface points that differ by `separation * normal` (within `tol`).
fn check_invariants(m: &ContactManifold, ia: &Isometry, ib: &Isometry, tol: f32) {
    assert!(m.normal.is_finite() && (m.normal.length() - 1.0).abs() < 1e-4);
    assert!(!m.points.is_empty() && m.points.len() <= 4);
    let mut v = ids(m);
    v.dedup();
    assert_eq!(v.len(), m.points.len(), "feature ids are unique: {m:?}");
    for p in &m.points {
        assert!(p.local_a.is_finite() && p.local_b.is_finite() && p.separation.is_finite());
        let d = ib.transform_point(p.local_b) - ia.transform_point(p.local_a);
        assert!(
            (d - m.normal * p.separation).length() < tol,
            "on_b - on_a = {d} but separation * normal = {}",
            m.normal * p.separation
        );
    }
}

/// Swapping A and B flips the normal and keeps the separations.
fn check_swap(a: &Shape, ia: &Isometry, b: &Shape, ib: &Isometry, m: &ContactManifold) {
    let s = run(b, ib, a, ia).expect("the swapped pair collides too");
    assert!(
        (s.normal + m.normal).length() < 1e-3,
        "swapped normal {} vs {}",
        s.normal,
        m.normal
    );
    assert!((min_sep(&s) - min_sep(m)).abs() < 1e-3);
    assert_eq!(s.points.len(), m.points.len());
}

struct Case {
    name: &'static str,
    a: Shape,
    ia: Isometry,
    b: Shape,
    /// B's pose when the shapes just touch.
    ib: Isometry,
    /// Unit normal from A to B.
    n: Vec3A,
    /// Expected point count (None: at least one).
    points: Option<usize>,
    /// Tolerance on the separation.
    tol: f32,
}

fn cube_hull(h: f32) -> Shape {
    let corners: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -h } else { h },
                if i & 2 == 0 { -h } else { h },
                if i & 4 == 0 { -h } else { h },
            )
        })
        .collect();
    Shape::convex_hull(&corners).unwrap()
}

fn cases() -> Vec<Case> {
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
    let dir = Vec3A::new(1.0, 2.0, -0.5).normalize();
    let sphere = |r| Shape::sphere(r).unwrap();
    let cuboid = |x, y, z| Shape::cuboid(Vec3::new(x, y, z)).unwrap();
    let capsule = |h, r| Shape::capsule(h, r).unwrap();
    let cylinder = |h, r| Shape::cylinder(h, r).unwrap();
    let plane = Shape::half_space(Vec3::Y, 0.0).unwrap();
    let lying = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let id = Isometry::IDENTITY;
    vec![
        Case {
            // Centres 0.5 + 0.3 apart along an arbitrary direction.
            name: "sphere-sphere",
            a: sphere(0.5),
            ia: at(1.0, 2.0, 3.0),
            b: sphere(0.3),
            ib: Isometry::from_translation(Vec3A::new(1.0, 2.0, 3.0) + dir * 0.8),
            n: dir,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Sphere over the middle of a rotated box's +y face: 0.4 + 0.3 from its centre.
            name: "box-sphere (face)",
            a: cuboid(0.5, 0.4, 0.6),
            ia: posed(Vec3A::ZERO, q),
            b: sphere(0.3),
            ib: Isometry::from_translation(q * Vec3A::new(0.1, 0.7, -0.2)),
            n: q * Vec3A::Y,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Sphere off a box corner along the corner's diagonal: distance to the corner.
            name: "box-sphere (corner)",
            a: cuboid(0.5, 0.5, 0.5),
            ia: id,
            b: sphere(0.3),
            ib: Isometry::from_translation(Vec3A::splat(0.5) + Vec3A::ONE.normalize() * 0.3),
            n: Vec3A::ONE.normalize(),
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Sphere against the side of a rotated capsule: radii 0.3 + 0.2 off the axis.
            name: "sphere-capsule",
            a: sphere(0.3),
            ia: Isometry::from_translation(q * Vec3A::new(0.5, 0.2, 0.0)),
            b: capsule(0.5, 0.2),
            ib: posed(Vec3A::ZERO, q),
            n: q * -Vec3A::X,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Axes along y and z, crossing 0.25 + 0.2 apart along x.
            name: "capsule-capsule (crossed)",
            a: capsule(1.0, 0.25),
            ia: id,
            b: capsule(1.0, 0.2),
            ib: posed(
                Vec3A::new(0.45, 0.1, 0.0),
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
            ),
            n: Vec3A::X,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Parallel axes side by side, offset along the axis: two points.
            name: "capsule-capsule (parallel)",
            a: capsule(1.0, 0.25),
            ia: id,
            b: capsule(1.0, 0.25),
            ib: at(0.0, 0.5, 0.5),
            n: Vec3A::Z,
            points: Some(2),
            tol: 1e-5,
        },
        Case {
            // Capsule lying on a box's top face: its bottom line on y = 0.5.
            name: "box-capsule (lying)",
            a: cuboid(2.0, 0.5, 2.0),
            ia: id,
            b: capsule(0.6, 0.25),
            ib: posed(Vec3A::new(0.3, 0.75, -0.4), lying),
            n: Vec3A::Y,
            points: Some(2),
            tol: 1e-5,
        },
        Case {
            // Capsule standing on a rotated box's face: one point under its bottom cap.
            name: "box-capsule (standing)",
            a: cuboid(1.0, 0.5, 1.0),
            ia: posed(Vec3A::ZERO, q),
            b: capsule(0.6, 0.25),
            ib: posed(q * Vec3A::new(0.2, 1.35, 0.1), q),
            n: q * Vec3A::Y,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Capsule across a box edge (the edge along z at x = y = 0.5), its axis along
            // z too, pushed along the edge's diagonal: one point at the edge.
            name: "box-capsule (edge)",
            a: cuboid(0.5, 0.5, 0.5),
            ia: id,
            b: capsule(0.3, 0.2),
            ib: posed(
                Vec3A::new(0.5, 0.5, 0.0) + Vec3A::new(1.0, 1.0, 0.0).normalize() * 0.2,
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
            ),
            n: Vec3A::new(1.0, 1.0, 0.0).normalize(),
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            // Unit cube on a ground box, offset so the faces overlap partly: 4 points.
            name: "box-box (face)",
            a: cuboid(5.0, 0.5, 5.0),
            ia: at(0.0, -0.5, 0.0),
            b: cuboid(0.5, 0.5, 0.5),
            ib: at(0.3, 0.5, -0.2),
            n: Vec3A::Y,
            points: Some(4),
            tol: 1e-5,
        },
        Case {
            // Cube balanced on a corner above a ground box: one point at the corner.
            name: "box-box (vertex-face)",
            a: cuboid(5.0, 0.5, 5.0),
            ia: at(0.0, -0.5, 0.0),
            b: cuboid(0.5, 0.5, 0.5),
            ib: posed(
                Vec3A::new(0.0, 0.5 * 3f32.sqrt(), 0.0),
                Quat::from_rotation_arc(Vec3::ONE.normalize(), Vec3::Y),
            ),
            n: Vec3A::Y,
            points: Some(1),
            tol: 1e-4,
        },
        Case {
            // Two bars rotated 45° about their long axes (x and z) so an edge of each
            // points at the other, crossing at 90°: edges meet at y = h√2 each.
            name: "box-box (edge-edge)",
            a: cuboid(2.0, 0.5, 0.5),
            ia: posed(
                Vec3A::ZERO,
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
            ),
            b: cuboid(0.5, 0.5, 2.0),
            ib: posed(
                Vec3A::new(0.0, 2.0 * 0.5 * 2f32.sqrt(), 0.0),
                Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
            ),
            n: Vec3A::Y,
            points: Some(1),
            tol: 1e-4,
        },
        Case {
            name: "sphere-half-space",
            a: sphere(0.5),
            ia: at(1.0, 0.5, 2.0),
            b: plane.clone(),
            ib: id,
            n: -Vec3A::Y,
            points: Some(1),
            tol: 1e-5,
        },
        Case {
            name: "capsule-half-space (lying)",
            a: capsule(0.7, 0.3),
            ia: posed(Vec3A::new(0.0, 0.3, 0.0), lying),
            b: plane.clone(),
            ib: id,
            n: -Vec3A::Y,
            points: Some(2),
            tol: 1e-5,
        },
        Case {
            // A rotated plane (normal along q·Y through q·(0,1,0)... placed at the box's
            // bottom face): 4 corners.
            name: "box-half-space",
            a: cuboid(0.4, 0.3, 0.6),
            ia: posed(Vec3A::ZERO, q),
            b: plane.clone(),
            ib: posed(q * Vec3A::new(0.0, -0.3, 0.0), q),
            n: q * -Vec3A::Y,
            points: Some(4),
            tol: 1e-5,
        },
        Case {
            name: "hull-half-space",
            a: cube_hull(0.5),
            ia: at(0.0, 0.5, 0.0),
            b: plane.clone(),
            ib: id,
            n: -Vec3A::Y,
            points: Some(4),
            tol: 1e-5,
        },
        Case {
            // Standing cylinder: its cap polygon; 8 rim points reduced to 4.
            name: "cylinder-half-space (cap)",
            a: cylinder(0.5, 0.4),
            ia: at(0.0, 0.5, 0.0),
            b: plane.clone(),
            ib: id,
            n: -Vec3A::Y,
            points: Some(4),
            tol: 1e-5,
        },
        Case {
            // Lying cylinder: its side line, two points.
            name: "cylinder-half-space (side)",
            a: cylinder(0.5, 0.4),
            ia: posed(Vec3A::new(0.0, 0.4, 0.0), lying),
            b: plane,
            ib: id,
            n: -Vec3A::Y,
            points: Some(2),
            tol: 1e-5,
        },
        Case {
            name: "box-cylinder (GJK, cap on face)",
            a: cuboid(2.0, 0.5, 2.0),
            ia: id,
            b: cylinder(0.5, 0.4),
            ib: at(0.1, 1.0, 0.2),
            n: Vec3A::Y,
            points: Some(4),
            tol: 1e-3,
        },
        Case {
            name: "hull-hull (GJK, face on face)",
            a: cube_hull(0.5),
            ia: id,
            b: cube_hull(0.5),
            ib: at(0.2, 1.0, -0.3),
            n: Vec3A::Y,
            points: Some(4),
            tol: 1e-3,
        },
        Case {
            name: "sphere-hull (GJK)",
            a: sphere(0.3),
            ia: at(0.1, 0.8, 0.2),
            b: cube_hull(0.5),
            ib: id,
            n: -Vec3A::Y,
            points: Some(1),
            tol: 1e-4,
        },
        Case {
            name: "cylinder-cylinder (GJK, stacked caps)",
            a: cylinder(0.5, 0.4),
            ia: id,
            b: cylinder(0.3, 0.3),
            ib: at(0.05, 0.8, 0.0),
            n: Vec3A::Y,
            points: Some(4),
            tol: 1e-3,
        },
        Case {
            // Capsule lying on a cylinder's cap.
            name: "capsule-cylinder (GJK)",
            a: capsule(0.3, 0.2),
            ia: posed(Vec3A::new(0.0, 0.7, 0.0), lying),
            b: cylinder(0.5, 0.6),
            ib: id,
            n: -Vec3A::Y,
            points: Some(2),
            tol: 1e-3,
        },
    ]
}

#[test]
fn every_pair_routine_resting_penetrating_speculative_and_apart() {
    for c in cases() {
        for delta in [-0.05f32, -0.01, 0.0, 0.01, 0.019, 0.021, 0.05] {
            let ib = Isometry::new(c.ib.translation + c.n * delta, c.ib.rotation);
            let got = run(&c.a, &c.ia, &c.b, &ib);
            let Some(m) = got else {
                assert!(delta > M, "{}: no manifold at δ = {delta}", c.name);
                continue;
            };
            assert!(delta <= M, "{}: a manifold at δ = {delta}: {m:?}", c.name);
            assert!(
                (m.normal - c.n).length() < 1e-3,
                "{} δ = {delta}: normal {} expected {}",
                c.name,
                m.normal,
                c.n
            );
            assert!(
                (min_sep(&m) - delta).abs() < c.tol,
                "{} δ = {delta}: separation {} expected {delta}",
                c.name,
                min_sep(&m)
            );
            if let Some(k) = c.points {
                assert_eq!(m.points.len(), k, "{} δ = {delta}: {m:?}", c.name);
            }
            check_invariants(&m, &c.ia, &ib, 1e-3);
            check_swap(&c.a, &c.ia, &c.b, &ib, &m);
        }
    }
}

#[test]
fn box_box_face_contact_has_four_points_at_the_depth_of_each_corner() {
    // A cube tilted by small angles over a ground box: the depth of each bottom corner is
    // its height below y = 0, computed from the rotation directly.
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let ig = at(0.0, -0.5, 0.0);
    for (yaw, tilt) in [(0.0f32, 0.0f32), (0.4, 0.0), (0.4, 0.01), (1.3, -0.02)] {
        let q = Quat::from_rotation_y(yaw) * Quat::from_rotation_x(tilt);
        let ic = posed(Vec3A::new(0.2, 0.49, -0.1), q);
        let m = run(&ground, &ig, &cube, &ic).unwrap();
        assert_eq!(m.points.len(), 4, "yaw {yaw} tilt {tilt}");
        assert!((m.normal - Vec3A::Y).length() < 1e-5);
        let mut expected: Vec<f32> = (0..8)
            .map(|k| {
                let c = Vec3A::new(
                    if k & 1 == 0 { -0.5 } else { 0.5 },
                    if k & 2 == 0 { -0.5 } else { 0.5 },
                    if k & 4 == 0 { -0.5 } else { 0.5 },
                );
                ic.transform_point(c).y
            })
            .collect();
        expected.sort_by(f32::total_cmp);
        let mut got: Vec<f32> = m.points.iter().map(|p| p.separation).collect();
        got.sort_by(f32::total_cmp);
        for (g, e) in got.iter().zip(&expected[..4]) {
            assert!((g - e).abs() < 1e-5, "separation {g} expected {e}");
        }
        // Each point on B is one of the cube's bottom corners (in the cube's frame).
        for p in &m.points {
            assert!((p.local_b.abs() - Vec3A::splat(0.5)).abs().max_element() < 1e-4);
        }
    }
}

#[test]
fn crossed_boxes_edge_to_edge_give_one_point_at_the_crossing() {
    let bar = Shape::cuboid(Vec3::new(2.0, 0.5, 0.5)).unwrap();
    let bar_z = Shape::cuboid(Vec3::new(0.5, 0.5, 2.0)).unwrap();
    let h = 0.5 * 2f32.sqrt();
    let ia = posed(
        Vec3A::ZERO,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
    );
    let ib = posed(
        Vec3A::new(0.0, 2.0 * h - 0.05, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
    );
    let m = run(&bar, &ia, &bar_z, &ib).unwrap();
    assert_eq!(m.points.len(), 1);
    assert!((m.normal - Vec3A::Y).length() < 1e-4);
    assert!((m.points[0].separation + 0.05).abs() < 1e-4);
    // A's edge is the line y = h, z = 0 (along x); B's crosses it at x = 0.
    let pa = ia.transform_point(m.points[0].local_a);
    assert!((pa - Vec3A::new(0.0, h, 0.0)).length() < 1e-3, "{pa}");
}

#[test]
fn feature_ids_survive_small_perturbations_of_resting_poses() {
    // Slightly perturbed poses of the same resting configuration touch the same
    // features, so the ids (the warm-start keys) must not change.
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    let plane = Shape::half_space(Vec3::Y, 0.0).unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let hull = cube_hull(0.5);
    let cyl = Shape::cylinder(0.5, 0.4).unwrap();
    let cap = Shape::capsule(0.6, 0.25).unwrap();
    let lying = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    // Sub-millimetre: the hull-on-hull pose has edges exactly aligned in z, where any
    // larger motion really changes which features touch.
    let nudge = |iso: &Isometry, k: f32| {
        posed(
            iso.translation + Vec3A::new(1e-4, -1e-4, 5e-5) * k,
            Quat::from_rotation_y(3e-4 * k) * Quat::from_rotation_x(2e-4 * k) * iso.rotation,
        )
    };
    let setups: Vec<(&str, &Shape, Isometry, &Shape, Isometry)> = vec![
        (
            "box on box",
            &ground,
            at(0.0, -0.5, 0.0),
            &cube,
            at(0.2, 0.49, 0.1),
        ),
        (
            "box on box, yawed",
            &ground,
            at(0.0, -0.5, 0.0),
            &cube,
            posed(Vec3A::new(0.2, 0.49, 0.1), Quat::from_rotation_y(0.5)),
        ),
        (
            "box on plane",
            &cube,
            at(0.0, 0.49, 0.0),
            &plane,
            Isometry::IDENTITY,
        ),
        (
            "hull on hull",
            &hull,
            at(0.0, -0.5, 0.0),
            &hull,
            at(0.1, 0.49, 0.0),
        ),
        (
            "cylinder on box",
            &ground,
            at(0.0, -0.5, 0.0),
            &cyl,
            at(0.0, 0.49, 0.0),
        ),
        (
            "capsule on box",
            &ground,
            at(0.0, -0.5, 0.0),
            &cap,
            posed(Vec3A::new(0.0, 0.24, 0.0), lying),
        ),
    ];
    for (name, a, ia, b, ib) in setups {
        let m0 = run(a, &ia, b, &ib).unwrap();
        for k in [-1.0, 1.0, 2.0] {
            let m1 = run(a, &ia, b, &nudge(&ib, k)).unwrap();
            assert_eq!(ids(&m0), ids(&m1), "{name}: ids changed under a nudge");
        }
    }
}

// --- Brute force on polytopes -----------------------------------------------------------

/// Closest point to `p` on triangle `abc` (Ericson 5.1.5, written independently of the
/// engine's GJK, which only ever queries the origin).
fn closest_on_triangle(p: Vec3A, a: Vec3A, b: Vec3A, c: Vec3A) -> Vec3A {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// Distance between segments (dense-free: minimise over the clamped closed form).
fn segment_distance(p1: Vec3A, q1: Vec3A, p2: Vec3A, q2: Vec3A) -> f32 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = a * e - b * b;
    let mut s = if denom > 1e-12 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    ((p1 + d1 * s) - (p2 + d2 * t)).length()
}

/// A polytope in world space: vertices, triangles (fan of each face) and edges.
struct Poly {
    verts: Vec<Vec3A>,
    tris: Vec<[Vec3A; 3]>,
    edges: Vec<(Vec3A, Vec3A)>,
    normals: Vec<Vec3A>,
}

fn world_poly(h: &ConvexHull, iso: &Isometry) -> Poly {
    let verts: Vec<Vec3A> = h
        .vertices()
        .iter()
        .map(|&v| iso.transform_point(v))
        .collect();
    let mut tris = Vec::new();
    let mut edges = Vec::new();
    let mut normals = Vec::new();
    for f in h.faces() {
        let idx: Vec<Vec3A> = f.vertices.iter().map(|&i| verts[i as usize]).collect();
        for k in 1..idx.len() - 1 {
            tris.push([idx[0], idx[k], idx[k + 1]]);
        }
        for k in 0..idx.len() {
            edges.push((idx[k], idx[(k + 1) % idx.len()]));
        }
        normals.push(iso.transform_vector(f.normal));
    }
    Poly {
        verts,
        tris,
        edges,
        normals,
    }
}

/// Exact signed distance of two convex polytopes (negative: penetration depth).
fn brute_signed_distance(p: &Poly, q: &Poly) -> f32 {
    // SAT over face normals and edge cross products: exact depth when overlapping.
    let mut axes: Vec<Vec3A> = p.normals.iter().chain(&q.normals).copied().collect();
    for (a0, a1) in &p.edges {
        for (b0, b1) in &q.edges {
            let c = (*a1 - *a0).cross(*b1 - *b0);
            if c.length_squared() > 1e-10 {
                axes.push(c.normalize());
            }
        }
    }
    let span = |vs: &[Vec3A], l: Vec3A| {
        vs.iter()
            .map(|v| v.dot(l))
            .fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
    };
    let mut best_gap = f32::MIN;
    for l in axes {
        let (plo, phi) = span(&p.verts, l);
        let (qlo, qhi) = span(&q.verts, l);
        best_gap = best_gap.max((qlo - phi).max(plo - qhi));
    }
    if best_gap <= 0.0 {
        return best_gap;
    }
    // Disjoint: the distance is between a vertex and a face or two edges.
    let mut d = f32::MAX;
    for (vs, tris) in [(&p.verts, &q.tris), (&q.verts, &p.tris)] {
        for v in vs.iter() {
            for t in tris.iter() {
                d = d.min((closest_on_triangle(*v, t[0], t[1], t[2]) - *v).length());
            }
        }
    }
    for (a0, a1) in &p.edges {
        for (b0, b1) in &q.edges {
            d = d.min(segment_distance(*a0, *a1, *b0, *b1));
        }
    }
    d
}

/// xorshift: deterministic random numbers in [0, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
    fn rotation(&mut self) -> Quat {
        let axis = Vec3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        );
        Quat::from_axis_angle(
            axis.try_normalize().unwrap_or(Vec3::Y),
            self.range(0.0, std::f32::consts::TAU),
        )
    }
    fn direction(&mut self) -> Vec3A {
        Vec3A::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        )
        .normalize_or(Vec3A::X)
    }
}

fn random_hull(rng: &mut Rng, boxy: bool) -> Shape {
    if boxy {
        let h = Vec3::new(
            rng.range(0.1, 0.8),
            rng.range(0.1, 0.8),
            rng.range(0.1, 0.8),
        );
        let pts: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { -h.x } else { h.x },
                    if i & 2 == 0 { -h.y } else { h.y },
                    if i & 4 == 0 { -h.z } else { h.z },
                )
            })
            .collect();
        return Shape::convex_hull(&pts).unwrap();
    }
    let pts: Vec<Vec3> = (0..10)
        .map(|_| {
            Vec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
            )
        })
        .collect();
    Shape::convex_hull(&pts).unwrap()
}

#[test]
fn gjk_and_epa_match_brute_force_on_random_polytopes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut apart, mut deep) = (0, 0);
    for k in 0..300 {
        let a = random_hull(&mut rng, k % 2 == 0);
        let b = random_hull(&mut rng, k % 3 == 0);
        let ia = posed(
            Vec3A::new(
                rng.range(-5.0, 5.0),
                rng.range(-5.0, 5.0),
                rng.range(-5.0, 5.0),
            ),
            rng.rotation(),
        );
        let ib = posed(
            ia.translation + rng.direction() * rng.range(0.2, 1.6),
            rng.rotation(),
        );
        let (Shape::ConvexHull(ha), Shape::ConvexHull(hb)) = (&a, &b) else {
            unreachable!()
        };
        let truth = brute_signed_distance(&world_poly(ha, &ia), &world_poly(hb, &ib));
        let cp = closest_points(a.as_convex().unwrap(), &ia, b.as_convex().unwrap(), &ib);
        // GJK is exact up to float error; EPA stops within 1e-4 relative of the depth
        // (over 5,000 such pairs the worst errors were 1.7e-6 and 9.5e-5).
        let tol = if truth > 0.0 { 2e-5 } else { 5e-4 };
        assert!(
            (cp.separation - truth).abs() < tol,
            "pair {k}: closest_points {} brute force {truth}",
            cp.separation
        );
        assert!(((cp.point_b - cp.point_a) - cp.normal * cp.separation).length() < 2e-3);
        if truth > 0.0 {
            apart += 1;
        } else {
            deep += 1;
        }
    }
    // Both branches were exercised.
    assert!(apart > 50 && deep > 50, "apart {apart}, overlapping {deep}");
}

#[test]
fn epa_depth_of_boxes_overlapping_by_a_known_amount() {
    // Through the general convex path (not box–box): unit cubes 1 - d apart along a
    // rotated axis overlap by exactly d along it.
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    let c = cube.as_convex().unwrap();
    let q = Quat::from_euler(glam::EulerRot::XYZ, 0.2, 0.9, -0.4);
    for d in [0.0f32, 0.001, 0.05, 0.3, 0.7] {
        let ia = posed(Vec3A::new(3.0, -1.0, 2.0), q);
        let ib = posed(ia.translation + q * Vec3A::X * (1.0 - d), q);
        let mut m = ContactManifold::default();
        assert!(collide_convex(c, &ia, c, &ib, M, &mut m));
        assert!(
            (min_sep(&m) + d).abs() < 1e-3,
            "d {d}: separation {}",
            min_sep(&m)
        );
        assert!((m.normal - q * Vec3A::X).length() < 1e-3);
        assert_eq!(m.points.len(), 4, "face on face");
        check_invariants(&m, &ia, &ib, 2e-3);
    }
}

#[test]
fn dedicated_and_general_manifolds_agree_with_exact_distances_on_random_poses() {
    // Sphere, box and capsule pairs in random poses, through their dedicated routine
    // (`collide`) and through the general path (`collide_convex`: GJK/EPA plus face
    // clipping). The reference is `closest_points` (GJK distance, exact for these
    // shapes, checked against brute force above; EPA depth when overlapping).
    // - Overlapping: every routine is exact up to its axis preference, so the deepest
    //   point matches within 2 mm + 6 % (box SAT prefers faces within 1 mm + 5 %).
    // - Apart within the margin: the deepest point is within 1 mm of the distance
    //   (clipping projects along the normal onto the reference plane and its 0.1 % slop
    //   may keep a point just past a face's edge; over 30,000 poses the worst was
    //   0.05 mm dedicated, 0.25 mm general).
    // - No manifold only when the exact distance exceeds the margin (within 1 mm).
    // - No point is deeper than the overlap of the shapes' projections on the
    //   manifold's own normal (a support-function bound, exact), within 0.1 mm + 0.2 %
    //   (EPA's normal is accurate to its 1e-4 relative stopping tolerance, and a point
    //   far from the patch centre sees a tilt of the normal as depth).
    let mut rng = Rng(42);
    let shapes = [
        Shape::sphere(0.3).unwrap(),
        Shape::cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap(),
        Shape::capsule(0.4, 0.2).unwrap(),
    ];
    let mut worst = [0.0f32; 2];
    let mut compared = 0;
    for k in 0..900 {
        let (i, j) = (k % 3, (k / 3) % 3);
        let (a, b) = (&shapes[i], &shapes[j]);
        let (ca, cb) = (a.as_convex().unwrap(), b.as_convex().unwrap());
        let ia = posed(Vec3A::ZERO, rng.rotation());
        let ib = posed(rng.direction() * rng.range(0.3, 1.2), rng.rotation());
        let truth = closest_points(ca, &ia, cb, &ib).separation;
        for (path, general) in [("dedicated", false), ("general", true)] {
            let mut m = ContactManifold::default();
            let hit = if general {
                collide_convex(ca, &ia, cb, &ib, M, &mut m)
            } else {
                collide(a, &ia, b, &ib, M, &mut m)
            };
            if !hit {
                assert!(
                    truth > M - 1e-3,
                    "pair {k} ({i},{j}) {path}: none at {truth}"
                );
                continue;
            }
            assert!(
                truth <= M + 1e-3,
                "pair {k} ({i},{j}) {path}: a manifold at {truth}"
            );
            check_invariants(&m, &ia, &ib, 2e-3);
            let d = min_sep(&m);
            let tol = if truth < 0.0 {
                2e-3 + 0.06 * truth.abs()
            } else {
                1e-3
            };
            assert!(
                (d - truth).abs() < tol,
                "pair {k} ({i},{j}) {path}: deepest {d}, exact {truth}"
            );
            if truth >= 0.0 {
                worst[usize::from(general)] = worst[usize::from(general)].max((d - truth).abs());
            }
            let n = m.normal;
            let reach_a = ia.transform_point(ca.support(ia.inverse_transform_vector(n)));
            let reach_b = ib.transform_point(cb.support(ib.inverse_transform_vector(-n)));
            let overlap_sep = (reach_b - reach_a).dot(n);
            assert!(
                d >= overlap_sep - 1e-4 - 2e-3 * d.abs(),
                "pair {k} ({i},{j}) {path}: {d} deeper than the projections allow ({overlap_sep})"
            );
            compared += 1;
        }
    }
    eprintln!(
        "worst speculative error: dedicated {} general {}",
        worst[0], worst[1]
    );
    assert!(compared > 200, "compared {compared}");
}

#[test]
fn every_convex_pair_near_contact_agrees_with_exact_distances_both_ways() {
    // Random poses of every pair of convex kinds, moved along the exact normal so the
    // exact separation (`closest_points`: GJK, EPA; checked against brute force above)
    // is a random value in [-5, +3] cm, around the 2 cm margin: where resting and
    // speculative contacts live. Checks:
    // - a manifold exists exactly when the separation is within the margin (±1 mm), in
    //   both argument orders;
    // - its deepest point is within 1.5 mm + 7 % of the exact separation, in both orders
    //   (box–box prefers face axes within 0.5 mm + 2 % and edges within 1 mm + 5 %; the
    //   other routines are exact up to the 0.1 % clipping slop);
    // - the normal is good: the exact separation is the largest gap between the two
    //   shapes' projections over all directions, so the gap along the reported normal
    //   must be within the same 1.5 mm + 7 % of it (a well-conditioned measure even where
    //   the normal itself is not; over 40,000 poses the worst loss was 3 mm for box–box,
    //   from its axis preference, and below 0.2 mm for every other pair);
    // - the two orders' normals are opposite within 0.05 where the normal is well
    //   defined: over 2 mm deep, cores not within 2 mm of touching (a vertex on the
    //   centre line of a rounded edge has a whole fan of normals), and not both normals
    //   reaching the exact separation within 0.1 mm (then the least-overlap direction is
    //   not unique and either is right). Not tighter: on a cylinder's curved core EPA
    //   stops on one facet of its polygonal approximation, about
    //   sqrt(8 * 5e-6 / 0.27) ≈ 0.014 rad wide, and each order builds its own;
    // - the manifold invariants (unit normal, unique ids, on_b - on_a = separation * n).
    let mut rng = Rng(7);
    let pts: Vec<Vec3> = (0..12)
        .map(|_| {
            Vec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
            )
        })
        .collect();
    let shapes = [
        Shape::sphere(0.3).unwrap(),
        Shape::cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap(),
        Shape::capsule(0.4, 0.2).unwrap(),
        Shape::cylinder(0.4, 0.3).unwrap(),
        Shape::convex_hull(&pts).unwrap(),
    ];
    let mut hits = 0;
    for k in 0..8000 {
        let (i, j) = (k % 5, (k / 5) % 5);
        let (a, b) = (&shapes[i], &shapes[j]);
        let (ca, cb) = (a.as_convex().unwrap(), b.as_convex().unwrap());
        let ia = posed(Vec3A::new(1.0, 2.0, 3.0), rng.rotation());
        let mut ib = posed(ia.translation + rng.direction() * 0.8, rng.rotation());
        let target = rng.range(-0.05, 0.03);
        for _ in 0..3 {
            let cp = closest_points(ca, &ia, cb, &ib);
            ib.translation += cp.normal * (target - cp.separation);
        }
        let truth = closest_points(ca, &ia, cb, &ib).separation;
        let ab = run(a, &ia, b, &ib);
        let ba = run(b, &ib, a, &ia);
        assert_eq!(
            ab.is_some(),
            ba.is_some(),
            "pair {k} ({i},{j}): swap changes the hit"
        );
        let Some(m) = ab else {
            assert!(
                truth > M - 1e-3,
                "pair {k} ({i},{j}): none at separation {truth}"
            );
            continue;
        };
        let s = ba.unwrap();
        assert!(
            truth < M + 1e-3,
            "pair {k} ({i},{j}): a manifold at {truth}"
        );
        check_invariants(&m, &ia, &ib, 1e-3);
        check_invariants(&s, &ib, &ia, 1e-3);
        let (dm, ds) = (min_sep(&m), min_sep(&s));
        // Box–box's axis preferences: 1 mm + 5 % (edges) on top of 0.5 mm + 2 % (faces).
        let pref = 1.5e-3 + 0.07 * truth.abs();
        assert!(
            (dm - truth).abs() < pref,
            "pair {k} ({i},{j}): {dm} vs exact {truth}"
        );
        assert!(
            (ds - truth).abs() < pref,
            "pair {k} ({i},{j}): swapped {ds} vs exact {truth}"
        );
        assert!(
            (dm - ds).abs() < pref,
            "pair {k} ({i},{j}): {dm} vs swapped {ds}"
        );
        let gap = |n: Vec3A| {
            let reach_a = ia.transform_point(ca.support(ia.inverse_transform_vector(n)));
            let reach_b = ib.transform_point(cb.support(ib.inverse_transform_vector(-n)));
            (reach_b - reach_a).dot(n)
        };
        for n in [m.normal, -s.normal] {
            let g = gap(n);
            assert!(
                truth - g < pref && g < truth + 1e-4,
                "pair {k} ({i},{j}): gap {g} along {n}, exact {truth}"
            );
        }
        let core = truth + ca.convex_radius() + cb.convex_radius();
        let both_optimal = truth - gap(m.normal) < 1e-4 && truth - gap(-s.normal) < 1e-4;
        if truth < -2e-3 && core.abs() > 2e-3 && !both_optimal {
            assert!(
                (m.normal + s.normal).length() < 0.05,
                "pair {k} ({i},{j}): normal {} vs swapped {}",
                m.normal,
                s.normal
            );
        }
        hits += 1;
    }
    assert!(hits > 5000, "hits {hits}");
}

#[test]
fn degenerate_poses_never_give_nan() {
    // Coincident centres and identical poses, for every pair of kinds; parallel edges
    // (identical boxes) included.
    let shapes = [
        Shape::sphere(0.5).unwrap(),
        Shape::cuboid(Vec3::splat(0.5)).unwrap(),
        Shape::capsule(0.5, 0.3).unwrap(),
        Shape::cylinder(0.5, 0.4).unwrap(),
        cube_hull(0.5),
        Shape::half_space(Vec3::Y, 0.0).unwrap(),
    ];
    let poses = [
        Isometry::IDENTITY,
        posed(Vec3A::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.3)),
    ];
    for a in &shapes {
        for b in &shapes {
            for ia in &poses {
                let mut m = ContactManifold::default();
                let hit = collide(a, ia, b, ia, M, &mut m);
                let both_planes = a.as_convex().is_none() && b.as_convex().is_none();
                assert_eq!(hit, !both_planes, "{:?} {:?}", a.kind(), b.kind());
                if hit {
                    check_invariants(&m, ia, ia, 2.0);
                    assert!(min_sep(&m) < 0.0, "coincident shapes overlap");
                }
            }
        }
    }
}
