//! Shapes: mass properties against closed forms, hulls, support maps and ray casts.

use joule_physics::math::{Mat3A, Vec3, Vec3A};
use joule_physics::shape::{Shape, ShapeError};

const PI: f32 = std::f32::consts::PI;

fn diag(m: Mat3A) -> Vec3A {
    Vec3A::new(m.x_axis.x, m.y_axis.y, m.z_axis.z)
}

fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-6)
}

#[test]
fn box_2_4_6_at_density_1234() {
    // m = rho * 2 * 4 * 6 = 59,232; I = m/12 * (4² + 6², 2² + 6², 2² + 4²) = m/12 (52, 40, 20).
    let mp = Shape::cuboid(Vec3::new(1.0, 2.0, 3.0))
        .unwrap()
        .mass_properties(1234.0)
        .unwrap();
    assert!(close(mp.mass, 59_232.0, 1e-5));
    let i = diag(mp.inertia);
    let m = mp.mass;
    for (got, want) in [
        (i.x, m / 12.0 * 52.0),
        (i.y, m / 12.0 * 40.0),
        (i.z, m / 12.0 * 20.0),
    ] {
        assert!(close(got, want, 1e-5), "{got} vs {want}");
    }
    assert_eq!(mp.center_of_mass, Vec3A::ZERO);
}

#[test]
fn sphere_capsule_cylinder_closed_forms() {
    let rho = 700.0;
    // Sphere: m = 4/3 pi r³ rho, I = 2/5 m r².
    let r = 0.7;
    let s = Shape::sphere(r).unwrap().mass_properties(rho).unwrap();
    let m = 4.0 / 3.0 * PI * r * r * r * rho;
    assert!(close(s.mass, m, 1e-5));
    assert!(close(diag(s.inertia).x, 0.4 * m * r * r, 1e-5));

    // Cylinder (radius r, height h): m = pi r² h rho; I_axis = m r²/2; I_perp = m (3r² + h²)/12.
    let (r, hh) = (0.5, 1.5);
    let h = 2.0 * hh;
    let c = Shape::cylinder(hh, r)
        .unwrap()
        .mass_properties(rho)
        .unwrap();
    let m = PI * r * r * h * rho;
    assert!(close(c.mass, m, 1e-5));
    assert!(close(diag(c.inertia).y, m * r * r / 2.0, 1e-5));
    assert!(close(
        diag(c.inertia).x,
        m * (3.0 * r * r + h * h) / 12.0,
        1e-5
    ));

    // Capsule = cylinder + sphere in mass; inertia about the axis adds the sphere's
    // 2/5 m r². Across the axis: each hemisphere (m/2, I_cm = 83/320 (m/2) r²) sits with its
    // centre of mass 3r/8 beyond the segment end (parallel-axis theorem).
    let k = Shape::capsule(hh, r).unwrap().mass_properties(rho).unwrap();
    let mc = PI * r * r * h * rho;
    let ms = 4.0 / 3.0 * PI * r * r * r * rho;
    assert!(close(k.mass, mc + ms, 1e-5));
    assert!(close(
        diag(k.inertia).y,
        mc * r * r / 2.0 + 0.4 * ms * r * r,
        1e-5
    ));
    let d = hh + 3.0 * r / 8.0;
    let ix = mc * (3.0 * r * r + h * h) / 12.0
        + 2.0 * (83.0 / 320.0 * ms / 2.0 * r * r + ms / 2.0 * d * d);
    assert!(close(diag(k.inertia).x, ix, 1e-5));
    // A capsule of zero half height is a sphere.
    let z = Shape::capsule(0.0, r)
        .unwrap()
        .mass_properties(rho)
        .unwrap();
    let sp = Shape::sphere(r).unwrap().mass_properties(rho).unwrap();
    assert!(close(z.mass, sp.mass, 1e-5) && close(diag(z.inertia).x, diag(sp.inertia).x, 1e-4));
}

fn box_corners(h: Vec3, offset: Vec3) -> Vec<Vec3> {
    let mut v = Vec::new();
    for sx in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sz in [-1.0, 1.0] {
                v.push(offset + Vec3::new(sx * h.x, sy * h.y, sz * h.z));
            }
        }
    }
    v
}

