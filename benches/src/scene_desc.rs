//! The standard scenes of ../shared/SCENES.md as plain data: one list of bodies (shape,
//! pose, velocities, whether it may sleep) in creation order, which every peer engine of
//! the compare runner builds from, so all engines step the same scene. A unit test checks
//! the list body for body against the joule world that `joule_examples::scenes::build`
//! makes, so this description and joule's scenes cannot drift apart.

use joule_examples::scenes::{SceneKind, SplitMix64};

/// A collision shape, in the body's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeDesc {
    /// A sphere of this radius.
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A box of these half extents.
    Cuboid {
        /// Half extents (m).
        half: [f32; 3],
    },
    /// No shape: a static anchor for joints, never collided with.
    None,
}

/// A ball joint between two bodies of a scene: the point at `local_a` in A's frame is
/// held at the point at `local_b` in B's (frames unrotated: every scene body starts
/// unrotated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BallJointSpec {
    /// Index of body A in [`SceneDesc::bodies`].
    pub a: usize,
    /// Index of body B.
    pub b: usize,
    /// The joint point in A's frame (m).
    pub local_a: [f32; 3],
    /// The joint point in B's frame (m).
    pub local_b: [f32; 3],
}

/// One body of a scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodySpec {
    /// Dynamic (true) or static (false).
    pub dynamic: bool,
    /// Its shape (density 1000 kg/m³, friction 0.5, restitution 0 for every scene).
    pub shape: ShapeDesc,
    /// Position of its centre (m).
    pub position: [f32; 3],
    /// Linear velocity at the start (m/s).
    pub linear_velocity: [f32; 3],
    /// Angular velocity at the start (rad/s).
    pub angular_velocity: [f32; 3],
    /// Whether it may fall asleep.
    pub can_sleep: bool,
}

/// A whole scene.
#[derive(Clone, Debug)]
pub struct SceneDesc {
    /// Which standard scene.
    pub kind: SceneKind,
    /// Gravity (m/s²).
    pub gravity: [f32; 3],
    /// Bodies in creation order (the ground first where there is one).
    pub bodies: Vec<BodySpec>,
    /// Ball joints in creation order (chain_joints).
    pub joints: Vec<BallJointSpec>,
}

/// Density of every scene body (kg/m³).
pub const DENSITY: f32 = 1000.0;
/// Friction of every scene body.
pub const FRICTION: f32 = 0.5;

fn fixed_box(half: [f32; 3], position: [f32; 3]) -> BodySpec {
    BodySpec {
        dynamic: false,
        shape: ShapeDesc::Cuboid { half },
        position,
        linear_velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        can_sleep: true,
    }
}

fn dynamic(shape: ShapeDesc, position: [f32; 3], can_sleep: bool) -> BodySpec {
    BodySpec {
        dynamic: true,
        shape,
        position,
        linear_velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        can_sleep,
    }
}

const UNIT_BOX: ShapeDesc = ShapeDesc::Cuboid { half: [0.5; 3] };

fn pyramids(base: usize, nx: usize, nz: usize, out: &mut Vec<BodySpec>) {
    let sx = (base + 2) as f32;
    let sz = 4.0f32;
    out.push(fixed_box(
        [nx as f32 * sx / 2.0 + 5.0, 0.5, nz as f32 * sz / 2.0 + 5.0],
        [0.0, -0.5, 0.0],
    ));
    for i in 0..nx {
        for k in 0..nz {
            let cx = (i as f32 - (nx as f32 - 1.0) / 2.0) * sx;
            let cz = (k as f32 - (nz as f32 - 1.0) / 2.0) * sz;
            for row in 0..base {
                let n = base - row;
                for j in 0..n {
                    let x = cx + j as f32 - (n as f32 - 1.0) / 2.0;
                    out.push(dynamic(UNIT_BOX, [x, 0.5 + row as f32, cz], false));
                }
            }
        }
    }
}

fn free10k(out: &mut Vec<BodySpec>) {
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0001);
    for i in 0..25 {
        for j in 0..16 {
            for k in 0..25 {
                let mut b = dynamic(
                    ShapeDesc::Sphere { radius: 0.5 },
                    [2.0 * i as f32, 2.0 * j as f32, 2.0 * k as f32],
                    false,
                );
                b.linear_velocity = [0; 3].map(|_| rng.range(-0.04, 0.04));
                b.angular_velocity = [0; 3].map(|_| rng.range(-1.0, 1.0));
                out.push(b);
            }
        }
    }
}

