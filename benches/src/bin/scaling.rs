//! A scaling model past two cores (issue 33, item 4): from joule's one-thread step trace,
//! the speed-up predicted at more threads, and which stage caps it; with `--measure`,
//! the measured step time at each thread count beside the prediction.
//!
//! ```sh
//! cargo run --release -p joule-benches --bin scaling -- [--threads 1,2,4,8,16] [--scenes a,b] [--samples 12] [--measure] [--steps N] [--handoff TEAM_US,LOOP_US]
//! cargo run --release -p joule-benches --bin scaling -- --amdahl compare.md
//! cargo run --release -p joule-benches --bin scaling -- --serial --threads 2 [--scenes a,b] [--samples 30]
//! cargo run --release -p joule-benches --bin scaling -- --phases solve --scenes rain4k
//! ```
//!
//! **Inputs, all measured.** A one-thread step is traced with its phases: every parallel
//! section (a scope, a parallel loop, a team stage of the solver) records a phase span on
//! the thread that ran it, and each piece it could be cut into (a scope's job, a team
//! stage's item, a `min_chunk` run of a parallel loop) an item span (`joule_jobs`'
//! `PHASE_LABEL`, `TEAM_PHASE_LABEL`, `ITEM_LABEL`). Per stage of the step that gives its
//! work (its one-thread time), its serial time (time outside any item: the stage's own
//! code and each phase's bookkeeping), its phases, its items and its span (serial time
//! plus each phase's longest item: the stage's time on unboundedly many threads).
//! Hand-off costs are measured on the machine that runs the tool, per thread count up to
//! its cores (past them, the figure at the most cores is assumed): the extra time of a
//! team stage and of a parallel loop whose items are short busy loops, over the same at
//! one thread; `--handoff` gives them instead (a machine too loaded to probe).
//!
//! **The model.** The stages run one after the other (the step is a chain of stages:
//! `joule_physics::STAGES`), and so do the phases within a stage. At `T` threads a stage
//! takes its serial time plus, per phase, the phase's items list-scheduled on `T` threads
//! in claim order (each item to the thread free first: what the claim counters do when
//! claiming costs nothing) plus the measured hand-off of that kind of phase at `T`. The
//! greedy schedule lies between `max(longest item, work / T)` and that plus the longest
//! item. Nested parallelism (a phase inside an item) counts as serial within its item.
//! What the model leaves out: work inflation (cache misses when bodies move between
//! cores, memory bandwidth), which `--measure` shows as the gap between predicted and
//! measured; and the cost of tracing itself, which is why speed-ups, not times, are
//! predicted (times are the untraced one-thread mean over the predicted speed-up).
//!
//! **Measured** (`--measure`): each thread count in its own world, the scene's full run
//! (SCENES.md), the mean of the untraced steps, and a traced step's serial share (the time
//! when at most one thread worked, `joule_graph::Trace::serial_ns`).
//!
//! `--amdahl FILE` reads a compare-runner table (`compare.rs`) and fits Amdahl's law to
//! each engine's 1- and 2-thread times (serial fraction `f = 2 t2 / t1 - 1`), printing
//! the fit's prediction beside every measured thread count in the table: the same model
//! for the peers, whose traces joule cannot read.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::{
    ITEM_LABEL, JobSystem, PHASE_LABEL, TEAM_PHASE_LABEL, Team, TraceEvent, WAIT_LABEL,
};
use joule_physics::STAGES;
use joule_physics::world::{World, WorldDesc};

/// A busy loop of about `ns` nanoseconds (calibrated once).
struct Busy {
    rounds_per_ns: f64,
}

impl Busy {
    fn calibrate() -> Self {
        let n = 2_000_000u64;
        let t = Instant::now();
        spin(n);
        let ns = t.elapsed().as_nanos().max(1) as f64;
        Self {
            rounds_per_ns: n as f64 / ns,
        }
    }

    fn run(&self, ns: f64) {
        spin((ns * self.rounds_per_ns) as u64);
    }
}

fn spin(rounds: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x);
}

/// Hand-off costs at one thread count, in ns per phase.
#[derive(Clone, Copy, Debug, Default)]
struct Handoff {
    team: f64,
    scope: f64,
}

/// Item length of the hand-off probes: about a solver block's.
const PROBE_ITEM_NS: f64 = 2_000.0;