#[test]
fn hull_of_a_boxs_corners_matches_the_box() {
    let h = Vec3::new(1.0, 2.0, 3.0);
    let mut pts = box_corners(h, Vec3::ZERO);
    // Interior and face points are dropped.
    pts.push(Vec3::ZERO);
    pts.push(Vec3::new(0.3, 2.0, -1.0));
    let hull = Shape::convex_hull(&pts).unwrap();
    let Shape::ConvexHull(ref hh) = hull else {
        unreachable!()
    };
    assert_eq!(hh.faces().len(), 6, "coplanar triangles merge into 6 quads");
    assert!(hh.faces().iter().all(|f| f.vertices.len() == 4));
    assert_eq!(hh.vertices().len(), 8);
    let a = hull.mass_properties(1234.0).unwrap();
    let b = Shape::cuboid(h).unwrap().mass_properties(1234.0).unwrap();
    assert!(close(a.mass, b.mass, 1e-4));
    assert!(a.center_of_mass.length() < 1e-4);
    for (x, y) in [
        (a.inertia.x_axis, b.inertia.x_axis),
        (a.inertia.y_axis, b.inertia.y_axis),
        (a.inertia.z_axis, b.inertia.z_axis),
    ] {
        assert!((x - y).length() <= 1e-4 * b.mass * 10.0, "{x} vs {y}");
    }
    // A translated hull has its centre of mass translated.
    let moved = Shape::convex_hull(&box_corners(h, Vec3::new(5.0, -1.0, 2.0))).unwrap();
    let c = moved.mass_properties(1.0).unwrap().center_of_mass;
    assert!((c - Vec3A::new(5.0, -1.0, 2.0)).length() < 1e-4);
}

fn rng(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 40) as f32 / (1u64 << 24) as f32
}

#[test]
fn hull_of_random_sphere_points_contains_them_with_outward_faces() {
    let mut s = 0x1234_5678u64;
    let pts: Vec<Vec3> = (0..200)
        .map(|_| {
            let v = Vec3::new(rng(&mut s) - 0.5, rng(&mut s) - 0.5, rng(&mut s) - 0.5);
            v.normalize() * (0.5 + rng(&mut s))
        })
        .collect();
    let hull = Shape::convex_hull(&pts).unwrap();
    let Shape::ConvexHull(ref h) = hull else {
        unreachable!()
    };
    for f in h.faces() {
        assert!((f.normal.length() - 1.0).abs() < 1e-4);
        // Every input point lies behind every face plane.
        for p in &pts {
            assert!(f.normal.dot(Vec3A::from(*p)) <= f.offset + 1e-4);
        }
        // Faces are convex: each vertex is on the plane.
        for &v in &f.vertices {
            assert!((f.normal.dot(h.vertices()[v as usize]) - f.offset).abs() < 1e-3);
        }
    }
    assert!(hull.mass_properties(1.0).unwrap().mass > 0.0);
}

#[test]
fn hull_errors() {
    let n = f32::NAN;
    assert_eq!(
        Shape::convex_hull(&[Vec3::ZERO, Vec3::X, Vec3::Y]).err(),
        Some(ShapeError::TooFewPoints)
    );
    assert_eq!(
        Shape::convex_hull(&[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(n, 0.0, 0.0)]).err(),
        Some(ShapeError::NonFinite)
    );
    assert_eq!(
        Shape::convex_hull(&[Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Vec3::X * 3.0]).err(),
        Some(ShapeError::Degenerate),
        "collinear"
    );
    assert_eq!(
        Shape::convex_hull(&[Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)]).err(),
        Some(ShapeError::Degenerate),
        "coplanar"
    );
    assert_eq!(
        Shape::convex_hull(&[Vec3::ONE; 5]).err(),
        Some(ShapeError::TooFewPoints),
        "duplicates only"
    );
    assert_eq!(Shape::sphere(-1.0).err(), Some(ShapeError::NonPositiveSize));
    assert_eq!(
        Shape::cylinder(1.0, 0.0).err(),
        Some(ShapeError::NonPositiveSize)
    );
    assert_eq!(
        Shape::half_space(Vec3::ZERO, 0.0).err(),
        Some(ShapeError::NonPositiveSize)
    );
    assert_eq!(
        Shape::half_space(Vec3::Y, 0.0)
            .unwrap()
            .mass_properties(1.0)
            .err(),
        Some(ShapeError::InfiniteShape)
    );
    assert_eq!(
        Shape::sphere(1.0).unwrap().mass_properties(0.0).err(),
        Some(ShapeError::NonPositiveDensity)
    );
}

