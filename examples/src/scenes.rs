//! The standard scenes of `../shared/SCENES.md`. Keep the two in agreement.
//!
//! Common to all: time step 1/60 s; gravity (0, -9.81, 0) unless stated; density 1000;
//! friction 0.5; restitution 0. "Box h" is a box with half extents (h, h, h). The ground
//! is one static box.

use joule_physics::body::{BodyDesc, BodyId, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::joint::{JointDesc, JointId, JointKind};
use joule_physics::math::{Isometry, Quat, Vec2, Vec3, Vec3A};
use joule_physics::shape::{CompoundChild, Shape};

use crate::ragdoll::build_ragdoll;
use joule_physics::world::World;

/// The time step every scene runs at.
pub const DT: f32 = 1.0 / 60.0;

/// SplitMix64 as SCENES.md defines it.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator with the given seed.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next mixed 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `(z >> 40) / 2^24`: uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `lo + (hi - lo) * next_f32()`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
}

/// Which scene, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    /// One pyramid of base 20 (210 boxes).
    Pyramid20,
    /// One pyramid of base 40 (820 boxes).
    PyramidBig,
    /// 10 x 10 pyramids of base 10 (5,500 boxes).
    ManyPyramids,
    /// 10,000 free spheres without gravity.
    Free10k,
    /// 4,000 spheres and boxes falling on a ground box.
    Rain4k,
    /// 100 chains of 20 spheres on ball joints (2,000 bodies).
    ChainJoints,
    /// 100 ragdolls falling onto a pile of boxes (see `examples/RAGDOLLS.md`).
    Ragdolls,
    /// A level: heightfield terrain, a mesh ramp and bowl, 2,000 mixed bodies.
    Terrain,
}

impl SceneKind {
    /// Every scene that needs no joints.
    pub const ALL: [SceneKind; 6] = [
        SceneKind::Pyramid20,
        SceneKind::PyramidBig,
        SceneKind::ManyPyramids,
        SceneKind::Free10k,
        SceneKind::Rain4k,
        SceneKind::Terrain,
    ];

    /// The scenes that need joints.
    pub const WITH_JOINTS: [SceneKind; 2] = [SceneKind::ChainJoints, SceneKind::Ragdolls];

    /// The scene's name in SCENES.md.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            SceneKind::Pyramid20 => "pyramid20",
            SceneKind::PyramidBig => "pyramid_big",
            SceneKind::ManyPyramids => "many_pyramids",
            SceneKind::Free10k => "free10k",
            SceneKind::Rain4k => "rain4k",
            SceneKind::ChainJoints => "chain_joints",
            SceneKind::Ragdolls => "ragdolls",
            SceneKind::Terrain => "terrain",
        }
    }

    /// Parses a name from SCENES.md.
    #[must_use]
    pub fn from_name(name: &str) -> Option<SceneKind> {
        SceneKind::ALL
            .into_iter()
            .chain(SceneKind::WITH_JOINTS)
            .find(|k| k.name() == name)
    }

    /// Gravity of the scene.
    #[must_use]
    pub fn gravity(&self) -> Vec3 {
        match self {
            SceneKind::Free10k => Vec3::ZERO,
            _ => Vec3::new(0.0, -9.81, 0.0),
        }
    }

    /// (warm-up steps, timed steps) from SCENES.md.
    #[must_use]
    pub fn run_lengths(&self) -> (usize, usize) {
        match self {
            SceneKind::Rain4k | SceneKind::Terrain => (1, 600),
            _ => (60, 300),
        }
    }
}

/// What a scene built: the bodies in creation order and what its sanity check needs.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// The static ground, if any.
    pub ground: Option<BodyId>,
    /// The scene's dynamic bodies in creation order.
    pub bodies: Vec<BodyId>,
    /// For pyramids: the top box of each pyramid and its start height.
    pub tops: Vec<(BodyId, f32)>,
    /// Start positions of every dynamic body (for drift checks).
    pub start: Vec<Vec3>,
    /// Initial linear velocities (free10k's sanity check).
    pub velocities: Vec<Vec3>,
    /// For chains: the top point of each chain; its links are the next `CHAIN_LINKS`
    /// entries of `bodies`, top first.
    pub chain_tops: Vec<Vec3>,
    /// The scene's joints in creation order.
    pub joints: Vec<JointId>,
}

