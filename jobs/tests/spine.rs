//! Behaviour and stress tests of the job system, oversubscribed (8 workers on a 2-core
//! machine shakes out interleavings). Each test counts: every job ran exactly once, every
//! payload was dropped exactly once, every panic reached its waiter.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use joule_jobs::deque::{self, Steal};
use joule_jobs::injector::Injector;
use joule_jobs::{BuildError, Counter, DEQUE_CAPACITY, Job, JobSystem, MAX_THREADS, WAIT_LABEL};

const THREAD_COUNTS: [usize; 4] = [0, 1, 3, 8];

fn system(n: usize) -> JobSystem {
    JobSystem::builder().threads(n).build().expect("job system")
}

/// Counts its own drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn stampede_of_eight_thieves_takes_every_item_once_in_fifo_order() {
    // crossbeam-deque's stampede test, re-expressed: the owner pushes 50,000 ids (spilling
    // to an injector when the ring is full) and pops some itself while 8 thieves steal.
    const N: usize = 50_000;
    let (owner, stealer) = deque::new();
    let injector = Arc::new(Injector::new());
    let taken: Arc<Vec<AtomicUsize>> = Arc::new((0..N).map(|_| AtomicUsize::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let mut thieves = Vec::new();
    for _ in 0..8 {
        let s = stealer.clone();
        let taken = taken.clone();
        let done = done.clone();
        let injector = injector.clone();
        thieves.push(thread::spawn(move || {
            let mut last: Option<usize> = None;
            let seen = Arc::new(Mutex::new(Vec::new()));
            loop {
                match s.steal() {
                    Steal::Success(job) => {
                        let seen2 = seen.clone();
                        // Run the job: it records its id.
                        RECORD.with(|r| *r.borrow_mut() = Some(seen2));
                        job.run();
                        let id = *seen.lock().unwrap().last().unwrap();
                        taken[id].fetch_add(1, Ordering::SeqCst);
                        if let Some(l) = last {
                            assert!(id > l, "a thief's ids must increase (FIFO): {l} then {id}");
                        }
                        last = Some(id);
                    }
                    Steal::Retry => {}
                    Steal::Empty => {
                        if let Some(job) = injector.pop() {
                            let seen2 = seen.clone();
                            RECORD.with(|r| *r.borrow_mut() = Some(seen2));
                            job.run();
                            let id = *seen.lock().unwrap().last().unwrap();
                            taken[id].fetch_add(1, Ordering::SeqCst);
                        } else if done.load(Ordering::SeqCst) {
                            break;
                        }
                    }
                }
            }
        }));
    }
    let owner_seen = Arc::new(Mutex::new(Vec::new()));
    RECORD.with(|r| *r.borrow_mut() = Some(owner_seen.clone()));
    for id in 0..N {
        let job = Job::new("id", move || record(id));
        if let Err(job) = owner.push(job) {
            owner.take_half(|j| injector.push(j));
            if let Err(job) = owner.push(job) {
                injector.push(job);
            }
        }
        if id % 7 == 0
            && let Some(job) = owner.pop()
        {
            job.run();
            let id = *owner_seen.lock().unwrap().last().unwrap();
            taken[id].fetch_add(1, Ordering::SeqCst);
        }
    }
    while let Some(job) = owner.pop() {
        job.run();
        let id = *owner_seen.lock().unwrap().last().unwrap();
        taken[id].fetch_add(1, Ordering::SeqCst);
    }
    done.store(true, Ordering::SeqCst);
    for t in thieves {
        t.join().unwrap();
    }
    while let Some(job) = injector.pop() {
        job.run();
        let id = *owner_seen.lock().unwrap().last().unwrap();
        taken[id].fetch_add(1, Ordering::SeqCst);
    }
    for (id, t) in taken.iter().enumerate() {
        assert_eq!(
            t.load(Ordering::SeqCst),
            1,
            "item {id} taken {} times",
            t.load(Ordering::SeqCst)
        );
    }
}

thread_local! {
    static RECORD: std::cell::RefCell<Option<Arc<Mutex<Vec<usize>>>>> = const { std::cell::RefCell::new(None) };
}

fn record(id: usize) {
    RECORD.with(|r| r.borrow().as_ref().unwrap().lock().unwrap().push(id));
}

#[test]
fn every_payload_is_dropped_exactly_once_even_when_queued_at_shutdown() {
    for threads in THREAD_COUNTS {
        let created = Arc::new(AtomicUsize::new(0));
        let drops = Arc::new(AtomicUsize::new(0));
        let runs = Arc::new(AtomicUsize::new(0));
        let outer = 10_000;
        {
            let jobs = system(threads);
            for i in 0..outer {
                created.fetch_add(1, Ordering::SeqCst);
                let guard = DropCounter(drops.clone());
                let (runs, created2, drops2) = (runs.clone(), created.clone(), drops.clone());
                // A weak handle: a strong one inside a queued job would keep the system
                // alive after the user drops it.
                let weak = jobs.downgrade();
                jobs.spawn(move || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    let _g = guard;
                    if i % 2 == 0
                        && let Some(j) = weak.upgrade()
                    {
                        // Spawned from inside a job: lands in a worker's deque.
                        created2.fetch_add(1, Ordering::SeqCst);
                        let g2 = DropCounter(drops2);
                        j.spawn(move || drop(g2));
                    }
                });
            }
            // Dropped at once: queued jobs must still be run (and so dropped). If a job
            // holds an upgraded handle at this instant, the shutdown completes on the
            // worker that drops it last, a moment later: give it that moment.
        }
        let t = std::time::Instant::now();
        while drops.load(Ordering::SeqCst) != created.load(Ordering::SeqCst)
            && t.elapsed() < Duration::from_secs(5)
        {
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            drops.load(Ordering::SeqCst),
            created.load(Ordering::SeqCst),
            "every payload dropped exactly once (threads {threads})"
        );
        assert_eq!(
            runs.load(Ordering::SeqCst),
            outer,
            "all queued jobs ran (threads {threads})"
        );
    }
}

