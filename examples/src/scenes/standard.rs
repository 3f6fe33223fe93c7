//! The standard scenes of `../shared/SCENES.md` as [`SceneDesc`]s, exactly as described
//! there: body order is creation order, and random numbers are drawn in the given order.

use joule_physics::math::Vec3;

use super::desc::{BodySpec, JointFrames, JointSpec, JointType, SceneDesc, ShapeDesc};
use super::random::SplitMix64;
use super::{CHAIN_LINKS, SceneKind, terrain};
use crate::ragdoll::describe_ragdoll;

/// A box of half extent 0.5.
const UNIT_BOX: ShapeDesc = ShapeDesc::Cuboid {
    half: Vec3::splat(0.5),
};

/// The ground: a fixed box with half extents `half` whose top is y = 0.
fn ground(desc: &mut SceneDesc, half: Vec3) {
    let shape = desc.add_shape(ShapeDesc::Cuboid { half });
    desc.add_body(BodySpec::fixed(shape, Vec3::new(0.0, -0.5, 0.0)));
}

fn pyramids(desc: &mut SceneDesc, base: usize, nx: usize, nz: usize) {
    let sx = (base + 2) as f32;
    let sz = 4.0f32;
    ground(
        desc,
        Vec3::new(nx as f32 * sx / 2.0 + 5.0, 0.5, nz as f32 * sz / 2.0 + 5.0),
    );
    let shape = desc.add_shape(UNIT_BOX);
    for i in 0..nx {
        for k in 0..nz {
            let cx = (i as f32 - (nx as f32 - 1.0) / 2.0) * sx;
            let cz = (k as f32 - (nz as f32 - 1.0) / 2.0) * sz;
            for row in 0..base {
                let n = base - row;
                let y = 0.5 + row as f32;
                for j in 0..n {
                    let x = cx + j as f32 - (n as f32 - 1.0) / 2.0;
                    desc.add_body(BodySpec {
                        can_sleep: false,
                        ..BodySpec::dynamic(shape, Vec3::new(x, y, cz))
                    });
                }
            }
            desc.tops.push(desc.bodies.len() - 1);
        }
    }
}

fn free10k(desc: &mut SceneDesc) {
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0001);
    let shape = desc.add_shape(ShapeDesc::Sphere { radius: 0.5 });
    for i in 0..25 {
        for j in 0..16 {
            for k in 0..25 {
                let p = Vec3::new(2.0 * i as f32, 2.0 * j as f32, 2.0 * k as f32);
                let v = Vec3::from_array([0; 3].map(|_| rng.range(-0.04, 0.04)));
                let w = Vec3::from_array([0; 3].map(|_| rng.range(-1.0, 1.0)));
                desc.add_body(BodySpec {
                    linear_velocity: v,
                    angular_velocity: w,
                    can_sleep: false,
                    ..BodySpec::dynamic(shape, p)
                });
            }
        }
    }
}

fn rain4k(desc: &mut SceneDesc) {
    ground(desc, Vec3::new(100.0, 0.5, 100.0));
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0002);
    let sphere = desc.add_shape(ShapeDesc::Sphere { radius: 0.5 });
    let cube = desc.add_shape(UNIT_BOX);
    let pitch = 20.0f32 / 14.0;
    for idx in 0..4000usize {
        let layer = idx / 196;
        let i = (idx / 14) % 14;
        let k = idx % 14;
        let x = -10.0 + pitch * (i as f32 + 0.5) + rng.range(-0.2, 0.2);
        let z = -10.0 + pitch * (k as f32 + 0.5) + rng.range(-0.2, 0.2);
        let y = 2.0 + 1.5 * layer as f32;
        let shape = if (i + k + layer) % 2 == 0 {
            sphere
        } else {
            cube
        };
        desc.add_body(BodySpec::dynamic(shape, Vec3::new(x, y, z)));
    }
}

fn chain_joints(desc: &mut SceneDesc) {
    let anchor = desc.add_body(BodySpec::anchor(Vec3::ZERO));
    let link = desc.add_shape(ShapeDesc::Sphere { radius: 0.2 });
    let half = Vec3::new(0.25, 0.0, 0.0);
    for ci in 0..10 {
        for ck in 0..10 {
            let top = Vec3::new(22.0 * ci as f32, 20.0, 1.5 * ck as f32);
            desc.chain_tops.push(top);
            let mut prev = None;
            for l in 0..CHAIN_LINKS {
                let p = top + Vec3::new(0.5 * (l as f32 + 0.5), 0.0, 0.0);
                let b = desc.add_body(BodySpec {
                    can_sleep: false,
                    ..BodySpec::dynamic(link, p)
                });
                let (a, at_a) = match prev {
                    None => (anchor, top),
                    Some(prev) => (prev, half),
                };
                desc.joints.push(JointSpec {
                    a,
                    b,
                    kind: JointType::Ball,
                    frames: JointFrames::Local { a: at_a, b: -half },
                });
                prev = Some(b);
            }
        }
    }
}

/// ragdolls (examples/RAGDOLLS.md): a ground box, a pile of 9 x 9 x 2 boxes of half
/// extent 0.5 centred on the origin, and 10 x 10 ragdolls 1 m apart in x and z with their
/// feet 4 m above the ground, over the pile. Sleeping enabled.
fn ragdolls(desc: &mut SceneDesc) {
    ground(desc, Vec3::new(30.0, 0.5, 30.0));
    let cube = desc.add_shape(UNIT_BOX);
    for layer in 0..2 {
        for i in 0..9 {
            for k in 0..9 {
                let p = Vec3::new(i as f32 - 4.0, 0.5 + layer as f32, k as f32 - 4.0);
                desc.add_body(BodySpec::dynamic(cube, p));
            }
        }
    }
    for i in 0..10 {
        for k in 0..10 {
            describe_ragdoll(desc, Vec3::new(i as f32 - 4.5, 4.0, k as f32 - 4.5), true);
        }
    }
}

/// The description of `kind`: every engine builds its scene from it.
#[must_use]
pub fn describe(kind: SceneKind) -> SceneDesc {
    let mut desc = SceneDesc::new(kind);
    match kind {
        SceneKind::Pyramid20 => pyramids(&mut desc, 20, 1, 1),
        SceneKind::PyramidBig => pyramids(&mut desc, 40, 1, 1),
        SceneKind::ManyPyramids => pyramids(&mut desc, 10, 10, 10),
        SceneKind::Free10k => free10k(&mut desc),
        SceneKind::Rain4k => rain4k(&mut desc),
        SceneKind::ChainJoints => chain_joints(&mut desc),
        SceneKind::Ragdolls => ragdolls(&mut desc),
        SceneKind::Terrain => terrain::describe_terrain(&mut desc),
    }
    desc
}
