//! A headless render loop at 144 Hz over physics at 60 Hz: the fixed-step clock runs zero
//! or one step per frame, and every frame draws each body interpolated between the last
//! two steps, so nothing stutters though most frames run no step.
//!
//! The scene is `pyramid20` with a ball thrown into it. Frames are 1/144 s of game time
//! (no waiting), and frame 240 is a 0.5 s hitch: the clock runs its cap of 4 steps and
//! reports the rest as dropped backlog instead of catching up over the next frames.
//! It prints a line every 10 frames (and at the hitch): steps run, alpha, backlog and the
//! ball's presented height, then how many frames the ball would have stood still in,
//! drawn at the raw pose of the last step versus interpolated.
//!
//! ```text
//! cargo run --release -p joule-examples --example game_loop -- [--frames 360] [--threads 1]
//! ```
#![forbid(unsafe_code)]

use joule_examples::scenes::{self, SceneKind};
use joule_physics::prelude::*;

const FRAME: f32 = 1.0 / 144.0;
const HITCH_FRAME: usize = 240;
const HITCH: f32 = 0.5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (frames, threads) = parse_args()?;
    let mut world = World::new(WorldDesc::default(), JobSystem::new(threads)?);
    let scene = scenes::build(SceneKind::Pyramid20, &mut world)?;
    let ball = world.create_body(
        &BodyDesc::dynamic(Shape::sphere(0.4)?, Vec3::new(0.0, 4.0, -6.0))
            .linear_velocity(Vec3::new(0.0, 2.0, 12.0))
            .density(20.0),
    )?;
    println!(
        "pyramid20 ({} boxes) and a ball, physics at 60 Hz, frames at 144 Hz, {frames} frames",
        scene.bodies.len()
    );

    let mut clock = FixedStep::new(scenes::DT)?;
    let mut presentation = Presentation::new();
    let (mut raw_still, mut drawn_still) = (0, 0);
    let (mut last_raw, mut last_drawn) = (None, None);
    let mut steps = 0;
    for frame in 0..frames {
        let elapsed = if frame == HITCH_FRAME { HITCH } else { FRAME };
        let report = clock.frame(&mut world, &mut presentation, elapsed);
        steps += report.steps;

        // "Rendering": every body's interpolated pose, in body order.
        let mut highest = f32::NEG_INFINITY;
        for (_, pose) in presentation.iter(report.alpha) {
            highest = highest.max(pose.translation.y);
        }
        let drawn = presentation.pose(ball, report.alpha)?;
        let raw = world.transform(ball)?;
        raw_still += usize::from(last_raw == Some(raw));
        drawn_still += usize::from(last_drawn == Some(drawn));
        (last_raw, last_drawn) = (Some(raw), Some(drawn));

        if frame % 10 == 0 || report.dropped_steps > 0 {
            println!(
                "frame {frame:4}  t = {:5.3} s  steps {}  alpha {:.3}  dropped {:2} steps \
                 ({:.3} s)  ball at ({:6.3}, {:6.3}, {:6.3})  highest body {highest:.2} m",
                frame as f32 * FRAME,
                report.steps,
                report.alpha,
                report.dropped_steps,
                report.dropped_time,
                drawn.translation.x,
                drawn.translation.y,
                drawn.translation.z,
            );
        }
    }
    println!(
        "{steps} steps in {frames} frames; the ball stood still in {raw_still} frames drawn \
         at the last step's pose, {drawn_still} drawn interpolated (before the first step)"
    );
    Ok(())
}

fn parse_args() -> Result<(usize, usize), String> {
    let (mut frames, mut threads) = (360, 1);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        let value: usize = value
            .parse()
            .map_err(|_| format!("{arg}: expected a number, got {value}"))?;
        match arg.as_str() {
            "--frames" => frames = value,
            "--threads" => threads = value,
            _ => return Err(format!("unknown option {arg} (--frames N, --threads N)")),
        }
    }
    Ok((frames, threads))
}
