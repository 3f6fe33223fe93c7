//! The standard scenes of ../shared/SCENES.md built in rapier3d, body for body as
//! `joule_examples::scenes` builds them for joule, so both engines step the same thing:
//! from [`crate::scene_desc`] where the scene is described there, by hand otherwise.

use joule_examples::scenes::SceneKind;
use rapier3d::prelude::*;

use crate::scene_desc::{SceneDesc, ShapeDesc};

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

    fn add(&mut self, body: RigidBodyBuilder, collider: ColliderBuilder) -> RigidBodyHandle {
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
        h
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

    /// The dynamic bodies' positions in creation order (no body is ever removed, so the
    /// arena's order is creation order).
    #[must_use]
    pub fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        self.world
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic())
            .map(|(_, b)| {
                let p = b.translation();
                [p.x, p.y, p.z]
            })
            .collect()
    }

    /// How many dynamic bodies are asleep.
    #[must_use]
    pub fn asleep(&self) -> usize {
        self.world
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic() && b.is_sleeping())
            .count()
    }
}

/// Builds a described scene body for body (density, friction and restitution are set
/// for every collider by [`RapierWorld::add`]).
fn from_desc(w: &mut RapierWorld, desc: &SceneDesc) {
    for b in &desc.bodies {
        let [x, y, z] = b.position;
        let body = if b.dynamic {
            let [vx, vy, vz] = b.linear_velocity;
            let [ax, ay, az] = b.angular_velocity;
            RigidBodyBuilder::dynamic()
                .linvel(v(vx, vy, vz))
                .angvel(v(ax, ay, az))
                .can_sleep(b.can_sleep)
        } else {
            RigidBodyBuilder::fixed()
        }
        .translation(v(x, y, z));
        let collider = match b.shape {
            ShapeDesc::Sphere { radius } => ColliderBuilder::ball(radius),
            ShapeDesc::Cuboid { half } => ColliderBuilder::cuboid(half[0], half[1], half[2]),
            ShapeDesc::None => unreachable!("only chain_joints has them, built by chain_joints"),
        };
        w.add(body, collider);
    }
}

/// chain_joints: a fixed anchor without a collider, 100 chains of 20 balls on spherical
/// (impulse) joints, as `joule_examples::scenes` builds it.
fn chain_joints(w: &mut RapierWorld) {
    let anchor = w.world.insert_body(RigidBodyBuilder::fixed());
    for ci in 0..10 {
        for ck in 0..10 {
            let top = v(22.0 * ci as f32, 20.0, 1.5 * ck as f32);
            let mut prev: Option<RigidBodyHandle> = None;
            for l in 0..20 {
                let p = top + v(0.5 * (l as f32 + 0.5), 0.0, 0.0);
                let h = w.add(
                    RigidBodyBuilder::dynamic().translation(p).can_sleep(false),
                    ColliderBuilder::ball(0.2),
                );
                let (parent, a1) = match prev {
                    None => (anchor, top),
                    Some(prev) => (prev, v(0.25, 0.0, 0.0)),
                };
                let joint = SphericalJointBuilder::new()
                    .local_anchor1(a1)
                    .local_anchor2(v(-0.25, 0.0, 0.0));
                w.world.insert_impulse_joint(parent, h, joint);
                prev = Some(h);
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
    // Its joints are rapier's own builder's (in the description's body order).
    if kind == SceneKind::ChainJoints {
        chain_joints(&mut w);
        return w;
    }
    if let Some(desc) = crate::scene_desc::describe(kind) {
        from_desc(&mut w, &desc);
        return w;
    }
    match kind {
        SceneKind::ChainJoints => chain_joints(&mut w),
        // Not built in rapier yet (its ragdoll needs spherical joints with limits): an
        // empty world, and the bench skips the row.
        SceneKind::Ragdolls => {}
        SceneKind::Terrain => terrain(&mut w),
        _ => unreachable!("{} is described in scene_desc", kind.name()),
    }
    w
}
