//! joule-physics: the rigid-body engine (under construction).
#![forbid(unsafe_code)]

pub mod aabb;
pub mod broad_phase;
pub mod dynamic_tree;
pub mod math;
pub mod narrow_phase;
pub mod shape;
pub mod support;