/// Links per chain of chain_joints.
pub const CHAIN_LINKS: usize = 20;

/// A static body without a shape at `position` for joints to hang from (SCENES.md's
/// anchor): it is never collided with nor hit by queries.
pub fn anchor_body(world: &mut World, position: Vec3) -> Result<BodyId, PhysicsError> {
    world.create_body(&BodyDesc::anchor(position))
}

fn chain_joints(world: &mut World) -> Result<Scene, PhysicsError> {
    let mut scene = Scene::default();
    let anchor = anchor_body(world, Vec3::ZERO)?;
    let link = Shape::sphere(0.2)?;
    let half = Vec3A::new(0.25, 0.0, 0.0);
    for ci in 0..10 {
        for ck in 0..10 {
            let top = Vec3::new(22.0 * ci as f32, 20.0, 1.5 * ck as f32);
            scene.chain_tops.push(top);
            let mut prev = None;
            for l in 0..CHAIN_LINKS {
                let p = top + Vec3::new(0.5 * (l as f32 + 0.5), 0.0, 0.0);
                let id = world.create_body(&BodyDesc {
                    allow_sleep: false,
                    ..BodyDesc::dynamic(link.clone(), p)
                })?;
                let (a, frame_a) = match prev {
                    None => (anchor, Isometry::from_translation(top.into())),
                    Some(prev) => (prev, Isometry::from_translation(half)),
                };
                scene.joints.push(world.create_joint(&JointDesc::new(
                    JointKind::Ball,
                    Some(a),
                    id,
                    frame_a,
                    Isometry::from_translation(-half),
                ))?);
                scene.bodies.push(id);
                scene.start.push(p);
                scene.velocities.push(Vec3::ZERO);
                prev = Some(id);
            }
        }
    }
    Ok(scene)
}

/// ragdolls (examples/RAGDOLLS.md): a ground box, a pile of 9 x 9 x 2 boxes of half
/// extent 0.5 centred on the origin, and 10 x 10 ragdolls 1 m apart in x and z with their
/// feet 4 m above the ground, over the pile. Sleeping enabled.
fn ragdolls(world: &mut World) -> Result<Scene, PhysicsError> {
    let mut scene = Scene {
        ground: Some(ground(world, Vec3::new(30.0, 0.5, 30.0))?),
        ..Scene::default()
    };
    let cube = unit_box();
    for layer in 0..2 {
        for i in 0..9 {
            for k in 0..9 {
                let p = Vec3::new(i as f32 - 4.0, 0.5 + layer as f32, k as f32 - 4.0);
                let id = world.create_body(&BodyDesc::dynamic(cube.clone(), p))?;
                scene.bodies.push(id);
                scene.start.push(p);
                scene.velocities.push(Vec3::ZERO);
            }
        }
    }
    for i in 0..10 {
        for k in 0..10 {
            let feet = Vec3::new(i as f32 - 4.5, 4.0, k as f32 - 4.5);
            let r = build_ragdoll(world, feet, true)?;
            for &id in &r.bodies {
                let p = world.position(id)?;
                scene.bodies.push(id);
                scene.start.push(p);
                scene.velocities.push(Vec3::ZERO);
            }
            scene.joints.extend(r.joints);
        }
    }
    Ok(scene)
}

/// The largest distance between the two anchors of any of the scene's joints (0 for a
/// scene without joints): how far the joints are from holding.
#[must_use]
pub fn largest_joint_gap(world: &World, scene: &Scene) -> f32 {
    scene
        .joints
        .iter()
        .filter_map(|&j| world.joint_frames(j).ok())
        .map(|(a, b)| a.translation.distance(b.translation))
        .fold(0.0, f32::max)
}