#[test]
fn jobs_left_in_a_raw_deque_or_injector_are_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let (w, _s) = deque::new();
        let inj = Injector::new();
        for _ in 0..DEQUE_CAPACITY {
            let g = DropCounter(drops.clone());
            w.push(Job::new("g", move || drop(g))).unwrap();
        }
        for _ in 0..100 {
            let g = DropCounter(drops.clone());
            inj.push(Job::new("g", move || drop(g)));
        }
        let g = DropCounter(drops.clone());
        let big = [0u64; 32];
        w.pop().unwrap().run();
        w.push(Job::new("big", move || drop((g, big)))).unwrap();
    }
    assert_eq!(drops.load(Ordering::SeqCst), DEQUE_CAPACITY + 100 + 1);
}

#[test]
fn a_million_spawned_jobs_are_all_counted() {
    for threads in [0, 1, 7] {
        let jobs = system(threads);
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Counter::new();
        for _ in 0..1_000_000 {
            let h = hits.clone();
            jobs.spawn_counted(&counter, move || {
                h.fetch_add(1, Ordering::Relaxed);
            });
        }
        jobs.wait(&counter);
        assert_eq!(hits.load(Ordering::Relaxed), 1_000_000, "threads {threads}");
        assert!(counter.is_done());
    }
}

#[test]
fn parallel_for_covers_every_index_exactly_once() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        for (len, min_chunk) in [
            (0, 1),
            (1, 1),
            (5, 100),
            (1000, 1),
            (1000, 7),
            (100_003, 64),
            (64, 64),
        ] {
            let hits: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            let start = 17;
            jobs.parallel_for(start..start + len, min_chunk, |r| {
                assert!(r.start >= start && r.end <= start + len && !r.is_empty());
                assert!(r.len() >= min_chunk.min(len) || r.end == start + len);
                for i in r {
                    hits[i - start].fetch_add(1, Ordering::Relaxed);
                }
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "threads {threads} len {len} min_chunk {min_chunk}"
            );
        }
    }
}

