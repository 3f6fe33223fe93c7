//! Tasks over typed parameters: what a task takes is what it gets (the right values,
//! mutable where it writes), for every kind of task, and what ordered tasks see does not
//! depend on the thread count.

mod common;

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{WORKERS, for_each_system};
use joule_graph::{AccessMode, BuildError, Context, Graph, Read, Spawner, Write};
use joule_jobs::JobSystem;

struct Bodies(Vec<u64>);
struct Sum(u64);
struct Log(Vec<String>);

/// A `Write<A>` beside an unordered `Read<A>` is rejected with both task names and `A`
/// (both derived from the closures' parameter types); ordered, they build and run, and the
/// reader sees the writer's value.
#[test]
fn access_comes_from_the_parameter_types() {
    let mut b = Graph::builder();
    b.task("integrate", |mut bodies: Write<Bodies>| bodies.0.push(1));
    b.task("sum", |bodies: Read<Bodies>, mut sum: Write<Sum>| {
        sum.0 = bodies.0.iter().sum();
    });
    let e = b.build().expect_err("unordered write and read of Bodies");
    assert_eq!(
        e,
        BuildError::Conflict {
            first: "integrate".into(),
            first_mode: AccessMode::Write,
            second: "sum".into(),
            second_mode: AccessMode::Read,
            resource: std::any::type_name::<Bodies>(),
        }
    );
    assert!(e.to_string().contains("params::Bodies"), "{e}");

    let mut b = Graph::builder();
    let w = b
        .task("integrate", |mut bodies: Write<Bodies>| bodies.0.push(1))
        .id();
    b.task("sum", |bodies: Read<Bodies>, mut sum: Write<Sum>| {
        sum.0 = bodies.0.iter().sum();
    })
    .after(w);
    let graph = b.build().unwrap();
    for_each_system(|jobs| {
        let mut ctx = Context::new().with(Bodies(vec![10, 20])).with(Sum(0));
        graph.run(jobs, &mut ctx);
        graph.run(jobs, &mut ctx);
        assert_eq!(ctx.get_mut::<Bodies>().unwrap().0, [10, 20, 1, 1]);
        assert_eq!(ctx.get_mut::<Sum>().unwrap().0, 32);
    });
}

fn double(x: Read<Bodies>, mut log: Write<Log>) {
    log.0.push(format!(
        "{:?}",
        x.0.iter().map(|v| v * 2).collect::<Vec<_>>()
    ));
}

/// Function items work as tasks as well as closures; `&JobSystem` gives the run's job
/// system for nested parallel work; a task of no parameters declares nothing.
#[test]
fn functions_the_job_system_and_no_parameters() {
    let mut b = Graph::builder();
    let d = b.task("double", double).id();
    let n = b
        .task(
            "nested",
            |jobs: &JobSystem, bodies: Read<Bodies>, mut sum: Write<Sum>| {
                let total = AtomicU64::new(0);
                jobs.parallel_for(0..bodies.0.len(), 1, |r| {
                    let part: u64 = bodies.0[r].iter().sum();
                    total.fetch_add(part, Ordering::Relaxed);
                });
                sum.0 = total.into_inner();
            },
        )
        .id();
    b.task("nothing", || {}).after([d, n]);
    let graph = b.build().unwrap();
    for_each_system(|jobs| {
        let mut ctx = Context::new()
            .with(Bodies((1..=100).collect()))
            .with(Sum(0))
            .with(Log(Vec::new()));
        graph.run(jobs, &mut ctx);
        assert_eq!(ctx.get_mut::<Sum>().unwrap().0, 5050);
        let log = &ctx.get_mut::<Log>().unwrap().0;
        assert_eq!(log.len(), 1);
        assert!(log[0].starts_with("[2, 4, 6,"), "{}", log[0]);
    });
}

struct Input(Vec<u64>);
struct Output(Vec<AtomicU64>);
struct Squares(Vec<u64>);
struct Found(Mutex<Vec<u64>>);

/// input -> square (parallel-for over Input's length) -> search (dynamic: one child per
/// tenth of the range, each child spawning one grandchild per hit) -> collect. Every
/// kind of task takes its data as parameters; the result is the same at every thread
/// count and every run.
fn pipeline() -> Graph {
    let mut b = Graph::builder();
    let input = b
        .task("input", |mut input: Write<Input>| {
            let next = input.0.len() as u64;
            input.0.push(next);
        })
        .id();
    let square = b
        .parallel_for(
            "square",
            |input: Read<Input>| 0..input.0.len(),
            8,
            |r: Range<usize>, input: Read<Input>, out: Read<Output>| {
                for i in r {
                    out.0[i].store(input.0[i] * input.0[i], Ordering::Relaxed);
                }
            },
        )
        .after(input)
        .id();
    #[derive(Clone, Copy)]
    enum Job {
        Scan { start: usize, end: usize },
        Hit(u64),
    }
    let search = b
        .dynamic(
            "search",
            |input: Read<Input>, spawn: Spawner<Job>| {
                let len = input.0.len();
                for k in 0..10 {
                    spawn.spawn(Job::Scan {
                        start: len * k / 10,
                        end: len * (k + 1) / 10,
                    });
                }
            },
            |job: Job, out: Read<Output>, found: Read<Found>, spawn: Spawner<Job>| match job {
                Job::Scan { start, end } => {
                    for i in start..end {
                        let v = out.0[i].load(Ordering::Relaxed);
                        if v.is_multiple_of(7) {
                            spawn.spawn(Job::Hit(v));
                        }
                    }
                }
                Job::Hit(v) => found.0.lock().unwrap().push(v),
            },
        )
        .after(square)
        .id();
    b.task(
        "collect",
        |found: Read<Found>, out: Read<Output>, mut squares: Write<Squares>| {
            let mut hits = std::mem::take(&mut *found.0.lock().unwrap());
            // Children finish in any order; sorting makes what follows see one order.
            hits.sort_unstable();
            let total: u64 = out.0.iter().map(|a| a.load(Ordering::Relaxed)).sum();
            squares.0.push(total);
            squares.0.extend(hits);
        },
    )
    .after(search);
    b.build().unwrap()
}

#[test]
fn every_kind_of_task_sees_the_same_data_at_every_thread_count() {
    let graph = pipeline();
    let mut results = Vec::new();
    for n in WORKERS {
        let jobs = JobSystem::new(n).unwrap();
        let mut ctx = Context::new()
            .with(Input(Vec::new()))
            .with(Output((0..200).map(|_| AtomicU64::new(0)).collect()))
            .with(Found(Mutex::new(Vec::new())))
            .with(Squares(Vec::new()));
        for _ in 0..200 {
            graph.run(&jobs, &mut ctx);
        }
        results.push(ctx.remove::<Squares>().unwrap().0);
    }
    // Run r squares 0..=r: the sum is r(r+1)(2r+1)/6, and the hits are the squares of
    // multiples of 7 up to r.
    let mut want = Vec::new();
    for r in 0..200u64 {
        want.push(r * (r + 1) * (2 * r + 1) / 6);
        want.extend((0..=r).filter(|i| i.is_multiple_of(7)).map(|i| i * i));
    }
    for (n, got) in WORKERS.iter().zip(&results) {
        assert_eq!(got, &want, "{n} workers");
    }
}