/// chain_joints' sanity figures: the largest link stretch (distance between consecutive
/// links, or the first link and its top, minus its rest length) and the lowest y.
#[must_use]
pub fn chain_stretch(world: &World, scene: &Scene) -> (f32, f32) {
    let mut stretch = 0.0f32;
    let mut lowest = f32::INFINITY;
    for (top, links) in scene
        .chain_tops
        .iter()
        .zip(scene.bodies.chunks(CHAIN_LINKS))
    {
        let mut prev = *top;
        for (l, &id) in links.iter().enumerate() {
            let Ok(p) = world.position(id) else { continue };
            let rest = if l == 0 { 0.25 } else { 0.5 };
            stretch = stretch.max(p.distance(prev) - rest);
            lowest = lowest.min(p.y);
            prev = p;
        }
    }
    (stretch, lowest)
}

fn unit_box() -> Shape {
    Shape::cuboid(Vec3::splat(0.5)).expect("valid box")
}

fn ground(world: &mut World, half: Vec3) -> Result<BodyId, PhysicsError> {
    let shape = Shape::cuboid(half)?;
    world.create_body(&BodyDesc {
        friction: 0.5,
        ..BodyDesc::fixed(shape, Vec3::new(0.0, -0.5, 0.0))
    })
}

fn pyramids(world: &mut World, base: usize, nx: usize, nz: usize) -> Result<Scene, PhysicsError> {
    let sx = (base + 2) as f32;
    let sz = 4.0f32;
    let mut scene = Scene {
        ground: Some(ground(
            world,
            Vec3::new(nx as f32 * sx / 2.0 + 5.0, 0.5, nz as f32 * sz / 2.0 + 5.0),
        )?),
        ..Scene::default()
    };
    let shape = unit_box();
    for i in 0..nx {
        for k in 0..nz {
            let cx = (i as f32 - (nx as f32 - 1.0) / 2.0) * sx;
            let cz = (k as f32 - (nz as f32 - 1.0) / 2.0) * sz;
            let mut last = None;
            for row in 0..base {
                let n = base - row;
                let y = 0.5 + row as f32;
                for j in 0..n {
                    let x = cx + j as f32 - (n as f32 - 1.0) / 2.0;
                    let p = Vec3::new(x, y, cz);
                    let id = world.create_body(&BodyDesc {
                        allow_sleep: false,
                        ..BodyDesc::dynamic(shape.clone(), p)
                    })?;
                    scene.bodies.push(id);
                    scene.start.push(p);
                    scene.velocities.push(Vec3::ZERO);
                    last = Some((id, y));
                }
            }
            scene.tops.extend(last);
        }
    }
    Ok(scene)
}

fn free10k(world: &mut World) -> Result<Scene, PhysicsError> {
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0001);
    let shape = Shape::sphere(0.5)?;
    let mut scene = Scene::default();
    for i in 0..25 {
        for j in 0..16 {
            for k in 0..25 {
                let p = Vec3::new(2.0 * i as f32, 2.0 * j as f32, 2.0 * k as f32);
                let v = Vec3::new(
                    rng.range(-0.04, 0.04),
                    rng.range(-0.04, 0.04),
                    rng.range(-0.04, 0.04),
                );
                let w = Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                let id = world.create_body(&BodyDesc {
                    linear_velocity: v,
                    angular_velocity: w,
                    allow_sleep: false,
                    gravity_scale: 1.0,
                    ..BodyDesc::dynamic(shape.clone(), p)
                })?;
                scene.bodies.push(id);
                scene.start.push(p);
                scene.velocities.push(v);
            }
        }
    }
    Ok(scene)
}

fn rain4k(world: &mut World) -> Result<Scene, PhysicsError> {
    let mut scene = Scene {
        ground: Some(ground(world, Vec3::new(100.0, 0.5, 100.0))?),
        ..Scene::default()
    };
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0002);
    let sphere = Shape::sphere(0.5)?;
    let cube = unit_box();
    let pitch = 20.0f32 / 14.0;
    for idx in 0..4000usize {
        let layer = idx / 196;
        let i = (idx / 14) % 14;
        let k = idx % 14;
        let x = -10.0 + pitch * (i as f32 + 0.5) + rng.range(-0.2, 0.2);
        let z = -10.0 + pitch * (k as f32 + 0.5) + rng.range(-0.2, 0.2);
        let y = 2.0 + 1.5 * layer as f32;
        let shape = if (i + k + layer) % 2 == 0 {
            sphere.clone()
        } else {
            cube.clone()
        };
        let p = Vec3::new(x, y, z);
        let id = world.create_body(&BodyDesc::dynamic(shape, p))?;
        scene.bodies.push(id);
        scene.start.push(p);
        scene.velocities.push(Vec3::ZERO);
    }
    Ok(scene)
}