fn rain4k(out: &mut Vec<BodySpec>) {
    out.push(fixed_box([100.0, 0.5, 100.0], [0.0, -0.5, 0.0]));
    let mut rng = SplitMix64::new(0x5eed_1234_abcd_0002);
    let pitch = 20.0f32 / 14.0;
    for idx in 0..4000usize {
        let layer = idx / 196;
        let i = (idx / 14) % 14;
        let k = idx % 14;
        let x = -10.0 + pitch * (i as f32 + 0.5) + rng.range(-0.2, 0.2);
        let z = -10.0 + pitch * (k as f32 + 0.5) + rng.range(-0.2, 0.2);
        let y = 2.0 + 1.5 * layer as f32;
        let shape = if (i + k + layer) % 2 == 0 {
            ShapeDesc::Sphere { radius: 0.5 }
        } else {
            UNIT_BOX
        };
        out.push(dynamic(shape, [x, y, z], true));
    }
}

/// Chain tops of chain_joints (SCENES.md): 10 x 10 chains, `(22 ci, 20, 1.5 ck)`.
fn chain_tops() -> impl Iterator<Item = [f32; 3]> {
    (0..10).flat_map(|ci| (0..10).map(move |ck| [22.0 * ci as f32, 20.0, 1.5 * ck as f32]))
}

/// Links per chain of chain_joints.
const CHAIN_LINKS: usize = 20;

fn chain_joints(out: &mut Vec<BodySpec>, joints: &mut Vec<BallJointSpec>) {
    out.push(BodySpec {
        dynamic: false,
        shape: ShapeDesc::None,
        position: [0.0; 3],
        linear_velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        can_sleep: true,
    });
    for top in chain_tops() {
        for l in 0..CHAIN_LINKS {
            let p = [top[0] + 0.5 * (l as f32 + 0.5), top[1], top[2]];
            out.push(dynamic(ShapeDesc::Sphere { radius: 0.2 }, p, false));
            let b = out.len() - 1;
            joints.push(if l == 0 {
                BallJointSpec {
                    a: 0,
                    b,
                    local_a: top,
                    local_b: [-0.25, 0.0, 0.0],
                }
            } else {
                BallJointSpec {
                    a: b - 1,
                    b,
                    local_a: [0.25, 0.0, 0.0],
                    local_b: [-0.25, 0.0, 0.0],
                }
            });
        }
    }
}

/// Describes `kind`, or `None` for a scene this description does not cover yet.
#[must_use]
pub fn describe(kind: SceneKind) -> Option<SceneDesc> {
    let g = kind.gravity();
    let mut bodies = Vec::new();
    let mut joints = Vec::new();
    match kind.name() {
        "pyramid20" => pyramids(20, 1, 1, &mut bodies),
        "pyramid_big" => pyramids(40, 1, 1, &mut bodies),
        "many_pyramids" => pyramids(10, 10, 10, &mut bodies),
        "free10k" => free10k(&mut bodies),
        "rain4k" => rain4k(&mut bodies),
        "chain_joints" => chain_joints(&mut bodies, &mut joints),
        _ => return None,
    }
    Some(SceneDesc {
        kind,
        gravity: [g.x, g.y, g.z],
        bodies,
        joints,
    })
}

impl SceneDesc {
    /// Indices (into `bodies`) of the dynamic bodies, in creation order.
    #[must_use]
    pub fn dynamic_indices(&self) -> Vec<usize> {
        (0..self.bodies.len())
            .filter(|&i| self.bodies[i].dynamic)
            .collect()
    }
}

/// What a finished run looks like: SCENES.md's sanity line and whether the scene stood.
#[derive(Clone, Debug)]
pub struct Sanity {
    /// The line to print.
    pub line: String,
    /// False when the engine failed the scene's check (its time does not count).
    pub ok: bool,
}