/// Time per phase of `rounds` team stages and of `rounds` parallel loops, each of
/// `threads * 2` items of `PROBE_ITEM_NS`, at `threads` threads.
fn probe(busy: &Busy, threads: usize, rounds: usize) -> (f64, f64) {
    let jobs = JobSystem::new(threads - 1).expect("job system");
    let items = threads * 2;
    let mut team = Team::new();
    // Warm up: let helpers start.
    for _ in 0..3 {
        jobs.team(&mut team, jobs.num_workers(), |t| {
            for _ in 0..rounds / 10 {
                t.run(items, |_| busy.run(PROBE_ITEM_NS));
            }
        });
    }
    let t0 = Instant::now();
    jobs.team(&mut team, jobs.num_workers(), |t| {
        for _ in 0..rounds {
            t.run(items, |_| busy.run(PROBE_ITEM_NS));
        }
    });
    let team_ns = t0.elapsed().as_nanos() as f64 / rounds as f64;
    let t0 = Instant::now();
    for _ in 0..rounds {
        jobs.parallel_for(0..items, 1, |r| {
            for _ in r {
                busy.run(PROBE_ITEM_NS);
            }
        });
    }
    let pf_ns = t0.elapsed().as_nanos() as f64 / rounds as f64;
    let ideal = PROBE_ITEM_NS * items.div_ceil(threads) as f64;
    (team_ns - ideal, pf_ns - ideal)
}

/// What tracing adds per recorded span, in ns, at one thread: a team stage of short
/// items traced against the same untraced (best of several tries). The model takes it
/// out of the serial time, where the trace books it (it is spent outside the items).
fn trace_cost(busy: &Busy) -> f64 {
    let jobs = JobSystem::new(0).expect("job system");
    let mut team = Team::new();
    let (rounds, items) = (200usize, 64usize);
    let mut time = |traced: bool| {
        (0..7)
            .map(|_| {
                jobs.set_tracing(traced);
                let t0 = Instant::now();
                jobs.team(&mut team, 0, |t| {
                    for _ in 0..rounds {
                        t.run(items, |_| busy.run(100.0));
                    }
                });
                let ns = t0.elapsed().as_nanos() as f64;
                jobs.set_tracing(false);
                let _ = jobs.take_trace();
                ns
            })
            .fold(f64::INFINITY, f64::min)
    };
    let plain = time(false);
    let traced = time(true);
    // Items and stage spans.
    ((traced - plain) / (rounds * (items + 1)) as f64).max(0.0)
}

/// The probe's best of `REPEATS` (a shared machine's load only ever adds time).
fn best_probe(busy: &Busy, threads: usize, rounds: usize) -> (f64, f64) {
    const REPEATS: usize = 7;
    (0..REPEATS)
        .map(|_| probe(busy, threads, rounds))
        .fold((f64::INFINITY, f64::INFINITY), |a, b| {
            (a.0.min(b.0), a.1.min(b.1))
        })
}

/// Hand-off per phase at each thread count: the probe's excess over its ideal time, less
/// the same at one thread (which the one-thread trace already holds). Past this
/// machine's `cores` a probe would time the operating system's scheduler, not the
/// hand-off: those thread counts get the figure of the largest count measured.
fn handoffs(threads: &[usize], cores: usize) -> BTreeMap<usize, Handoff> {
    let busy = Busy::calibrate();
    let rounds = 500;
    let (t1, p1) = best_probe(&busy, 1, rounds);
    let mut last = (t1, p1);
    let mut sorted = threads.to_vec();
    sorted.sort_unstable();
    sorted
        .iter()
        .map(|&t| {
            let (team, pf) = if t == 1 {
                (t1, p1)
            } else if t > cores {
                last
            } else {
                last = best_probe(&busy, t, rounds);
                last
            };
            (
                t,
                Handoff {
                    team: (team - t1).max(0.0),
                    scope: (pf - p1).max(0.0),
                },
            )
        })
        .collect()
}

/// A node of a thread's span tree.
#[derive(Debug)]
struct Node {
    label: &'static str,
    start: u64,
    end: u64,
    children: Vec<Node>,
}

impl Node {
    fn dur(&self) -> f64 {
        self.end.saturating_sub(self.start) as f64
    }

    fn is_phase(&self) -> bool {
        self.label == PHASE_LABEL || self.label == TEAM_PHASE_LABEL
    }
}

