//! The main demo: builds a standard scene of ../shared/SCENES.md (default pyramid_big),
//! steps it, prints milliseconds per step (mean, p50, p99) and the scene's sanity line,
//! and writes `trace.json` (open in https://ui.perfetto.dev) and `trace.svg` of one step.
//!
//! `cargo run --release -p joule-examples --example pyramid -- --threads 1 --steps 300 --scene pyramid_big`
//!
//! `--force-events` gives every body a contact force threshold of its own weight, so the
//! solver tallies every contact's step totals and the step reports force events (their
//! count is printed): what contact force events cost.
//!
//! `--record FILE` also writes a recording of every step (poses, sleep/island state,
//! contacts and each step's job trace) to play in the viewer:
//! `cargo run --release -p joule-examples --example view -- FILE`. Recording steps with
//! tracing on, so the printed times then include tracing and recording.

use std::time::Instant;

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::recording::{RecordOptions, Recorder};
use joule_physics::world::{World, WorldDesc};

struct Args {
    threads: usize,
    steps: Option<usize>,
    scene: SceneKind,
    record: Option<String>,
    force_events: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)),
        steps: None,
        scene: SceneKind::PyramidBig,
        record: None,
        force_events: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?
            }
            "--steps" => args.steps = Some(value()?.parse().map_err(|e| format!("--steps: {e}"))?),
            "--scene" => {
                let v = value()?;
                args.scene = SceneKind::from_name(&v).ok_or(format!(
                    "unknown scene {v}; one of: {}",
                    SceneKind::ALL
                        .iter()
                        .chain(&SceneKind::WITH_JOINTS)
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))?;
            }
            "--record" => args.record = Some(value()?),
            "--force-events" => args.force_events = true,
            "--help" | "-h" => {
                return Err(
                    "usage: pyramid [--threads N] [--steps M] [--scene NAME] [--record FILE] [--force-events]"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let jobs = JobSystem::new(args.threads).expect("job system");
    let desc = WorldDesc {
        gravity: args.scene.gravity(),
        ..WorldDesc::default()
    };
    let mut world = World::new(desc, jobs);
    let scene = scenes::build(args.scene, &mut world).expect("scene builds");
    if args.force_events {
        let weights: Vec<_> = world.bodies().map(|b| (b.id(), b.mass() * 9.81)).collect();
        for (id, weight) in weights {
            world
                .set_contact_force_threshold(id, weight)
                .expect("a live body");
        }
    }
    let mut force_events = 0usize;
    let (warmup, timed) = args.scene.run_lengths();
    let timed = args.steps.unwrap_or(timed);
    println!(
        "{}: {} bodies, {} worker threads + main",
        args.scene.name(),
        world.body_count(),
        args.threads
    );
    let mut recorder = args.record.as_ref().map(|path| {
        let file = std::fs::File::create(path).unwrap_or_else(|e| {
            eprintln!("--record {path}: {e}");
            std::process::exit(2);
        });
        let mut r = Recorder::new(
            std::io::BufWriter::new(file),
            &world,
            scenes::DT,
            RecordOptions::default(),
        )
        .expect("write the recording's header");
        // Frame 0: the scene as built, before the first step.
        r.record(&world, None).expect("record the first frame");
        r
    });
    let mut step = |world: &mut World| match recorder.as_mut() {
        Some(r) => {
            let trace = world.step_traced(scenes::DT);
            r.record(world, Some(&trace)).expect("record a step");
        }
        None => world.step(scenes::DT),
    };
    for _ in 0..warmup {
        step(&mut world);
    }
    let mut times = Vec::with_capacity(timed);
    for _ in 0..timed {
        let t = Instant::now();
        step(&mut world);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        force_events += world.events().forces.len();
    }
    if args.force_events {
        println!("contact force events: {force_events} in {timed} steps");
    }
    if let (Some(r), Some(path)) = (recorder.take(), &args.record) {
        r.finish().expect("flush the recording");
        println!(
            "wrote {path} ({} frames); watch it: cargo run --release -p joule-examples --example view -- {path}",
            warmup + timed + 1
        );
    }
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        sorted
            .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "ms per step: mean {mean:.3}  p50 {:.3}  p99 {:.3}  ({} steps)",
        pct(0.5),
        pct(0.99),
        timed
    );
    println!(
        "sanity: {}",
        scenes::sanity_line(
            args.scene,
            &world,
            &scene,
            (warmup + timed) as f32 * scenes::DT
        )
    );
    let trace = world.step_traced(scenes::DT);
    std::fs::write("trace.json", trace.to_chrome_json()).expect("write trace.json");
    std::fs::write("trace.svg", trace.to_svg()).expect("write trace.svg");
    println!("wrote trace.json (open in https://ui.perfetto.dev) and trace.svg of one step:");
    print!("{}", trace.summary());
}
