//! Stepping beside the game: [`World::step_async`] starts the step graph on the job system
//! and returns a [`StepHandle`] at once; the caller goes on with its frame while the
//! workers (and any thread that waits) run the stages.
//!
//! ```text
//!  main   ─ step_async ─┬─ game work (reads the Presentation) ─ poll/wait ─ record ─►
//!  workers              └─ broad phase ─ narrow phase ─ ... ─ finalize ─ completion ─┘
//! ```
//!
//! The protocol is [`step`](World::step)'s, split in two: [`lend_to`](World::lend_to)
//! moves the world's parts into the world's own step context, the context moves into
//! [`Graph::run_async`](joule_graph::Graph::run_async) (the run owns it: `'static`, no
//! borrowed data crosses into a job), and the graph's [`RunHandle`] gives it back when
//! joined. The step handle then hands the parts back ([`take_back`](World::take_back)),
//! exactly as `step` does after a blocking run: same graph, same context, same stages, so
//! the same bits. The run reuses the step graph's cached run state as `step` does, so a
//! warm `step_async` allocates nothing either.
//!
//! Soundness is the borrow checker's: the handle holds `&mut World`, so while it lives
//! nothing else can read or change the world (and the world, lent out, would report no
//! bodies anyway); the parts come back in [`wait`](StepHandle::wait),
//! [`poll`](StepHandle::poll) once done, or the handle's `Drop`, before any caller sees
//! the world again. A stage's panic is carried to whoever finishes the step and re-raised
//! there after the parts are back. What the game reads meanwhile is a separate object it
//! owns, such as a [`Presentation`](crate::game::Presentation) recorded after the last
//! finished step: reading it takes no lock and allocates nothing.
//!
//! ```compile_fail,E0502
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(1).unwrap());
//! let step = world.step_async(1.0 / 60.0);
//! // error[E0502]: the world is mutably borrowed by the running step.
//! let bodies = world.body_count();
//! step.wait();
//! # let _ = bodies;
//! ```

use std::any::Any;
use std::panic::resume_unwind;
use std::task::Poll;

use joule_graph::RunHandle;

use super::World;

/// A step running beside the caller, started by [`World::step_async`]. It borrows the
/// world mutably until it is finished: by [`wait`](Self::wait), by [`poll`](Self::poll)
/// returning ready, or by dropping the handle (which waits).
///
/// ```
/// use joule_physics::prelude::*;
///
/// let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
/// let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y * 10.0))?;
/// let mut presentation = Presentation::new();
/// presentation.record(&world);
/// let mut step = world.step_async(1.0 / 60.0);
/// let mut frames_of_game_work = 0;
/// while step.poll().is_pending() {
///     // The game's own work; it reads the presentation of the last finished step.
///     let _ = presentation.pose(ball, 0.5)?;
///     frames_of_game_work += 1;
/// }
/// drop(step);
/// presentation.record(&world);
/// assert!(world.position(ball)?.y < 10.0);
/// # let _ = frames_of_game_work;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the step runs until the handle is waited on, polled to completion or dropped"]
pub struct StepHandle<'w> {
    /// `Some` until [`wait`](StepHandle::wait) hands the world back to its caller.
    world: Option<&'w mut World>,
    /// `Some` while the step runs; `None` once the parts are back.
    run: Option<RunHandle>,
}

impl std::fmt::Debug for StepHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepHandle")
            .field("finished", &self.run.is_none())
            .finish()
    }
}

impl World {
    /// Starts a step of `dt` seconds on the job system and returns at once; the step's
    /// jobs run on the workers, and on the calling thread when it waits. The results are
    /// bit for bit those of [`step`](Self::step). With no workers nothing runs until the
    /// handle is waited on or polled (each poll then runs the step's queued jobs).
    ///
    /// Like [`step`](Self::step), it reuses the step graph's run state: once warm, a step
    /// started here and finished by [`wait`](StepHandle::wait) or
    /// [`poll`](StepHandle::poll) allocates nothing.
    ///
    /// Panics if `dt` is not finite and positive (a programming error), before anything
    /// starts.
    pub fn step_async(&mut self, dt: f32) -> StepHandle<'_> {
        let mut ctx = std::mem::take(&mut self.step_ctx);
        self.lend_to(&mut ctx, dt);
        let run = self.step_graph.run_async(&self.jobs, ctx);
        StepHandle {
            world: Some(self),
            run: Some(run),
        }
    }
}

impl<'w> StepHandle<'w> {
    /// Whether the step is finished (its parts may still be in the handle: a
    /// [`poll`](Self::poll) or [`wait`](Self::wait) hands them back at once).
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.run.as_ref().is_none_or(RunHandle::is_done)
    }

    /// Finishes the step if it is done and says so: `Ready` once the world has its parts
    /// back (then, and on every later poll), `Pending` while the step runs. It runs the
    /// jobs queued for this thread first, which with no workers is the whole step.
    ///
    /// # Panics
    /// With the first panic of a stage or step listener, once the world has its parts
    /// back (as [`World::step`] does).
    pub fn poll(&mut self) -> Poll<()> {
        if self.run.is_some()
            && let Some(world) = self.world.as_deref()
        {
            world.jobs.run_pending();
        }
        if !self.is_done() {
            return Poll::Pending;
        }
        if let Some(p) = self.finish() {
            resume_unwind(p);
        }
        Poll::Ready(())
    }

    /// Waits until the step is finished, running its jobs (and others) on this thread
    /// meanwhile, gives the world its parts back and returns it to the caller (the borrow
    /// `step_async` took), so that, for example, a frame driver can record the step.
    ///
    /// # Panics
    /// With the first panic of a stage or step listener, once the world has its parts
    /// back (as [`World::step`] does).
    pub fn wait(mut self) -> &'w mut World {
        if let Some(p) = self.finish() {
            resume_unwind(p);
        }
        self.world
            .take()
            .expect("a step handle holds its world until wait returns it")
    }

    /// Waits for the run if it is still going and takes the parts back; returns the run's
    /// panic, if any. Does nothing once finished.
    fn finish(&mut self) -> Option<Box<dyn Any + Send>> {
        let (mut ctx, panic) = self.run.take()?.join();
        let world = self
            .world
            .as_deref_mut()
            .expect("a step handle holds its world while its run is unfinished");
        world.take_back(&mut ctx);
        world.step_ctx = ctx;
        panic
    }
}

impl Drop for StepHandle<'_> {
    /// Finishes the step, so the world is never left without its parts. A stage's panic
    /// is re-raised here unless the thread is already unwinding (then it is dropped: a
    /// second panic would abort).
    fn drop(&mut self) {
        if let Some(p) = self.finish()
            && !std::thread::panicking()
        {
            resume_unwind(p);
        }
    }
}
