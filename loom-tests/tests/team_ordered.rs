//! loom models of the team's ordered stages (`jobs/src/team_core.rs`, `StageOrder`): a
//! leader and a helper both claim the items of an ordered stage from the front, and an
//! item runs only after the items it depends on have finished.
//!
//! What they check: each item of each run of the stage runs exactly once; an item sees
//! what its dependencies wrote (the data lives in loom's `UnsafeCell`s, so an item that
//! ran beside a dependency, or read its write without a happens-before edge, is reported
//! as a data race, and stale Relaxed values show as wrong sums); an item with no
//! dependency on another may run beside it; a second run of the same order (a new epoch)
//! waits again instead of reading the first run's marks; and the leader sees every item's
//! write when `run_ordered` returns.
#![cfg(loom)]

use joule_jobs::StageOrder;
use joule_jobs::team_core::{Claim, TeamCore};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use loom_tests::model;

/// A helper's loop, as `team.rs` runs it (without the job system around it).
fn help(core: &TeamCore) {
    if let Some(id) = core.join() {
        while core.is_open(id) {
            if core.work_one() == Claim::Empty {
                thread::yield_now();
            }
        }
        core.leave();
    }
}

/// Three cells written by a chain of items: item 0 writes cell 0, item 1 (independent)
/// writes cell 1, item 2 (after 0 and 1) adds both into cell 2.
struct Cells([UnsafeCell<usize>; 3]);

// SAFETY: the cells are only touched by the stage's items, whose order is what the model
// checks: loom reports any access to a cell that is not ordered after the last write.
unsafe impl Sync for Cells {}

fn chain_item(cells: &Cells, i: usize, run: usize) {
    match i {
        0 | 1 => cells.0[i].with_mut(|p| {
            // SAFETY: only item `i` writes cell `i`, and item 2 reads it only after item
            // `i` finished (its dependency); loom checks that ordering.
            unsafe { *p += (i + 1) * run }
        }),
        _ => {
            let a = cells.0[0].with(|p| {
                // SAFETY: item 0 finished before this item started (a dependency).
                unsafe { *p }
            });
            let b = cells.0[1].with(|p| {
                // SAFETY: item 1 finished before this item started (a dependency).
                unsafe { *p }
            });
            cells.0[2].with_mut(|p| {
                // SAFETY: only item 2 writes cell 2.
                unsafe { *p = a + 10 * b }
            });
        }
    }
}

#[test]
fn an_ordered_stage_runs_each_item_once_after_its_dependencies_twice_over() {
    model("team_ordered_chain", || {
        let core = Arc::new(TeamCore::new());
        let cells = Arc::new(Cells([
            UnsafeCell::new(0),
            UnsafeCell::new(0),
            UnsafeCell::new(0),
        ]));
        let mut order = StageOrder::new();
        assert_eq!(order.push(&[]), 0);
        assert_eq!(order.push(&[]), 1);
        assert_eq!(order.push(&[0, 1]), 2);
        let id = core.open();
        let helper = {
            let core = core.clone();
            thread::spawn(move || help(&core))
        };
        for run in 1..=2 {
            core.run_ordered(&mut order, &|i| chain_item(&cells, i, run));
            // After the run the leader reads every cell (the run's Acquire on `done`).
            let sum = |k: usize| {
                cells.0[k].with(|p| {
                    // SAFETY: the stage is over; nobody writes the cells now.
                    unsafe { *p }
                })
            };
            // Runs 1 and 2 have added 1 and 2 (item 0) and 2 and 4 (item 1) so far.
            let (a, b) = ((1..=run).sum::<usize>(), 2 * (1..=run).sum::<usize>());
            assert_eq!((sum(0), sum(1)), (a, b), "items 0 and 1 ran once a run");
            assert_eq!(sum(2), a + 10 * b, "item 2 saw both dependencies' writes");
        }
        core.close(id);
        helper.join().unwrap();
    });
}

/// A helper that sleeps as soon as it finds no item (`team.rs` spins and yields first),
/// so that every interleaving of its re-check with the leader's publication and close is
/// explored: a lost wake-up would leave it asleep, and the leader's `close` (which waits
/// for it to leave) would never return, which loom reports as a deadlock.
fn sleepy_help(core: &TeamCore) {
    if let Some(id) = core.join() {
        while core.is_open(id) {
            if core.work_one() == Claim::Empty {
                core.sleep(id);
            }
        }
        core.leave();
    }
}

#[test]
fn a_sleeping_helper_is_woken_by_the_next_stage_and_by_the_close() {
    model("team_sleep", || {
        let core = Arc::new(TeamCore::new());
        let cells = Arc::new(Cells([
            UnsafeCell::new(0),
            UnsafeCell::new(0),
            UnsafeCell::new(0),
        ]));
        let id = core.open();
        let helper = {
            let core = core.clone();
            thread::spawn(move || sleepy_help(&core))
        };
        // Two stages of two items, so the helper may sleep between them and be woken.
        for _ in 0..2 {
            core.run(2, &|i| {
                cells.0[i].with_mut(|p| {
                    // SAFETY: item `i` alone writes cell `i` in a stage, and stages are
                    // ordered by `run` (loom checks it).
                    unsafe { *p += 1 }
                });
            });
        }
        core.close(id);
        helper.join().unwrap();
        for i in 0..2 {
            let v = cells.0[i].with(|p| {
                // SAFETY: the team is closed and the helper joined.
                unsafe { *p }
            });
            assert_eq!(v, 2, "item {i} ran once a stage");
        }
    });
}
