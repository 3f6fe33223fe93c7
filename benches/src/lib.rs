//! Shared helpers for the benchmarks: the standard scenes built in peer engines.

pub mod rapier_scenes;
