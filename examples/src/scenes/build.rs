//! joule's side of the scene description: a [`SceneDesc`] turned into bodies and joints
//! of a joule [`World`].

use joule_physics::body::{BodyDesc, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::joint::{AxisDrive, AxisLimit, JointDesc, JointKind};
use joule_physics::math::{Isometry, Vec2};
use joule_physics::shape::{CompoundChild, Shape};
use joule_physics::world::World;

use super::desc::{JointFrames, JointType, Motion, SceneDesc, ShapeDesc};
use super::{Scene, SceneKind, describe};

fn shape(desc: &ShapeDesc) -> Result<Shape, PhysicsError> {
    Ok(match desc {
        ShapeDesc::Sphere { radius } => Shape::sphere(*radius)?,
        ShapeDesc::Cuboid { half } => Shape::cuboid(*half)?,
        ShapeDesc::Capsule {
            half_height,
            radius,
        } => Shape::capsule(*half_height, *radius)?,
        ShapeDesc::HeightField {
            nx,
            nz,
            cell,
            heights,
        } => Shape::height_field(*nx, *nz, Vec2::splat(*cell), heights.clone(), None)?,
        ShapeDesc::TriangleMesh {
            vertices,
            triangles,
        } => Shape::triangle_mesh(vertices, triangles, None)?,
        ShapeDesc::Compound(parts) => Shape::compound(
            parts
                .iter()
                .map(|part| {
                    Ok(CompoundChild {
                        shape: shape(&part.shape)?,
                        pose: Isometry::new(part.position, part.rotation),
                        material: 0,
                    })
                })
                .collect::<Result<_, PhysicsError>>()?,
        )?,
    })
}

fn joint_kind(kind: JointType) -> JointKind {
    match kind {
        JointType::Ball => JointKind::Ball,
        JointType::SwingTwist {
            swing_half_angle,
            twist_lower,
            twist_upper,
        } => JointKind::SwingTwist {
            swing_half_angle,
            twist: AxisLimit {
                lower: twist_lower,
                upper: twist_upper,
            },
        },
        JointType::Hinge { lower, upper } => JointKind::Hinge(AxisDrive {
            limit: Some(AxisLimit { lower, upper }),
            ..AxisDrive::default()
        }),
    }
}

/// Builds a described scene into `world` (which should have the scene's gravity, and
/// be stepped at its `dt`): its shapes once each, its bodies in order, then its joints
/// in order.
pub fn build_desc(desc: &SceneDesc, world: &mut World) -> Result<Scene, PhysicsError> {
    let shapes = desc
        .shapes
        .iter()
        .map(shape)
        .collect::<Result<Vec<_>, _>>()?;
    let mut ids = Vec::with_capacity(desc.bodies.len());
    let mut scene = Scene::default();
    for spec in &desc.bodies {
        let body = match spec.shape {
            Some(s) => BodyDesc::dynamic(shapes[s.0].clone(), spec.position),
            None => BodyDesc::anchor(spec.position),
        };
        let id = world.create_body(&BodyDesc {
            motion_type: match spec.motion {
                Motion::Fixed => MotionType::Fixed,
                Motion::Dynamic => MotionType::Dynamic,
            },
            rotation: spec.rotation,
            linear_velocity: spec.linear_velocity,
            angular_velocity: spec.angular_velocity,
            density: spec.density,
            friction: spec.friction,
            restitution: spec.restitution,
            allow_sleep: spec.can_sleep,
            ..body
        })?;
        if spec.is_dynamic() {
            scene.bodies.push(id);
            scene.start.push(spec.position);
            scene.velocities.push(spec.linear_velocity);
        }
        ids.push(id);
    }
    for j in &desc.joints {
        let (a, b) = (ids[j.a], ids[j.b]);
        let (frame_a, frame_b) = match j.frames {
            JointFrames::Local { a, b } => {
                (Isometry::from_translation(a), Isometry::from_translation(b))
            }
            JointFrames::World { anchor, axis } => {
                world.joint_frames_at(Some(a), b, anchor, axis)?
            }
        };
        let desc = JointDesc::new(joint_kind(j.kind), Some(a), b, frame_a, frame_b);
        scene.joints.push(world.create_joint(&desc)?);
    }
    scene.ground = desc.ground().map(|i| ids[i]);
    scene.tops = desc
        .tops
        .iter()
        .map(|&i| (ids[i], desc.bodies[i].position.y))
        .collect();
    scene.chain_tops.clone_from(&desc.chain_tops);
    Ok(scene)
}

/// Builds `kind` into `world` (which should be empty and have the scene's gravity).
pub fn build(kind: SceneKind, world: &mut World) -> Result<Scene, PhysicsError> {
    build_desc(&describe(kind), world)
}
