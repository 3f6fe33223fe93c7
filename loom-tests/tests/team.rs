//! loom models of the team protocol (`jobs/src/team_core.rs`): a leader running stages
//! while a helper claims items, and helpers joining while the leader closes and reopens.
//!
//! The leader claims items from the front of a stage and helpers from the back, so a
//! two-item stage has them race for the same word from both ends.
//!
//! What they check: each item of each stage runs exactly once; what an item wrote (on
//! either thread, with Relaxed stores) is visible to the leader when `run` returns and to
//! the items of the next stage (loom returns stale values for Relaxed loads that nothing
//! orders, so a missing Acquire/Release shows as a wrong value); the stage function's
//! cell is never read and written at once (loom tracks every access to it); and `close`
//! returns only when no helper is inside.
#![cfg(loom)]

use joule_jobs::team_core::{Claim, TeamCore};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
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

#[test]
fn two_stages_run_each_item_once_and_publish_their_writes() {
    model("team_two_stages", || {
        let core = Arc::new(TeamCore::new());
        let out: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
        let id = core.open();
        let helper = {
            let core = core.clone();
            thread::spawn(move || help(&core))
        };
        core.run(2, &|i| {
            out[i].fetch_add(1 + i, Ordering::Relaxed);
        });
        // Relaxed loads: only `run`'s ordering makes the helper's stores visible here.
        for i in 0..2 {
            assert_eq!(out[i].load(Ordering::Relaxed), 1 + i, "stage 1 item {i}");
        }
        // Stage 2 reads stage 1's results, perhaps on the other thread.
        core.run(2, &|i| {
            let before = out[1 - i].load(Ordering::Relaxed);
            out[2 + i].fetch_add(before * 10, Ordering::Relaxed);
        });
        assert_eq!(
            out[2].load(Ordering::Relaxed),
            20,
            "stage 2 item 0 saw item 1 of stage 1"
        );
        assert_eq!(
            out[3].load(Ordering::Relaxed),
            10,
            "stage 2 item 1 saw item 0 of stage 1"
        );
        core.close(id);
        helper.join().unwrap();
    });
}

#[test]
fn a_helper_joining_at_the_close_serves_the_next_run_or_nothing() {
    model("team_join_at_close", || {
        let core = Arc::new(TeamCore::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let inside = Arc::new(AtomicUsize::new(0));
        let helper = {
            let core = core.clone();
            thread::spawn(move || help(&core))
        };
        // A first run with no stage, closed at once, then a second run with one stage.
        let first = core.open();
        core.close(first);
        let second = core.open();
        core.run(2, &|_| {
            inside.fetch_add(1, Ordering::Relaxed);
            runs.fetch_add(1, Ordering::Relaxed);
            inside.fetch_sub(1, Ordering::Relaxed);
        });
        core.close(second);
        // After close nobody is inside a stage, and each item ran once.
        assert_eq!(inside.load(Ordering::Relaxed), 0);
        assert_eq!(runs.load(Ordering::Relaxed), 2);
        helper.join().unwrap();
    });
}
