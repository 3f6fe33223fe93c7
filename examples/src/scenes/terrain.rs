//! SCENES.md's terrain: a level of a heightfield walled in, a mesh ramp and bowl, and
//! 2,000 mixed bodies dropped on it.

use joule_physics::math::{Quat, Vec3};

use super::desc::{BodySpec, CompoundPart, SceneDesc, ShapeDesc};
use super::random::SplitMix64;

/// The terrain scene's height `h(x, z)`, evaluated in f64 and rounded once. The pure-Rust
/// `libm`, not the platform's, so the level is the same on every machine (its golden
/// hash in `tests/golden.rs` depends on it).
#[must_use]
pub fn terrain_height(x: f32, z: f32) -> f32 {
    let (x, z) = (f64::from(x), f64::from(z));
    let (sin, cos) = (libm::sin, libm::cos);
    (2.0 * sin(0.125 * x) * cos(0.125 * z) + 0.5 * sin(0.33 * x + 0.2 * z)) as f32
}

/// The terrain scene's heightfield samples (257 x 257, j outer, i inner).
#[must_use]
pub fn terrain_heights() -> Vec<f32> {
    let mut heights = Vec::with_capacity(257 * 257);
    for j in 0..=256 {
        for i in 0..=256 {
            let (x, z) = (-64.0 + 0.5 * f64::from(i), -64.0 + 0.5 * f64::from(j));
            heights.push(terrain_height(x as f32, z as f32));
        }
    }
    heights
}

/// A grid mesh of `nx x nz` cells from `vertex(i, j)` (index j * (nx + 1) + i), cell
/// (i, j) split as SCENES.md's ramp: (v(i, j), v(i+1, j+1), v(i+1, j)) and
/// (v(i, j), v(i, j+1), v(i+1, j+1)).
#[must_use]
pub fn terrain_grid_mesh(
    nx: u32,
    nz: u32,
    vertex: impl Fn(u32, u32) -> Vec3,
) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut vertices = Vec::new();
    for j in 0..=nz {
        for i in 0..=nx {
            vertices.push(vertex(i, j));
        }
    }
    let id = |i: u32, j: u32| j * (nx + 1) + i;
    let mut triangles = Vec::new();
    for j in 0..nz {
        for i in 0..nx {
            triangles.push([id(i, j), id(i + 1, j + 1), id(i + 1, j)]);
            triangles.push([id(i, j), id(i, j + 1), id(i + 1, j + 1)]);
        }
    }
    (vertices, triangles)
}

/// The ramp's vertices and triangles (in its body's frame, at the origin).
#[must_use]
pub fn terrain_ramp() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    terrain_grid_mesh(10, 20, |i, j| {
        let (i, j) = (f64::from(i), f64::from(j));
        Vec3::new((-35.0 + i) as f32, (9.0 - 0.3 * j) as f32, j as f32)
    })
}

/// The bowl's vertices and triangles (in its body's frame, at [`TERRAIN_BOWL_AT`]).
#[must_use]
pub fn terrain_bowl() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    terrain_grid_mesh(16, 16, |i, j| {
        let (i, j) = (f64::from(i), f64::from(j));
        let y = 0.06 * ((i - 8.0) * (i - 8.0) + (j - 8.0) * (j - 8.0));
        Vec3::new((-8.0 + i) as f32, y as f32, (-8.0 + j) as f32)
    })
}

/// Where the bowl's body sits.
pub const TERRAIN_BOWL_AT: Vec3 = Vec3::new(24.0, 0.5, -24.0);

/// The terrain scene's dropped bodies in order: shape index (idx % 4: sphere, box,
/// capsule, dumbbell), position, yaw and the yaw's quaternion.
#[must_use]
pub fn terrain_drops() -> Vec<(usize, Vec3, f32, Quat)> {
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0003);
    (0..2000usize)
        .map(|idx| {
            let layer = idx / 400;
            let (i, k) = (idx % 20, (idx / 20) % 20);
            let x = -48.0 + 4.8 * (i as f32 + 0.5) + rng.range(-0.3, 0.3);
            let z = -48.0 + 4.8 * (k as f32 + 0.5) + rng.range(-0.3, 0.3);
            let yaw = rng.range(0.0, std::f32::consts::TAU);
            let y = 10.0 + terrain_height(x, z) + 2.5 * layer as f32;
            let half = f64::from(yaw) / 2.0;
            let q = Quat::from_xyzw(0.0, libm::sin(half) as f32, 0.0, libm::cos(half) as f32);
            (idx % 4, Vec3::new(x, y, z), yaw, q)
        })
        .collect()
}

fn mesh((vertices, triangles): (Vec<Vec3>, Vec<[u32; 3]>)) -> ShapeDesc {
    ShapeDesc::TriangleMesh {
        vertices,
        triangles,
    }
}

/// A dumbbell: two spheres of radius 0.35 at x = ±0.6 and a bar of half extents
/// (0.5, 0.1, 0.1) between them, in this order.
fn dumbbell() -> ShapeDesc {
    let at = |x: f32, shape| CompoundPart {
        position: Vec3::new(x, 0.0, 0.0),
        rotation: Quat::IDENTITY,
        shape,
    };
    let ball = ShapeDesc::Sphere { radius: 0.35 };
    ShapeDesc::Compound(vec![
        at(0.6, ball.clone()),
        at(-0.6, ball),
        at(
            0.0,
            ShapeDesc::Cuboid {
                half: Vec3::new(0.5, 0.1, 0.1),
            },
        ),
    ])
}

/// Adds the terrain scene's bodies: the heightfield (the ground), four walls, the ramp,
/// the bowl, then the 2,000 drops.
pub(super) fn describe_terrain(desc: &mut SceneDesc) {
    let field = desc.add_shape(ShapeDesc::HeightField {
        nx: 257,
        nz: 257,
        cell: 0.5,
        heights: terrain_heights(),
    });
    desc.add_body(BodySpec::fixed(field, Vec3::ZERO));
    for (half, at) in [
        (Vec3::new(65.0, 5.0, 0.5), Vec3::new(0.0, 1.0, 64.5)),
        (Vec3::new(65.0, 5.0, 0.5), Vec3::new(0.0, 1.0, -64.5)),
        (Vec3::new(0.5, 5.0, 64.0), Vec3::new(64.5, 1.0, 0.0)),
        (Vec3::new(0.5, 5.0, 64.0), Vec3::new(-64.5, 1.0, 0.0)),
    ] {
        let wall = desc.add_shape(ShapeDesc::Cuboid { half });
        desc.add_body(BodySpec::fixed(wall, at));
    }
    let ramp = desc.add_shape(mesh(terrain_ramp()));
    desc.add_body(BodySpec::fixed(ramp, Vec3::ZERO));
    let bowl = desc.add_shape(mesh(terrain_bowl()));
    desc.add_body(BodySpec::fixed(bowl, TERRAIN_BOWL_AT));
    let shapes = [
        ShapeDesc::Sphere { radius: 0.5 },
        ShapeDesc::Cuboid {
            half: Vec3::splat(0.5),
        },
        ShapeDesc::Capsule {
            half_height: 0.5,
            radius: 0.3,
        },
        dumbbell(),
    ]
    .map(|s| desc.add_shape(s));
    for (kind, p, _, q) in terrain_drops() {
        desc.add_body(BodySpec {
            rotation: q,
            ..BodySpec::dynamic(shapes[kind], p)
        });
    }
}
