//! A headless render loop at 144 Hz over physics at 60 Hz, with the step running beside
//! the game's own work: the fixed-step clock's `frame_async` runs the steps each frame is
//! due (zero or one, mostly) and starts the last with `World::step_async`, and while the workers run
//! it the game runs its frame on the same job system: 200 AI agents as jobs (each reads
//! the presented poses of every body and steers away from the nearest), input and a
//! particle update on the main thread, which polls the step between chunks. When the step
//! is done the presentation records it, and the frame draws each body interpolated
//! between the last two steps, so nothing stutters though most frames run no step.
//!
//! ```text
//!  main     input ─ spawn ai ─ render ─ poll ─ render ─ poll ─ ... ─ wait ─ record ─ present
//!  workers  ai ai ai ...  broadphase ─ narrow phase ─ ... ─ finalize (step_async)
//! ```
//!
//! The pattern, per frame:
//! 1. `FixedStep::frame_async(world, presentation, elapsed)` gives the steps due and
//!    `alpha`, runs and records the due steps but the last (a long frame), and starts the
//!    last with `step_async`;
//! 2. the game's jobs (which read the presentation at the alpha the last frame drew: the
//!    frame's handle borrows the world, and the running step is not recorded until it is
//!    done) and its main-thread work run meanwhile, polling the handle between chunks;
//! 3. `FrameStep::finish` waits (if the step is still running) and records the step;
//! 4. the frame draws `presentation.iter(alpha)`.
//!
//! The scene is `pyramid20` with a ball thrown into it. Frames are 1/144 s of game time
//! (no waiting), and frame 240 is a 0.5 s hitch: the clock runs its cap of 4 steps and
//! reports the rest as dropped backlog instead of catching up over the next frames.
//! It prints a line every 10 frames (and at the hitch): steps run, alpha, backlog, the
//! share of the frame the main thread was free (not inside the step handle's `poll` or
//! `wait`) and the ball's presented height; then the mean free share, how many frames
//! the ball would have stood still in, drawn at the raw pose of the last step versus
//! interpolated, and a checksum of the agents (the same at any thread count).
//!
//! `--trace PATH` writes a Chrome trace (open it in <https://ui.perfetto.dev>) of frames
//! 237 to 240 (the last is the hitch): the game's jobs and spans (`frame`, `input`, `ai`,
//! `render`, `step wait`, `present`) and the physics stages and their jobs on every thread,
//! on the job system's clock.
//!
//! ```text
//! cargo run --release -p joule-examples --example game_loop -- [--frames 360] [--threads 1]
//!     [--trace frame.json]
//! ```
#![forbid(unsafe_code)]

use std::task::Poll;

use joule_examples::frame_trace;
use joule_examples::scenes::{self, SceneKind};
use joule_physics::prelude::*;

const FRAME: f32 = 1.0 / 144.0;
const HITCH_FRAME: usize = 240;
const HITCH: f32 = 0.5;
/// Frames written by `--trace`: the three before the hitch and the hitch.
const TRACED: std::ops::RangeInclusive<usize> = HITCH_FRAME - 3..=HITCH_FRAME;

const AGENTS: usize = 200;
/// Agents per AI job.
const AGENTS_PER_JOB: usize = 25;
const PARTICLES: usize = 8192;
/// Particles per chunk of the main thread's render work; the step is polled after each.
const PARTICLES_PER_CHUNK: usize = 512;

/// A game character on the ground plane that keeps away from the physics bodies.
#[derive(Clone, Copy, Debug)]
struct Agent {
    x: f32,
    z: f32,
    heading: f32,
    /// How close the nearest body came, this frame (m).
    nearest: f32,
}

impl Agent {
    fn spawn(i: usize) -> Self {
        let a = i as f32 * 0.618_034 * std::f32::consts::TAU;
        let r = 6.0 + (i % 7) as f32;
        Self {
            x: r * a.cos(),
            z: r * a.sin(),
            heading: a,
            nearest: f32::INFINITY,
        }
    }

    /// One frame of AI: find the nearest presented body and steer away from it (or
    /// wander back toward the pyramid when nothing is near). Deterministic: it reads only
    /// the presentation and the agent.
    fn think(&mut self, presentation: &Presentation, alpha: f32) {
        let (mut best, mut away) = (f32::INFINITY, (0.0, 0.0));
        for (_, pose) in presentation.iter(alpha) {
            let (dx, dz) = (self.x - pose.translation.x, self.z - pose.translation.z);
            let d2 = dx * dx + dz * dz + pose.translation.y * pose.translation.y;
            if d2 < best {
                (best, away) = (d2, (dx, dz));
            }
        }
        self.nearest = best.sqrt();
        let want = if self.nearest < 3.0 {
            away.1.atan2(away.0)
        } else {
            (-self.z).atan2(-self.x)
        };
        let mut turn = want - self.heading;
        turn -= std::f32::consts::TAU * (turn / std::f32::consts::TAU).round();
        self.heading += turn.clamp(-0.1, 0.1);
        let speed = if self.nearest < 3.0 { 4.0 } else { 1.0 };
        self.x += self.heading.cos() * speed * FRAME;
        self.z += self.heading.sin() * speed * FRAME;
    }
}

