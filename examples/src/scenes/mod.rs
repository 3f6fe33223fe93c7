//! The standard scenes of `../shared/SCENES.md`, kept in one place: each scene is
//! described once as engine-neutral data ([`SceneDesc`], from [`describe`]), joule builds
//! its worlds from that description ([`build_desc`]) and so does every peer engine of the
//! benches (`joule-benches`), so a scene is changed here and nowhere else. Keep this and
//! SCENES.md in agreement.
//!
//! Common to all: time step 1/60 s; gravity (0, -9.81, 0) unless stated; density 1000;
//! friction 0.5; restitution 0. "Box h" is a box with half extents (h, h, h). The ground
//! is one static box.
//!
//! ```
//! use joule_examples::scenes::{self, SceneKind};
//! use joule_jobs::JobSystem;
//! use joule_physics::world::{World, WorldDesc};
//!
//! let desc = scenes::describe(SceneKind::Pyramid20);
//! assert_eq!(desc.dynamic_indices().len(), 210);
//! let mut world = World::new(
//!     WorldDesc { gravity: desc.gravity, ..WorldDesc::default() },
//!     JobSystem::new(0)?,
//! );
//! let scene = scenes::build_desc(&desc, &mut world)?;
//! world.step(desc.dt);
//! assert_eq!(scene.bodies.len(), 210);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
mod desc;
mod random;
mod sanity;
mod standard;
mod terrain;

use joule_physics::body::{BodyDesc, BodyId, MotionType};
use joule_physics::error::PhysicsError;
use joule_physics::joint::JointId;
use joule_physics::math::Vec3;
use joule_physics::world::World;

pub use build::{build, build_desc};
pub use desc::{
    BodySpec, CompoundPart, DENSITY, FRICTION, JointFrames, JointSpec, JointType, Motion,
    RESTITUTION, SceneDesc, ShapeDesc, ShapeId,
};
pub use random::SplitMix64;
pub use sanity::{Sanity, sanity};
pub use standard::describe;
pub use terrain::{
    TERRAIN_BOWL_AT, terrain_bowl, terrain_drops, terrain_grid_mesh, terrain_height,
    terrain_heights, terrain_ramp,
};

/// The time step every scene runs at.
pub const DT: f32 = 1.0 / 60.0;

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

/// The positions of the scene's dynamic bodies, in creation order (infinite for a body
/// that is gone, so that every check counts it as failed).
#[must_use]
pub fn positions(world: &World, scene: &Scene) -> Vec<Vec3> {
    scene
        .bodies
        .iter()
        .map(|&b| world.position(b).unwrap_or(Vec3::INFINITY))
        .collect()
}

/// chain_joints' sanity figures: the largest link stretch (distance between consecutive
/// links, or the first link and its top, minus its rest length) and the lowest y.
#[must_use]
pub fn chain_stretch(world: &World, scene: &Scene) -> (f32, f32) {
    sanity::chain_stretch(&scene.chain_tops, &positions(world, scene))
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

/// Whether a body is dynamic (for scene sanity code).
pub fn is_dynamic(world: &World, id: BodyId) -> bool {
    world.motion_type(id).ok() == Some(MotionType::Dynamic)
}

/// The scene's sanity line of SCENES.md ([`sanity`]), after `elapsed` seconds of
/// simulation; for scenes with joints it adds the largest gap between two joint anchors.
pub fn sanity_line(kind: SceneKind, world: &World, scene: &Scene, elapsed: f32) -> String {
    let asleep = scene
        .bodies
        .iter()
        .filter(|&&b| world.is_sleeping(b).unwrap_or(false))
        .count();
    let line = sanity(&describe(kind), &positions(world, scene), asleep, elapsed).line;
    if scene.joints.is_empty() {
        line
    } else {
        format!(
            "largest joint gap {:.2} mm; {line}",
            largest_joint_gap(world, scene) * 1e3
        )
    }
}