/// SCENES.md's sanity check from the dynamic bodies' final positions (creation order),
/// the number asleep and the simulated time since the start.
#[must_use]
pub fn sanity(desc: &SceneDesc, positions: &[[f32; 3]], asleep: usize, elapsed: f32) -> Sanity {
    let dynamic: Vec<&BodySpec> = desc.bodies.iter().filter(|b| b.dynamic).collect();
    assert_eq!(
        dynamic.len(),
        positions.len(),
        "one position per dynamic body"
    );
    let dist = |a: [f32; 3], b: [f32; 3]| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    match desc.kind.name() {
        "free10k" => {
            let ok = dynamic
                .iter()
                .zip(positions)
                .filter(|(b, p)| {
                    let x = [0, 1, 2].map(|i| b.position[i] + b.linear_velocity[i] * elapsed);
                    dist(x, **p) < 0.01
                })
                .count();
            Sanity {
                line: format!(
                    "spheres within 1 cm of x0 + v t: {ok}/{}; asleep {asleep}",
                    dynamic.len()
                ),
                ok: ok == dynamic.len(),
            }
        }
        "rain4k" => {
            let highest = positions
                .iter()
                .map(|p| p[1])
                .fold(f32::NEG_INFINITY, f32::max);
            let below = positions.iter().filter(|p| p[1] < 0.0).count();
            Sanity {
                line: format!("highest y {highest:.2}; below ground {below}; asleep {asleep}"),
                ok: below == 0,
            }
        }
        "chain_joints" => {
            // Links in chain order after each chain's top: the largest distance between
            // consecutive joint points' bodies past the rest length (0.5 m between links,
            // 0.25 m from the top to the first), and the lowest link.
            let mut stretch = 0.0f32;
            for (c, top) in chain_tops().enumerate() {
                let links = &positions[c * CHAIN_LINKS..(c + 1) * CHAIN_LINKS];
                stretch = stretch.max(dist(top, links[0]) - 0.25);
                for pair in links.windows(2) {
                    stretch = stretch.max(dist(pair[0], pair[1]) - 0.5);
                }
            }
            let lowest = positions.iter().map(|p| p[1]).fold(f32::INFINITY, f32::min);
            Sanity {
                line: format!(
                    "largest link stretch {:.1} mm; lowest y {lowest:.2}; asleep {asleep}",
                    stretch * 1000.0
                ),
                // A chain that comes apart: more than 10 cm on a 0.5 m link.
                ok: stretch < 0.1,
            }
        }
        _ => {
            // Pyramids: the top box of each is the last box of its wall.
            let moved = dynamic
                .iter()
                .zip(positions)
                .filter(|(b, p)| dist(b.position, **p) > 0.25)
                .count();
            let top_sag = dynamic
                .iter()
                .zip(positions)
                .filter(|(b, _)| {
                    // A top box has no box right above it.
                    !dynamic.iter().any(|o| {
                        (o.position[1] - b.position[1] - 1.0).abs() < 1e-3
                            && (o.position[0] - b.position[0]).abs() < 0.6
                            && (o.position[2] - b.position[2]).abs() < 1e-3
                    }) && b.position[1] > 1.0
                })
                .map(|(b, p)| b.position[1] - p[1])
                .fold(0.0f32, f32::max);
            Sanity {
                line: format!(
                    "boxes moved > 0.25 m: {moved}; largest top sag {:.1} cm; asleep {asleep}",
                    top_sag * 100.0
                ),
                ok: moved == 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use joule_examples::scenes;
    use joule_jobs::JobSystem;
    use joule_physics::world::{World, WorldDesc};

    /// The description is the scene joule builds: same bodies, same order, same poses,
    /// velocities and masses (a sphere and a box of the same size differ in mass).
    #[test]
    fn description_matches_joules_scenes() {
        for kind in SceneKind::ALL {
            let Some(desc) = describe(kind) else { continue };
            let mut w = World::new(
                WorldDesc {
                    gravity: kind.gravity(),
                    ..WorldDesc::default()
                },
                JobSystem::new(0).unwrap(),
            );
            let scene = scenes::build(kind, &mut w).unwrap();
            let dynamic: Vec<_> = desc.bodies.iter().filter(|b| b.dynamic).collect();
            assert_eq!(dynamic.len(), scene.bodies.len(), "{}", kind.name());
            for (spec, &id) in dynamic.iter().zip(&scene.bodies) {
                let p = w.position(id).unwrap();
                assert_eq!(spec.position, [p.x, p.y, p.z], "{}", kind.name());
                let v = w.linear_velocity(id).unwrap();
                assert_eq!(spec.linear_velocity, [v.x, v.y, v.z]);
                let a = w.angular_velocity(id).unwrap();
                assert_eq!(spec.angular_velocity, [a.x, a.y, a.z]);
                let volume = match spec.shape {
                    ShapeDesc::Sphere { radius } => {
                        4.0 / 3.0 * std::f32::consts::PI * radius.powi(3)
                    }
                    ShapeDesc::Cuboid { half } => 8.0 * half[0] * half[1] * half[2],
                    ShapeDesc::None => unreachable!("scene bodies without shapes are static"),
                };
                let m = w.mass(id).unwrap();
                assert!((m - DENSITY * volume).abs() < 1e-3 * m, "mass {m}");
            }
            assert_eq!(desc.joints.len(), scene.joints.len(), "{}", kind.name());
            if let Some(g) = scene.ground {
                let ground = desc.bodies.iter().find(|b| !b.dynamic).unwrap();
                let p = w.position(g).unwrap();
                assert_eq!(ground.position, [p.x, p.y, p.z]);
            }
        }
    }

    #[test]
    fn sanity_flags_a_fallen_pyramid() {
        let desc = describe(SceneKind::Pyramid20).unwrap();
        let mut pos: Vec<[f32; 3]> = desc
            .bodies
            .iter()
            .filter(|b| b.dynamic)
            .map(|b| b.position)
            .collect();
        assert!(sanity(&desc, &pos, 0, 1.0).ok);
        pos[100][1] -= 0.5;
        assert!(!sanity(&desc, &pos, 0, 1.0).ok);
    }
}
