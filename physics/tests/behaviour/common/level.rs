//! Level geometry builders shared by the composite-shape tests.
#![allow(dead_code)]

use joule_physics::math::{Isometry, Quat, Vec2, Vec3, Vec3A};
use joule_physics::shape::{CompoundChild, Shape};

/// A flat grid mesh at y = 0 of `nx × nz` cells of `size` m, starting at (x0, z0); each
/// cell is two triangles facing up.
pub fn grid_mesh(nx: u32, nz: u32, size: f32, x0: f32, z0: f32) -> Shape {
    grid_mesh_with(nx, nz, size, x0, z0, |_, _| 0.0)
}

/// A grid mesh with height `h(x, z)`.
pub fn grid_mesh_with(
    nx: u32,
    nz: u32,
    size: f32,
    x0: f32,
    z0: f32,
    h: impl Fn(f32, f32) -> f32,
) -> Shape {
    let mut v = Vec::new();
    for j in 0..=nz {
        for i in 0..=nx {
            let (x, z) = (x0 + i as f32 * size, z0 + j as f32 * size);
            v.push(Vec3::new(x, h(x, z), z));
        }
    }
    let id = |i: u32, j: u32| j * (nx + 1) + i;
    let mut t = Vec::new();
    for j in 0..nz {
        for i in 0..nx {
            t.push([id(i, j), id(i, j + 1), id(i + 1, j + 1)]);
            t.push([id(i, j), id(i + 1, j + 1), id(i + 1, j)]);
        }
    }
    Shape::triangle_mesh(&v, &t, None).unwrap()
}

/// A heightfield of `n × n` samples `cell` apart, centred on the origin, height `h(x, z)`.
pub fn height_field(n: u32, cell: f32, h: impl Fn(f32, f32) -> f32) -> Shape {
    let half = 0.5 * (n - 1) as f32 * cell;
    let mut heights = Vec::new();
    for j in 0..n {
        for i in 0..n {
            heights.push(h(-half + i as f32 * cell, -half + j as f32 * cell));
        }
    }
    Shape::height_field(n, n, Vec2::splat(cell), heights, None).unwrap()
}

/// SCENES.md's dumbbell: spheres of radius 0.35 at x = ±0.6 and a (0.5, 0.1, 0.1) bar.
pub fn dumbbell() -> Shape {
    let at = |x: f32| Isometry::from_translation(Vec3A::new(x, 0.0, 0.0));
    Shape::compound(vec![
        CompoundChild {
            shape: Shape::sphere(0.35).unwrap(),
            pose: at(0.6),
            material: 0,
        },
        CompoundChild {
            shape: Shape::sphere(0.35).unwrap(),
            pose: at(-0.6),
            material: 0,
        },
        CompoundChild {
            shape: Shape::cuboid(Vec3::new(0.5, 0.1, 0.1)).unwrap(),
            pose: Isometry::new(Vec3A::ZERO, Quat::IDENTITY),
            material: 1,
        },
    ])
    .unwrap()
}