/// The terrain scene's height `h(x, z)`, evaluated in f64 and rounded once.
#[must_use]
pub fn terrain_height(x: f32, z: f32) -> f32 {
    let (x, z) = (f64::from(x), f64::from(z));
    (2.0 * (0.125 * x).sin() * (0.125 * z).cos() + 0.5 * (0.33 * x + 0.2 * z).sin()) as f32
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

/// The bowl's vertices and triangles (in its body's frame, at (24, 0.5, -24)).
#[must_use]
pub fn terrain_bowl() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    terrain_grid_mesh(16, 16, |i, j| {
        let (i, j) = (f64::from(i), f64::from(j));
        let y = 0.06 * ((i - 8.0).powi(2) + (j - 8.0).powi(2));
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
            let q = Quat::from_xyzw(0.0, half.sin() as f32, 0.0, half.cos() as f32);
            (idx % 4, Vec3::new(x, y, z), yaw, q)
        })
        .collect()
}

fn terrain(world: &mut World) -> Result<Scene, PhysicsError> {
    let field = Shape::height_field(257, 257, Vec2::splat(0.5), terrain_heights(), None)?;
    let mut scene = Scene {
        ground: Some(world.create_body(&BodyDesc::fixed(field, Vec3::ZERO))?),
        ..Scene::default()
    };
    for (half, at) in [
        (Vec3::new(65.0, 5.0, 0.5), Vec3::new(0.0, 1.0, 64.5)),
        (Vec3::new(65.0, 5.0, 0.5), Vec3::new(0.0, 1.0, -64.5)),
        (Vec3::new(0.5, 5.0, 64.0), Vec3::new(64.5, 1.0, 0.0)),
        (Vec3::new(0.5, 5.0, 64.0), Vec3::new(-64.5, 1.0, 0.0)),
    ] {
        world.create_body(&BodyDesc::fixed(Shape::cuboid(half)?, at))?;
    }
    let (v, t) = terrain_ramp();
    world.create_body(&BodyDesc::fixed(
        Shape::triangle_mesh(&v, &t, None)?,
        Vec3::ZERO,
    ))?;
    let (v, t) = terrain_bowl();
    world.create_body(&BodyDesc::fixed(
        Shape::triangle_mesh(&v, &t, None)?,
        TERRAIN_BOWL_AT,
    ))?;
    let at = |x: f32| Isometry::new(Vec3A::new(x, 0.0, 0.0), Quat::IDENTITY);
    let shapes = [
        Shape::sphere(0.5)?,
        unit_box(),
        Shape::capsule(0.5, 0.3)?,
        Shape::compound(vec![
            CompoundChild {
                shape: Shape::sphere(0.35)?,
                pose: at(0.6),
                material: 0,
            },
            CompoundChild {
                shape: Shape::sphere(0.35)?,
                pose: at(-0.6),
                material: 0,
            },
            CompoundChild {
                shape: Shape::cuboid(Vec3::new(0.5, 0.1, 0.1))?,
                pose: at(0.0),
                material: 0,
            },
        ])?,
    ];
    for (kind, p, _, q) in terrain_drops() {
        let id = world.create_body(&BodyDesc {
            rotation: q,
            ..BodyDesc::dynamic(shapes[kind].clone(), p)
        })?;
        scene.bodies.push(id);
        scene.start.push(p);
        scene.velocities.push(Vec3::ZERO);
    }
    Ok(scene)
}

/// Builds `kind` into `world` (which should be empty and have the scene's gravity).
pub fn build(kind: SceneKind, world: &mut World) -> Result<Scene, PhysicsError> {
    match kind {
        SceneKind::Pyramid20 => pyramids(world, 20, 1, 1),
        SceneKind::PyramidBig => pyramids(world, 40, 1, 1),
        SceneKind::ManyPyramids => pyramids(world, 10, 10, 10),
        SceneKind::Free10k => free10k(world),
        SceneKind::Rain4k => rain4k(world),
        SceneKind::ChainJoints => chain_joints(world),
        SceneKind::Ragdolls => ragdolls(world),
        SceneKind::Terrain => terrain(world),
    }
}