/// Nests one thread's events by their intervals (sorted by start, longer first).
fn forest(mut events: Vec<TraceEvent>) -> Vec<Node> {
    events.sort_by_key(|e| (e.start_ns, std::cmp::Reverse(e.end_ns)));
    let mut roots: Vec<Node> = Vec::new();
    let mut stack: Vec<Node> = Vec::new();
    for e in events {
        let node = Node {
            label: e.label,
            start: e.start_ns,
            end: e.end_ns,
            children: Vec::new(),
        };
        while let Some(top) = stack.last() {
            if top.end <= node.start && !(top.start == node.start && top.end == node.end) {
                let done = stack.pop().expect("top");
                match stack.last_mut() {
                    Some(p) => p.children.push(done),
                    None => roots.push(done),
                }
            } else if node.end > top.end {
                // Overlapping but not nested (clock granularity): close the top.
                let done = stack.pop().expect("top");
                match stack.last_mut() {
                    Some(p) => p.children.push(done),
                    None => roots.push(done),
                }
            } else {
                break;
            }
        }
        stack.push(node);
    }
    while let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(p) => p.children.push(done),
            None => roots.push(done),
        }
    }
    roots
}

/// The model's inputs for one stage of one traced step.
#[derive(Clone, Debug, Default)]
struct StageInputs {
    /// One-thread time.
    work: f64,
    /// Time outside any item.
    serial: f64,
    /// Phases: (team stage?, item durations in claim order).
    phases: Vec<(bool, Vec<f64>)>,
    /// Tracing's own cost, taken out of `serial` and `work`.
    traced_cost: f64,
}

impl StageInputs {
    fn items(&self) -> usize {
        self.phases.iter().map(|p| p.1.len()).sum()
    }

    /// Serial time plus every phase's longest item.
    fn span(&self) -> f64 {
        self.serial
            + self
                .phases
                .iter()
                .map(|p| p.1.iter().copied().fold(0.0, f64::max))
                .sum::<f64>()
    }

    /// Predicted time at `t` threads, and its parts (serial, scheduled items, hand-offs).
    fn predict(&self, t: usize, h: Handoff) -> (f64, f64, f64) {
        let mut items = 0.0;
        let mut handoff = 0.0;
        for (team, durs) in &self.phases {
            items += list_schedule(durs, t);
            if t > 1 {
                handoff += if *team { h.team } else { h.scope };
            }
        }
        (self.serial, items, handoff)
    }
}

/// Greedy list schedule of `durs` in order on `t` threads: the makespan.
fn list_schedule(durs: &[f64], t: usize) -> f64 {
    let mut free = vec![0.0f64; t.max(1)];
    for &d in durs {
        let (i, _) = free
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("one thread at least");
        free[i] += d;
    }
    free.into_iter().fold(0.0, f64::max)
}

/// Walks a node inside a stage: adds its serial time and phases to `out`.
fn walk(node: &Node, out: &mut StageInputs) {
    // Exclusive time of this (non-item) node is serial.
    let inner: f64 = node
        .children
        .iter()
        .filter(|c| c.label != WAIT_LABEL)
        .map(Node::dur)
        .sum();
    out.serial += (node.dur() - inner).max(0.0);
    if node.is_phase() {
        let team = node.label == TEAM_PHASE_LABEL;
        let mut items = Vec::new();
        for c in &node.children {
            if c.label == WAIT_LABEL {
                continue;
            }
            if c.is_phase() {
                // A phase directly in a phase (a loop's scope): its own phase.
                walk(c, out);
            } else {
                items.push(c.dur());
            }
        }
        if !items.is_empty() {
            out.phases.push((team, items));
        }
    } else {
        for c in &node.children {
            if c.label == WAIT_LABEL {
                continue;
            }
            if c.is_phase() || STAGES.contains(&c.label) {
                walk(c, out);
            } else {
                // A job run outside any phase: serial.
                out.serial += c.dur();
            }
        }
    }
}

/// The model's inputs of one traced one-thread step, per stage (in `STAGES` order), and
/// the step's wall time.
fn inputs(events: Vec<TraceEvent>, cost: f64) -> (Vec<StageInputs>, f64) {
    let Some(main) = events
        .iter()
        .find(|e| STAGES.contains(&e.label))
        .map(|e| e.thread)
    else {
        return (vec![StageInputs::default(); STAGES.len()], 0.0);
    };
    let mine: Vec<TraceEvent> = events.into_iter().filter(|e| e.thread == main).collect();
    let roots = forest(mine);
    let mut stages = vec![StageInputs::default(); STAGES.len()];
    let mut wall = 0.0;
    fn visit(n: &Node, stages: &mut [StageInputs], wall: &mut f64) {
        if let Some(i) = STAGES.iter().position(|s| *s == n.label) {
            stages[i].work += n.dur();
            *wall += n.dur();
            walk(n, &mut stages[i]);
        } else {
            for c in &n.children {
                visit(c, stages, wall);
            }
        }
    }
    for r in &roots {
        visit(r, &mut stages, &mut wall);
    }
    // Tracing's own cost, one record per item and phase, is booked as serial time.
    wall = 0.0;
    for s in &mut stages {
        let records = (s.items() + s.phases.len()) as f64;
        let taken = (cost * records).min(s.serial);
        s.serial -= taken;
        s.work -= taken;
        s.traced_cost = taken;
        wall += s.work;
    }
    (stages, wall)
}

