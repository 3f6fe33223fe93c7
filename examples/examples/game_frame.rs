//! A game loop whose frame is a joule-graph graph.
//!
//! ```text
//!                      ┌─► animation ─┐
//!   input ─► ai ───────┼─► audio ─────┼─► render prep ─► present (main thread only)
//!   (10,000 agents,    └─► physics ───┘
//!    parallel-for)         (subgraph: the engine's step graph, broadphase ─► ... ─► finalize)
//! ```
//!
//! Animation, audio and the physics step run side by side after the AI, because each
//! task's parameters (`Read<Agents>`, `Write<Audio>`, ...) declare what it reads and
//! writes, and `build()` proved they touch nothing in common.
//! The physics node is the engine's own step graph (`World::step_graph`), embedded as a
//! subgraph: each frame the world lends its parts to the frame's context
//! (`World::lend_to`), the frame runs, and the world takes them back (`World::take_back`). `present` is pinned to the main thread
//! (sent there with `spawn_on`), as a graphics API would require.
//!
//! It runs 300 frames, prints a line per frame, and writes `trace.json` (open it in
//! <https://ui.perfetto.dev>) and `trace.svg` of the last frame.
//!
//! ```text
//! cargo run --release -p joule-examples --example game_frame -- --threads 3
//!     [--frames 300] [--out DIR]
//! ```
//! `--threads N` starts N worker threads; the main thread works too while it waits.
#![forbid(unsafe_code)]

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use joule_graph::{Context, Graph, Read, Write};
use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::{World, WorldDesc};

const AGENTS: usize = 10_000;
/// Agents are stored in blocks of this many, each behind its own lock; the AI loop's
/// chunks are whole blocks (its grain), so no two chunks ever want the same lock.
const BLOCK: usize = 256;
const BODIES: usize = 512;
const DT: f32 = 1.0 / 60.0;

// ---- game state --------------------------------------------------------------------

struct Input {
    frame: u64,
    time: f32,
    target: [f32; 2],
}

#[derive(Clone, Copy)]
struct Agent {
    pos: [f32; 2],
    vel: [f32; 2],
    phase: f32,
}

struct Agents {
    blocks: Vec<Mutex<Vec<Agent>>>,
}

impl Agents {
    fn new() -> Self {
        let all: Vec<Agent> = (0..AGENTS)
            .map(|i| {
                let a = i as f32 * 0.618_034;
                Agent {
                    pos: [a.cos() * (i % 97) as f32, a.sin() * (i % 89) as f32],
                    vel: [0.0, 0.0],
                    phase: a,
                }
            })
            .collect();
        Self {
            blocks: all.chunks(BLOCK).map(|c| Mutex::new(c.to_vec())).collect(),
        }
    }

    fn len(&self) -> usize {
        AGENTS
    }

    /// Runs `f` on every agent, block by block.
    fn for_each(&self, mut f: impl FnMut(&Agent)) {
        for b in &self.blocks {
            b.lock().unwrap().iter().for_each(&mut f);
        }
    }
}

struct Animation {
    poses: Vec<f32>,
}

struct Audio {
    loudness: f32,
}

struct RenderList {
    sprites: usize,
}

struct FrameStats {
    presented: u64,
}

// ---- the physics step -------------------------------------------------------------

/// The engine's world: a ground and a rain of boxes and spheres. Its step graph is
/// embedded in the frame graph as the `physics` subgraph; every frame the world lends its
/// parts to the frame's context (`lend_to`) and takes them back after the run.
fn physics_world(jobs: &JobSystem) -> World {
    let mut world = World::new(WorldDesc::default(), jobs.clone());
    world
        .create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(30.0, 0.5, 30.0)).expect("ground"),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .expect("ground");
    let cube = Shape::cuboid(Vec3::splat(0.4)).expect("box");
    let ball = Shape::sphere(0.4).expect("sphere");
    for i in 0..BODIES {
        let p = Vec3::new(
            (i % 16) as f32 * 1.1 - 8.0,
            1.0 + (i / 256) as f32 * 1.2,
            ((i / 16) % 16) as f32 * 1.1 - 8.0,
        );
        let shape = if i % 2 == 0 {
            cube.clone()
        } else {
            ball.clone()
        };
        world
            .create_body(&BodyDesc::dynamic(shape, p))
            .expect("body");
    }
    world
}

// ---- the frame graph ----------------------------------------------------------------

