//! After its first run, running a built graph again allocates nothing: a counting global
//! allocator watches 20 runs of a graph with every kind of task (plain, parallel-for,
//! dynamic with children, barrier, embedded subgraph, tasks pinned to the main thread and
//! to a worker), at 0 and 2 workers; then 20 async runs of it (`run_async`, each joined
//! before the next starts, half by `wait` and half polled until done and then joined).
//!
//! The task pinned to a worker spins 50 ms in the warm-up runs, so the calling thread runs
//! out of work and parks (a joule-jobs `Counter` grows its list of sleepers the first time
//! someone sleeps on it; the wait is long because on a loaded machine the caller's backoff,
//! a few `yield_now`s, can itself take many milliseconds before it parks), and 1 ms in the
//! counted runs, so the caller is often asleep when the run ends, which is the path
//! `RunState::exit` takes care to keep allocation-free.
//!
//! This file is its own test binary because it replaces the global allocator, and it holds
//! one test only, so no other test allocates while the count is on.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use std::ops::Range;

use joule_graph::{Context, Graph, Read, Spawner, Write};
use joule_jobs::JobSystem;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the threads that run graph work: the test's thread and the workers. The
    /// test harness's own main thread allocates now and then while tests run; that is
    /// not the graph's doing.
    static WATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn counted() -> bool {
    COUNTING.load(Ordering::Relaxed) && WATCHED.with(std::cell::Cell::get)
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// caller's obligations carry over; counting touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counted() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded as is (see the impl).
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is (see the impl).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counted() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded as is (see the impl).
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct Items(Vec<AtomicU32>);
struct Frame(u64);
struct Total(AtomicUsize);
/// How long the task pinned to worker 0 spins, in µs.
struct Delay(u64);

fn graph(jobs: &JobSystem) -> joule_graph::Graph {
    let mut p = Graph::builder();
    let a = p
        .task("a", |total: Read<Total>| {
            total.0.fetch_add(1, Ordering::Relaxed);
        })
        .id();
    p.parallel_for(
        "b",
        |items: Read<Items>| 0..items.0.len(),
        32,
        |r: Range<usize>, items: Read<Items>| {
            for i in r {
                items.0[i].fetch_add(1, Ordering::Relaxed);
            }
        },
    )
    .after(a);
    let physics = p.build().unwrap();

    let main = jobs.register_current_thread();
    let mut b = Graph::builder();
    let input = b.task("input", |mut frame: Write<Frame>| frame.0 += 1).id();
    let spread = b
        .dynamic(
            "spread",
            |sp: Spawner<(usize, usize, usize)>| {
                for k in 0..16usize {
                    // 24 bytes, the most `Spawner::spawn` promises to keep inline.
                    sp.spawn((k, k / 2, k - k / 2));
                }
            },
            |(k, a, b): (usize, usize, usize), total: Read<Total>| {
                total.0.fetch_add(k + a + b - k, Ordering::Relaxed);
            },
        )
        .after(input)
        .id();
    let step = b.subgraph("physics", &physics).after(input).id();
    let sync = b.barrier("sync").after([spread, step]).id();
    b.task("present", |total: Read<Total>| {
        total.0.fetch_add(1, Ordering::Relaxed);
    })
    .on_thread(main)
    .after(sync);
    if let Some(worker) = jobs.worker_token(0) {
        // While this spins on a worker the caller runs out of work and parks; the warm-up
        // runs make it so, and the counted runs may.
        b.task("slow", |delay: Read<Delay>| {
            let end = std::time::Instant::now() + std::time::Duration::from_micros(delay.0);
            while std::time::Instant::now() < end {
                std::hint::spin_loop();
            }
        })
        .on_thread(worker)
        .after(input);
    }
    b.build().unwrap()
}

/// A worker thread allocates when it starts (std's thread bookkeeping); on a busy machine
/// the OS may start it late, in the middle of the counted runs. Wait until every worker
/// has run a job of its own, so that only the runs are counted.
fn wait_for_workers(jobs: &JobSystem) {
    let ready = std::sync::Arc::new(AtomicUsize::new(0));
    for i in 0..jobs.num_workers() {
        let r = ready.clone();
        jobs.spawn_on(jobs.worker_token(i).unwrap(), move || {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    while ready.load(Ordering::SeqCst) < jobs.num_workers() {
        std::thread::yield_now();
    }
}

#[test]
fn runs_after_the_first_allocate_nothing() {
    for workers in [0, 2] {
        WATCHED.with(|w| w.set(true));
        let jobs = JobSystem::builder()
            .threads(workers)
            .on_thread_start(|_| WATCHED.with(|w| w.set(true)))
            .build()
            .unwrap();
        wait_for_workers(&jobs);
        let graph = graph(&jobs);
        let mut ctx = Context::new()
            .with(Items((0..4000).map(|_| AtomicU32::new(0)).collect()))
            .with(Frame(0))
            .with(Total(AtomicUsize::new(0)))
            .with(Delay(50_000));
        for _ in 0..3 {
            graph.run(&jobs, &mut ctx);
        }
        ctx.get_mut::<Delay>().unwrap().0 = 1_000;
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::SeqCst);
        for _ in 0..20 {
            graph.run(&jobs, &mut ctx);
        }
        COUNTING.store(false, Ordering::SeqCst);
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(ctx.get_mut::<Frame>().unwrap().0, 23);
        // Per run: a (1) + 16 children summing 0..16 (120) + present (1).
        assert_eq!(
            ctx.get_mut::<Total>().unwrap().0.load(Ordering::Relaxed),
            23 * 122
        );
        assert!(
            ctx.get_mut::<Items>()
                .unwrap()
                .0
                .iter()
                .all(|i| i.load(Ordering::Relaxed) == 23)
        );
        assert_eq!(
            allocations, 0,
            "{workers} workers: 20 warm runs allocated {allocations} times"
        );

        // The same with `run_async`. The first async run takes the blocking runs' cached
        // state, so it is warm already; warm up anyway, with the long delay that makes
        // the waiting thread park.
        ctx.get_mut::<Delay>().unwrap().0 = 50_000;
        for _ in 0..3 {
            ctx = graph.run_async(&jobs, ctx).wait();
        }
        ctx.get_mut::<Delay>().unwrap().0 = 1_000;
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::SeqCst);
        for run in 0..20 {
            let handle = graph.run_async(&jobs, ctx);
            ctx = if run % 2 == 0 {
                handle.wait()
            } else {
                // A frame loop's poll: run what is queued here until the run is done.
                while !handle.is_done() {
                    jobs.run_pending();
                    std::hint::spin_loop();
                }
                let (ctx, panic) = handle.join();
                assert!(panic.is_none());
                ctx
            };
        }
        COUNTING.store(false, Ordering::SeqCst);
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(ctx.get_mut::<Frame>().unwrap().0, 46);
        assert_eq!(
            ctx.get_mut::<Total>().unwrap().0.load(Ordering::Relaxed),
            46 * 122
        );
        assert!(
            ctx.get_mut::<Items>()
                .unwrap()
                .0
                .iter()
                .all(|i| i.load(Ordering::Relaxed) == 46)
        );
        assert_eq!(
            allocations, 0,
            "{workers} workers: 20 warm async runs allocated {allocations} times"
        );
    }
}
