//! A game loop whose frame is a joule-graph graph.
//!
//! ```text
//!                      ┌─► animation ─┐
//!   input ─► ai ───────┼─► audio ─────┼─► render prep ─► present (main thread only)
//!   (10,000 agents,    └─► physics ───┘
//!    parallel-for)         (subgraph: broad phase ─► narrow phase (dynamic) ─► solve ─► integrate)
//! ```
//!
//! Animation, audio and the physics step run side by side after the AI, because each
//! declares what it reads and writes and `build()` proved they touch nothing in common.
//! The physics node is a placeholder subgraph built by [`placeholder_physics`]; when the
//! engine exists, swap it for the engine's step graph (and put the engine's parts into the
//! context): nothing else in the frame changes. `present` is pinned to the main thread
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

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use joule_graph::{Context, Graph, GraphBuilder};
use joule_jobs::JobSystem;

const AGENTS: usize = 10_000;
/// Agents are stored in blocks of this many, each behind its own lock; the AI loop's
/// chunks are whole blocks (its grain), so no two chunks ever want the same lock.
const BLOCK: usize = 256;
const BODIES: usize = 2_048;
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
    bounds: [f32; 4],
    contacts: usize,
}

struct FrameStats {
    presented: u64,
}

// ---- the placeholder physics step ---------------------------------------------------

/// What the placeholder step works on; the engine will bring its own parts instead.
struct PhysicsWorld {
    pos: Vec<[f32; 2]>,
    vel: Vec<[f32; 2]>,
}

struct Pairs(Vec<(u32, u32)>);
struct Contacts(AtomicUsize);

/// A stand-in for the engine's step with the shape the real one will have: a serial
/// broad phase, a narrow phase that spawns a job per batch of pairs, and two parallel
/// loops. Swap this function for the engine's graph.
fn placeholder_physics() -> Graph {
    let mut p = GraphBuilder::new();
    let broad = p
        .task("broad_phase", |cx| {
            let world = cx.read::<PhysicsWorld>();
            let mut pairs = cx.write::<Pairs>();
            pairs.0.clear();
            // Neighbours in a sorted sweep along x (a toy sweep-and-prune).
            let mut order: Vec<u32> = (0..world.pos.len() as u32).collect();
            order.sort_by(|&a, &b| world.pos[a as usize][0].total_cmp(&world.pos[b as usize][0]));
            for w in order.windows(2) {
                let (a, b) = (world.pos[w[0] as usize], world.pos[w[1] as usize]);
                if (a[0] - b[0]).abs() < 0.5 {
                    pairs.0.push((w[0], w[1]));
                }
            }
        })
        .reads::<PhysicsWorld>()
        .writes::<Pairs>()
        .id();
    let narrow = p
        .dynamic("narrow_phase", |cx, spawner| {
            cx.read::<Contacts>().0.store(0, Ordering::Relaxed);
            let n = cx.read::<Pairs>().0.len();
            for start in (0..n).step_by(128) {
                spawner.spawn(move |cx, _| {
                    let world = cx.read::<PhysicsWorld>();
                    let pairs = cx.read::<Pairs>();
                    let end = (start + 128).min(pairs.0.len());
                    let touching = pairs.0[start..end]
                        .iter()
                        .filter(|&&(a, b)| {
                            let (p, q) = (world.pos[a as usize], world.pos[b as usize]);
                            (p[0] - q[0]).hypot(p[1] - q[1]) < 0.5
                        })
                        .count();
                    cx.read::<Contacts>()
                        .0
                        .fetch_add(touching, Ordering::Relaxed);
                });
            }
        })
        .reads::<PhysicsWorld>()
        .reads::<Pairs>()
        .writes::<Contacts>()
        .after(broad)
        .id();
    let solve = p
        .parallel_for(
            "solve",
            |cx| 0..cx.read::<Pairs>().0.len(),
            64,
            |cx, range| {
                // Placeholder work: the real solver writes velocities by colour.
                let pairs = cx.read::<Pairs>();
                let world = cx.read::<PhysicsWorld>();
                let mut energy = 0.0f32;
                for &(a, b) in &pairs.0[range] {
                    let (p, q) = (world.vel[a as usize], world.vel[b as usize]);
                    energy += (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2);
                }
                std::hint::black_box(energy);
            },
        )
        .reads::<Pairs>()
        .reads::<PhysicsWorld>()
        .after(narrow)
        .id();
    p.task("integrate", |cx| {
        let mut world = cx.write::<PhysicsWorld>();
        let PhysicsWorld { pos, vel } = &mut *world;
        for (x, v) in pos.iter_mut().zip(vel.iter_mut()) {
            v[1] -= 9.81 * DT;
            x[0] += v[0] * DT;
            x[1] += v[1] * DT;
            if x[1] < 0.0 {
                x[1] = 0.0;
                v[1] *= -0.5;
            }
        }
    })
    .writes::<PhysicsWorld>()
    .after(solve);
    p.build().expect("the placeholder physics graph is valid")
}

