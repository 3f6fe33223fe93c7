//! Where the terrain scene's step goes (issue 33 item 2): builds SCENES.md's `terrain`
//! in joule, runs its warm-up and timed steps, and prints p50, p99 and mean ms per step,
//! the slowest steps with their step numbers, and (with `trace`) the step graph's tasks
//! by total work over the timed steps, each step traced (`World::step_traced`); last the
//! world's state hash, which a speed-up that keeps results bit-identical leaves alone (at
//! any thread count).
//!
//! `cargo run --release -p joule-benches --bin terrain_probe -- [THREADS [trace]]`

use std::collections::BTreeMap;
use std::time::Instant;

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args
        .get(1)
        .map_or(Ok(1), |t| t.parse())
        .map_err(|_| "THREADS: a whole number")?;
    let traced = args.get(2).is_some_and(|a| a == "trace");
    let desc = scenes::describe(SceneKind::Terrain);
    let jobs = JobSystem::new(threads.saturating_sub(1)).map_err(|e| e.to_string())?;
    let mut world = World::new(
        WorldDesc {
            gravity: desc.gravity,
            ..WorldDesc::default()
        },
        jobs,
    );
    scenes::build_desc(&desc, &mut world).map_err(|e| e.to_string())?;
    let (warmup, timed) = SceneKind::Terrain.run_lengths();
    for _ in 0..warmup {
        world.step(desc.dt);
    }
    let mut ms = Vec::with_capacity(timed);
    // Task name -> (work ns over all traced steps, runs).
    let mut work: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for _ in 0..timed {
        let t = Instant::now();
        if traced {
            let trace = world.step_traced(desc.dt);
            let per = trace.work_per_task_ns();
            for (k, w) in per.iter().enumerate() {
                let e = work.entry(trace.graph.tasks[k].name.clone()).or_default();
                e.0 += w;
                e.1 += 1;
            }
        } else {
            world.step(desc.dt);
        }
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    let mut order: Vec<usize> = (0..ms.len()).collect();
    order.sort_by(|&a, &b| ms[a].total_cmp(&ms[b]));
    let pct = |p: f64| ms[order[((ms.len() - 1) as f64 * p).round() as usize]];
    println!(
        "terrain, {threads} thread(s): mean {mean:.3} ms, p50 {:.3}, p99 {:.3}",
        pct(0.5),
        pct(0.99)
    );
    let slow: Vec<String> = order
        .iter()
        .rev()
        .take(12)
        .map(|&k| format!("#{k} {:.2}", ms[k]))
        .collect();
    println!("slowest steps: {}", slow.join(", "));
    let bins: Vec<String> = ms
        .chunks(50)
        .map(|c| format!("{:.1}", c.iter().sum::<f64>() / c.len() as f64))
        .collect();
    println!("mean ms per 50 steps: {}", bins.join(" "));
    println!("state hash after the run: {:#018x}", world.state_hash());
    if traced {
        let mut rows: Vec<_> = work.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.0));
        for (name, (ns, runs)) in rows.iter().take(25) {
            println!(
                "{:>9.3} ms/step  {:>6} runs  {name}",
                *ns as f64 / 1e6 / timed as f64,
                runs
            );
        }
    }
    Ok(())
}
