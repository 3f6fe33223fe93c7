//! Shared helpers for the benchmarks: the standard scenes as plain data, built in peer
//! engines, and the engines the compare runner times.
#![deny(missing_docs)]

pub mod peers;
pub mod rapier_scenes;
pub mod scene_desc;
