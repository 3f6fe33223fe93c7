//! The fixed-step clock: real frame times in, whole physics steps and `alpha` out.
//!
//! Invariant: between frames the accumulator holds less than one step, `0 <= acc < dt`,
//! so `alpha = acc / dt` is in [0, 1). A frame that brings more than `max_steps_per_frame`
//! steps runs the cap and drops the whole steps beyond it (keeping the fraction, so
//! `alpha` stays continuous): the game then runs slower than real time for that frame
//! instead of spending the next frame catching up, which would be slower still (the
//! "spiral of death").

use std::task::Poll;

use crate::error::PhysicsError;
use crate::world::StepHandle;
use crate::world::World;

use super::presentation::Presentation;

/// A fixed-step clock. [`Default`] is 60 Hz with at most 4 steps per frame (real time is
/// kept down to 15 frames per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedStep {
    dt: f32,
    max_steps_per_frame: u32,
    accumulator: f32,
}

/// What one frame of a [`FixedStep`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// Steps run (or due, for [`FixedStep::advance`]) this frame, at most the cap.
    pub steps: u32,
    /// Where to present between the last two steps: time left in the accumulator as a
    /// fraction of a step, in [0, 1).
    pub alpha: f32,
    /// Whole steps of backlog beyond the cap, dropped this frame (0 unless the frame was
    /// longer than `max_steps_per_frame` steps).
    pub dropped_steps: u32,
    /// The same backlog in seconds: real time the simulation did not follow.
    pub dropped_time: f32,
}

impl Default for FixedStep {
    fn default() -> Self {
        Self {
            dt: 1.0 / 60.0,
            max_steps_per_frame: 4,
            accumulator: 0.0,
        }
    }
}

/// The largest f32 below 1, where `alpha` is clamped should rounding reach 1.
const BELOW_ONE: f32 = 1.0 - f32::EPSILON / 2.0;

impl FixedStep {
    /// A clock stepping `dt` seconds at a time, at most 4 steps per frame.
    /// [`PhysicsError::InvalidFixedStep`] unless `dt` is finite and positive.
    pub fn new(dt: f32) -> Result<Self, PhysicsError> {
        Self::default().with_max_steps_per_frame_and_dt(dt, 4)
    }

    /// The same clock with a different cap on steps per frame (at least 1).
    pub fn with_max_steps_per_frame(self, max_steps_per_frame: u32) -> Result<Self, PhysicsError> {
        self.with_max_steps_per_frame_and_dt(self.dt, max_steps_per_frame)
    }

    fn with_max_steps_per_frame_and_dt(
        self,
        dt: f32,
        max_steps_per_frame: u32,
    ) -> Result<Self, PhysicsError> {
        if !(dt.is_finite() && dt > 0.0) || max_steps_per_frame == 0 {
            return Err(PhysicsError::InvalidFixedStep {
                dt,
                max_steps_per_frame,
            });
        }
        Ok(Self {
            dt,
            max_steps_per_frame,
            ..self
        })
    }

    /// The fixed time step, in seconds.
    #[must_use]
    pub fn dt(&self) -> f32 {
        self.dt
    }

    /// The cap on steps per frame.
    #[must_use]
    pub fn max_steps_per_frame(&self) -> u32 {
        self.max_steps_per_frame
    }

    /// Time carried over to the next frame, in seconds (less than one step).
    #[must_use]
    pub fn accumulator(&self) -> f32 {
        self.accumulator
    }

    /// The presentation fraction now: `accumulator / dt`, in [0, 1).
    #[must_use]
    pub fn alpha(&self) -> f32 {
        (self.accumulator / self.dt).min(BELOW_ONE)
    }

    /// Adds a frame's real elapsed time (seconds) and says how many steps are due, without
    /// running them: for a game that steps the world itself. A negative, NaN or infinite
    /// elapsed time (a clock glitch, not a frame) counts as zero.
    pub fn advance(&mut self, elapsed: f32) -> FrameReport {
        let elapsed = if elapsed.is_finite() && elapsed > 0.0 {
            elapsed
        } else {
            0.0
        };
        self.accumulator += elapsed;
        let mut steps = 0;
        while self.accumulator >= self.dt && steps < self.max_steps_per_frame {
            self.accumulator -= self.dt;
            steps += 1;
        }
        let mut dropped_time = 0.0;
        if self.accumulator >= self.dt {
            // `%` on floats is exact: the fraction kept is the true remainder.
            let kept = self.accumulator % self.dt;
            dropped_time = self.accumulator - kept;
            self.accumulator = kept;
        }
        FrameReport {
            steps,
            alpha: self.alpha(),
            dropped_steps: (dropped_time / self.dt).round() as u32,
            dropped_time,
        }
    }

    /// One frame: adds `elapsed` seconds, runs the steps due on `world` (recording each
    /// into `presentation`), and reports them with the `alpha` to present at. An empty
    /// presentation first records the world as it is, so the first frames, before any
    /// step, have poses to show.
    pub fn frame(
        &mut self,
        world: &mut World,
        presentation: &mut Presentation,
        elapsed: f32,
    ) -> FrameReport {
        if presentation.records() == 0 {
            presentation.record(world);
        }
        let report = self.advance(elapsed);
        for _ in 0..report.steps {
            world.step(self.dt);
            presentation.record(world);
        }
        report
    }

