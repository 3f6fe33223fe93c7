//! Shared helpers for the benchmarks: the standard scenes, described once in
//! `joule_examples::scenes`, built in peer engines, and the engines the compare runner
//! times.
#![deny(missing_docs)]

pub mod peers;
pub mod rapier_scenes;
