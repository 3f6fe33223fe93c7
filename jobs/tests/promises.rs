//! The promises a game relies on when it uses joule-jobs for its own tasks (issue 12):
//! no job is ever lost or stranded, whoever spawns it and however the system goes away.
//! Each test was written against the code before its fix and failed there. They
//! oversubscribe (more threads than the CI machine's 2 cores) and count: every job ran
//! exactly once, every payload was dropped exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use joule_jobs::JobSystem;

fn system(workers: usize) -> JobSystem {
    JobSystem::builder()
        .threads(workers)
        .build()
        .expect("job system")
}

/// Counts its own drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Marks each index of `range` it is given; afterwards every index of the whole range must
/// have been marked exactly once. Indices are stored relative to `base` so a range that
/// ends at `usize::MAX` fits in a small table.
struct Coverage {
    base: usize,
    hits: Vec<AtomicUsize>,
}

impl Coverage {
    fn new(range: &std::ops::Range<usize>) -> Self {
        Self {
            base: range.start,
            hits: (0..range.len()).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    fn mark(&self, r: std::ops::Range<usize>) {
        assert!(r.start >= self.base, "chunk {r:?} starts before the range");
        for i in r {
            self.hits[i - self.base].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn assert_each_once(&self, what: &str) {
        for (k, h) in self.hits.iter().enumerate() {
            let n = h.load(Ordering::Relaxed);
            assert_eq!(n, 1, "{what}: index base+{k} visited {n} times");
        }
    }
}

// ---- Item 5: every index exactly once, also next to usize::MAX. ----

#[test]
fn parallel_for_near_usize_max_visits_every_index_once() {
    // The last chunk's end used to be computed as `start + chunk`, which wraps past
    // usize::MAX in release builds, so the chunk came out empty and its indices were
    // skipped. Expected: each index of the range exactly once (the definition of the API).
    let ranges = [
        usize::MAX - 1000..usize::MAX,
        usize::MAX - 7..usize::MAX,
        usize::MAX - 999..usize::MAX - 1,
    ];
    for workers in [0, 1, 3] {
        let jobs = system(workers);
        for range in ranges.clone() {
            for min_chunk in [1, 3, 64, 4096] {
                let cov = Coverage::new(&range);
                jobs.parallel_for(range.clone(), min_chunk, |r| cov.mark(r));
                cov.assert_each_once(&format!("parallel_for {range:?} min {min_chunk}"));

                let cov = Arc::new(Coverage::new(&range));
                let c = cov.clone();
                let done =
                    jobs.parallel_for_async(range.clone(), min_chunk, move |r| c.mark(r), || {});
                jobs.wait(&done);
                cov.assert_each_once(&format!("parallel_for_async {range:?} min {min_chunk}"));
            }
        }
    }
}

// ---- Item 1: no job becomes unreachable at threads(0). ----

/// `n` jobs that each count a run and carry a payload that counts its drop.
fn counted_jobs(jobs: &JobSystem, n: usize, ran: &Arc<AtomicUsize>, dropped: &Arc<AtomicUsize>) {
    for _ in 0..n {
        let ran = ran.clone();
        let payload = DropCounter(dropped.clone());
        jobs.spawn(move || {
            let _keep = &payload;
            ran.fetch_add(1, Ordering::SeqCst);
        });
    }
}

#[test]
fn jobs_of_a_registered_thread_that_exits_run_on_the_caller_at_threads_zero() {
    // Before the fix, the jobs past the first DEQUE_CAPACITY (256) went to an overflow only
    // the spawning thread could reach and were dropped unrun when it exited. Expected: all
    // 1,000 jobs run exactly once, on the caller's run_pending, and each payload is dropped
    // exactly once.
    for workers in [0, 1, 3] {
        let jobs = system(workers);
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        {
            let (jobs, ran, dropped) = (jobs.clone(), ran.clone(), dropped.clone());
            std::thread::spawn(move || {
                jobs.run_pending(); // registers this thread (it gets a deque)
                counted_jobs(&jobs, 1000, &ran, &dropped);
            })
            .join()
            .unwrap();
        }
        // Every job is reachable from here: with no workers the caller runs them all.
        for _ in 0..10_000 {
            if ran.load(Ordering::SeqCst) == 1000 {
                break;
            }
            if jobs.run_pending() == 0 {
                std::thread::yield_now();
            }
        }
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1000,
            "workers {workers}: jobs lost"
        );
        drop(jobs);
        assert_eq!(dropped.load(Ordering::SeqCst), 1000, "workers {workers}");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1000,
            "workers {workers}: a job ran twice"
        );
    }
}

#[test]
fn a_counted_wait_on_jobs_of_a_thread_that_unregistered_returns() {
    // The same at threads(0) with a Registration guard: the thread stays alive but ends its
    // registration; its 700 queued jobs (more than a deque holds) move to the shared queue.
    let jobs = system(0);
    let counter = joule_jobs::Counter::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let t = {
        let (jobs, counter, ran) = (jobs.clone(), counter.clone(), ran.clone());
        std::thread::spawn(move || {
            let guard = jobs.register().expect("registers");
            for _ in 0..700 {
                let ran = ran.clone();
                jobs.spawn_counted(&counter, move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            }
            drop(guard);
            rx.recv().unwrap(); // still alive while the caller waits
        })
    };
    while counter.pending() < 700 {
        std::thread::yield_now();
    }
    // Bounded: a lost job would make this return false instead of hanging.
    assert!(jobs.wait_timeout(&counter, std::time::Duration::from_secs(30)));
    assert_eq!(ran.load(Ordering::SeqCst), 700);
    tx.send(()).unwrap();
    t.join().unwrap();
}

// ---- Item 2: jobs for a registered thread are run or dropped, never stranded. ----

#[test]
fn spawn_on_the_dropping_thread_runs_at_drop() {
    // Before the fix, f neither ran nor was dropped. Documented: the thread that drops the
    // last handle runs the jobs sent to it.
    for workers in [0, 2] {
        let jobs = system(workers);
        let main = jobs.register_current_thread();
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        let on_main = Arc::new(Mutex::new(None));
        for _ in 0..5 {
            let (ran, on_main) = (ran.clone(), on_main.clone());
            let payload = DropCounter(dropped.clone());
            jobs.spawn_on(main, move || {
                let _keep = &payload;
                *on_main.lock().unwrap() = Some(std::thread::current().id());
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .expect("main is registered");
        }
        drop(jobs);
        assert_eq!(ran.load(Ordering::SeqCst), 5, "workers {workers}");
        assert_eq!(dropped.load(Ordering::SeqCst), 5, "workers {workers}");
        assert_eq!(
            *on_main.lock().unwrap(),
            Some(std::thread::current().id()),
            "ran on the thread they were sent to"
        );
    }
}

#[test]
fn spawn_on_another_live_thread_is_dropped_unrun_at_shutdown() {
    // Documented: a job sent to another registered thread that has not run it when the
    // system goes away is dropped (its destructor runs), never run elsewhere.
    for workers in [0, 2] {
        let jobs = system(workers);
        let (tx_token, rx_token) = std::sync::mpsc::channel();
        let (tx_go, rx_go) = std::sync::mpsc::channel::<()>();
        let other = {
            let jobs = jobs.clone();
            std::thread::spawn(move || {
                let token = jobs.register_current_thread();
                drop(jobs);
                tx_token.send(token).unwrap();
                rx_go.recv().unwrap();
            })
        };
        let token = rx_token.recv().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        let (r, payload) = (ran.clone(), DropCounter(dropped.clone()));
        jobs.spawn_on(token, move || {
            let _keep = &payload;
            r.fetch_add(1, Ordering::SeqCst);
        })
        .expect("the other thread is registered");
        // The other thread dropped its clone, so this is the last one.
        drop(jobs);
        assert_eq!(ran.load(Ordering::SeqCst), 0, "workers {workers}");
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "workers {workers}");
        tx_go.send(()).unwrap();
        other.join().unwrap();
    }
}

#[test]
fn spawn_on_an_exited_thread_is_a_typed_error_and_hands_the_job_back() {
    // Before the fix this returned Ok and the job never ran.
    let jobs = system(1);
    let token = {
        let jobs = jobs.clone();
        std::thread::spawn(move || jobs.register_current_thread())
            .join()
            .unwrap()
    };
    let dropped = Arc::new(AtomicUsize::new(0));
    let payload = DropCounter(dropped.clone());
    let err = jobs
        .spawn_on(token, move || drop(payload))
        .expect_err("the thread has exited");
    assert_eq!(err.reason, joule_jobs::SpawnOnReason::NotRegistered);
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        0,
        "handed back, not dropped"
    );
    drop(err);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    // A new thread that takes over the freed index gets a token the old one cannot reach.
    let fresh = {
        let j = jobs.clone();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let g = j.register().unwrap();
            let tok = g.token();
            rx.recv().unwrap();
            tok
        });
        let e = jobs.spawn_on(token, || {});
        assert!(
            e.is_err(),
            "a stale token must not reach the index's new owner"
        );
        tx.send(()).unwrap();
        t.join().unwrap()
    };
    assert!(
        jobs.spawn_on(fresh, || {}).is_err(),
        "its guard was dropped"
    );
}

// ---- Item 3: nothing of a dropped system remains. ----

#[test]
fn a_thread_keeps_no_entry_per_dead_system() {
    // Before the fix each system this thread used left an entry (a deque and an inbox,
    // about 35 KB) in a thread-local list for the rest of the thread's life. Expected: no
    // entry once the system is gone, after 2,000 create-use-drop cycles.
    let base = joule_jobs::registrations_on_this_thread();
    for i in 0..2000 {
        let jobs = system(i % 2);
        jobs.scope(|s| s.spawn(|_| {}));
        jobs.wait(&joule_jobs::Counter::new());
        assert_eq!(joule_jobs::registrations_on_this_thread(), base + 1);
        drop(jobs);
        assert_eq!(
            joule_jobs::registrations_on_this_thread(),
            base,
            "cycle {i}"
        );
    }
    // A thread that used systems another thread dropped prunes their entries the next
    // time it registers anywhere.
    let systems: Vec<JobSystem> = (0..20).map(|_| system(0)).collect();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (tx_back, rx_back) = std::sync::mpsc::channel::<usize>();
    let user = {
        let systems = systems.clone();
        std::thread::spawn(move || {
            for s in &systems {
                s.run_pending();
            }
            tx_back
                .send(joule_jobs::registrations_on_this_thread())
                .unwrap();
            drop(systems);
            rx.recv().unwrap();
            let fresh = system(0);
            fresh.run_pending();
            joule_jobs::registrations_on_this_thread()
        })
    };
    assert_eq!(rx_back.recv().unwrap(), 20);
    drop(systems);
    tx.send(()).unwrap();
    assert_eq!(
        user.join().unwrap(),
        1,
        "only the live system's entry is left"
    );
}

#[test]
fn the_registry_keeps_no_slot_for_threads_that_left() {
    // Before the fix the thread table grew by one per thread that ever waited. Expected:
    // it is as long as the most threads registered at one time (workers + 1 here).
    let jobs = system(2);
    for _ in 0..100 {
        let jobs = jobs.clone();
        std::thread::spawn(move || jobs.wait(&joule_jobs::Counter::new()))
            .join()
            .unwrap();
    }
    assert!(
        jobs.thread_names().len() <= jobs.num_workers() + 1,
        "{} slots",
        jobs.thread_names().len()
    );
}

// ---- Item 4: shutdown is defined. ----

#[test]
fn shutdown_runs_every_queued_job_and_joins_every_worker_whoever_holds_clones() {
    for workers in [0, 1, 4] {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = exited.clone();
        let jobs = JobSystem::builder()
            .workers(workers)
            .on_thread_exit(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        // A clone held elsewhere must not change what shutdown does.
        let held = jobs.clone();
        let weak = jobs.downgrade();
        // Jobs that spawn follow-ups through the weak handle, as the docs recommend.
        for _ in 0..300 {
            let (ran, weak) = (ran.clone(), weak.clone());
            let payload = DropCounter(dropped.clone());
            jobs.spawn(move || {
                let _keep = &payload;
                ran.fetch_add(1, Ordering::SeqCst);
                if let Some(j) = weak.upgrade() {
                    let ran = ran.clone();
                    j.spawn(move || {
                        ran.fetch_add(1, Ordering::SeqCst);
                    });
                }
            });
        }
        jobs.shutdown().expect("not on a worker");
        assert_eq!(
            exited.load(Ordering::SeqCst),
            workers,
            "every worker joined"
        );
        assert_eq!(dropped.load(Ordering::SeqCst), 300, "every first job done");
        let n = ran.load(Ordering::SeqCst);
        assert!(
            (300..=600).contains(&n),
            "follow-ups run or never spawned: {n}"
        );
        assert!(
            weak.upgrade().is_none(),
            "no upgrade once shutdown has begun"
        );
        // Still usable: a job spawned now runs when someone waits.
        let c = joule_jobs::Counter::new();
        let r = ran.clone();
        held.spawn_counted(&c, move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        held.wait(&c);
        assert_eq!(ran.load(Ordering::SeqCst), n + 1);
        assert!(jobs.shutdown().is_ok(), "a second call is harmless");
    }
}

#[test]
fn shutdown_from_one_of_its_own_workers_is_a_typed_error() {
    let jobs = system(2);
    let result = Arc::new(Mutex::new(None));
    let c = joule_jobs::Counter::new();
    let (j, r) = (jobs.clone(), result.clone());
    jobs.spawn_counted(&c, move || {
        // Runs on a worker unless the caller's wait took it; retry until a worker did.
        *r.lock().unwrap() = Some((j.current_worker_index().is_some(), j.shutdown()));
    });
    jobs.wait(&c);
    let (on_worker, res) = result.lock().unwrap().take().unwrap();
    if on_worker {
        assert_eq!(res, Err(joule_jobs::ShutdownError::OnOwnWorker));
    } else {
        assert_eq!(res, Ok(()));
    }
    // Deterministically on a worker: a job sent to worker 0's inbox.
    let jobs = system(1);
    let (tx, rx) = std::sync::mpsc::channel();
    let j = jobs.downgrade();
    jobs.spawn_on(jobs.worker_token(0).unwrap(), move || {
        tx.send(j.upgrade().map(|j| j.shutdown())).unwrap();
    })
    .unwrap();
    assert_eq!(
        rx.recv().unwrap(),
        Some(Err(joule_jobs::ShutdownError::OnOwnWorker))
    );
}

// ---- Item 6: registration has a lifetime. ----

#[test]
fn a_registration_guard_unregisters_and_hands_its_inbox_over() {
    let jobs = system(2);
    let ran = Arc::new(AtomicUsize::new(0));
    let guard = jobs.register().expect("first guard");
    assert_eq!(
        jobs.register().unwrap_err(),
        joule_jobs::RegisterError::AlreadyRegistered
    );
    let token = guard.token();
    for _ in 0..10 {
        let ran = ran.clone();
        jobs.spawn_on(token, move || {
            ran.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    drop(guard);
    // Handed over to the shared queue: the workers run them.
    let c = joule_jobs::Counter::new();
    let r = ran.clone();
    jobs.spawn_counted(&c, move || {
        while r.load(Ordering::SeqCst) < 10 {
            std::thread::yield_now();
        }
    });
    assert!(jobs.wait_timeout(&c, std::time::Duration::from_secs(30)));
    assert_eq!(ran.load(Ordering::SeqCst), 10);
    let err = jobs.spawn_on(token, || {}).unwrap_err();
    assert_eq!(err.reason, joule_jobs::SpawnOnReason::NotRegistered);
    // A worker cannot take a guard.
    let (tx, rx) = std::sync::mpsc::channel();
    let j = jobs.downgrade();
    jobs.spawn_on(jobs.worker_token(1).unwrap(), move || {
        tx.send(j.upgrade().map(|j| j.register().map(|_| ())))
            .unwrap();
    })
    .unwrap();
    assert_eq!(
        rx.recv().unwrap(),
        Some(Err(joule_jobs::RegisterError::Worker))
    );
    // A new guard after the old one ended.
    let again = jobs.register().expect("registers again");
    assert_ne!(again.token(), token);
}

// ---- Item 9: priorities, wait_timeout, panic payloads, unambiguous counts. ----

#[test]
fn high_priority_jobs_run_before_normal_ones_queued_earlier() {
    // One worker, fed from inside one of its own jobs so that every job waits in queues
    // until that job returns; then it must take all high ones first.
    let jobs = system(1);
    let order = Arc::new(Mutex::new(Vec::new()));
    let c = joule_jobs::Counter::new();
    let (j, o, c2) = (jobs.downgrade(), order.clone(), c.clone());
    jobs.spawn_on(jobs.worker_token(0).unwrap(), move || {
        let j = j.upgrade().unwrap();
        for i in 0..20 {
            let o = o.clone();
            if i % 2 == 0 {
                j.spawn_counted(&c2, move || o.lock().unwrap().push(('n', i)));
            } else {
                j.spawn_counted_high(&c2, move || o.lock().unwrap().push(('h', i)));
            }
        }
    })
    .unwrap();
    // The calling thread must not help here, or it could take normal jobs: poll only.
    while order.lock().unwrap().len() < 20 {
        std::thread::yield_now();
    }
    let order = order.lock().unwrap().clone();
    let first_normal = order.iter().position(|(k, _)| *k == 'n').unwrap();
    assert!(
        order[first_normal..].iter().all(|(k, _)| *k == 'n'),
        "a high job ran after a normal one: {order:?}"
    );
    let highs: Vec<_> = order
        .iter()
        .filter(|(k, _)| *k == 'h')
        .map(|p| p.1)
        .collect();
    assert_eq!(
        highs,
        (1..20).step_by(2).collect::<Vec<_>>(),
        "FIFO among high"
    );
    let _ = c;
}

#[test]
fn wait_timeout_gives_up_then_succeeds() {
    let jobs = system(1);
    let c = joule_jobs::Counter::new();
    let go = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (g, c2) = (go.clone(), c.clone());
    // On the worker (its inbox), so the waiting caller cannot pick it up and spin in it.
    c.add(1);
    jobs.spawn_on(jobs.worker_token(0).unwrap(), move || {
        while !g.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        c2.done();
    })
    .unwrap();
    // The job cannot finish before `go` is set, so this must time out.
    assert!(!jobs.wait_timeout(&c, std::time::Duration::from_millis(20)));
    go.store(true, Ordering::SeqCst);
    assert!(jobs.wait_timeout(&c, std::time::Duration::from_secs(30)));
}

#[test]
fn panics_of_fire_and_forget_jobs_are_reachable_with_their_payloads() {
    let jobs = system(2);
    for i in 0..3 {
        jobs.spawn(move || panic!("job {i} failed"));
    }
    while jobs.unobserved_panics() < 3 {
        jobs.run_pending();
        std::thread::yield_now();
    }
    let mut msgs: Vec<String> = jobs
        .take_panics()
        .into_iter()
        .map(|p| p.downcast::<String>().map(|s| *s).unwrap_or_default())
        .collect();
    msgs.sort();
    assert_eq!(msgs, ["job 0 failed", "job 1 failed", "job 2 failed"]);
    assert!(jobs.take_panics().is_empty(), "taken once");
    assert_eq!(jobs.unobserved_panics(), 3);
}

#[test]
fn the_builder_says_workers_beside_the_caller_and_total_threads() {
    let a = JobSystem::builder().workers(3).build().unwrap();
    assert_eq!((a.num_workers(), a.num_threads()), (3, 4));
    let b = JobSystem::builder().num_threads(3).build().unwrap();
    assert_eq!((b.num_workers(), b.num_threads()), (2, 3));
    let c = JobSystem::builder().num_threads(1).build().unwrap();
    assert_eq!((c.num_workers(), c.num_threads()), (0, 1));
    assert!(matches!(
        JobSystem::builder().num_threads(0).build(),
        Err(joule_jobs::BuildError::ZeroThreads)
    ));
    assert!(matches!(
        JobSystem::builder().workers(usize::MAX).build(),
        Err(joule_jobs::BuildError::TooManyThreads { .. })
    ));
}

// ---- Item 7: work spreads to idle workers. ----

#[test]
fn a_burst_spawned_by_a_worker_wakes_every_sleeping_worker() {
    // Four workers asleep; a job on worker 0 opens a scope of 8 jobs that each hold their
    // thread until 4 distinct threads are inside one (bounded by a deadline, so a failure
    // is an assertion, not a hang). Before the fix a worker's burst woke one sleeper (for
    // its first push only), so at most 2 threads ever took part and this timed out.
    let jobs = system(4);
    std::thread::sleep(std::time::Duration::from_millis(50)); // let them park
    let (tx, rx) = std::sync::mpsc::channel();
    let j = jobs.downgrade();
    jobs.spawn_on(jobs.worker_token(0).unwrap(), move || {
        let jobs = j.upgrade().unwrap();
        let inside = Mutex::new(std::collections::HashSet::new());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let reached = AtomicUsize::new(0);
        jobs.scope(|s| {
            for _ in 0..8 {
                s.spawn(|_| {
                    inside.lock().unwrap().insert(std::thread::current().id());
                    while inside.lock().unwrap().len() < 4 {
                        if std::time::Instant::now() > deadline {
                            return;
                        }
                        std::thread::yield_now();
                    }
                    reached.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        tx.send(reached.load(Ordering::SeqCst)).unwrap();
    })
    .unwrap();
    assert_eq!(rx.recv().unwrap(), 8, "fewer than 4 threads took part");
}

// ---- Item 8: lazy exposure in join keeps both halves available to thieves. ----

#[test]
fn join_from_an_empty_deque_offers_its_second_half_to_a_worker() {
    // `join` runs `b` inline only when the caller already offers thieves other work; a
    // top-level join from an empty deque must still let a worker run `b` while `a` runs.
    // Each half waits (bounded) until the other has started: they only both finish early
    // if they ran at the same time on two threads.
    let jobs = system(2);
    let started = AtomicUsize::new(0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let meet = || {
        started.fetch_add(1, Ordering::SeqCst);
        while started.load(Ordering::SeqCst) < 2 {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    };
    let (a, b) = jobs.join(meet, meet);
    assert!(
        a && b,
        "the halves of a top-level join did not run side by side"
    );
}

#[test]
fn the_caller_reaches_the_overflow_of_a_thread_that_stays_registered() {
    // threads(0): a registered thread queues 700 counted jobs (more than its deque holds)
    // and then blocks, still registered. The caller's counted wait must reach all of them
    // (before the fix the overflow was private to the blocked thread: a hang).
    let jobs = system(0);
    let counter = joule_jobs::Counter::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (tx_ready, rx_ready) = std::sync::mpsc::channel::<()>();
    let t = {
        let (jobs, counter, ran) = (jobs.clone(), counter.clone(), ran.clone());
        std::thread::spawn(move || {
            jobs.run_pending(); // registers: this thread has a deque
            for _ in 0..700 {
                let ran = ran.clone();
                jobs.spawn_counted(&counter, move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            }
            tx_ready.send(()).unwrap();
            rx.recv().unwrap();
        })
    };
    rx_ready.recv().unwrap();
    assert!(jobs.wait_timeout(&counter, std::time::Duration::from_secs(30)));
    assert_eq!(ran.load(Ordering::SeqCst), 700);
    tx.send(()).unwrap();
    t.join().unwrap();
}

#[test]
fn shutdown_from_a_job_the_shutting_down_thread_runs_is_a_typed_error() {
    // A job holding a strong clone calls shutdown while the caller's shutdown runs it
    // (threads(0): the caller runs every job). It must not wait for the lock its own
    // thread holds.
    let jobs = system(0);
    let result = Arc::new(Mutex::new(None));
    let (j, r) = (jobs.clone(), result.clone());
    jobs.spawn(move || *r.lock().unwrap() = Some(j.shutdown()));
    assert_eq!(jobs.shutdown(), Ok(()));
    assert_eq!(
        *result.lock().unwrap(),
        Some(Err(joule_jobs::ShutdownError::InsideShutdown))
    );
}

#[test]
fn shutdown_under_concurrent_spawners_runs_or_drops_every_job_exactly_once() {
    // Oversubscribed: 4 workers and 4 external threads (2 cores) spawn plain, high and
    // counted jobs, some of which spawn follow-ups through weak handles, while the main
    // thread shuts the system down. Afterwards every payload has been dropped exactly once
    // (a job that ran drops its payload when it returns) and no job ran twice.
    for round in 0..5 {
        let jobs = system(4);
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        let made = Arc::new(AtomicUsize::new(0));
        let spawners: Vec<_> = (0..4)
            .map(|k| {
                let weak = jobs.downgrade();
                let (ran, dropped, made) = (ran.clone(), dropped.clone(), made.clone());
                std::thread::spawn(move || {
                    for i in 0..500 {
                        let Some(j) = weak.upgrade() else { break };
                        let payload = DropCounter(dropped.clone());
                        made.fetch_add(1, Ordering::SeqCst);
                        let (r, w, d, m) =
                            (ran.clone(), weak.clone(), dropped.clone(), made.clone());
                        let job = move || {
                            let _keep = &payload;
                            r.fetch_add(1, Ordering::SeqCst);
                            if let Some(j) = w.upgrade() {
                                let p = DropCounter(d);
                                m.fetch_add(1, Ordering::SeqCst);
                                let r = r.clone();
                                j.spawn(move || {
                                    let _keep = &p;
                                    r.fetch_add(1, Ordering::SeqCst);
                                });
                            }
                        };
                        match (i + k) % 3 {
                            0 => j.spawn(job),
                            1 => j.spawn_high(job),
                            _ => {
                                let c = joule_jobs::Counter::new();
                                j.spawn_counted(&c, job);
                            }
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(round));
        jobs.shutdown().unwrap();
        for s in spawners {
            s.join().unwrap();
        }
        drop(jobs);
        let made = made.load(Ordering::SeqCst);
        assert_eq!(dropped.load(Ordering::SeqCst), made, "round {round}");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            made,
            "round {round}: every job ran once"
        );
    }
}
