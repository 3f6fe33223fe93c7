//! Rollback: a client predicts an input, the server later says it was different, and the
//! client rolls 8 steps back and replays to exactly the state a world that knew the right
//! input all along reaches.
//!
//! The scene is `pyramid20` with a ball kicked into it at step 20. The client keeps a
//! ring of dynamic-state snapshots, one per step (`save_dynamic` into reused buffers).
//! At step 28 the server's word arrives: the kick was another one. The client restores
//! step 20, applies the corrected kick and replays 8 steps. It prints the hashes of the
//! client and of a reference world stepped with the right kick, then what the rollback
//! cost next to one step.
//!
//! Then it measures the standard scenes `pyramid_big` and `free10k`: one step, a save, a
//! restore, a replay of 10 steps, and the sizes of the dynamic and full snapshots per
//! body (medians of repeated runs; see benches/RESULTS.md), beside the floor a copy cannot
//! beat: one `memcpy` of as many bytes as a save copies, and two of them (a save and a
//! restore) as a share of the step.
//!
//! ```text
//! cargo run --release -p joule-examples --example rollback -- [--threads 1] [--repeats 20]
//! ```
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use joule_examples::scenes::{self, SceneKind};
use joule_physics::prelude::*;

/// Steps a client may have to roll back.
const WINDOW: usize = 8;
/// The step whose input is mispredicted.
const KICK_STEP: u64 = 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (threads, repeats) = parse_args()?;
    mispredicted_kick(threads)?;
    println!();
    println!(
        "{:<12} {:>7} {:>10} {:>9} {:>9} {:>7} {:>12} {:>10} {:>10} {:>9} {:>7}",
        "scene",
        "bodies",
        "step",
        "save",
        "restore",
        "s+r %",
        "replay 10",
        "dyn B/body",
        "full B/body",
        "memcpy",
        "2 cp %"
    );
    for kind in [SceneKind::PyramidBig, SceneKind::Free10k] {
        measure(kind, threads, repeats)?;
    }
    Ok(())
}

/// A world with the scene and a ball, and the ball's id.
fn kick_scene(threads: usize) -> Result<(World, BodyId), Box<dyn std::error::Error>> {
    let mut world = World::new(WorldDesc::default(), JobSystem::new(threads)?);
    scenes::build(SceneKind::Pyramid20, &mut world)?;
    let ball = world.create_body(
        &BodyDesc::dynamic(Shape::sphere(0.4)?, Vec3::new(0.0, 0.4, -8.0)).density(20.0),
    )?;
    Ok((world, ball))
}

fn kick(world: &mut World, ball: BodyId, step: u64, impulse: Vec3) -> Result<(), PhysicsError> {
    if world.step_count() == step {
        world.apply_impulse(ball, impulse)?;
    }
    Ok(())
}

fn mispredicted_kick(threads: usize) -> Result<(), Box<dyn std::error::Error>> {
    let predicted = Vec3::new(0.0, 0.0, 400.0);
    let actual = Vec3::new(60.0, 40.0, 420.0);
    let last = KICK_STEP + WINDOW as u64;

    // The reference knew the real kick all along.
    let (mut reference, ref_ball) = kick_scene(threads)?;
    while reference.step_count() < last {
        kick(&mut reference, ref_ball, KICK_STEP, actual)?;
        reference.step(scenes::DT);
    }

    // The client predicts, saving every step into a ring.
    let (mut client, ball) = kick_scene(threads)?;
    let mut ring: Vec<DynamicSnapshot> = (0..=WINDOW).map(|_| DynamicSnapshot::new()).collect();
    let mut step_time = Duration::ZERO;
    while client.step_count() < last {
        let slot = client.step_count() as usize % ring.len();
        client.save_dynamic(&mut ring[slot]);
        kick(&mut client, ball, KICK_STEP, predicted)?;
        let t = Instant::now();
        client.step(scenes::DT);
        step_time += t.elapsed();
    }
    let step_time = step_time / last as u32;
    println!(
        "pyramid20 and a ball kicked at step {KICK_STEP}: predicted {predicted}, the server \
         says {actual}"
    );
    println!(
        "step {last}: client {:016x}, reference {:016x} (mispredicted)",
        client.state_hash(),
        reference.state_hash()
    );

    // The server's word: roll back to the kick and replay.
    let t = Instant::now();
    client.restore_dynamic(&ring[KICK_STEP as usize % ring.len()])?;
    let restore = t.elapsed();
    assert_eq!(client.step_count(), KICK_STEP);
    let t = Instant::now();
    while client.step_count() < last {
        let slot = client.step_count() as usize % ring.len();
        client.save_dynamic(&mut ring[slot]);
        kick(&mut client, ball, KICK_STEP, actual)?;
        client.step(scenes::DT);
    }
    let replay = t.elapsed();
    let (mine, theirs) = (client.state_hash(), reference.state_hash());
    println!(
        "step {last}: client {mine:016x}, reference {theirs:016x} after rolling back \
         {WINDOW} steps ({})",
        if mine == theirs {
            "identical"
        } else {
            "DIFFERENT"
        }
    );
    println!(
        "one step {:.3} ms; restore {:.1} us; replay of {WINDOW} steps with saves {:.3} ms",
        ms(step_time),
        restore.as_secs_f64() * 1e6,
        ms(replay)
    );
    if mine != theirs {
        return Err("the replay did not reach the reference state".into());
    }
    Ok(())
}

