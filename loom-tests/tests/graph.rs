//! loom models of joule-graph's run counters (`graph/src/counts.rs`, the code `run.rs`
//! calls): a task with two predecessors starts exactly once and after both; a dynamic
//! task's children (and grandchildren) all finish before its successor starts; a
//! parallel-for's chunks are each claimed once and completed once; the last job of a run
//! is seen exactly once.
//!
//! Under `--cfg loom` the counters take their atomics from loom. Each model plays the
//! threads of a run with loom threads (a queued job becomes a spawned thread, whose spawn
//! publishes what the queue push would) and checks what the successor observes with
//! *relaxed* loads of loom atomics: if a counter's ordering were too weak, loom would find
//! an interleaving where the successor reads a stale value and the model fails.
#![cfg(loom)]

use joule_graph::counts::{ChunkRange, DepCounts, JobCount, WorkUnits};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use loom_tests::{Seen, model};

/// Tasks 0 and 1 both precede task 2. Each predecessor writes its result, then releases
/// its successors as `RunState::complete` does. Task 2 must start exactly once and see
/// both results.
#[test]
fn a_task_with_two_predecessors_runs_once_after_both() {
    static SECOND_STARTS: Seen = Seen::new();
    static FIRST_STARTS: Seen = Seen::new();
    model("a_task_with_two_predecessors_runs_once_after_both", || {
        let deps = Arc::new(DepCounts::new(3));
        deps.reset(&[0, 0, 2]);
        let results = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let starts = Arc::new(AtomicUsize::new(0));
        let finish = {
            let (deps, results, starts) = (deps.clone(), results.clone(), starts.clone());
            move |me: usize| {
                results[me].store(10 + me, Ordering::Relaxed);
                deps.release_successors(&[2], |s| {
                    assert_eq!(s, 2);
                    // The successor's body: both predecessors' results are visible.
                    assert_eq!(results[0].load(Ordering::Relaxed), 10);
                    assert_eq!(results[1].load(Ordering::Relaxed), 11);
                    starts.fetch_add(1, Ordering::Relaxed);
                    if me == 0 {
                        FIRST_STARTS.mark();
                    } else {
                        SECOND_STARTS.mark();
                    }
                });
            }
        };
        let other = finish.clone();
        let t = thread::spawn(move || other(0));
        finish(1);
        t.join().unwrap();
        assert_eq!(starts.load(Ordering::Relaxed), 1, "started exactly once");
        assert_eq!(deps.get(2), 0);
    });
    FIRST_STARTS.assert_seen("predecessor 0 finishing last and starting the successor");
    SECOND_STARTS.assert_seen("predecessor 1 finishing last and starting the successor");
}