fn world(kind: SceneKind, threads: usize) -> World {
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut w = World::new(desc, JobSystem::new(threads - 1).expect("job system"));
    scenes::build(kind, &mut w).expect("scene builds");
    w
}

/// Per stage and in total, averaged over the traced samples of a one-thread run.
struct Model {
    /// Sum over samples, per stage.
    stages: Vec<StageInputs>,
    /// Sum over samples of each stage's predicted time per thread count.
    predicted: Vec<BTreeMap<usize, (f64, f64, f64)>>,
    /// Sum of the traced steps' wall times.
    traced_wall: f64,
    samples: usize,
    /// Traced steps left out: over 1.5 times the median traced step (preempted).
    dropped: usize,
    /// Mean of the untraced one-thread steps, ns.
    untraced_mean: f64,
}

/// Consecutive traced steps per sample (see [`fastest`]).
const GROUP: usize = 4;

/// Folds consecutive traced steps into one: per stage, the least work and serial time,
/// and, where every step cut the stage into the same sequence of phases (their item
/// counts may differ a little as contacts come and go), each item's least time against
/// the items at the same relative place in the others; otherwise the items of the step
/// whose stage took least. Consecutive steps of a scene do nearly the same
/// work, so what this takes away is mostly time a thread spent preempted.
fn fastest(group: Vec<(Vec<StageInputs>, f64)>) -> (Vec<StageInputs>, f64) {
    let mut out: Vec<StageInputs> = Vec::with_capacity(STAGES.len());
    for i in 0..STAGES.len() {
        let all: Vec<&StageInputs> = group.iter().map(|g| &g.0[i]).collect();
        let best = all
            .iter()
            .min_by(|a, b| a.work.total_cmp(&b.work))
            .copied()
            .cloned()
            .unwrap_or_default();
        let same_phases = all.iter().all(|s| {
            s.phases.len() == best.phases.len()
                && s.phases
                    .iter()
                    .zip(&best.phases)
                    .all(|(a, b)| a.0 == b.0 && !a.1.is_empty())
        });
        let mut folded = best;
        folded.serial = all.iter().map(|s| s.serial).fold(f64::INFINITY, f64::min);
        folded.traced_cost = all.iter().map(|s| s.traced_cost).fold(0.0, f64::max);
        if same_phases {
            // Item k of a phase of n items against the item at the same relative place
            // in the other steps' phase (the same constraints or bodies, give or take the
            // few that changed: blocks follow constraint order).
            for (p, phase) in folded.phases.iter_mut().enumerate() {
                let n = phase.1.len();
                for (k, d) in phase.1.iter_mut().enumerate() {
                    *d = all
                        .iter()
                        .map(|s| {
                            let other = &s.phases[p].1;
                            other[(k * other.len() / n).min(other.len() - 1)]
                        })
                        .fold(*d, f64::min);
                }
            }
        }
        if !folded.serial.is_finite() {
            folded.serial = 0.0;
        }
        // Work: what the folded parts add up to (at most the least stage time).
        let items: f64 = folded.phases.iter().flat_map(|p| &p.1).sum();
        folded.work = folded.work.min(folded.serial + items);
        out.push(folded);
    }
    let wall = out.iter().map(|s| s.work).sum();
    (out, wall)
}

