//! The game loop: fixed physics steps under a variable frame rate, presented smoothly.
//!
//! A game renders at whatever rate the display and the frame's work allow (144 Hz, 60 Hz,
//! a hitch of a second), but the simulation must advance in fixed steps to be stable and
//! reproducible. Drawn as they are, fixed steps stutter: at 144 Hz over 60 Hz physics a
//! body stands still in more than half of the frames. The standard cure (Glenn Fiedler,
//! "Fix Your Timestep!"; bevy_rapier's `TimestepMode::Interpolated`, Avian's
//! `PhysicsInterpolation`) has two parts, one per file:
//!
//! ```text
//!  real time  ──┬────────┬────────┬────────┬──►  frames (variable)
//!  steps      ──┴──┬─────┴──┬─────┴──┬─────┴──►  fixed dt; the accumulator carries the rest
//!                 prev    current
//!                   └─alpha─┘  ──►  pose = prev.slerp(current, alpha)
//! ```
//!
//! - [`FixedStep`] is the clock: each frame's elapsed time goes into an accumulator, whole
//!   steps come out (at most a cap per frame, the rest of a long frame dropped and
//!   reported, so a slow frame does not make the next one slower still), and what is
//!   left, as a fraction of a step, is `alpha`.
//! - [`Presentation`] keeps the poses and velocities of every body after the last two
//!   steps, double-buffered by body slot, and answers each body's pose at `alpha` (or
//!   extrapolated by its velocity). A body teleported between the two steps, or created
//!   in the latest, is shown where it is now rather than smeared along the jump.
//!
//! The presentation is drawn a fraction of a step behind the simulation: that is the
//! price of interpolating between known poses. Extrapolation has no lag but overshoots
//! when a body's velocity changes (a bounce, a collision).
//!
//! The step itself can run beside the frame: [`World::step_async`] returns a
//! [`StepHandle`] at once and the workers run the stages while the game works and reads
//! its presentation; the handle borrows the world until the step is finished, and the
//! game records the presentation after [`wait`](crate::world::StepHandle::wait) or a ready
//! [`poll`](crate::world::StepHandle::poll). [`FixedStep::frame_async`] does this for the
//! fixed-step clock: the frame's last step runs beside the game, and
//! [`FrameStep::finish`] records it; the results are `frame`'s, bit for bit.
//!
//! This layer uses only the world's public surface, as a game does: [`World::bodies`]
//! (body order, no allocation) and [`World::teleport_count`]. Recording copies into
//! buffers kept from the last record, so after the first two records a frame allocates
//! nothing (`tests/no_alloc.rs`).
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y * 10.0))?;
//! let mut clock = FixedStep::new(1.0 / 60.0)?;
//! let mut presentation = Presentation::new();
//! for _ in 0..144 {
//!     let frame = clock.frame(&mut world, &mut presentation, 1.0 / 144.0);
//!     let pose = presentation.pose(ball, frame.alpha)?;
//!     assert!(pose.translation.y <= 10.0);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`World::bodies`]: crate::world::World::bodies
//! [`World::step_async`]: crate::world::World::step_async
//! [`StepHandle`]: crate::world::StepHandle
//! [`World::teleport_count`]: crate::world::World::teleport_count

pub mod fixed_step;
pub mod presentation;

pub use fixed_step::{FixedStep, FrameReport, FrameStep};
pub use presentation::{Presentation, PresentedPoses};