/// Dynamic task 0 (slot 0) precedes task 1. Its body spawns two children; the first child
/// spawns a grandchild. Every unit finishes with `WorkUnits::finish`; whoever finishes the
/// last one completes the task and releases task 1, which must start once and see every
/// child's and the grandchild's work.
#[test]
fn a_dynamic_tasks_children_finish_before_its_successor_starts() {
    static CHILD_COMPLETES: Seen = Seen::new();
    static BODY_COMPLETES: Seen = Seen::new();
    model(
        "a_dynamic_tasks_children_finish_before_its_successor_starts",
        || {
            let deps = Arc::new(DepCounts::new(2));
            deps.reset(&[0, 1]);
            let units = Arc::new(WorkUnits::new(1));
            // Work of child 0, child 1, the grandchild.
            let work = Arc::new([
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
            ]);
            let successor_starts = Arc::new(AtomicUsize::new(0));

            // Finishing a unit; the last one completes task 0 (`RunState::complete`).
            let finish_unit = {
                let (deps, units, work, starts) = (
                    deps.clone(),
                    units.clone(),
                    work.clone(),
                    successor_starts.clone(),
                );
                move |who: &str| {
                    if units.finish(0) {
                        if who == "body" {
                            BODY_COMPLETES.mark();
                        } else {
                            CHILD_COMPLETES.mark();
                        }
                        deps.release_successors(&[1], |_| {
                            for w in work.iter() {
                                assert_eq!(w.load(Ordering::Relaxed), 1, "a child is unfinished");
                            }
                            starts.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                }
            };

            // The body starts with one unit (itself), as `RunState::start` does.
            units.start(0, 1);
            let mut threads = Vec::new();
            // Child 1: plain.
            units.add(0);
            {
                let (work, finish_unit) = (work.clone(), finish_unit.clone());
                threads.push(thread::spawn(move || {
                    work[1].store(1, Ordering::Relaxed);
                    finish_unit("child");
                }));
            }
            // Child 0: spawns the grandchild, then works.
            units.add(0);
            {
                let (work, units, finish_unit) = (work.clone(), units.clone(), finish_unit.clone());
                threads.push(thread::spawn(move || {
                    units.add(0);
                    let grandchild = {
                        let (work, finish_unit) = (work.clone(), finish_unit.clone());
                        thread::spawn(move || {
                            work[2].store(1, Ordering::Relaxed);
                            finish_unit("grandchild");
                        })
                    };
                    work[0].store(1, Ordering::Relaxed);
                    finish_unit("child");
                    grandchild.join().unwrap();
                }));
            }
            finish_unit("body");
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(successor_starts.load(Ordering::Relaxed), 1);
        },
    );
    CHILD_COMPLETES.assert_seen("a child finishing the task's last unit");
    BODY_COMPLETES.assert_seen("the body finishing the task's last unit");
}

/// A parallel-for over 0..5 in chunks of 2 with two participants (the starting thread and
/// one helper): each chunk is claimed exactly once, exactly one participant completes the
/// task, and it sees every index written.
#[test]
fn parallel_for_chunks_are_claimed_once_and_completed_once() {
    static HELPER_COMPLETES: Seen = Seen::new();
    model(
        "parallel_for_chunks_are_claimed_once_and_completed_once",
        || {
            let range = Arc::new(ChunkRange::new());
            let units = Arc::new(WorkUnits::new(1));
            let chunks = range.set(0..5, 2);
            assert_eq!(chunks, 3);
            units.start(0, chunks);
            let written = Arc::new([
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
            ]);
            let completions = Arc::new(AtomicUsize::new(0));
            // `RunState::run_chunks`: claim until none are left; true if we finished the last.
            let participate = {
                let (range, units, written, completions) = (
                    range.clone(),
                    units.clone(),
                    written.clone(),
                    completions.clone(),
                );
                move || -> bool {
                    while let Some(r) = range.claim() {
                        for i in r {
                            written[i].fetch_add(1, Ordering::Relaxed);
                        }
                        if units.finish(0) {
                            for w in written.iter() {
                                assert_eq!(w.load(Ordering::Relaxed), 1);
                            }
                            completions.fetch_add(1, Ordering::Relaxed);
                            return true;
                        }
                    }
                    false
                }
            };
            let helper = {
                let participate = participate.clone();
                thread::spawn(move || {
                    if participate() {
                        HELPER_COMPLETES.mark();
                    }
                })
            };
            participate();
            helper.join().unwrap();
            assert_eq!(completions.load(Ordering::Relaxed), 1);
            assert!(range.claim().is_none());
        },
    );
    HELPER_COMPLETES.assert_seen("the helper finishing the last chunk");
}

/// Three jobs of a run finish at once: exactly one learns it is last, and it sees what
/// every job did (what the caller then reads back).
#[test]
fn exactly_one_job_ends_the_run() {
    model("exactly_one_job_ends_the_run", || {
        let count = Arc::new(JobCount::new());
        count.start(3);
        let effects = Arc::new(AtomicUsize::new(0));
        let ends = Arc::new(AtomicUsize::new(0));
        let job = {
            let (count, effects, ends) = (count.clone(), effects.clone(), ends.clone());
            move || {
                effects.fetch_add(1, Ordering::Relaxed);
                if count.finish() {
                    assert_eq!(effects.load(Ordering::Relaxed), 3);
                    ends.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        let a = thread::spawn(job.clone());
        let b = thread::spawn(job.clone());
        job();
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(ends.load(Ordering::Relaxed), 1);
    });
}