#[test]
fn nested_parallel_for_inside_scoped_jobs_inside_parallel_for() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        let total = AtomicUsize::new(0);
        jobs.parallel_for(0..8, 1, |outer| {
            for _ in outer {
                jobs.scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|_| {
                            jobs.parallel_for(0..1000, 10, |r| {
                                total.fetch_add(r.len(), Ordering::Relaxed);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(
            total.load(Ordering::Relaxed),
            8 * 4 * 1000,
            "threads {threads}"
        );
    }
}

#[test]
fn parallel_for_async_completes_exactly_once_after_all_chunks() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        for len in [0usize, 1, 10, 10_000] {
            let chunks_done = Arc::new(AtomicUsize::new(0));
            let completions = Arc::new(AtomicUsize::new(0));
            let seen_at_completion = Arc::new(AtomicUsize::new(usize::MAX));
            let (cd, c, s) = (
                chunks_done.clone(),
                completions.clone(),
                seen_at_completion.clone(),
            );
            let cd2 = chunks_done.clone();
            let handle = jobs.parallel_for_async(
                0..len,
                16,
                move |r| {
                    cd.fetch_add(r.len(), Ordering::SeqCst);
                },
                move || {
                    s.store(cd2.load(Ordering::SeqCst), Ordering::SeqCst);
                    c.fetch_add(1, Ordering::SeqCst);
                },
            );
            jobs.wait(&handle);
            assert_eq!(
                completions.load(Ordering::SeqCst),
                1,
                "threads {threads} len {len}"
            );
            assert_eq!(
                seen_at_completion.load(Ordering::SeqCst),
                len,
                "completion sees every chunk"
            );
            assert_eq!(chunks_done.load(Ordering::SeqCst), len);
        }
    }
}

#[test]
fn parallel_for_async_with_no_workers_runs_on_wait_or_run_pending() {
    let jobs = system(0);
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let handle = jobs.parallel_for_async(
        0..100,
        10,
        |_| {},
        move || {
            d.fetch_add(1, Ordering::SeqCst);
        },
    );
    assert!(
        !handle.is_done(),
        "nothing runs until the only thread helps"
    );
    while jobs.run_pending() > 0 {}
    assert!(handle.is_done());
    assert_eq!(done.load(Ordering::SeqCst), 1);
}

fn quicksort(jobs: &JobSystem, v: &mut [u32]) {
    if v.len() <= 32 {
        v.sort_unstable();
        return;
    }
    let pivot = v[v.len() / 2];
    let mut lo = 0;
    let mut hi = v.len() - 1;
    loop {
        while v[lo] < pivot {
            lo += 1;
        }
        while v[hi] > pivot {
            hi -= 1;
        }
        if lo >= hi {
            break;
        }
        v.swap(lo, hi);
        lo += 1;
        hi -= 1;
    }
    let (left, right) = v.split_at_mut(hi + 1);
    jobs.join(|| quicksort(jobs, left), || quicksort(jobs, right));
}

#[test]
fn quicksort_with_join_equals_sort() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        let mut state = 0x1234_5678_9abc_def0u64 ^ threads as u64;
        let mut v: Vec<u32> = (0..100_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u32
            })
            .collect();
        let mut expected = v.clone();
        expected.sort();
        quicksort(&jobs, &mut v);
        assert_eq!(v, expected, "threads {threads}");
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn a_panic_in_either_side_of_a_join_reaches_the_caller_and_workers_survive() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        for side in 0..2 {
            let other_ran = AtomicBool::new(false);
            let r = catch_unwind(AssertUnwindSafe(|| {
                jobs.join(
                    || {
                        if side == 0 {
                            panic!("left side");
                        }
                        other_ran.store(true, Ordering::SeqCst);
                    },
                    || {
                        if side == 1 {
                            panic!("right side");
                        }
                        other_ran.store(true, Ordering::SeqCst);
                    },
                )
            }));
            let msg = panic_message(r.expect_err("the panic must reach the caller"));
            assert_eq!(msg, if side == 0 { "left side" } else { "right side" });
            assert!(other_ran.load(Ordering::SeqCst), "the other side still ran");
        }
        // The system still runs jobs on every thread afterwards.
        let n = AtomicUsize::new(0);
        jobs.parallel_for(0..10_000, 1, |r| {
            n.fetch_add(r.len(), Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 10_000);
    }
}

#[test]
fn panics_reach_scope_counter_parallel_for_and_async_handle() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        let r = catch_unwind(AssertUnwindSafe(|| {
            jobs.scope(|s| {
                s.spawn(|_| panic!("scoped"));
                s.spawn(|_| {});
            })
        }));
        assert_eq!(panic_message(r.unwrap_err()), "scoped");

        let counter = Counter::new();
        jobs.spawn_counted(&counter, || panic!("counted"));
        jobs.spawn_counted(&counter, || {});
        let r = catch_unwind(AssertUnwindSafe(|| jobs.wait(&counter)));
        assert_eq!(panic_message(r.unwrap_err()), "counted");

        let r = catch_unwind(AssertUnwindSafe(|| {
            jobs.parallel_for(0..100, 1, |r| {
                if r.contains(&42) {
                    panic!("chunk");
                }
            })
        }));
        assert_eq!(panic_message(r.unwrap_err()), "chunk");

        let completed = Arc::new(AtomicBool::new(false));
        let c = completed.clone();
        let h = jobs.parallel_for_async(
            0..100,
            1,
            |r| {
                if r.contains(&7) {
                    panic!("async chunk");
                }
            },
            move || c.store(true, Ordering::SeqCst),
        );
        let r = catch_unwind(AssertUnwindSafe(|| jobs.wait(&h)));
        assert_eq!(panic_message(r.unwrap_err()), "async chunk");
        assert!(completed.load(Ordering::SeqCst), "the completion still ran");

        let before = jobs.unobserved_panics();
        jobs.spawn(|| panic!("nobody waits"));
        let counter = Counter::new();
        jobs.spawn_counted(&counter, || {});
        jobs.wait(&counter);
        while jobs.unobserved_panics() == before {
            jobs.run_pending();
            thread::yield_now();
        }
        assert_eq!(jobs.unobserved_panics(), before + 1);
    }
}