fn frame_graph(jobs: &JobSystem, physics: &Graph) -> Graph {
    let main = jobs.register_current_thread();
    let mut b = Graph::builder();
    let input = b
        .task("input", |mut input: Write<Input>| {
            input.frame += 1;
            input.time += DT;
            input.target = [
                40.0 * (input.time * 0.7).cos(),
                40.0 * (input.time * 0.9).sin(),
            ];
        })
        .id();
    let ai = b
        .parallel_for(
            "ai",
            // Taking `Agents` as a `Write` here declares the loop a writer of it; the
            // chunks take it as a `Read` so they run at once, each writing its blocks
            // through their locks.
            |agents: Write<Agents>| 0..agents.len(),
            BLOCK,
            |range: Range<usize>, input: Read<Input>, agents: Read<Agents>| {
                let (target, time) = (input.target, input.time);
                // The range is whole blocks (the grain), so each block is locked by one
                // chunk only.
                for block in range.start / BLOCK..range.end.div_ceil(BLOCK) {
                    for a in agents.blocks[block].lock().unwrap().iter_mut() {
                        let to = [target[0] - a.pos[0], target[1] - a.pos[1]];
                        let d = (to[0] * to[0] + to[1] * to[1]).sqrt().max(1e-3);
                        let wobble = (time * 3.0 + a.phase).sin() * 0.3;
                        let steer = [
                            to[0] / d - wobble * to[1] / d,
                            to[1] / d + wobble * to[0] / d,
                        ];
                        a.vel = [
                            0.9 * a.vel[0] + 0.5 * steer[0],
                            0.9 * a.vel[1] + 0.5 * steer[1],
                        ];
                        a.pos = [a.pos[0] + a.vel[0] * DT, a.pos[1] + a.vel[1] * DT];
                        a.phase += DT * (1.0 + d.min(10.0));
                    }
                }
            },
        )
        .after(input)
        .id();
    let animation = b
        .task(
            "animation",
            |agents: Read<Agents>, mut anim: Write<Animation>| {
                anim.poses.clear();
                agents.for_each(|a| anim.poses.push((a.phase * 2.0).sin()));
            },
        )
        .after(ai)
        .id();
    let audio = b
        .task("audio", |agents: Read<Agents>, mut audio: Write<Audio>| {
            let mut speed = 0.0f32;
            agents.for_each(|a| speed += a.vel[0].abs() + a.vel[1].abs());
            audio.loudness = speed / AGENTS as f32;
        })
        .after(ai)
        .id();
    let physics = b.subgraph("physics", physics).after(ai).id();
    let render = b
        .task(
            "render_prep",
            |anim: Read<Animation>, audio: Read<Audio>, mut list: Write<RenderList>| {
                let visible = anim.poses.iter().filter(|&&p| p > -0.9).count();
                list.sprites = visible + usize::from(audio.loudness > 0.0);
            },
        )
        .after([animation, audio, physics])
        .id();
    b.task(
        "present",
        |list: Read<RenderList>, mut stats: Write<FrameStats>| {
            // Stands in for a graphics call that must happen on the main thread.
            std::hint::black_box(list.sprites);
            stats.presented += 1;
        },
    )
    .on_thread(main)
    .after(render);
    b.build().expect("the frame graph is valid")
}

// ---- the loop -----------------------------------------------------------------------

struct Args {
    threads: usize,
    frames: usize,
    out: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)),
        frames: 300,
        out: PathBuf::from("."),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?
            }
            "--frames" => args.frames = value()?.parse().map_err(|e| format!("--frames: {e}"))?,
            "--out" => args.out = PathBuf::from(value()?),
            "-h" | "--help" => {
                return Err("usage: game_frame [--threads N] [--frames N] [--out DIR]".into());
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    Ok(args)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().map_err(|e| {
        eprintln!("{e}");
        e
    })?;
    let jobs = JobSystem::builder()
        .threads(args.threads)
        .thread_name(|i| format!("game-worker-{i}"))
        .build()?;
    let mut world = physics_world(&jobs);
    let physics_tasks = world.step_graph().len();
    let frame = frame_graph(&jobs, world.step_graph());
    let mut ctx = Context::new()
        .with(Input {
            frame: 0,
            time: 0.0,
            target: [0.0, 0.0],
        })
        .with(Agents::new())
        .with(Animation {
            poses: Vec::with_capacity(AGENTS),
        })
        .with(Audio { loudness: 0.0 })
        .with(RenderList { sprites: 0 })
        .with(FrameStats { presented: 0 });
    println!(
        "game_frame: {} tasks ({} in the physics subgraph), {} workers + the main thread, {} frames",
        frame.len(),
        physics_tasks,
        jobs.num_workers(),
        args.frames
    );

    let mut times = Vec::with_capacity(args.frames);
    for f in 0..args.frames {
        if f + 1 == args.frames {
            frame.set_tracing(true);
        }
        let start = Instant::now();
        world.lend_to(&mut ctx, DT);
        frame.run(&jobs, &mut ctx);
        world.take_back(&mut ctx);
        let us = start.elapsed().as_secs_f64() * 1e6;
        times.push(us);
        let sprites =
            ctx.get_mut::<RenderList>().expect("render list").sprites + world.body_count();
        let contacts = world.contacts().len();
        let asleep = world.body_count() - 1 - world.awake_body_count();
        let loudness = ctx.get_mut::<Audio>().expect("audio").loudness;
        println!(
            "frame {:>3}: {us:>8.1} µs  sprites {sprites}  contacts {contacts:>4}  asleep {asleep:>4}  loudness {loudness:.3}",
            f + 1
        );
    }
    let presented = ctx.get_mut::<FrameStats>().expect("stats").presented;
    assert_eq!(presented as usize, args.frames, "every frame was presented");

    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    println!(
        "\nframe time: mean {mean:.1} µs, min {:.1}, median {:.1}, p99 {:.1}, max {:.1}",
        sorted[0],
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        sorted[sorted.len() - 1]
    );

    let trace = frame.take_trace().expect("the last frame was traced");
    std::fs::create_dir_all(&args.out)?;
    let json = args.out.join("trace.json");
    let svg = args.out.join("trace.svg");
    std::fs::write(&json, trace.to_chrome_json())?;
    std::fs::write(&svg, trace.to_svg())?;
    println!("\nlast frame:\n{}", trace.summary());
    println!(
        "wrote {} (open in https://ui.perfetto.dev, or `joule-trace summary|svg|dot`) and {}",
        json.display(),
        svg.display()
    );
    Ok(())
}
