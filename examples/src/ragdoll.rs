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

use joule_physics::body::BodyId;
use joule_physics::error::PhysicsError;
use joule_physics::joint::JointId;
use joule_physics::math::Vec3;
use joule_physics::world::World;

use crate::scenes::{
    self, BodySpec, JointFrames, JointSpec, JointType, SceneDesc, SceneKind, ShapeDesc,
};

/// The bodies and joints of one ragdoll.
#[derive(Clone, Debug, Default)]
pub struct Ragdoll {
    /// Pelvis, chest, head, then left and right upper arm, forearm, thigh, shin.
    pub bodies: Vec<BodyId>,
    /// Spine, neck, then per side shoulder, elbow, hip, knee.
    pub joints: Vec<JointId>,
}

fn capsule(half_height: f32, radius: f32) -> ShapeDesc {
    ShapeDesc::Capsule {
        half_height,
        radius,
    }
}

fn swing_twist(swing: f32, twist: f32) -> JointType {
    JointType::SwingTwist {
        swing_half_angle: swing,
        twist_lower: -twist,
        twist_upper: twist,
    }
}

/// Adds a ragdoll standing with its feet at `feet` to `desc`: its eleven bodies in the
/// order of [`Ragdoll::bodies`], then its ten joints in the order of [`Ragdoll::joints`].
pub fn describe_ragdoll(desc: &mut SceneDesc, feet: Vec3, can_sleep: bool) {
    let at = |x: f32, y: f32| feet + Vec3::new(x, y, 0.0);
    let part = |desc: &mut SceneDesc, shape: ShapeDesc, p: Vec3| {
        let shape = desc.add_shape(shape);
        desc.add_body(BodySpec {
            can_sleep,
            ..BodySpec::dynamic(shape, p)
        })
    };
    let pelvis = part(desc, capsule(0.05, 0.12), at(0.0, 1.0));
    let chest = part(desc, capsule(0.12, 0.14), at(0.0, 1.4));
    let head = part(desc, ShapeDesc::Sphere { radius: 0.11 }, at(0.0, 1.82));
    let up = Vec3::Y;
    let mut joints = vec![
        (swing_twist(0.5, 0.3), pelvis, chest, at(0.0, 1.2), up),
        (swing_twist(0.6, 0.8), chest, head, at(0.0, 1.68), up),
    ];
    for side in [-1.0f32, 1.0] {
        let x = 0.3 * side;
        let upper_arm = part(desc, capsule(0.1, 0.05), at(x, 1.4));
        let forearm = part(desc, capsule(0.1, 0.045), at(x, 1.08));
        let hx = 0.1 * side;
        let thigh = part(desc, capsule(0.13, 0.07), at(hx, 0.62));
        let shin = part(desc, capsule(0.13, 0.06), at(hx, 0.22));
        let down = -Vec3::Y;
        joints.extend([
            (swing_twist(1.3, 0.6), chest, upper_arm, at(x, 1.55), down),
            // A forearm turns toward +z for negative angles about +x.
            (
                JointType::Hinge {
                    lower: -2.5,
                    upper: 0.0,
                },
                upper_arm,
                forearm,
                at(x, 1.24),
                Vec3::X,
            ),
            (swing_twist(0.9, 0.4), pelvis, thigh, at(hx, 0.82), down),
            // A shin turns toward -z (the knee bends backward) for positive angles.
            (
                JointType::Hinge {
                    lower: 0.0,
                    upper: 2.5,
                },
                thigh,
                shin,
                at(hx, 0.415),
                Vec3::X,
            ),
        ]);
    }
    for (kind, a, b, anchor, axis) in joints {
        desc.joints.push(JointSpec {
            a,
            b,
            kind,
            frames: JointFrames::World { anchor, axis },
        });
    }
}

/// Builds a ragdoll standing with its feet at `feet` into `world`.
pub fn build_ragdoll(
    world: &mut World,
    feet: Vec3,
    allow_sleep: bool,
) -> Result<Ragdoll, PhysicsError> {
    let mut desc = SceneDesc::new(SceneKind::Ragdolls);
    describe_ragdoll(&mut desc, feet, allow_sleep);
    let scene = scenes::build_desc(&desc, world)?;
    Ok(Ragdoll {
        bodies: scene.bodies,
        joints: scene.joints,
    })
}
