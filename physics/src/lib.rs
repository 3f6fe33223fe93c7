//! joule-physics: a real-time 3D rigid-body engine whose step runs on joule-jobs.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
//! world.create_body(&BodyDesc::fixed(
//!     Shape::cuboid(Vec3::new(10.0, 0.5, 10.0))?,
//!     Vec3::new(0.0, -0.5, 0.0),
//! ))?;
//! let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::new(0.0, 3.0, 0.0)))?;
//! for _ in 0..120 {
//!     world.step(1.0 / 60.0);
//! }
//! let y = world.body(ball)?.position().y;
//! assert!((y - 0.5).abs() < 0.01, "the ball rests on the ground, y = {y}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod aabb;
pub mod body;
pub mod body_builder;
pub mod body_view;
pub mod broad_phase;
pub mod ccd;
pub mod constraint_graph;
pub mod contact;
pub mod debug_draw;
pub mod dynamic_tree;
pub mod error;
pub mod event_queue;
pub mod events;
pub mod filter;
pub mod hooks;
pub mod island;
pub mod joint;
pub mod listener;
pub mod mass;
pub mod material;
pub mod math;
pub mod narrow_phase;
mod pipeline;
mod prefetch;
pub mod prelude;
pub mod query;
pub mod ray;
#[cfg(feature = "recording")]
pub mod recording;
pub mod settings;
pub mod shape;
pub mod shape_query;
pub mod snapshot;
pub mod solver;
mod step;
mod step_trace;
pub mod support;
pub mod world;
mod world_body_api;

pub use step_trace::STAGES;

/// The README's code blocks, compiled and run as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
