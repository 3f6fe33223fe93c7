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
//!
//! # Map of the crate
//!
//! The folders are the layers of `DESIGN.md`, top to bottom; a file imports only its own
//! layer and the ones below (`tests/behaviour/layers.rs` fails otherwise):
//!
//! | layer | modules | what they hold |
//! |---|---|---|
//! | game-level parts | [`game`], [`character`] | the game loop: a [`FixedStep`](game::FixedStep) clock and a [`Presentation`](game::Presentation) of every body interpolated between the last two steps; a kinematic [`CharacterController`](character::CharacterController) (one, or a batch in parallel with [`update_characters`](character::update_characters)) and a [`RigidCharacter`](character::RigidCharacter) |
//! | the user's surface | [`world`] | [`World`](world::World): stepping (blocking, or beside the caller with [`step_async`](world::step_async)), creating and removing bodies and joints, reading and setting them ([`body_view`]), reading contacts ([`contact_view`]), events ([`event_queue`]), ray and shape queries ([`ray`], [`shape_query`]; one layer down on a [`SceneQuery`](query::SceneQuery) that jobs and step listeners hold too), the hooks' setters, materials, [`snapshot`]s, recordings, [`debug_draw`] |
//! | the step | `step` (private) | the step as a joule-graph graph of the stages below, its [`listener`]s (user code before and after) and its trace ([`STAGES`]) |
//! | the stages | [`collision`], [`dynamics`], [`settings`] | [`broad_phase`], [`narrow_phase`], [`ccd`], broad-phase [`query`]; the [`constraint_graph`], [`island`]s and sleeping, the [`solver`]; the settings they read |
//! | the data | [`body`], [`shape`], [`joint`], [`contact`], [`material`], [`events`], [`error`] | bodies (with their [`filter`]s, [`mass`] properties and locked axes), shapes, joint descriptions and states, contacts and the [`hooks`] that modify them, surface materials, event records, typed errors |
//! | geometry | [`geometry`], [`math`] | bounding boxes ([`aabb`]), support maps ([`support`]), the [`dynamic_tree`]; glam's types |
//!
//! The game-level parts sit above the world and use only its public surface, as a game
//! does: [`game`] (the fixed-step clock and the interpolated presentation) and
//! [`character`] (character controllers over the world's queries), and `net` (the
//! authoritative server, its clients and the wire codec, behind the `net` cargo feature).
//! Everyday code needs only [`prelude`].
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod error;
pub mod math;
pub mod prelude;
pub mod settings;

// The data: what the stages work on.
pub mod body;
pub mod contact;
pub mod events;
pub mod geometry;
pub mod joint;
pub mod material;
pub mod shape;

// The stages of the step.
pub mod collision;
pub mod dynamics;

// The step: the graph of stages, its listeners and its trace.
mod step;

// The user's surface.
pub mod world;

// Game-level parts, over the world's public surface.
pub mod character;
pub mod game;
#[cfg(feature = "net")]
pub mod net;

// Paths users have written since the first milestone, kept working.
pub use body::{builder as body_builder, filter, mass};
pub use collision::{broad_phase, ccd, narrow_phase, query};
pub use contact::hooks;
pub use dynamics::{constraint_graph, island, solver};
pub use geometry::{aabb, dynamic_tree, support};
pub use step::listener;
pub use step::trace::STAGES;
#[cfg(feature = "recording")]
pub use world::recording;
pub use world::{body_view, contact_view, debug_draw, event_queue, ray, shape_query, snapshot};

/// The README's code blocks, compiled and run as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
