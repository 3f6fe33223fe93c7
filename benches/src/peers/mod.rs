//! The engines the compare runner times, behind one small trait. joule and Rapier are
//! always here; Box3D (`peer-box3d`), Jolt (`peer-jolt`) and PhysX (`peer-physx`) are
//! C/C++ libraries reached through their `-sys` crates and only built with the `peers`
//! feature, never in CI.
//!
//! Every engine builds its scene from the one description,
//! `joule_examples::scenes::describe`, with its own default solver settings, written down
//! in each module's header; an engine that cannot build part of a scene says so.

use joule_examples::scenes::{self, SceneKind};

#[cfg(feature = "peer-box3d")]
pub mod box3d;
#[cfg(feature = "peer-jolt")]
pub mod jolt;
pub mod joule;
#[cfg(feature = "peer-physx")]
pub mod physx;
pub mod rapier;

/// One engine's world, built from a standard scene and stepped at 1/60 s.
pub trait Engine {
    /// One 1/60 s step.
    fn step(&mut self);
    /// The dynamic bodies' positions in creation order.
    fn dynamic_positions(&self) -> Vec<[f32; 3]>;
    /// How many dynamic bodies are asleep.
    fn asleep(&self) -> usize;
}

/// Every engine the runner knows: its name, whether this build has it, and what building
/// it takes.
const ENGINES: [(&str, bool, &str); 6] = [
    ("joule", true, ""),
    ("joule-fast", true, ""),
    ("rapier", true, ""),
    (
        "box3d",
        cfg!(feature = "peer-box3d"),
        "C sources, any C compiler",
    ),
    (
        "jolt",
        cfg!(feature = "peer-jolt"),
        "C++ through joltc-sys: cmake, libclang",
    ),
    (
        "physx",
        cfg!(feature = "peer-physx"),
        "C++ through physx-sys: clang++",
    ),
];

/// The engines this build knows, by name.
#[must_use]
pub fn available() -> Vec<&'static str> {
    ENGINES
        .iter()
        .filter(|(_, built, _)| *built)
        .map(|(name, _, _)| *name)
        .collect()
}

/// The peers this build does not time, each with what building it takes (all are built
/// with `--features peers`).
#[must_use]
pub fn not_built() -> Vec<(&'static str, &'static str)> {
    ENGINES
        .iter()
        .filter(|(_, built, _)| !*built)
        .map(|(name, _, needs)| (*name, *needs))
        .collect()
}

/// Builds `kind` in the engine named `name` with `threads` threads in total, or says why not.
pub fn build(name: &str, kind: SceneKind, threads: usize) -> Result<Box<dyn Engine>, String> {
    let desc = scenes::describe(kind);
    match name {
        "joule" => Ok(Box::new(joule::JouleEngine::new(&desc, threads)?)),
        // joule at the peers' pass count (`SolverSettings::fast`: 4 substeps).
        "joule-fast" => Ok(Box::new(joule::JouleEngine::with_solver(
            &desc,
            threads,
            joule_physics::dynamics::solver::SolverSettings::fast(),
        )?)),
        "rapier" => Ok(Box::new(rapier::RapierEngine::new(&desc, threads)?)),
        #[cfg(feature = "peer-box3d")]
        "box3d" => Ok(Box::new(box3d::Box3dEngine::new(&desc, threads)?)),
        #[cfg(feature = "peer-physx")]
        "physx" => Ok(Box::new(physx::PhysxEngine::new(&desc, threads)?)),
        #[cfg(feature = "peer-jolt")]
        "jolt" => Ok(Box::new(jolt::JoltEngine::new(&desc, threads)?)),
        other => {
            let _ = desc;
            Err(format!(
                "engine {other} is not in this build (available: {})",
                available().join(", ")
            ))
        }
    }
}