/// The main thread's render work: a particle system advanced and projected each frame.
fn update_particles(particles: &mut [[f32; 4]], t: f32) -> f32 {
    let mut on_screen = 0.0;
    for p in particles {
        p[3] += FRAME;
        if p[3] > 2.0 {
            p[3] -= 2.0;
            p[1] = 0.0;
        }
        p[0] += (t * 1.3 + p[2]).sin() * FRAME;
        p[1] += (2.0 - p[3]) * FRAME;
        p[2] += (t * 0.7 + p[0]).cos() * FRAME;
        let depth = p[2] + 20.0;
        on_screen += f32::from(u8::from((p[0] / depth).abs() < 0.5 && p[1] / depth < 0.3));
    }
    on_screen
}

/// What one frame did, beyond the clock's report.
struct Frame {
    report: FrameReport,
    /// Nanoseconds the frame took, and those the main thread spent in `poll` or `wait`.
    frame_ns: u64,
    blocked_ns: u64,
}

impl Frame {
    fn free_share(&self) -> f64 {
        1.0 - self.blocked_ns as f64 / self.frame_ns.max(1) as f64
    }
}

struct Game {
    jobs: JobSystem,
    world: World,
    clock: FixedStep,
    presentation: Presentation,
    agents: Vec<Agent>,
    particles: Vec<[f32; 4]>,
    /// The alpha the last frame was drawn at: the game's jobs read the presentation at it
    /// while this frame's step runs (it is what the player saw).
    drawn_alpha: f32,
    time: f32,
}

impl Game {
    /// Runs `f`, adds its duration to `blocked`, and records it as `label` in the trace.
    fn timed<R>(jobs: &JobSystem, blocked: &mut u64, f: impl FnOnce() -> R) -> R {
        let start = jobs.now_ns();
        let r = f();
        let end = jobs.now_ns();
        *blocked += end - start;
        jobs.record_span("step wait", start, end);
        r
    }

    fn frame(&mut self, elapsed: f32) -> Frame {
        let jobs = &self.jobs;
        let start = jobs.now_ns();
        let mut blocked_ns = 0;
        // 1. The clock: the steps due but the last run here (a long frame), the last
        // starts beside the game's work.
        let mut step = Self::timed(jobs, &mut blocked_ns, || {
            self.clock
                .frame_async(&mut self.world, &mut self.presentation, elapsed)
        });
        {
            // 2. The game's work beside the step.
            let (presentation, alpha) = (&self.presentation, self.drawn_alpha);
            let (agents, particles) = (&mut self.agents, &mut self.particles);
            let time = &mut self.time;
            let step = &mut step;
            let mut running = step.report().steps > 0;
            jobs.scope(|s| {
                let t0 = jobs.now_ns();
                *time += elapsed.max(0.0); // "input": read the devices, advance game time
                jobs.record_span("input", t0, jobs.now_ns());
                for chunk in agents.chunks_mut(AGENTS_PER_JOB) {
                    s.spawn_labeled("ai", move |_| {
                        for agent in chunk {
                            agent.think(presentation, alpha);
                        }
                    });
                }
                for chunk in particles.chunks_mut(PARTICLES_PER_CHUNK) {
                    let t0 = jobs.now_ns();
                    std::hint::black_box(update_particles(chunk, *time));
                    jobs.record_span("render", t0, jobs.now_ns());
                    if running {
                        let poll = Self::timed(jobs, &mut blocked_ns, || step.poll());
                        running = poll == Poll::Pending;
                    }
                }
            });
        }
        // 3. Finish the step (wait if it still runs) and record it.
        let report = Self::timed(jobs, &mut blocked_ns, || {
            step.finish(&mut self.presentation)
        });
        // 4. Present: every body at alpha.
        let t0 = jobs.now_ns();
        let mut highest = f32::NEG_INFINITY;
        for (_, pose) in self.presentation.iter(report.alpha) {
            highest = highest.max(pose.translation.y);
        }
        std::hint::black_box(highest);
        self.drawn_alpha = report.alpha;
        let end = jobs.now_ns();
        jobs.record_span("present", t0, end);
        jobs.record_span("frame", start, end);
        Frame {
            report,
            frame_ns: end - start,
            blocked_ns,
        }
    }