#[test]
fn builder_validates_and_threads_zero_stays_on_the_caller() {
    assert!(matches!(
        JobSystem::builder().threads(MAX_THREADS + 1).build(),
        Err(BuildError::TooManyThreads { requested }) if requested == MAX_THREADS + 1
    ));
    assert!(matches!(
        JobSystem::builder().threads(1).stack_size(0).build(),
        Err(BuildError::ZeroStackSize)
    ));

    let jobs = system(0);
    let me = thread::current().id();
    let ids = Mutex::new(HashSet::new());
    jobs.parallel_for(0..1000, 1, |_| {
        ids.lock().unwrap().insert(thread::current().id());
    });
    jobs.scope(|s| {
        for _ in 0..100 {
            s.spawn(|_| {
                ids.lock().unwrap().insert(thread::current().id());
            });
        }
    });
    let ids = ids.into_inner().unwrap();
    assert_eq!(ids.len(), 1);
    assert!(ids.contains(&me));
}

#[test]
fn names_hooks_and_shutdown_join_every_worker() {
    let started = Arc::new(AtomicUsize::new(0));
    let exited = Arc::new(AtomicUsize::new(0));
    let (s, e) = (started.clone(), exited.clone());
    let jobs = JobSystem::builder()
        .threads(4)
        .thread_name(|i| format!("test-worker-{i}"))
        .stack_size(256 * 1024)
        .on_thread_start(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_exit(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let names = Mutex::new(HashSet::new());
    jobs.scope(|s| {
        for _ in 0..200 {
            s.spawn(|_| {
                thread::sleep(Duration::from_micros(50));
                if let Some(n) = thread::current().name() {
                    names.lock().unwrap().insert(n.to_string());
                }
            });
        }
    });
    let names = names.into_inner().unwrap();
    assert!(
        names.iter().any(|n| n.starts_with("test-worker-")),
        "{names:?}"
    );
    assert_eq!(jobs.thread_names()[2], "test-worker-2");
    let clone = jobs.clone();
    drop(jobs);
    assert_eq!(
        exited.load(Ordering::SeqCst),
        0,
        "a clone keeps the system alive"
    );
    drop(clone);
    assert_eq!(started.load(Ordering::SeqCst), 4);
    assert_eq!(
        exited.load(Ordering::SeqCst),
        4,
        "dropping the last handle joins every worker"
    );
}

#[test]
fn spawn_on_runs_only_on_the_target_thread() {
    let jobs = system(3);
    let main = jobs.register_current_thread();
    let main_id = thread::current().id();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let counter = Counter::new();
    for _ in 0..50 {
        let (j, r) = (jobs.clone(), ran_on.clone());
        jobs.spawn_counted(&counter, move || {
            let r2 = r.clone();
            j.spawn_on(main, move || {
                r2.lock().unwrap().push(thread::current().id())
            })
            .unwrap();
        });
    }
    jobs.wait(&counter);
    while ran_on.lock().unwrap().len() < 50 {
        jobs.run_pending();
    }
    assert!(ran_on.lock().unwrap().iter().all(|&id| id == main_id));

    // A job on a worker that only the main thread's inbox can complete: waiting must run
    // the inbox, not deadlock.
    let gate = Counter::with_count(1);
    let g = gate.clone();
    let j = jobs.clone();
    jobs.spawn(move || {
        j.spawn_on(main, move || g.done()).unwrap();
    });
    jobs.wait(&gate);

    // A worker's token targets that worker.
    let w1 = jobs.worker_token(1).unwrap();
    let name = Arc::new(Mutex::new(String::new()));
    let n = name.clone();
    let done = Counter::with_count(1);
    let d = done.clone();
    jobs.spawn_on(w1, move || {
        *n.lock().unwrap() = thread::current().name().unwrap_or("").to_string();
        d.done();
    })
    .unwrap();
    jobs.wait(&done);
    assert_eq!(*name.lock().unwrap(), jobs.thread_names()[1]);

    // A token from another system is refused, and the job comes back unrun.
    let other = system(1);
    let foreign = other.worker_token(0).unwrap();
    let err = jobs
        .spawn_on(foreign, || panic!("must not run"))
        .unwrap_err();
    drop(err.job);
}

#[test]
fn no_wake_up_is_lost_when_workers_go_idle_between_rounds() {
    let jobs = system(3);
    for round in 0..10_000u32 {
        let c = Counter::new();
        jobs.spawn_counted(&c, move || {
            std::hint::black_box(round);
        });
        jobs.wait(&c);
    }
    // Fire-and-forget from outside while the pool sleeps: a worker must wake for it.
    for _ in 0..200 {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        thread::sleep(Duration::from_micros(200));
        jobs.spawn(move || f.store(true, Ordering::SeqCst));
        let t = std::time::Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "a spawned job was never picked up"
            );
            thread::yield_now();
        }
    }
}

