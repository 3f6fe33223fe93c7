//! The standard scenes of ../shared/SCENES.md built in rapier3d, body for body as
//! `joule_examples::scenes` builds them for joule, so both engines step the same thing.

use joule_examples::scenes::{SceneKind, SplitMix64};
use rapier3d::prelude::*;

/// A rapier world (its all-in-one `PhysicsWorld`) stepping at 1/60 s.
pub struct RapierWorld {
    world: PhysicsWorld,
}

fn v(x: f32, y: f32, z: f32) -> Vector {
    Vector::new(x, y, z)
}

impl RapierWorld {
    fn new(gravity: [f32; 3]) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = v(gravity[0], gravity[1], gravity[2]);
        world.integration_parameters.dt = 1.0 / 60.0;
        Self { world }
    }

    fn add(&mut self, body: RigidBodyBuilder, collider: ColliderBuilder) {
        let w = &mut self.world;
        let h = w.bodies.insert(body.build());
        w.colliders.insert_with_parent(
            collider
                .density(1000.0)
                .friction(0.5)
                .restitution(0.0)
                .build(),
            h,
            &mut w.bodies,
        );
    }

    /// One 1/60 s step.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// Number of rigid bodies.
    #[must_use]
    pub fn body_count(&self) -> usize {
        self.world.bodies.len()
    }
}

fn ground(w: &mut RapierWorld, hx: f32, hz: f32) {
    w.add(
        RigidBodyBuilder::fixed().translation(v(0.0, -0.5, 0.0)),
        ColliderBuilder::cuboid(hx, 0.5, hz),
    );
}

fn pyramids(w: &mut RapierWorld, base: usize, nx: usize, nz: usize) {
    let sx = (base + 2) as f32;
    let sz = 4.0f32;
    ground(w, nx as f32 * sx / 2.0 + 5.0, nz as f32 * sz / 2.0 + 5.0);
    for i in 0..nx {
        for k in 0..nz {
            let cx = (i as f32 - (nx as f32 - 1.0) / 2.0) * sx;
            let cz = (k as f32 - (nz as f32 - 1.0) / 2.0) * sz;
            for row in 0..base {
                let n = base - row;
                for j in 0..n {
                    let x = cx + j as f32 - (n as f32 - 1.0) / 2.0;
                    w.add(
                        RigidBodyBuilder::dynamic()
                            .translation(v(x, 0.5 + row as f32, cz))
                            .can_sleep(false),
                        ColliderBuilder::cuboid(0.5, 0.5, 0.5),
                    );
                }
            }
        }
    }
}

