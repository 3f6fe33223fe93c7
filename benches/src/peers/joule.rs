//! joule with its default `WorldDesc`, the scene built by `joule_examples::scenes`.

use joule_examples::scenes::{self, Scene, SceneDesc};
use joule_jobs::JobSystem;
use joule_physics::dynamics::solver::SolverSettings;
use joule_physics::world::{World, WorldDesc};

use super::Engine;

/// A joule world and the scene's body list.
pub struct JouleEngine {
    world: World,
    scene: Scene,
    dt: f32,
}

impl JouleEngine {
    /// Builds `desc` with `threads - 1` workers beside the stepping thread.
    pub fn new(desc: &SceneDesc, threads: usize) -> Result<Self, String> {
        Self::with_solver(desc, threads, SolverSettings::default())
    }

    /// Builds `desc` as [`JouleEngine::new`] does, with the solver settings `solver`.
    pub fn with_solver(
        desc: &SceneDesc,
        threads: usize,
        solver: SolverSettings,
    ) -> Result<Self, String> {
        let jobs = JobSystem::new(threads.saturating_sub(1)).map_err(|e| e.to_string())?;
        let mut world = World::new(
            WorldDesc {
                gravity: desc.gravity,
                solver,
                ..WorldDesc::default()
            },
            jobs,
        );
        let scene = scenes::build_desc(desc, &mut world).map_err(|e| e.to_string())?;
        Ok(Self {
            world,
            scene,
            dt: desc.dt,
        })
    }
}

impl Engine for JouleEngine {
    fn step(&mut self) {
        self.world.step(self.dt);
    }

    fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        self.scene
            .bodies
            .iter()
            .map(|&b| {
                let p = self.world.position(b).unwrap_or_default();
                [p.x, p.y, p.z]
            })
            .collect()
    }

    fn asleep(&self) -> usize {
        self.scene
            .bodies
            .iter()
            .filter(|&&b| self.world.is_sleeping(b).unwrap_or(false))
            .count()
    }
}
