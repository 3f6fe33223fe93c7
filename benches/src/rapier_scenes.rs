//! The standard scenes of ../shared/SCENES.md built in rapier3d from their one description,
//! `joule_examples::scenes::describe`, body for body as joule builds them, so both engines
//! step the same thing (rapier's default heightfield and trimesh flags).

use joule_examples::scenes::{
    self, JointFrames, JointType, Motion, SceneDesc, SceneKind, ShapeDesc,
};
use joule_physics::math::{Quat as JQuat, Vec3 as JVec3};
use rapier3d::parry::utils::Array2;
use rapier3d::prelude::*;

/// A rapier world (its all-in-one `PhysicsWorld`) stepping at the scene's time step.
pub struct RapierWorld {
    world: PhysicsWorld,
}

fn v(p: JVec3) -> Vector {
    Vector::new(p.x, p.y, p.z)
}

fn pose(p: JVec3, q: JQuat) -> Pose {
    Pose::from_parts(v(p), Rotation::from_xyzw(q.x, q.y, q.z, q.w))
}

impl RapierWorld {
    /// One step of the scene's time step.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// The rapier world itself (for queries: the character bench).
    #[must_use]
    pub fn physics_world(&self) -> &PhysicsWorld {
        &self.world
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

/// A rapier shape for a described one (convex compound children only).
fn shape(s: &ShapeDesc) -> Result<SharedShape, String> {
    Ok(match s {
        ShapeDesc::Sphere { radius } => SharedShape::ball(*radius),
        ShapeDesc::Cuboid { half } => SharedShape::cuboid(half.x, half.y, half.z),
        ShapeDesc::Capsule {
            half_height,
            radius,
        } => SharedShape::capsule_y(*half_height, *radius),
        ShapeDesc::HeightField {
            nx,
            nz,
            cell,
            heights,
        } => {
            let (nx, nz) = (*nx as usize, *nz as usize);
            // Rapier's rows run along z and columns along x, centred, scaled to the extent.
            let grid = Array2::from_fn(nz, nx, |row, col| heights[row * nx + col]);
            let scale = Vector::new((nx - 1) as f32 * cell, 1.0, (nz - 1) as f32 * cell);
            SharedShape::heightfield(grid, scale)
        }
        ShapeDesc::TriangleMesh {
            vertices,
            triangles,
        } => SharedShape::trimesh(vertices.iter().map(|&p| v(p)).collect(), triangles.clone())
            .map_err(|e| format!("rapier refused a mesh: {e:?}"))?,
        ShapeDesc::Compound(parts) => SharedShape::compound(
            parts
                .iter()
                .map(|p| Ok((pose(p.position, p.rotation), shape(&p.shape)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// Builds a described scene in rapier: its bodies in order, each with one collider of its
/// shape, density, friction and restitution, then its joints as impulse joints.
pub fn build_desc(desc: &SceneDesc) -> Result<RapierWorld, String> {
    let mut world = PhysicsWorld::new();
    world.gravity = v(desc.gravity);
    world.integration_parameters.dt = desc.dt;
    let shapes = desc
        .shapes
        .iter()
        .map(shape)
        .collect::<Result<Vec<_>, _>>()?;
    let mut handles = Vec::with_capacity(desc.bodies.len());
    for b in &desc.bodies {
        let body = match b.motion {
            Motion::Dynamic => RigidBodyBuilder::dynamic()
                .linvel(v(b.linear_velocity))
                .angvel(v(b.angular_velocity))
                .can_sleep(b.can_sleep),
            Motion::Fixed => RigidBodyBuilder::fixed(),
        }
        .pose(pose(b.position, b.rotation));
        let h = world.bodies.insert(body.build());
        if let Some(s) = b.shape {
            let collider = ColliderBuilder::new(shapes[s.0].clone())
                .density(b.density)
                .friction(b.friction)
                .restitution(b.restitution);
            world
                .colliders
                .insert_with_parent(collider.build(), h, &mut world.bodies);
        }
        handles.push(h);
    }
    for j in &desc.joints {
        let (JointType::Ball, JointFrames::Local { a, b }) = (j.kind, j.frames) else {
            return Err("this adapter builds ball joints only (rapier has no swing cone)".into());
        };
        // Jointed bodies do not collide (the description's rule; rapier's default is that
        // they do).
        let joint = SphericalJointBuilder::new()
            .local_anchor1(v(a))
            .local_anchor2(v(b))
            .contacts_enabled(false);
        world.insert_impulse_joint(handles[j.a], handles[j.b], joint);
    }
    Ok(RapierWorld { world })
}

/// Builds `kind` in rapier, as SCENES.md defines it, or says why it cannot.
pub fn build(kind: SceneKind) -> Result<RapierWorld, String> {
    build_desc(&scenes::describe(kind))
}