fn measure(
    kind: SceneKind,
    threads: usize,
    repeats: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut world = World::new(desc, JobSystem::new(threads)?);
    let scene = scenes::build(kind, &mut world)?;
    let (warm, _) = kind.run_lengths();
    for _ in 0..warm {
        world.step(scenes::DT);
    }
    let mut saved = DynamicSnapshot::new();
    let mut image = Vec::new();
    world.save_dynamic(&mut saved);
    world.snapshot_into(&mut image);
    let (mut saves, mut restores, mut replays) = (vec![], vec![], vec![]);
    let mut hashes = vec![];
    // The floor a copy cannot beat: one `memcpy` of the bytes a save copies, from one
    // kept buffer into another (warm, so from cache as far as it fits), on this thread.
    let source = vec![1u8; saved.size_bytes()];
    let mut target = vec![0u8; saved.size_bytes()];
    let mut copies = vec![];
    for _ in 0..repeats {
        let t = Instant::now();
        target.copy_from_slice(std::hint::black_box(&source));
        copies.push(t.elapsed());
        std::hint::black_box(&mut target);
        let t = Instant::now();
        world.restore_dynamic(&saved)?;
        restores.push(t.elapsed());
        let t = Instant::now();
        world.save_dynamic(&mut saved);
        saves.push(t.elapsed());
        let t = Instant::now();
        for _ in 0..10 {
            world.step(scenes::DT);
        }
        replays.push(t.elapsed());
        hashes.push(world.state_hash());
    }
    if hashes.iter().any(|&h| h != hashes[0]) {
        return Err(format!("{}: replays differ", kind.name()).into());
    }
    let bodies = scene.bodies.len() + usize::from(scene.ground.is_some());
    // One step: the mean of the replay's ten.
    let (step, save, restore, copy) = (
        median(&mut replays) / 10,
        median(&mut saves),
        median(&mut restores),
        median(&mut copies),
    );
    println!(
        "{:<12} {:>7} {:>7.3} ms {:>6.1} us {:>6.1} us {:>6.2}% {:>9.3} ms {:>10.0} {:>10.0} {:>6.1} us {:>6.2}%",
        kind.name(),
        bodies,
        ms(step),
        save.as_secs_f64() * 1e6,
        restore.as_secs_f64() * 1e6,
        100.0 * (save + restore).as_secs_f64() / step.as_secs_f64(),
        ms(median(&mut replays)),
        saved.size_bytes() as f64 / bodies as f64,
        image.len() as f64 / bodies as f64,
        copy.as_secs_f64() * 1e6,
        100.0 * 2.0 * copy.as_secs_f64() / step.as_secs_f64(),
    );
    Ok(())
}

fn median(xs: &mut [Duration]) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn parse_args() -> Result<(usize, usize), String> {
    let (mut threads, mut repeats) = (1, 20);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        let value: usize = value
            .parse()
            .map_err(|_| format!("{arg}: expected a number, got {value}"))?;
        match arg.as_str() {
            "--threads" => threads = value,
            "--repeats" if value > 0 => repeats = value,
            _ => {
                return Err(format!(
                    "unknown option {arg} (--threads N, --repeats N > 0)"
                ));
            }
        }
    }
    Ok((threads, repeats))
}