    /// [`frame`](Self::frame) with its last step running beside the caller: the steps
    /// due but the last run and are recorded here, the last is started with
    /// [`World::step_async`] and the returned [`FrameStep`] holds it (and the world's
    /// borrow, as a [`StepHandle`] does) while the game does its frame's work.
    /// [`FrameStep::finish`] waits for the step and records it into the presentation;
    /// after it the world and the presentation are exactly, bit for bit, what `frame`
    /// leaves.
    ///
    /// Meanwhile the presentation holds the steps before the running one, so a game
    /// that draws during the step presents one step later than after `frame` (draw
    /// `presentation.pose(body, report.alpha)` from the two steps it has); a game that
    /// draws after `finish` presents as after `frame`.
    ///
    /// ```
    /// use joule_physics::prelude::*;
    ///
    /// let mut world = World::new(WorldDesc::default(), JobSystem::new(1)?);
    /// let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y * 10.0))?;
    /// let mut clock = FixedStep::new(1.0 / 60.0)?;
    /// let mut presentation = Presentation::new();
    /// let mut steps = 0;
    /// for _ in 0..30 {
    ///     let step = clock.frame_async(&mut world, &mut presentation, 1.0 / 30.0);
    ///     // The frame's own work, beside the step: read the steps recorded so far.
    ///     let _drawn = presentation.pose(ball, step.report().alpha)?;
    ///     steps += step.finish(&mut presentation).steps;
    /// }
    /// assert!((59..=60).contains(&steps), "a second at 60 Hz: {steps} steps");
    /// assert!(world.position(ball)?.y < 10.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn frame_async<'w>(
        &mut self,
        world: &'w mut World,
        presentation: &mut Presentation,
        elapsed: f32,
    ) -> FrameStep<'w> {
        if presentation.records() == 0 {
            presentation.record(world);
        }
        let report = self.advance(elapsed);
        for _ in 1..report.steps {
            world.step(self.dt);
            presentation.record(world);
        }
        let step = if report.steps > 0 {
            Some(world.step_async(self.dt))
        } else {
            None
        };
        FrameStep { report, step }
    }
}

/// A frame whose last step runs beside the caller, from [`FixedStep::frame_async`]. Like
/// a [`StepHandle`] it borrows the world until it is finished; [`finish`](Self::finish)
/// it with the presentation that started it. Dropping it instead finishes the step (as
/// dropping a `StepHandle` does) but leaves it out of the presentation, which then
/// interpolates across it.
#[must_use = "finish the frame, or its last step is left out of the presentation"]
#[derive(Debug)]
pub struct FrameStep<'w> {
    report: FrameReport,
    /// The frame's last step, `None` when no step was due.
    step: Option<StepHandle<'w>>,
}

impl FrameStep<'_> {
    /// What the frame does: the steps it runs (the last one still running), the `alpha`
    /// to present at and any backlog dropped, as [`FixedStep::frame`] reports them.
    #[must_use]
    pub fn report(&self) -> FrameReport {
        self.report
    }

    /// Whether the frame's last step (if any) is finished; [`finish`](Self::finish) then
    /// returns without waiting.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.step.as_ref().is_none_or(StepHandle::is_done)
    }

    /// Runs the step's queued jobs on this thread ([`StepHandle::poll`]) and says whether
    /// it is finished: with no workers, polling is what runs the step.
    ///
    /// # Panics
    /// With a stage's panic, as [`StepHandle::poll`].
    pub fn poll(&mut self) -> Poll<()> {
        self.step.as_mut().map_or(Poll::Ready(()), StepHandle::poll)
    }

    /// Waits for the last step, records it into `presentation` (the one given to
    /// [`FixedStep::frame_async`]) and returns the frame's report.
    ///
    /// # Panics
    /// With a stage's panic, as [`StepHandle::wait`].
    pub fn finish(self, presentation: &mut Presentation) -> FrameReport {
        if let Some(step) = self.step {
            presentation.record(step.wait());
        }
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_bad_step_or_cap() {
        for dt in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(FixedStep::new(dt).is_err(), "dt {dt}");
        }
        let clock = FixedStep::new(0.01).unwrap();
        assert!(clock.with_max_steps_per_frame(0).is_err());
        assert_eq!(
            clock
                .with_max_steps_per_frame(8)
                .unwrap()
                .max_steps_per_frame(),
            8
        );
    }

    #[test]
    fn glitches_count_as_no_time() {
        let mut clock = FixedStep::default();
        for glitch in [-1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(clock.advance(glitch), FrameReport::default());
        }
    }

    #[test]
    fn an_exact_multiple_leaves_alpha_in_range() {
        // 0.1 / 0.02 rounds: whatever it gives, alpha stays below 1 and no time is lost.
        let mut clock = FixedStep::new(0.02)
            .unwrap()
            .with_max_steps_per_frame(8)
            .unwrap();
        let report = clock.advance(0.1);
        assert!(report.steps >= 4 && report.alpha < 1.0 && report.dropped_steps == 0);
    }
}