fn physics_context(ctx: &mut Context) {
    ctx.insert(PhysicsWorld {
        pos: (0..BODIES)
            .map(|i| [(i % 64) as f32 * 0.4, 1.0 + (i / 64) as f32 * 0.3])
            .collect(),
        vel: (0..BODIES)
            .map(|i| [((i * 7) % 13) as f32 * 0.1 - 0.6, 0.0])
            .collect(),
    });
    ctx.insert(Pairs(Vec::new()));
    ctx.insert(Contacts(AtomicUsize::new(0)));
}

// ---- the frame graph ----------------------------------------------------------------

fn frame_graph(jobs: &JobSystem, physics: &Graph) -> Graph {
    let main = jobs.register_current_thread();
    let mut b = GraphBuilder::new();
    let input = b
        .task("input", |cx| {
            let mut input = cx.write::<Input>();
            input.frame += 1;
            input.time += DT;
            input.target = [
                40.0 * (input.time * 0.7).cos(),
                40.0 * (input.time * 0.9).sin(),
            ];
        })
        .writes::<Input>()
        .id();
    let ai = b
        .parallel_for(
            "ai",
            |cx| 0..cx.read::<Agents>().len(),
            BLOCK,
            |cx, range| {
                let (target, time) = {
                    let input = cx.read::<Input>();
                    (input.target, input.time)
                };
                let agents = cx.read::<Agents>();
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
        .reads::<Input>()
        .writes::<Agents>()
        .after(input)
        .id();
    let animation = b
        .task("animation", |cx| {
            let agents = cx.read::<Agents>();
            let mut anim = cx.write::<Animation>();
            anim.poses.clear();
            agents.for_each(|a| anim.poses.push((a.phase * 2.0).sin()));
        })
        .reads::<Agents>()
        .writes::<Animation>()
        .after(ai)
        .id();
    let audio = b
        .task("audio", |cx| {
            let mut speed = 0.0f32;
            cx.read::<Agents>()
                .for_each(|a| speed += a.vel[0].abs() + a.vel[1].abs());
            cx.write::<Audio>().loudness = speed / AGENTS as f32;
        })
        .reads::<Agents>()
        .writes::<Audio>()
        .after(ai)
        .id();
    let physics = b.subgraph("physics", physics).after(ai).id();
    let render = b
        .task("render_prep", |cx| {
            let anim = cx.read::<Animation>();
            let world = cx.read::<PhysicsWorld>();
            let mut bounds = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
            for p in &world.pos {
                bounds = [
                    bounds[0].min(p[0]),
                    bounds[1].min(p[1]),
                    bounds[2].max(p[0]),
                    bounds[3].max(p[1]),
                ];
            }
            let visible = anim.poses.iter().filter(|&&p| p > -0.9).count();
            let contacts = cx.read::<Contacts>().0.load(Ordering::Relaxed);
            let loud = cx.read::<Audio>().loudness;
            let mut list = cx.write::<RenderList>();
            list.sprites = visible + world.pos.len() + usize::from(loud > 0.0);
            list.bounds = bounds;
            list.contacts = contacts;
        })
        .reads::<Animation>()
        .reads::<Audio>()
        .reads::<PhysicsWorld>()
        .reads::<Contacts>()
        .writes::<RenderList>()
        .after([animation, audio, physics])
        .id();
    b.task("present", |cx| {
        // Stands in for a graphics call that must happen on the main thread.
        let sprites = cx.read::<RenderList>().sprites;
        std::hint::black_box(sprites);
        cx.write::<FrameStats>().presented += 1;
    })
    .reads::<RenderList>()
    .writes::<FrameStats>()
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
    let physics = placeholder_physics();
    let frame = frame_graph(&jobs, &physics);
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
        .with(RenderList {
            sprites: 0,
            bounds: [0.0; 4],
            contacts: 0,
        })
        .with(FrameStats { presented: 0 });
    physics_context(&mut ctx);
    println!(
        "game_frame: {} tasks ({} in the physics subgraph), {} workers + the main thread, {} frames",
        frame.len(),
        physics.len(),
        jobs.num_workers(),
        args.frames
    );

    let mut times = Vec::with_capacity(args.frames);
    for f in 0..args.frames {
        if f + 1 == args.frames {
            frame.set_tracing(true);
        }
        let start = Instant::now();
        frame.run(&jobs, &mut ctx);
        let us = start.elapsed().as_secs_f64() * 1e6;
        times.push(us);
        let list = ctx.get_mut::<RenderList>().expect("render list");
        let (sprites, contacts, bounds) = (list.sprites, list.contacts, list.bounds);
        let loudness = ctx.get_mut::<Audio>().expect("audio").loudness;
        println!(
            "frame {:>3}: {us:>8.1} µs  sprites {sprites}  contacts {contacts:>4}  loudness {loudness:.3}  \
             bodies x {:.1}..{:.1}",
            f + 1,
            bounds[0],
            bounds[2]
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
