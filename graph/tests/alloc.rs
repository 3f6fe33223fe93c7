//! After its first run, running a built graph again allocates nothing: a counting global
//! allocator watches 20 runs of a graph with every kind of task (plain, parallel-for,
//! dynamic with children, barrier, embedded subgraph, a task pinned to the main thread).
//!
//! This file is its own test binary because it replaces the global allocator, and it holds
//! one test only, so no other test allocates while the count is on.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use joule_graph::{Context, GraphBuilder};
use joule_jobs::JobSystem;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// caller's obligations carry over; counting touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
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
        if COUNTING.load(Ordering::Relaxed) {
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

fn graph(jobs: &JobSystem) -> joule_graph::Graph {
    let mut p = GraphBuilder::new();
    let a = p
        .task("a", |cx| {
            cx.read::<Total>().0.fetch_add(1, Ordering::Relaxed);
        })
        .reads::<Total>()
        .id();
    p.parallel_for(
        "b",
        |cx| 0..cx.read::<Items>().0.len(),
        32,
        |cx, r| {
            let items = cx.read::<Items>();
            for i in r {
                items.0[i].fetch_add(1, Ordering::Relaxed);
            }
        },
    )
    .reads::<Items>()
    .after(a);
    let physics = p.build().unwrap();

    let main = jobs.register_current_thread();
    let mut b = GraphBuilder::new();
    let input = b
        .task("input", |cx| cx.write::<Frame>().0 += 1)
        .writes::<Frame>()
        .id();
    let spread = b
        .dynamic("spread", |_, sp| {
            for k in 0..16usize {
                // Captures 8 bytes: the child job stays inline.
                sp.spawn(move |cx, _| {
                    cx.read::<Total>().0.fetch_add(k, Ordering::Relaxed);
                });
            }
        })
        .reads::<Total>()
        .after(input)
        .id();
    let step = b.subgraph("physics", &physics).after(input).id();
    let sync = b.barrier("sync").after([spread, step]).id();
    b.task("present", |cx| {
        cx.read::<Total>().0.fetch_add(1, Ordering::Relaxed);
    })
    .reads::<Total>()
    .on_thread(main)
    .after(sync);
    b.build().unwrap()
}

#[test]
fn runs_after_the_first_allocate_nothing() {
    for workers in [0, 2] {
        let jobs = JobSystem::new(workers).unwrap();
        let graph = graph(&jobs);
        let mut ctx = Context::new()
            .with(Items((0..4000).map(|_| AtomicU32::new(0)).collect()))
            .with(Frame(0))
            .with(Total(AtomicUsize::new(0)));
        for _ in 0..3 {
            graph.run(&jobs, &mut ctx);
        }
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
    }
}
