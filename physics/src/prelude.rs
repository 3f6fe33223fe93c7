//! Everything everyday code needs, in one import: `use joule_physics::prelude::*;`.
//!
//! It re-exports the job system too, so a game needs `joule-physics` as its only
//! dependency to make a world and step it.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y))?;
//! world.step(1.0 / 60.0);
//! assert!(world.position(ball)?.y < 1.0, "gravity pulls the ball down");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::body::filter::{CollisionFilter, ObjectLayer};
pub use crate::body::{BodyDesc, BodyId, LockedAxes, MotionQuality, MotionType};
pub use crate::collision::query::{QueryFilter, RayHit};
pub use crate::dynamics::solver::SolverSettings;
pub use crate::error::PhysicsError;
pub use crate::events::{ContactEvent, ContactEventKind, ContactForceEvent, SensorEvent};
pub use crate::game::{FixedStep, FrameReport, FrameStep, Presentation};
pub use crate::material::MaterialId;
pub use crate::math::{Isometry, Quat, Vec3};
pub use crate::shape::Shape;
pub use crate::world::body_view::BodyRef;
pub use crate::world::contact_view::{ContactPointView, ContactView};
pub use crate::world::debug_draw::{Color, ColorMode, DebugDrawOptions, DebugRenderer};
pub use crate::world::event_queue::{Event, EventKind};
pub use crate::world::ray::{Ray, RayIntersection};
pub use crate::world::snapshot::DynamicSnapshot;
pub use crate::world::{StepHandle, World, WorldDesc};
pub use joule_graph::Trace;
pub use joule_jobs::{JobSystem, TraceEvent};
