//! Rapier 0.36 with its default integration parameters (4 solver iterations), the scene
//! built by `crate::rapier_scenes`. With the `peers` feature Rapier is built with its
//! `parallel` feature and each step runs inside a rayon pool of `threads` threads.

use joule_examples::scenes::SceneDesc;

use super::Engine;
use crate::rapier_scenes::{self, RapierWorld};

/// A Rapier world stepped in a rayon pool of the asked size.
pub struct RapierEngine {
    world: RapierWorld,
    pool: rayon::ThreadPool,
}

impl RapierEngine {
    /// Builds `desc`; `threads` sizes the rayon pool Rapier's parallel build uses.
    pub fn new(desc: &SceneDesc, threads: usize) -> Result<Self, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            world: rapier_scenes::build_desc(desc)?,
            pool,
        })
    }
}

impl Engine for RapierEngine {
    fn step(&mut self) {
        let w = &mut self.world;
        self.pool.install(|| w.step());
    }

    fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        self.world.dynamic_positions()
    }

    fn asleep(&self) -> usize {
        self.world.asleep()
    }
}