#[test]
fn support_points_maximise_the_direction_over_sampled_surfaces() {
    let shapes = [
        Shape::sphere(0.7).unwrap(),
        Shape::cuboid(Vec3::new(1.0, 0.5, 0.25)).unwrap(),
        Shape::capsule(0.8, 0.3).unwrap(),
        Shape::cylinder(0.6, 0.4).unwrap(),
        Shape::convex_hull(&box_corners(Vec3::new(0.5, 1.0, 0.7), Vec3::ZERO)).unwrap(),
    ];
    let mut s = 99u64;
    for shape in &shapes {
        let c = shape.as_convex().unwrap();
        // Sample surface points by casting rays from far away towards the centre.
        let mut samples = Vec::new();
        for _ in 0..400 {
            let d = Vec3A::new(rng(&mut s) - 0.5, rng(&mut s) - 0.5, rng(&mut s) - 0.5).normalize();
            let o = d * 10.0;
            if let Some(hit) = shape.cast_ray(o, -d * 10.0, 1.0) {
                samples.push(o - d * 10.0 * hit.fraction);
            }
        }
        assert!(samples.len() > 300);
        for _ in 0..50 {
            let d = Vec3A::new(rng(&mut s) - 0.5, rng(&mut s) - 0.5, rng(&mut s) - 0.5).normalize();
            let best = samples.iter().map(|p| p.dot(d)).fold(f32::MIN, f32::max);
            let sup = c.support(d).dot(d);
            // A cylinder's core is rounded by its convex radius (Jolt's scheme), which
            // trims its rim edge by up to (1 - 1/sqrt 2) of that radius.
            let rounding = if shape.kind() == joule_physics::shape::ShapeKind::Cylinder {
                0.3 * c.convex_radius()
            } else {
                0.0
            };
            assert!(
                sup >= best - 1e-3 - rounding,
                "{:?}: support {sup} below a surface sample {best}",
                shape.kind()
            );
            // And the support point is not beyond the shape's bounds.
            let p = c.support(d);
            let b = shape.local_aabb().expanded(1e-4);
            assert!(
                b.min.cmple(p).all() && p.cmple(b.max).all(),
                "{:?}: support {p} outside the bounds",
                shape.kind()
            );
        }
    }
}

#[test]
fn ray_casts_hit_faces_sides_and_caps() {
    let down = Vec3::new(0.0, -10.0, 0.0);
    let from_above = Vec3::new(0.0, 5.0, 0.0);
    // Sphere r=1: a ray from y=5 straight down hits y=1 at fraction 0.4, normal +Y.
    let hit = Shape::sphere(1.0)
        .unwrap()
        .cast_ray(from_above, down, 1.0)
        .unwrap();
    assert!(close(hit.fraction, 0.4, 1e-5) && (hit.normal - Vec3::Y).length() < 1e-5);
    // Box half 2: top face at y=2 -> fraction 0.3.
    let hit = Shape::cuboid(Vec3::splat(2.0))
        .unwrap()
        .cast_ray(from_above, down, 1.0)
        .unwrap();
    assert!(close(hit.fraction, 0.3, 1e-5) && hit.normal == Vec3::Y);
    // Capsule (hh 1, r 0.5): top at y = 1.5 -> 0.35; side from +x at x=0.5.
    let cap = Shape::capsule(1.0, 0.5).unwrap();
    assert!(close(
        cap.cast_ray(from_above, down, 1.0).unwrap().fraction,
        0.35,
        1e-5
    ));
    let side = cap
        .cast_ray(Vec3::new(5.0, 0.2, 0.0), Vec3::new(-10.0, 0.0, 0.0), 1.0)
        .unwrap();
    assert!(close(side.fraction, 0.45, 1e-5) && (side.normal - Vec3::X).length() < 1e-5);
    // Cylinder (hh 1, r 0.5): cap at y=1 -> 0.4 with normal +Y; side -> 0.45.
    let cyl = Shape::cylinder(1.0, 0.5).unwrap();
    let cap_hit = cyl.cast_ray(from_above, down, 1.0).unwrap();
    assert!(close(cap_hit.fraction, 0.4, 1e-5) && cap_hit.normal == Vec3::Y);
    assert!(close(
        cyl.cast_ray(Vec3::new(5.0, 0.2, 0.0), Vec3::new(-10.0, 0.0, 0.0), 1.0)
            .unwrap()
            .fraction,
        0.45,
        1e-5
    ));
    // Hull of a unit box: like the box.
    let hull = Shape::convex_hull(&box_corners(Vec3::splat(1.0), Vec3::ZERO)).unwrap();
    let h = hull.cast_ray(from_above, down, 1.0).unwrap();
    assert!(close(h.fraction, 0.4, 1e-5) && (h.normal - Vec3::Y).length() < 1e-5);
    // Half-space y <= 0.
    let hs = Shape::half_space(Vec3::Y, 0.0).unwrap();
    assert!(close(
        hs.cast_ray(from_above, down, 1.0).unwrap().fraction,
        0.5,
        1e-5
    ));
    // Misses, max fraction cut-off, and starting inside.
    for shape in [
        Shape::sphere(1.0).unwrap(),
        Shape::cuboid(Vec3::ONE).unwrap(),
        cap,
        cyl,
        hull,
    ] {
        assert!(
            shape
                .cast_ray(Vec3::new(5.0, 5.0, 0.0), down, 1.0)
                .is_none(),
            "{:?} miss",
            shape.kind()
        );
        assert!(
            shape.cast_ray(from_above, down, 0.2).is_none(),
            "{:?} cut off",
            shape.kind()
        );
        let inside = shape.cast_ray(Vec3::ZERO, down, 1.0).unwrap();
        assert_eq!(inside.fraction, 0.0, "{:?} from inside", shape.kind());
    }
}