fn one_thread_model(
    kind: SceneKind,
    samples: usize,
    steps: Option<usize>,
    handoff: &BTreeMap<usize, Handoff>,
    cost: f64,
) -> Model {
    let mut w = world(kind, 1);
    let (warmup, timed) = kind.run_lengths();
    let timed = steps.unwrap_or(timed);
    for _ in 0..warmup {
        w.step(scenes::DT);
    }
    let every = (timed / samples.max(1)).max(GROUP + 1);
    let mut m = Model {
        stages: vec![StageInputs::default(); STAGES.len()],
        predicted: vec![BTreeMap::new(); STAGES.len()],
        traced_wall: 0.0,
        samples: 0,
        dropped: 0,
        untraced_mean: 0.0,
    };
    let (mut untraced, mut n_untraced) = (0.0, 0usize);
    let mut traced = Vec::new();
    for step in 0..timed {
        if step % every == every / 2 && traced.len() < samples {
            // A group of consecutive traced steps, folded item by item into their
            // fastest: a preempted item (a shared machine) would read as work and span.
            let jobs = w.jobs().clone();
            let mut group = Vec::with_capacity(GROUP);
            for _ in 0..GROUP {
                let _ = jobs.take_trace();
                jobs.set_tracing(true);
                w.step(scenes::DT);
                jobs.set_tracing(false);
                group.push(inputs(jobs.take_trace(), cost));
            }
            traced.push(fastest(group));
        } else {
            let t = Instant::now();
            w.step(scenes::DT);
            untraced += t.elapsed().as_nanos() as f64;
            n_untraced += 1;
        }
    }
    // A traced step far slower than the others lost its core for a while (a shared
    // machine): its items' times would read as work and its spans as critical paths.
    let mut walls: Vec<f64> = traced.iter().map(|t| t.1).collect();
    walls.sort_by(f64::total_cmp);
    let median = walls.get(walls.len() / 2).copied().unwrap_or(0.0);
    let kept = traced.len();
    traced.retain(|t| t.1 <= 1.5 * median);
    m.dropped = kept - traced.len();
    {
        for (st, wall) in traced {
            m.traced_wall += wall;
            m.samples += 1;
            for (i, s) in st.into_iter().enumerate() {
                for (&t, &h) in handoff {
                    let p = s.predict(t, h);
                    let e = m.predicted[i].entry(t).or_insert((0.0, 0.0, 0.0));
                    e.0 += p.0;
                    e.1 += p.1;
                    e.2 += p.2;
                }
                let acc = &mut m.stages[i];
                acc.work += s.work;
                acc.serial += s.serial;
                acc.traced_cost += s.traced_cost;
                // Every sample's phases: counts and spans are divided by the samples.
                acc.phases.extend(s.phases);
            }
        }
    }
    m.untraced_mean = untraced / n_untraced.max(1) as f64;
    m
}

/// Measured at `threads`: untraced mean step (ns), traced serial share, and each stage's
/// mean traced time (ns).
fn measure(kind: SceneKind, threads: usize, steps: Option<usize>) -> (f64, f64, Vec<f64>) {
    let mut w = world(kind, threads);
    let (warmup, timed) = kind.run_lengths();
    let timed = steps.unwrap_or(timed);
    for _ in 0..warmup {
        w.step(scenes::DT);
    }
    let every = (timed / 12).max(1);
    let (mut total, mut n) = (0.0, 0usize);
    let (mut serial, mut wall) = (0u64, 0u64);
    let mut stage = vec![0.0; STAGES.len()];
    let mut traced = 0usize;
    for step in 0..timed {
        if step % every == every / 2 {
            let trace = w.step_traced(scenes::DT);
            serial += trace.serial_ns();
            wall += trace.wall_ns();
            for (i, r) in trace.tasks.iter().enumerate() {
                if let Some(r) = r {
                    stage[i] += r.elapsed_ns() as f64;
                }
            }
            traced += 1;
        } else {
            let t = Instant::now();
            w.step(scenes::DT);
            total += t.elapsed().as_nanos() as f64;
            n += 1;
        }
    }
    for s in &mut stage {
        *s /= traced.max(1) as f64;
    }
    (
        total / n.max(1) as f64,
        serial as f64 / wall.max(1) as f64,
        stage,
    )
}

