//! The compare runner: every standard scene in joule and each peer engine this build has,
//! in one run, printed as a markdown table (issue 14).
//!
//! ```sh
//! cargo run --release -p joule-benches --features peers --bin compare -- --threads 1,2 [--scenes pyramid20,rain4k] [--engines joule,box3d] [--runs 3]
//! ```
//!
//! Without `--features peers` only joule and Rapier (serial) run. Each (scene, threads,
//! engine) runs `--runs` times, each run in a fresh child process so its peak memory is its
//! own: SCENES.md's warm-up steps, then its timed steps, each timed alone. The table shows
//! the run with the median mean, joule's time over the engine's (below 1: joule is faster),
//! the sanity line of SCENES.md, and the child's peak resident memory. An engine whose
//! scene fails its sanity check is marked ✗ and is not counted as faster. After the table,
//! the peers this build does not time are named with the reason.

use std::process::Command;
use std::time::Instant;

use joule_benches::peers;
use joule_examples::scenes::{self, SceneKind};
use joule_physics::math::Vec3;

struct Run {
    mean: f64,
    p50: f64,
    p99: f64,
    peak_mb: f64,
    ok: bool,
    sanity: String,
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The child: one run of one engine on one scene; prints one `RESULT` line.
fn child(engine: &str, kind: SceneKind, threads: usize) -> Result<(), String> {
    let mut e = peers::build(engine, kind, threads)?;
    let (warmup, timed) = kind.run_lengths();
    for _ in 0..warmup {
        e.step();
    }
    let mut ms = Vec::with_capacity(timed);
    for _ in 0..timed {
        let t = Instant::now();
        e.step();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let desc = scenes::describe(kind);
    let elapsed = (warmup + timed) as f32 * desc.dt;
    let positions: Vec<Vec3> = e
        .dynamic_positions()
        .into_iter()
        .map(Vec3::from_array)
        .collect();
    let s = scenes::sanity(&desc, &positions, e.asleep(), elapsed);
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    println!(
        "RESULT\t{mean}\t{}\t{}\t{}\t{}\t{}",
        pct(0.5),
        pct(0.99),
        peak_rss_mb(),
        s.ok,
        s.line
    );
    Ok(())
}

fn run_child(engine: &str, kind: SceneKind, threads: usize) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--child", engine, kind.name(), &threads.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find(|l| l.starts_with("RESULT\t")) else {
        return Err(format!(
            "no result ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    };
    let f: Vec<&str> = line.split('\t').collect();
    let num = |i: usize| f[i].parse::<f64>().map_err(|e| e.to_string());
    Ok(Run {
        mean: num(1)?,
        p50: num(2)?,
        p99: num(3)?,
        peak_mb: num(4)?,
        ok: f[5] == "true",
        sanity: f[6].to_string(),
    })
}

fn list<T>(arg: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    arg.split(',')
        .map(|s| parse(s.trim()).ok_or(format!("cannot read {s:?}")))
        .collect()
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let kind = SceneKind::from_name(&args[2]).ok_or("unknown scene")?;
        let threads = args[3].parse().map_err(|_| "bad thread count")?;
        return child(&args[1], kind, threads);
    }
    let mut threads = vec![1, 2];
    let mut kinds: Vec<SceneKind> = SceneKind::ALL.to_vec();
    let mut engines: Vec<String> = peers::available().iter().map(|s| s.to_string()).collect();
    let mut runs = 3usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or(format!("{a} needs a value"))?;
        match a.as_str() {
            "--threads" => threads = list(v, |s| s.parse().ok())?,
            "--scenes" => kinds = list(v, SceneKind::from_name)?,
            "--engines" => engines = list(v, |s| Some(s.to_string()))?,
            "--runs" => runs = v.parse().map_err(|_| "bad --runs")?,
            _ => {
                return Err(
                    "usage: compare [--threads 1,2] [--scenes a,b] [--engines joule,rapier,box3d,jolt,physx] [--runs 3]"
                        .into(),
                );
            }
        }
    }
    println!(
        "| scene | bodies | threads | engine | mean ms | p50 | p99 | joule / engine | peak MB | sanity |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &kind in &kinds {
        let bodies = scenes::describe(kind).bodies.len();
        for &t in &threads {
            let mut rows: Vec<(String, Result<Run, String>)> = Vec::new();
            for engine in &engines {
                let mut done: Vec<Run> = Vec::new();
                let mut err = None;
                for _ in 0..runs {
                    match run_child(engine, kind, t) {
                        Ok(r) => done.push(r),
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                let result = match err {
                    Some(e) => Err(e),
                    None => {
                        done.sort_by(|a, b| a.mean.total_cmp(&b.mean));
                        let peak = done.iter().map(|r| r.peak_mb).fold(0.0, f64::max);
                        let mut median = done.swap_remove(done.len() / 2);
                        median.peak_mb = peak;
                        Ok(median)
                    }
                };
                rows.push((engine.clone(), result));
            }
            let joule = rows
                .iter()
                .find(|(n, _)| n == "joule")
                .and_then(|(_, r)| r.as_ref().ok().map(|r| r.mean));
            for (name, r) in &rows {
                match r {
                    Ok(r) => {
                        let ratio = joule.map_or("–".into(), |j| format!("{:.2}", j / r.mean));
                        let mark = if r.ok { "" } else { " ✗" };
                        println!(
                            "| {} | {bodies} | {t} | {name}{mark} | {:.3} | {:.3} | {:.3} | {ratio} | {:.0} | {} |",
                            kind.name(),
                            r.mean,
                            r.p50,
                            r.p99,
                            r.peak_mb,
                            r.sanity
                        );
                    }
                    Err(e) => println!(
                        "| {} | {bodies} | {t} | {name} | – | – | – | – | – | did not run: {e} |",
                        kind.name()
                    ),
                }
            }
        }
    }
    println!();
    for (name, needs) in peers::not_built() {
        println!("- {name}: not timed, built only with `--features peers` ({needs})");
    }
    Ok(())
}
