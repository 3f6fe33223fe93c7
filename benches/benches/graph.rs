//! Overhead per task of joule-graph: runs of built 10,000-task graphs of empty tasks, so
//! what is timed is the scheduling itself (counter reset, dependency decrements, queueing,
//! running and retiring each task).
//!
//! Three shapes, at 1 and 2 threads (`tN` = N threads in total: `threads(N - 1)` workers
//! plus the calling thread, which works while it waits):
//!
//! - `graph_chain_10k`: task i after task i - 1 (no parallelism; each finished task hands
//!   its successor to the same thread);
//! - `graph_fanout_10k`: one source, 10,000 tasks after it, one sink after them all (every
//!   task is queued as a job; the sink's counter takes 10,000 decrements);
//! - `graph_random_10k`: each task after 3 distinct random earlier tasks (a fixed seed).
//!
//! Throughput is set to the task count, so criterion's "elem/s" is tasks per second and
//! the time per iteration divided by 10,000 is the overhead per task. Taskflow reports
//! about 61 ns to create a task and 14 ns per dependency; the target here is at most
//! 100 ns per task on one thread. Results are in `benches/RESULTS.md`.
//!
//! `cargo bench -p joule-benches --bench graph`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use joule_graph::{Context, Graph, TaskId};
use joule_jobs::JobSystem;

const TASKS: usize = 10_000;

fn chain() -> Graph {
    let mut b = Graph::builder();
    let mut prev: Option<TaskId> = None;
    for i in 0..TASKS {
        let t = b.task(format!("t{i}"), || {});
        let t = match prev {
            Some(p) => t.after(p).id(),
            None => t.id(),
        };
        prev = Some(t);
    }
    b.build().expect("chain")
}

fn fan_out() -> Graph {
    let mut b = Graph::builder();
    let source = b.task("source", || {}).id();
    let middle: Vec<TaskId> = (0..TASKS - 2)
        .map(|i| b.task(format!("t{i}"), || {}).after(source).id())
        .collect();
    b.task("sink", || {}).after(middle);
    b.build().expect("fan-out")
}

/// Each task after 3 distinct earlier tasks picked by a fixed LCG (the first three are
/// roots).
fn random_dag() -> Graph {
    let mut b = Graph::builder();
    let mut ids: Vec<TaskId> = Vec::with_capacity(TASKS);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % bound
    };
    for i in 0..TASKS {
        let mut t = b.task(format!("t{i}"), || {});
        if i >= 3 {
            let mut preds: Vec<TaskId> = Vec::with_capacity(3);
            while preds.len() < 3 {
                let p = ids[next(i)];
                if !preds.contains(&p) {
                    preds.push(p);
                }
            }
            t = t.after(preds);
        }
        ids.push(t.id());
    }
    b.build().expect("random DAG")
}

fn bench_shape(c: &mut Criterion, name: &str, graph: &Graph) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(graph.len() as u64));
    for threads in [1usize, 2] {
        let jobs = JobSystem::new(threads - 1).expect("job system");
        let mut ctx = Context::new();
        graph.run(&jobs, &mut ctx);
        group.bench_function(format!("t{threads}"), |b| {
            b.iter(|| graph.run(black_box(&jobs), &mut ctx));
        });
    }
    group.finish();
}

fn graphs(c: &mut Criterion) {
    bench_shape(c, "graph_chain_10k", &chain());
    bench_shape(c, "graph_fanout_10k", &fan_out());
    bench_shape(c, "graph_random_10k", &random_dag());
}

criterion_group!(benches, graphs);
criterion_main!(benches);