    /// A checksum of every agent's state, to compare runs.
    fn agents_checksum(&self) -> u64 {
        self.agents.iter().fold(0xcbf2_9ce4_8422_2325, |h, a| {
            [a.x, a.z, a.heading].iter().fold(h, |h, v| {
                (h ^ u64::from(v.to_bits())).wrapping_mul(0x0000_0100_0000_01b3)
            })
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let jobs = JobSystem::new(args.threads)?;
    let mut world = World::new(WorldDesc::default(), jobs.clone());
    let scene = scenes::build(SceneKind::Pyramid20, &mut world)?;
    let ball = world.create_body(
        &BodyDesc::dynamic(Shape::sphere(0.4)?, Vec3::new(0.0, 4.0, -6.0))
            .linear_velocity(Vec3::new(0.0, 2.0, 12.0))
            .density(20.0),
    )?;
    println!(
        "pyramid20 ({} boxes) and a ball, physics at 60 Hz beside {AGENTS} AI agents as jobs, \
         frames at 144 Hz, {} frames, worker threads: {} (and the main thread)",
        scene.bodies.len(),
        args.frames,
        jobs.num_workers(),
    );

    let mut game = Game {
        jobs: jobs.clone(),
        world,
        clock: FixedStep::new(scenes::DT)?,
        presentation: Presentation::new(),
        agents: (0..AGENTS).map(Agent::spawn).collect(),
        particles: (0..PARTICLES)
            .map(|i| {
                [
                    (i % 64) as f32 * 0.1,
                    0.0,
                    (i / 64) as f32 * 0.1,
                    (i % 200) as f32 * 0.01,
                ]
            })
            .collect(),
        drawn_alpha: 0.0,
        time: 0.0,
    };
    let (mut raw_still, mut drawn_still) = (0, 0);
    let (mut last_raw, mut last_drawn) = (None, None);
    let (mut steps, mut free_sum) = (0, 0.0);
    // The same over the frames that ran a step: (sum, frames).
    let mut stepping = (0.0, 0);
    let traced = args.trace.is_some().then_some(TRACED);
    for frame in 0..args.frames {
        let tracing = traced.as_ref().is_some_and(|r| r.contains(&frame));
        if tracing != jobs.tracing() {
            jobs.set_tracing(tracing);
        }
        let elapsed = if frame == HITCH_FRAME { HITCH } else { FRAME };
        let f = game.frame(elapsed);
        let report = f.report;
        steps += report.steps;
        free_sum += f.free_share();
        if report.steps > 0 {
            stepping = (stepping.0 + f.free_share(), stepping.1 + 1);
        }

        let drawn = game.presentation.pose(ball, report.alpha)?;
        let raw = game.world.transform(ball)?;
        raw_still += usize::from(last_raw == Some(raw));
        drawn_still += usize::from(last_drawn == Some(drawn));
        (last_raw, last_drawn) = (Some(raw), Some(drawn));

        if frame % 10 == 0 || report.dropped_steps > 0 {
            println!(
                "frame {frame:4}  t = {:5.3} s  steps {}  alpha {:.3}  dropped {:2} steps \
                 ({:.3} s)  frame {:6.1} µs, main free {:5.1}%  ball at ({:6.3}, {:6.3}, {:6.3})",
                frame as f32 * FRAME,
                report.steps,
                report.alpha,
                report.dropped_steps,
                report.dropped_time,
                f.frame_ns as f64 / 1e3,
                100.0 * f.free_share(),
                drawn.translation.x,
                drawn.translation.y,
                drawn.translation.z,
            );
        }
    }
    jobs.set_tracing(false);
    let nearest = game
        .agents
        .iter()
        .map(|a| a.nearest)
        .fold(f32::INFINITY, f32::min);
    println!(
        "{steps} steps in {} frames; the main thread was free {:.1}% of a frame on average \
         (not in the step's poll or wait), {:.1}% in the {} frames that ran a step",
        args.frames,
        100.0 * free_sum / args.frames.max(1) as f64,
        100.0 * stepping.0 / f64::from(stepping.1.max(1)),
        stepping.1,
    );
    println!(
        "the ball stood still in {raw_still} frames drawn at the last step's pose, \
         {drawn_still} drawn interpolated (before the first step)"
    );
    println!(
        "agents: checksum {:016x}, nearest body {nearest:.2} m",
        game.agents_checksum()
    );
    if let Some(path) = &args.trace {
        let events = jobs.take_trace();
        std::fs::write(
            path,
            frame_trace::to_chrome_json(&events, &jobs.thread_names()),
        )?;
        println!(
            "wrote {path} ({} events of frames {}..={}; open it in https://ui.perfetto.dev)",
            events.len(),
            TRACED.start(),
            TRACED.end(),
        );
    }
    Ok(())
}

struct Args {
    frames: usize,
    threads: usize,
    trace: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut parsed = Args {
        frames: 360,
        threads: 1,
        trace: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        let number = || -> Result<usize, String> {
            value
                .parse()
                .map_err(|_| format!("{arg}: expected a number, got {value}"))
        };
        match arg.as_str() {
            "--frames" => parsed.frames = number()?,
            "--threads" => parsed.threads = number()?,
            "--trace" => parsed.trace = Some(value),
            _ => {
                return Err(format!(
                    "unknown option {arg} (--frames N, --threads N, --trace PATH)"
                ));
            }
        }
    }
    Ok(parsed)
}
