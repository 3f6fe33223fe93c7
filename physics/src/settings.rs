//! The settings a world is made with. They live apart from `world/` so the step, which
//! reads them every step, does not depend on the `World` that owns it (DESIGN.md: world →
//! step → stages → data, never back).

use crate::body::filter::LayerTable;
use crate::dynamics::island::SleepSettings;
use crate::dynamics::solver::SolverSettings;
use crate::math::Vec3;

/// World settings. `Default` gives Earth gravity along -Y, one object layer, a 2 cm
/// speculative contact margin and a 10 cm broad-phase margin.
#[derive(Clone, Debug)]
pub struct WorldDesc {
    /// Gravity acceleration (m/s²).
    pub gravity: Vec3,
    /// Which object layers collide.
    pub layers: LayerTable,
    /// Contacts are created for shapes closer than this (speculative contacts), in metres.
    pub contact_margin: f32,
    /// How much broad-phase boxes are fattened, in metres.
    pub broad_phase_margin: f32,
    /// Whether `Persist` contact events are reported every step for touching pairs. Off by
    /// default (as in Rapier and Jolt): they cost time in every step whether read or not.
    pub report_persist_events: bool,
    /// Solver settings (substeps, contact softness, restitution threshold).
    pub solver: SolverSettings,
    /// Sleep settings.
    pub sleep: SleepSettings,
}

impl Default for WorldDesc {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            layers: LayerTable::default(),
            contact_margin: 0.02,
            broad_phase_margin: 0.1,
            report_persist_events: false,
            solver: SolverSettings::default(),
            sleep: SleepSettings::default(),
        }
    }
}
