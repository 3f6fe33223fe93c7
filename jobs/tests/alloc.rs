//! Spawning a small job allocates nothing: a counting global allocator, counting only the
//! allocations made by the thread under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use joule_jobs::{Counter, JobSystem};

struct CountingAlloc;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the thread-locals are
// `const`-initialised Cells, which never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Allocations made by this thread while running `f`.
fn allocations_during(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn spawning_100k_small_jobs_allocates_nothing() {
    // Measured on a worker thread, whose spawns go to its own deque. Spawns come in
    // batches of 100 (below the deque's capacity of 256) that are waited for, so the ring
    // never overflows into the shared injector (whose block list does allocate).
    let jobs = JobSystem::new(2).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let measured = Arc::new(AtomicUsize::new(usize::MAX));
    let done = Counter::new();
    let (j, h, m) = (jobs.downgrade(), hits.clone(), measured.clone());
    jobs.spawn_counted(&done, move || {
        let jobs = j.upgrade().unwrap();
        let counter = Counter::new();
        // Warm up: first-use lazies (thread registration, trace buffers) are not spawns.
        jobs.spawn_counted(&counter, || {});
        jobs.wait(&counter);
        let n = allocations_during(|| {
            for _ in 0..1000 {
                for _ in 0..100 {
                    let h = h.clone();
                    jobs.spawn_counted(&counter, move || {
                        h.fetch_add(1, Ordering::Relaxed);
                    });
                }
                jobs.wait(&counter);
            }
        });
        m.store(n, Ordering::SeqCst);
    });
    jobs.wait(&done);
    assert_eq!(hits.load(Ordering::Relaxed), 100_000);
    assert_eq!(
        measured.load(Ordering::SeqCst),
        0,
        "heap allocations while spawning"
    );
}

#[test]
fn scoped_spawns_allocate_nothing_and_a_large_closure_is_boxed() {
    let jobs = JobSystem::new(1).unwrap();
    let sum = AtomicUsize::new(0);
    jobs.scope(|s| s.spawn(|_| {})); // registers this thread (allocates once)
    let n = allocations_during(|| {
        for _ in 0..1000 {
            jobs.scope(|s| {
                for i in 0..100 {
                    let sum = &sum;
                    s.spawn(move |_| {
                        sum.fetch_add(i, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert_eq!(sum.load(Ordering::Relaxed), 1000 * 4950);
    assert_eq!(n, 0, "scoped spawns of small closures must not allocate");

    // The counter works: a closure larger than the inline payload is boxed.
    let big = [1u64; 16];
    let n = allocations_during(|| {
        jobs.scope(|s| {
            let sum = &sum;
            s.spawn(move |_| {
                sum.fetch_add(big.iter().sum::<u64>() as usize, Ordering::Relaxed);
            });
        });
    });
    assert!(n >= 1, "a large closure is boxed ({n} allocations seen)");
}

#[test]
fn a_team_run_allocates_nothing_once_the_team_exists() {
    let jobs = JobSystem::new(2).unwrap();
    let mut team = joule_jobs::Team::new();
    let sum = AtomicUsize::new(0);
    let mut data = vec![0u32; 4096];
    // Warm up: registration and the queues' first blocks.
    for _ in 0..10 {
        jobs.team(&mut team, 2, |t| t.run(8, |_| {}));
    }
    let n = allocations_during(|| {
        for _ in 0..200 {
            jobs.team(&mut team, 2, |t| {
                for _ in 0..10 {
                    t.run(64, |i| {
                        sum.fetch_add(i, Ordering::Relaxed);
                    });
                    t.for_each_chunk_mut(&mut data, 256, |_, c| c.iter_mut().for_each(|x| *x += 1));
                }
            });
        }
    });
    assert_eq!(sum.load(Ordering::Relaxed), 200 * 10 * 2016);
    assert!(data.iter().all(|&x| x == 2000));
    assert_eq!(n, 0, "heap allocations while running teams");
}