#[test]
fn tracing_records_one_event_per_job_when_on_and_none_when_off() {
    let jobs = system(2);
    jobs.scope(|s| {
        for _ in 0..10 {
            s.spawn(|_| {});
        }
    });
    assert!(jobs.take_trace().is_empty(), "tracing is off by default");
    jobs.set_tracing(true);
    let c = Counter::new();
    for _ in 0..100 {
        jobs.spawn_job(Job::new("traced", || {}));
    }
    for _ in 0..5 {
        jobs.spawn_counted(&c, || {});
    }
    jobs.wait(&c);
    // Fire-and-forget jobs may still be finishing: wait until all 105 are recorded.
    let mut events = Vec::new();
    let t = std::time::Instant::now();
    let jobs_seen = |events: &Vec<joule_jobs::TraceEvent>| {
        events.iter().filter(|e| e.label != WAIT_LABEL).count()
    };
    while jobs_seen(&events) < 105 && t.elapsed() < Duration::from_secs(10) {
        events.extend(jobs.take_trace());
        jobs.run_pending();
    }
    jobs.set_tracing(false);
    assert_eq!(events.iter().filter(|e| e.label == "traced").count(), 100);
    assert_eq!(events.iter().filter(|e| e.label == "counted").count(), 5);
    let names = jobs.thread_names();
    for e in &events {
        assert!(e.start_ns <= e.end_ns);
        assert!(e.thread < names.len());
    }
}

