//! The main thread's free share of a frame with the step beside it (`World::step_async`)
//! versus a blocking `World::step` (issue 29's RESULTS figure).
//!
//! ```sh
//! cargo run --release -p joule-benches --bin frame_share [-- FRAMES]
//! ```
//!
//! The game's work is a fixed busy unit (xorshift rounds, about a microsecond, timed
//! alone first). Frames come in pairs on the same world, so both see the same scene:
//!
//! - **async**: start `step_async`, then run units until `poll` says the step is done;
//!   the frame lasts as long as the step and the units are what the main thread got done
//!   meanwhile;
//! - **blocking**: `step`, then units until the frame has lasted as long as the async
//!   frame before it (the same frame budget).
//!
//! Printed per scene and worker count: mean step and frame times, units per frame both
//! ways, and the main thread's free share of the frame, measured: the frame less the time
//! spent in `poll` (async) or in `step` (blocking).

use std::hint::black_box;
use std::time::{Duration, Instant};

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

const ROUNDS: u32 = 1_000;

/// One unit of the game's work.
fn unit(state: &mut u64) {
    let mut x = *state;
    for _ in 0..ROUNDS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    *state = black_box(x);
}

fn unit_time() -> Duration {
    let mut s = 0x9e37_79b9_7f4a_7c15;
    let n = 20_000;
    let t = Instant::now();
    for _ in 0..n {
        unit(&mut s);
    }
    t.elapsed() / n
}

fn warm_world(kind: SceneKind, workers: usize) -> World {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(workers).expect("job system"));
    scenes::build(kind, &mut w).expect("scene builds");
    let (warmup, _) = kind.run_lengths();
    for _ in 0..warmup {
        w.step(scenes::DT);
    }
    w
}

fn main() {
    let frames: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let t_unit = unit_time();
    println!(
        "unit: {ROUNDS} xorshift rounds = {:.2} us; {frames} frame pairs per row",
        t_unit.as_secs_f64() * 1e6
    );
    println!(
        "| scene | workers | step (blocking) ms | frame ms | units/frame async | units/frame blocking | free share async | free share blocking |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut s = 1u64;
    for kind in [SceneKind::PyramidBig, SceneKind::ManyPyramids] {
        for workers in [1, 2] {
            let mut w = warm_world(kind, workers);
            let (mut async_units, mut blocking_units) = (0u64, 0u64);
            let (mut async_time, mut blocking_time, mut step_time, mut poll_time) = (
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
            );
            for _ in 0..frames {
                let t0 = Instant::now();
                let mut step = w.step_async(scenes::DT);
                let mut units = 0u64;
                loop {
                    unit(&mut s);
                    units += 1;
                    let p0 = Instant::now();
                    let ready = step.poll().is_ready();
                    poll_time += p0.elapsed();
                    if ready {
                        break;
                    }
                }
                drop(step);
                let frame = t0.elapsed();
                async_time += frame;
                async_units += units;

                let t0 = Instant::now();
                w.step(scenes::DT);
                step_time += t0.elapsed();
                while t0.elapsed() < frame {
                    unit(&mut s);
                    blocking_units += 1;
                }
                blocking_time += t0.elapsed();
            }
            let n = f64::from(frames);
            let ms = |d: Duration| d.as_secs_f64() * 1e3 / n;
            let free = |taken: Duration, time: Duration| {
                (1.0 - taken.as_secs_f64() / time.as_secs_f64()) * 100.0
            };
            println!(
                "| {} | {workers} | {:.2} | {:.2} | {:.0} | {:.0} | {:.0}% | {:.0}% |",
                kind.name(),
                ms(step_time),
                ms(async_time),
                async_units as f64 / n,
                blocking_units as f64 / n,
                free(poll_time, async_time),
                free(step_time, blocking_time),
            );
        }
    }
}
