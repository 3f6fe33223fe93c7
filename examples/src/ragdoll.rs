//! A humanoid ragdoll: eleven bodies (pelvis, chest, head, upper and lower arms and legs)
//! on swing-twist joints (spine, neck, shoulders, hips) and hinges (elbows, knees) with
//! human-like limits, standing upright with its feet at the given point and facing +z.
//!
//! ```text
//!          head            y 1.82
//!           |  neck
//!   arm - chest - arm      shoulders y 1.55, chest centre 1.40
//!    |      |      |       elbows y 1.24
//!  fore   pelvis  fore     pelvis centre 1.00
//!          /  \            hips y 0.82
//!       thigh  thigh       knees y 0.415
//!       shin   shin        feet y 0.03
//! ```
//!
//! Twist axes run along the bones (the frame X axis of a swing-twist joint points from
//! the parent into the child); hinge axes are world X, so elbows bend forward and knees
//! backward. Connected parts do not collide with each other (the joints' default).

use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::joint::{AxisDrive, AxisLimit, JointDesc, JointId, JointKind};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

/// The bodies and joints of one ragdoll.
#[derive(Clone, Debug, Default)]
pub struct Ragdoll {
    /// Pelvis, chest, head, then left and right upper arm, forearm, thigh, shin.
    pub bodies: Vec<BodyId>,
    /// Spine, neck, then per side shoulder, elbow, hip, knee.
    pub joints: Vec<JointId>,
}

fn part(
    world: &mut World,
    shape: Shape,
    at: Vec3,
    allow_sleep: bool,
) -> Result<BodyId, PhysicsError> {
    world.create_body(&BodyDesc {
        allow_sleep,
        ..BodyDesc::dynamic(shape, at)
    })
}

fn joint(
    world: &mut World,
    kind: JointKind,
    parent: BodyId,
    child: BodyId,
    anchor: Vec3,
    axis: Vec3,
) -> Result<JointId, PhysicsError> {
    let (fa, fb) = world.joint_frames_at(Some(parent), child, anchor, axis)?;
    world.create_joint(&JointDesc::new(kind, Some(parent), child, fa, fb))
}

fn swing_twist(swing: f32, twist: f32) -> JointKind {
    JointKind::SwingTwist {
        swing_half_angle: swing,
        twist: AxisLimit {
            lower: -twist,
            upper: twist,
        },
    }
}

fn hinge(lower: f32, upper: f32) -> JointKind {
    JointKind::Hinge(AxisDrive {
        limit: Some(AxisLimit { lower, upper }),
        ..AxisDrive::default()
    })
}

/// Builds a ragdoll standing with its feet at `feet`.
pub fn build_ragdoll(
    world: &mut World,
    feet: Vec3,
    allow_sleep: bool,
) -> Result<Ragdoll, PhysicsError> {
    let at = |x: f32, y: f32| feet + Vec3::new(x, y, 0.0);
    let mut r = Ragdoll::default();
    let pelvis = part(
        world,
        Shape::capsule(0.05, 0.12)?,
        at(0.0, 1.0),
        allow_sleep,
    )?;
    let chest = part(
        world,
        Shape::capsule(0.12, 0.14)?,
        at(0.0, 1.4),
        allow_sleep,
    )?;
    let head = part(world, Shape::sphere(0.11)?, at(0.0, 1.82), allow_sleep)?;
    r.bodies.extend([pelvis, chest, head]);
    let up = Vec3::Y;
    r.joints.push(joint(
        world,
        swing_twist(0.5, 0.3),
        pelvis,
        chest,
        at(0.0, 1.2),
        up,
    )?);
    r.joints.push(joint(
        world,
        swing_twist(0.6, 0.8),
        chest,
        head,
        at(0.0, 1.68),
        up,
    )?);
    for side in [-1.0f32, 1.0] {
        let x = 0.3 * side;
        let upper_arm = part(world, Shape::capsule(0.1, 0.05)?, at(x, 1.4), allow_sleep)?;
        let forearm = part(world, Shape::capsule(0.1, 0.045)?, at(x, 1.08), allow_sleep)?;
        let hx = 0.1 * side;
        let thigh = part(
            world,
            Shape::capsule(0.13, 0.07)?,
            at(hx, 0.62),
            allow_sleep,
        )?;
        let shin = part(
            world,
            Shape::capsule(0.13, 0.06)?,
            at(hx, 0.22),
            allow_sleep,
        )?;
        r.bodies.extend([upper_arm, forearm, thigh, shin]);
        let down = -Vec3::Y;
        r.joints.push(joint(
            world,
            swing_twist(1.3, 0.6),
            chest,
            upper_arm,
            at(x, 1.55),
            down,
        )?);
        // A forearm turns toward +z for negative angles about +x.
        r.joints.push(joint(
            world,
            hinge(-2.5, 0.0),
            upper_arm,
            forearm,
            at(x, 1.24),
            Vec3::X,
        )?);
        r.joints.push(joint(
            world,
            swing_twist(0.9, 0.4),
            pelvis,
            thigh,
            at(hx, 0.82),
            down,
        )?);
        // A shin turns toward -z (the knee bends backward) for positive angles.
        r.joints.push(joint(
            world,
            hinge(0.0, 2.5),
            thigh,
            shin,
            at(hx, 0.415),
            Vec3::X,
        )?);
    }
    Ok(r)
}
