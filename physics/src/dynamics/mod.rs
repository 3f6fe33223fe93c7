//! The dynamics stages of the step: the constraint graph (colouring contacts and joints
//! so no two constraints of a colour share a dynamic body), islands and sleeping, and the
//! soft-step solver over the coloured constraints (contacts and joint rows).
//!
//! Stages import the data (bodies, contacts, joints) and the geometry below them, never
//! the step or the world above.

pub mod constraint_graph;
pub mod island;
pub mod solver;
