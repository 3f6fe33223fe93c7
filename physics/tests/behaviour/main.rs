//! The physics behaviour tests, one module per concept, in one test binary: one link
//! instead of one per file, which is most of what the test command waits on
//! (`tests/no_alloc.rs` stays a binary of its own, since it counts every allocation of
//! its process).

mod api;
mod billiards;
mod bodies;
mod body_changes;
mod broad_phase;
mod ccd;
mod character;
mod common;
mod composite_shapes;
mod contact_forces;
mod contact_modification;
mod contacts;
mod debug_draw;
mod determinism;
mod embed;
mod error_messages;
mod events;
mod forces;
mod free_fall;
mod friction;
mod game;
mod game_async;
mod ghost_collisions;
mod gyroscopic;
mod hooks;
mod joint_drives;
mod joints;
mod layers;
mod locked_axes;
mod mass_properties;
mod materials;
mod narrow_phase;
#[cfg(feature = "net")]
mod net;
mod newtons_cradle;
mod queries;
mod recording;
mod restitution;
mod rollback;
mod rolling_friction;
mod runtime;
mod scene_queries;
mod shape_query;
mod shapes;
mod snapshot;
mod speculative;
mod stacking;
mod step_trace;