/// SCENES.md's terrain: the same heightfield, walls, ramp, bowl and drops as
/// `joule_examples::scenes` (rapier's default heightfield and trimesh flags).
fn terrain(w: &mut RapierWorld) {
    use joule_examples::scenes::{
        TERRAIN_BOWL_AT, terrain_bowl, terrain_drops, terrain_heights, terrain_ramp,
    };
    use rapier3d::parry::utils::Array2;
    let heights = terrain_heights();
    // Rapier's rows run along z and columns along x, centred, scaled to 128 m.
    let grid = Array2::from_fn(257, 257, |row, col| heights[row * 257 + col]);
    w.add(
        RigidBodyBuilder::fixed(),
        ColliderBuilder::heightfield(grid, v(128.0, 1.0, 128.0)),
    );
    for (h, at) in [
        ([65.0, 5.0, 0.5], [0.0, 1.0, 64.5]),
        ([65.0, 5.0, 0.5], [0.0, 1.0, -64.5]),
        ([0.5, 5.0, 64.0], [64.5, 1.0, 0.0]),
        ([0.5, 5.0, 64.0], [-64.5, 1.0, 0.0]),
    ] {
        w.add(
            RigidBodyBuilder::fixed().translation(v(at[0], at[1], at[2])),
            ColliderBuilder::cuboid(h[0], h[1], h[2]),
        );
    }
    let mesh = |(vs, ts): (Vec<joule_physics::math::Vec3>, Vec<[u32; 3]>)| {
        let vs = vs.iter().map(|p| v(p.x, p.y, p.z)).collect();
        ColliderBuilder::trimesh(vs, ts).expect("valid mesh")
    };
    w.add(RigidBodyBuilder::fixed(), mesh(terrain_ramp()));
    let b = TERRAIN_BOWL_AT;
    w.add(
        RigidBodyBuilder::fixed().translation(v(b.x, b.y, b.z)),
        mesh(terrain_bowl()),
    );
    let dumbbell = || {
        let at = |x: f32| Pose::from_translation(v(x, 0.0, 0.0));
        ColliderBuilder::compound(vec![
            (at(0.6), SharedShape::ball(0.35)),
            (at(-0.6), SharedShape::ball(0.35)),
            (at(0.0), SharedShape::cuboid(0.5, 0.1, 0.1)),
        ])
    };
    for (kind, p, yaw, _) in terrain_drops() {
        let c = match kind {
            0 => ColliderBuilder::ball(0.5),
            1 => ColliderBuilder::cuboid(0.5, 0.5, 0.5),
            2 => ColliderBuilder::capsule_y(0.5, 0.3),
            _ => dumbbell(),
        };
        w.add(
            RigidBodyBuilder::dynamic()
                .translation(v(p.x, p.y, p.z))
                .rotation(v(0.0, yaw, 0.0)),
            c,
        );
    }
}

/// Builds `kind` in rapier, as SCENES.md defines it.
#[must_use]
pub fn build(kind: SceneKind) -> RapierWorld {
    let g = kind.gravity();
    let mut w = RapierWorld::new([g.x, g.y, g.z]);
    match kind {
        SceneKind::Pyramid20 => pyramids(&mut w, 20, 1, 1),
        SceneKind::PyramidBig => pyramids(&mut w, 40, 1, 1),
        SceneKind::ManyPyramids => pyramids(&mut w, 10, 10, 10),
        SceneKind::Free10k => {
            let mut rng = SplitMix64::new(0x5eed_1234_abcd_0001);
            for i in 0..25 {
                for j in 0..16 {
                    for k in 0..25 {
                        let vel = [
                            rng.range(-0.04, 0.04),
                            rng.range(-0.04, 0.04),
                            rng.range(-0.04, 0.04),
                        ];
                        let a = [
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                        ];
                        w.add(
                            RigidBodyBuilder::dynamic()
                                .translation(v(2.0 * i as f32, 2.0 * j as f32, 2.0 * k as f32))
                                .linvel(v(vel[0], vel[1], vel[2]))
                                .angvel(v(a[0], a[1], a[2]))
                                .can_sleep(false),
                            ColliderBuilder::ball(0.5),
                        );
                    }
                }
            }
        }
        SceneKind::Rain4k => {
            ground(&mut w, 100.0, 100.0);
            let mut rng = SplitMix64::new(0x5eed_1234_abcd_0002);
            let pitch = 20.0f32 / 14.0;
            for idx in 0..4000usize {
                let layer = idx / 196;
                let i = (idx / 14) % 14;
                let k = idx % 14;
                let x = -10.0 + pitch * (i as f32 + 0.5) + rng.range(-0.2, 0.2);
                let z = -10.0 + pitch * (k as f32 + 0.5) + rng.range(-0.2, 0.2);
                let y = 2.0 + 1.5 * layer as f32;
                let c = if (i + k + layer) % 2 == 0 {
                    ColliderBuilder::ball(0.5)
                } else {
                    ColliderBuilder::cuboid(0.5, 0.5, 0.5)
                };
                w.add(RigidBodyBuilder::dynamic().translation(v(x, y, z)), c);
            }
        }
        SceneKind::Terrain => terrain(&mut w),
    }
    w
}
