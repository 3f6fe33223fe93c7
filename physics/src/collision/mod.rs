//! The collision stages of the step: the broad phase (a dynamic tree per motion type,
//! refit and queried in parallel), finding collisions (the pair pass, the narrow phase
//! in parallel over pairs, contact events), continuous collision detection, and the
//! broad-phase queries the world's ray and shape casts run on.
//!
//! Stages import the data (bodies, shapes, contacts, materials, filters) and the geometry
//! below them, never the step or the world above.

pub mod broad_phase;
pub mod ccd;
pub mod narrow_phase;
pub(crate) mod pipeline;
pub mod query;
pub mod shape_query;