/// Number of the scene's dynamic bodies that moved more than `distance` from their start.
pub fn moved_more_than(world: &World, scene: &Scene, distance: f32) -> usize {
    scene
        .bodies
        .iter()
        .zip(&scene.start)
        .filter(|(id, p0)| {
            world
                .position(**id)
                .map_or(true, |p| (p - **p0).length() > distance)
        })
        .count()
}

/// The scene's sanity line of SCENES.md, after `elapsed` seconds of simulation.
pub fn sanity_line(kind: SceneKind, world: &World, scene: &Scene, elapsed: f32) -> String {
    let asleep = scene
        .bodies
        .iter()
        .filter(|&&b| world.is_sleeping(b).unwrap_or(false))
        .count();
    match kind {
        SceneKind::Pyramid20 | SceneKind::PyramidBig | SceneKind::ManyPyramids => {
            let tops_ok = scene
                .tops
                .iter()
                .filter(|(id, y0)| world.position(*id).is_ok_and(|p| (p.y - y0).abs() < 0.25))
                .count();
            format!(
                "tops near start height {tops_ok}/{}; boxes moved > 0.25 m: {}; asleep {asleep}",
                scene.tops.len(),
                moved_more_than(world, scene, 0.25)
            )
        }
        SceneKind::Free10k => {
            let ok = scene
                .bodies
                .iter()
                .zip(&scene.start)
                .zip(&scene.velocities)
                .filter(|((id, p0), v)| {
                    world
                        .position(**id)
                        .is_ok_and(|p| (p - (**p0 + **v * elapsed)).length() < 0.01)
                })
                .count();
            format!(
                "spheres within 1 cm of x0 + v t: {ok}/{}; asleep {asleep}",
                scene.bodies.len()
            )
        }
        SceneKind::Rain4k => {
            let ys: Vec<f32> = scene
                .bodies
                .iter()
                .filter_map(|&b| world.position(b).ok().map(|p| p.y))
                .collect();
            let highest = ys.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let below = ys.iter().filter(|&&y| y < 0.0).count();
            format!("highest y {highest:.2}; below ground {below}; asleep {asleep}")
        }
        SceneKind::ChainJoints => {
            let (stretch, lowest) = chain_stretch(world, scene);
            format!(
                "largest link stretch {:.3} mm; lowest y {lowest:.2}; asleep {asleep}",
                stretch * 1e3
            )
        }
        SceneKind::Ragdolls => {
            let below = scene
                .bodies
                .iter()
                .filter(|&&b| world.position(b).is_ok_and(|p| p.y < 0.0))
                .count();
            format!(
                "largest joint gap {:.2} mm; below ground {below}; asleep {asleep}",
                largest_joint_gap(world, scene) * 1e3
            )
        }
        SceneKind::Terrain => {
            let ps: Vec<Vec3> = scene
                .bodies
                .iter()
                .filter_map(|&b| world.position(b).ok())
                .collect();
            let below = ps
                .iter()
                .filter(|p| p.y < terrain_height(p.x, p.z) - 0.1)
                .count();
            let outside = ps
                .iter()
                .filter(|p| p.x.abs() > 64.0 || p.z.abs() > 64.0)
                .count();
            format!(
                "below the terrain surface {below}; outside the walls {outside}; asleep {asleep}"
            )
        }
    }
}

/// Whether a body is dynamic (for scene sanity code).
pub fn is_dynamic(world: &World, id: BodyId) -> bool {
    world.motion_type(id).ok() == Some(MotionType::Dynamic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_reference_values() {
        // Reference: SplitMix64 (Steele, Lea, Flood 2014) from seed 0 gives
        // 0xe220a8397b1dcdaf as its first output.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            let x = r.range(-2.0, 3.0);
            assert!((-2.0..3.0).contains(&x));
        }
    }
}