fn list<T>(arg: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    arg.split(',')
        .map(|s| parse(s.trim()).ok_or(format!("cannot read {s:?}")))
        .collect()
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn report(
    kind: SceneKind,
    threads: &[usize],
    samples: usize,
    steps: Option<usize>,
    handoff: &BTreeMap<usize, Handoff>,
    cost: f64,
    do_measure: bool,
) {
    let m = one_thread_model(kind, samples, steps, handoff, cost);
    let n = m.samples.max(1) as f64;
    let tmax = *threads.iter().max().unwrap_or(&1);
    println!(
        "\n### {} (1-thread trace, mean of {} traced steps, {} preempted left out; untraced 1-thread mean {} us, traced {} us)\n",
        kind.name(),
        m.samples,
        m.dropped,
        us(m.untraced_mean),
        us(m.traced_wall / n)
    );
    print!("| stage | work us | serial us | phases | items | span us | parallelism |");
    for &t in threads {
        print!(" {t}t us |");
    }
    println!();
    print!("|---|---|---|---|---|---|---|");
    for _ in threads {
        print!("---|");
    }
    println!();
    let mut totals: BTreeMap<usize, f64> = BTreeMap::new();
    let (mut work, mut serial, mut span) = (0.0, 0.0, 0.0);
    let mut cap: Option<(usize, f64)> = None;
    for (i, s) in m.stages.iter().enumerate() {
        // Span summed over samples: serial plus each phase's longest item.
        let st_span = s.span();
        work += s.work;
        serial += s.serial;
        span += st_span;
        if s.work == 0.0 {
            continue;
        }
        print!(
            "| {} | {} | {} | {:.0} | {:.0} | {} | {:.1} |",
            STAGES[i],
            us(s.work / n),
            us(s.serial / n),
            s.phases.len() as f64 / n,
            s.items() as f64 / n,
            us(st_span / n),
            s.work / st_span.max(1.0)
        );
        for &t in threads {
            let (a, b, c) = m.predicted[i].get(&t).copied().unwrap_or_default();
            let p = a + b + c;
            *totals.entry(t).or_default() += p;
            if t == tmax && cap.is_none_or(|(_, v)| p > v) {
                cap = Some((i, p));
            }
            print!(" {} |", us(p / n));
        }
        println!();
    }
    print!(
        "| **step** | {} | {} | | | {} | {:.1} |",
        us(work / n),
        us(serial / n),
        us(span / n),
        work / span.max(1.0)
    );
    for &t in threads {
        print!(" {} |", us(totals[&t] / n));
    }
    println!();
    let t1 = totals.get(&1).copied().unwrap_or(m.traced_wall);
    let cost: f64 = m.stages.iter().map(|s| s.traced_cost).sum();
    println!();
    print!(
        "without taking out tracing's cost ({} us a step):",
        us(cost / n)
    );
    for &t in threads {
        print!("  {t}t {:.2}", (t1 + cost) / (totals[&t] + cost));
    }
    println!();
    print!("predicted speed-up over 1 thread:");
    for &t in threads {
        print!("  {t}t {:.2}", t1 / totals[&t]);
    }
    println!(
        "  (Amdahl bound from the serial share {:.0} %: {:.2} at {tmax}t)",
        100.0 * serial / work.max(1.0),
        1.0 / (serial / work.max(1.0) + (1.0 - serial / work.max(1.0)) / tmax as f64)
    );
    if let Some((i, p)) = cap {
        let (a, b, c) = m.predicted[i][&tmax];
        let s = &m.stages[i];
        let why = if a >= b && a >= c {
            "its serial part"
        } else if c >= b {
            "its hand-offs"
        } else if b <= 1.05 * (s.span() - s.serial) {
            "its longest items (span)"
        } else {
            "its parallel work"
        };
        println!(
            "at {tmax} threads the largest stage is {} ({:.0} % of the predicted step), capped by {why}: serial {} us, items {} us, hand-offs {} us",
            STAGES[i],
            100.0 * p / totals[&tmax],
            us(a / n),
            us(b / n),
            us(c / n)
        );
    }
    if do_measure {
        println!();
        println!(
            "| threads | measured ms | predicted ms | measured speed-up | predicted speed-up | measured / predicted | serial share (traced) | worst stage vs model |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        let mut base = None;
        for &t in threads {
            let (mean, share, stage) = if t == 1 && steps.is_none() {
                let (_, share, stage) = measure(kind, 1, Some(24));
                (m.untraced_mean, share, stage)
            } else {
                measure(kind, t, steps)
            };
            let base_ms = *base.get_or_insert(mean);
            let speed_pred = t1 / totals[&t];
            let pred = m.untraced_mean / speed_pred;
            // The stage whose measured time is furthest above its prediction (scaled
            // like the step: untraced over traced).
            let scale = m.untraced_mean / (m.traced_wall / n);
            let worst = (0..STAGES.len())
                .filter(|&i| m.stages[i].work > 0.0)
                .map(|i| {
                    let (a, b, c) = m.predicted[i][&t];
                    (i, stage[i] - scale * (a + b + c) / n)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            println!(
                "| {t} | {:.3} | {:.3} | {:.2} | {speed_pred:.2} | {:.2} | {:.0} % | {} |",
                mean / 1e6,
                pred / 1e6,
                base_ms / mean,
                mean / pred,
                100.0 * share,
                worst.map_or(String::new(), |(i, d)| format!(
                    "{} {:+.0} us",
                    STAGES[i],
                    d / 1e3
                ))
            );
        }
    }
}

/// `--serial`: where a multi-thread step's serial time goes (issue 33, item 3): per stage,
/// its mean traced time and the part of it when at most one thread worked, over
/// `samples` traced steps spread over the scene's run, and the untraced mean step.
fn serial_breakdown(kind: SceneKind, threads: usize, samples: usize, steps: Option<usize>) {
    let mut w = world(kind, threads);
    let (warmup, timed) = kind.run_lengths();
    let timed = steps.unwrap_or(timed);
    for _ in 0..warmup {
        w.step(scenes::DT);
    }
    let every = (timed / samples.max(1)).max(1);
    let mut elapsed = vec![0.0; STAGES.len()];
    let mut serial = vec![0.0; STAGES.len()];
    let (mut wall, mut serial_all, mut n) = (0.0, 0.0, 0usize);
    let (mut untraced, mut n_untraced) = (0.0, 0usize);
    for step in 0..timed {
        if step % every == every / 2 && n < samples {
            let trace = w.step_traced(scenes::DT);
            for (i, (r, s)) in trace
                .tasks
                .iter()
                .zip(trace.serial_per_task_ns())
                .enumerate()
            {
                elapsed[i] += r.map_or(0, |r| r.elapsed_ns()) as f64;
                serial[i] += s as f64;
            }
            wall += trace.wall_ns() as f64;
            serial_all += trace.serial_ns() as f64;
            n += 1;
        } else {
            let t = Instant::now();
            w.step(scenes::DT);
            untraced += t.elapsed().as_nanos() as f64;
            n_untraced += 1;
        }
    }
    let n = n.max(1) as f64;
    println!(
        "\n### {} at {threads} threads: untraced mean {} us; traced step {} us, serial {} us ({:.0} %)\n",
        kind.name(),
        us(untraced / n_untraced.max(1) as f64),
        us(wall / n),
        us(serial_all / n),
        100.0 * serial_all / wall.max(1.0)
    );
    println!("| stage | time us | serial us | serial share of the step |");
    println!("|---|---|---|---|");
    for i in 0..STAGES.len() {
        if elapsed[i] == 0.0 {
            continue;
        }
        println!(
            "| {} | {} | {} | {:.1} % |",
            STAGES[i],
            us(elapsed[i] / n),
            us(serial[i] / n),
            100.0 * serial[i] / wall.max(1.0)
        );
    }
}

/// `--phases STAGE`: one traced one-thread step's phases in `STAGE`, in order: kind,
/// items, work and longest item, and the serial time before each (what the leader did
/// between hand-offs).
fn phases(kind: SceneKind, stage: &str, steps: Option<usize>) {
    let mut w = world(kind, 1);
    let (warmup, timed) = kind.run_lengths();
    for _ in 0..warmup + steps.unwrap_or(timed / 2) {
        w.step(scenes::DT);
    }
    let jobs = w.jobs().clone();
    let _ = jobs.take_trace();
    jobs.set_tracing(true);
    w.step(scenes::DT);
    jobs.set_tracing(false);
    let events = jobs.take_trace();
    let main = events.iter().find(|e| e.label == stage).map(|e| e.thread);
    let roots = forest(
        events
            .into_iter()
            .filter(|e| Some(e.thread) == main)
            .collect(),
    );
    fn find<'a>(n: &'a Node, stage: &str) -> Option<&'a Node> {
        if n.label == stage {
            return Some(n);
        }
        n.children.iter().find_map(|c| find(c, stage))
    }
    let Some(node) = roots.iter().find_map(|r| find(r, stage)) else {
        println!("{}: no stage {stage:?}", kind.name());
        return;
    };
    println!(
        "\n### {}: {stage} {} us, one thread\n\n| # | gap before us | kind | items | work us | longest us |\n|---|---|---|---|---|---|",
        kind.name(),
        us(node.dur())
    );
    let mut last = node.start;
    fn flat<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
        for c in &n.children {
            if c.is_phase() {
                out.push(c);
            } else if c.label != WAIT_LABEL && c.label != ITEM_LABEL {
                flat(c, out);
            }
        }
    }
    let mut list = Vec::new();
    flat(node, &mut list);
    for (k, p) in list.into_iter().enumerate() {
        let items: Vec<f64> = p
            .children
            .iter()
            .filter(|c| c.label != WAIT_LABEL && !c.is_phase())
            .map(Node::dur)
            .collect();
        println!(
            "| {k} | {} | {} | {} | {} | {} |",
            us(p.start.saturating_sub(last) as f64),
            if p.label == TEAM_PHASE_LABEL {
                "team"
            } else {
                "loop/scope"
            },
            items.len(),
            us(items.iter().sum()),
            us(items.iter().copied().fold(0.0, f64::max))
        );
        last = p.end;
    }
    println!(
        "| end | {} | | | | |",
        us(node.end.saturating_sub(last) as f64)
    );
}

/// Reads a compare-runner table and prints each engine's Amdahl fit from 1 and 2 threads
/// beside its measured speed-ups.
fn amdahl(path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    // (scene, engine) -> threads -> mean ms
    let mut runs: BTreeMap<(String, String), BTreeMap<usize, f64>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f.len() < 6 {
            continue;
        }
        let (Ok(t), Ok(ms)) = (f[3].parse::<usize>(), f[5].parse::<f64>()) else {
            continue;
        };
        let engine = f[4].trim_end_matches('✗').trim().to_string();
        runs.entry((f[1].to_string(), engine))
            .or_default()
            .insert(t, ms);
    }
    println!(
        "| scene | engine | serial fraction (1→2 fit) | threads: measured speed-up / Amdahl fit |"
    );
    println!("|---|---|---|---|");
    for ((scene, engine), by_t) in &runs {
        let (Some(&t1), Some(&t2)) = (by_t.get(&1), by_t.get(&2)) else {
            continue;
        };
        let f = (2.0 * t2 / t1 - 1.0).clamp(0.0, 1.0);
        let cells: Vec<String> = by_t
            .iter()
            .map(|(&t, &ms)| {
                format!(
                    "{t}: {:.2} / {:.2}",
                    t1 / ms,
                    1.0 / (f + (1.0 - f) / t as f64)
                )
            })
            .collect();
        println!(
            "| {scene} | {engine} | {:.0} % | {} |",
            100.0 * f,
            cells.join(", ")
        );
    }
    Ok(())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = vec![1, 2, 4, 8, 16];
    let mut kinds: Vec<SceneKind> = SceneKind::ALL.to_vec();
    kinds.push(SceneKind::ChainJoints);
    let mut samples = 12usize;
    let mut steps = None;
    let mut do_measure = false;
    let mut serial_mode = false;
    let mut phases_of = None;
    let mut fixed_handoff: Option<Handoff> = None;
    let mut amdahl_file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--measure" {
            do_measure = true;
            continue;
        }
        if a == "--serial" {
            serial_mode = true;
            continue;
        }
        let v = it.next().ok_or(format!("{a} needs a value"))?;
        match a.as_str() {
            "--threads" => threads = list(v, |s| s.parse().ok().filter(|&t| t > 0))?,
            "--scenes" => kinds = list(v, SceneKind::from_name)?,
            "--samples" => samples = v.parse().map_err(|_| "bad --samples")?,
            "--steps" => steps = Some(v.parse().map_err(|_| "bad --steps")?),
            "--amdahl" => amdahl_file = Some(v.clone()),
            "--phases" => phases_of = Some(v.clone()),
            "--handoff" => {
                let us = list(v, |s| s.parse::<f64>().ok())?;
                let [team, scope] = us[..] else {
                    return Err("--handoff TEAM_US,LOOP_US".into());
                };
                fixed_handoff = Some(Handoff {
                    team: team * 1e3,
                    scope: scope * 1e3,
                });
            }
            _ => {
                return Err("usage: scaling [--threads 1,2,4,8,16] [--scenes a,b] [--samples 12] [--steps N] [--measure] [--handoff TEAM_US,LOOP_US] | --serial | --phases STAGE | --amdahl compare.md".into());
            }
        }
    }
    if let Some(f) = amdahl_file {
        return amdahl(&f);
    }
    if let Some(stage) = phases_of {
        for kind in kinds {
            phases(kind, &stage, steps);
        }
        return Ok(());
    }
    if serial_mode {
        for kind in kinds {
            for &t in &threads {
                serial_breakdown(kind, t, samples, steps);
            }
        }
        return Ok(());
    }
    if !threads.contains(&1) {
        threads.insert(0, 1);
    }
    let cores = std::thread::available_parallelism().map_or(1, |p| p.get());
    let handoff = match fixed_handoff {
        Some(h) => threads
            .iter()
            .map(|&t| (t, if t == 1 { Handoff::default() } else { h }))
            .collect(),
        None => handoffs(&threads, cores),
    };
    println!(
        "machine: {cores} hardware threads; hand-off per phase, {} (team stage / parallel loop), us:",
        if fixed_handoff.is_some() {
            "given by --handoff"
        } else {
            "measured here"
        }
    );
    for (t, h) in &handoff {
        let note = if *t > cores && fixed_handoff.is_none() {
            " (more threads than cores: the figure of the most threads measured, assumed)"
        } else {
            ""
        };
        println!(
            "- {t} threads: {:.2} / {:.2}{note}",
            h.team / 1e3,
            h.scope / 1e3
        );
    }
    let cost = trace_cost(&Busy::calibrate());
    println!(
        "tracing costs {cost:.0} ns per recorded span here, taken out of the traced serial time"
    );
    for kind in kinds {
        report(kind, &threads, samples, steps, &handoff, cost, do_measure);
    }
    Ok(())
}