#[test]
fn a_waiter_with_nothing_to_run_records_a_wait_span_and_none_when_tracing_is_off() {
    let jobs = system(1);
    let worker = jobs.worker_token(0).expect("one worker");
    for tracing in [false, true] {
        jobs.set_tracing(tracing);
        let _ = jobs.take_trace();
        // The job sits in worker 0's inbox, which no other thread may take from, and
        // holds the counter until the waiter has started waiting: the waiter can only
        // wait.
        let c = Counter::new();
        c.add(1);
        let (go, started) = std::sync::mpsc::channel::<()>();
        let done = c.clone();
        jobs.spawn_on(worker, move || {
            started.recv().unwrap();
            std::thread::sleep(Duration::from_millis(5));
            done.done();
        })
        .unwrap();
        let me = jobs.current_thread_index();
        let before = jobs.now_ns();
        go.send(()).unwrap();
        jobs.wait(&c);
        let after = jobs.now_ns();
        let events = jobs.take_trace();
        let waits: Vec<_> = events.iter().filter(|e| e.label == WAIT_LABEL).collect();
        if !tracing {
            assert!(events.is_empty(), "tracing off records nothing: {events:?}");
            continue;
        }
        assert!(
            !waits.is_empty(),
            "the waiter's wait is recorded: {events:?}"
        );
        for w in &waits {
            assert_eq!(w.thread, me, "only the waiting thread waited");
            assert!(before <= w.start_ns && w.start_ns <= w.end_ns && w.end_ns <= after);
        }
    }
    jobs.set_tracing(false);
}

#[test]
fn parallel_for_slice_hands_out_each_chunk_once() {
    for threads in THREAD_COUNTS {
        let jobs = system(threads);
        for (len, min_chunk) in [(0usize, 1usize), (1, 1), (1000, 7), (100_003, 64)] {
            let mut v = vec![0u32; len];
            jobs.parallel_for_slice(&mut v, min_chunk, |offset, chunk| {
                for (k, x) in chunk.iter_mut().enumerate() {
                    *x += (offset + k) as u32 + 1;
                }
            });
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == i as u32 + 1),
                "threads {threads} len {len}"
            );
        }
    }
}

/// A scope counts the spawns of its owner thread apart while its body runs (no atomic
/// read-modify-write per spawn) and every other spawn in its shared counter, so the count
/// must stay right however spawns mix: the owner's in the body, in nested scopes and
/// joins inside the body, and in jobs it runs while it waits after the body; the
/// workers' from the jobs they run. Every job runs exactly once, and the scope returns
/// only when all have (checked by the counts read right after it returns). Oversubscribed:
/// 4 workers and the caller on 2 cores.
#[test]
fn a_scope_waits_for_every_job_whoever_spawns_it() {
    let jobs = JobSystem::new(4).unwrap();
    for round in 0..20 {
        let ran = AtomicUsize::new(0);
        let expected = AtomicUsize::new(0);
        jobs.scope(|s| {
            for i in 0..2_000usize {
                expected.fetch_add(1, Ordering::Relaxed);
                let (ran, expected) = (&ran, &expected);
                s.spawn(move |s| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    if i.is_multiple_of(7) {
                        // From whichever thread runs this: a worker, or the owner while
                        // it waits after the body.
                        expected.fetch_add(1, Ordering::Relaxed);
                        s.spawn(move |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                if i.is_multiple_of(500) {
                    // The owner inside nested waits of its body.
                    jobs.scope(|inner| {
                        inner.spawn(|_| {
                            expected.fetch_add(1, Ordering::Relaxed);
                            s.spawn(|_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        });
                    });
                    jobs.join(|| (), || ());
                }
            }
        });
        let (ran, expected) = (ran.into_inner(), expected.into_inner());
        assert_eq!(
            ran, expected,
            "round {round}: jobs run when the scope returned"
        );
    }
}
