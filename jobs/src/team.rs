//! Teams: a leader and helper workers running a long sequence of short parallel stages
//! (a solver's colours and substeps) with one atomic store per stage instead of a job per
//! block and a wake-up per stage. See `team_core.rs` for the protocol.
//!
//! [`JobSystem::team`] spawns up to `helpers` helper jobs (on this thread's own queue,
//! which allocates nothing, where idle workers steal them) and runs the leader closure on the calling thread. Helpers that
//! start join the team; between stages they look for stage items first and otherwise
//! run other queued jobs, so work the leader spawns inside the team (a nested
//! `parallel_for`) still spreads. The leader never depends on a helper: with none, or
//! before any has started, it runs every item itself. When the leader closure returns,
//! the team closes and `team` waits for the helpers inside to leave; a helper job that
//! starts later finds the team closed and ends at once, or joins the team's next run
//! (the next run spawns only the helpers still missing).
//!
//! Helpers serve only from a worker's top level: a helper job that a thread finds while
//! it waits (in `wait`, a scope, a nested loop) or while it helps another team ends at
//! once, because staying would block the wait it interrupted until this team closes,
//! and that wait may be what the leader needs (a deadlock otherwise).
//!
//! Results must not depend on which thread ran an item (each item is claimed once, by
//! index), so a solver built on teams is as deterministic as one built on
//! `parallel_for`.

use std::sync::Arc;

use crate::job::Job;
use crate::parallel_for::ClaimedChunks;
use crate::registry::{Nested, Registry, with_ctx, with_worker};
use crate::sync::Ordering;
use crate::system::JobSystem;
use crate::team_core::{Claim, TeamCore};
use crate::trace::{ITEM_LABEL, TEAM_PHASE_LABEL, TraceEvent, WAIT_LABEL};

/// A team's reusable state: create it once (it allocates) and pass it to
/// [`JobSystem::team`] every frame (which then allocates nothing).
#[derive(Debug, Default)]
pub struct Team {
    core: Arc<TeamCore>,
}

impl Team {
    /// A new, closed team.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

/// What the leader closure of [`JobSystem::team`] gets: runs stages on the team.
#[derive(Debug)]
pub struct TeamScope<'t> {
    core: &'t TeamCore,
    jobs: &'t JobSystem,
}

impl TeamScope<'_> {
    /// Runs `f(i)` for every `i` in `0..n` on the team (this thread included), each
    /// exactly once, and returns when all are done. A panic in `f` is re-raised here once
    /// every item has finished.
    ///
    /// # Panics
    /// When `n` exceeds [`MAX_STAGE_ITEMS`](crate::team_core::MAX_STAGE_ITEMS).
    pub fn run<F: Fn(usize) + Sync>(&self, n: usize, f: F) {
        if n == 1 {
            // One item: nobody could share it, so it is not handed off. Published, a
            // helper could claim it first, and the leader would wait for it (and for its
            // writes to cross cores) instead of running it.
            f(0);
            return;
        }
        if !self.jobs.tracing() {
            self.core.run(n, &f);
            return;
        }
        // Traced: the stage on the leader and each item on the thread that ran it, so a
        // scaling model sees the stage's items and its hand-off.
        let jobs = self.jobs;
        let traced = |i: usize| {
            let t = jobs.now_ns();
            f(i);
            jobs.record_span(ITEM_LABEL, t, jobs.now_ns());
        };
        let stage_start = jobs.now_ns();
        let (start, end) = self.core.run_timed(n, &traced, || jobs.now_ns());
        if end > start {
            record_wait(jobs, start, end);
        }
        jobs.record_span(TEAM_PHASE_LABEL, stage_start, jobs.now_ns());
    }

    /// Runs `f` on every element of `items`, each exactly once, on the team.
    pub fn for_each_mut<T: Send, F: Fn(&mut T) + Sync>(&self, items: &mut [T], f: F) {
        self.for_each_chunk_mut(items, 1, |_, chunk| {
            for x in chunk {
                f(x);
            }
        });
    }

    /// Cuts `items` into chunks of `chunk` elements (the last may be shorter) and runs
    /// `f(k, chunk_k)` for each on the team, each exactly once.
    ///
    /// # Panics
    /// When `chunk` is 0.
    pub fn for_each_chunk_mut<T: Send, F: Fn(usize, &mut [T]) + Sync>(
        &self,
        items: &mut [T],
        chunk: usize,
        f: F,
    ) {
        assert!(chunk > 0, "a chunk holds at least one element");
        let n = items.len().div_ceil(chunk);
        let cut = ClaimedChunks::new(items, chunk);
        self.run(n, |k| {
            // SAFETY: the team runs each index in `0..n` exactly once (team_core's claim
            // protocol, loom-checked), so the chunks handed out never overlap.
            f(k, unsafe { cut.chunk_mut(k) });
        });
    }

    /// [`for_each_chunk_mut`](Self::for_each_chunk_mut) over two slices of equal length
    /// cut at the same places (per-body state and per-body parameters, say).
    ///
    /// # Panics
    /// When `chunk` is 0 or the lengths differ.
    pub fn for_each_chunk_mut2<A: Send, B: Send, F: Fn(usize, &mut [A], &mut [B]) + Sync>(
        &self,
        a: &mut [A],
        b: &mut [B],
        chunk: usize,
        f: F,
    ) {
        assert!(chunk > 0, "a chunk holds at least one element");
        assert_eq!(a.len(), b.len(), "both slices are cut at the same places");
        let n = a.len().div_ceil(chunk);
        let (ca, cb) = (ClaimedChunks::new(a, chunk), ClaimedChunks::new(b, chunk));
        self.run(n, |k| {
            // SAFETY: as in `for_each_chunk_mut`: each index runs once, so no chunk of
            // `a` is handed out twice.
            let a = unsafe { ca.chunk_mut(k) };
            // SAFETY: the same for `b`.
            let b = unsafe { cb.chunk_mut(k) };
            f(k, a, b);
        });
    }

    /// The job system the team runs on.
    #[must_use]
    pub fn jobs(&self) -> &JobSystem {
        self.jobs
    }
}

fn record_wait(jobs: &JobSystem, start: u64, end: u64) {
    jobs.record_span(WAIT_LABEL, start, end);
}

impl JobSystem {
    /// Runs `leader` on this thread with a team of up to `helpers` workers (at most
    /// [`num_workers`](Self::num_workers)) that join as they become free, and returns its
    /// result once every helper has left. Inside, [`TeamScope::run`] and its slice forms
    /// run parallel stages at the cost of one atomic store each. Helpers spin (then
    /// yield) between stages, so keep the leader's serial work between stages short; a
    /// team is for a burst of stages, not for a whole frame. See the [module
    /// docs](crate::team) for what helpers do while they wait.
    pub fn team<R>(
        &self,
        team: &mut Team,
        helpers: usize,
        leader: impl FnOnce(&TeamScope<'_>) -> R,
    ) -> R {
        let core = &*team.core;
        let id = core.open();
        // Registers a non-worker leader once, so its helper jobs go to its own queue
        // (allocation-free) rather than the shared injector.
        with_ctx(self.registry(), |_| {});
        // Helper jobs of earlier runs that have not started yet will join this one: spawn
        // only what is missing, so a leader whose helpers never get a worker (all busy)
        // does not pile jobs up run after run.
        let want = helpers.min(self.num_workers());
        let missing = want.saturating_sub(core.pending());
        if missing > 0 {
            core.add_pending(missing);
        }
        for _ in 0..missing {
            let core = team.core.clone();
            // The registry, not a `JobSystem` handle: a queued helper must not keep the
            // system from shutting down.
            let registry = self.registry().clone();
            self.spawn_job(Job::new("team helper", move || help(&registry, &core)));
        }
        /// Closes the team when the leader returns or unwinds, so no helper outlives the
        /// borrows of a stage.
        struct Close<'a>(&'a TeamCore, usize);
        impl Drop for Close<'_> {
            fn drop(&mut self) {
                self.0.close(self.1);
            }
        }
        let _close = Close(core, id);
        leader(&TeamScope { core, jobs: self })
    }
}

/// A helper's life: join, work on stages (and on other jobs when there is no stage item)
/// until the team closes, leave.
fn help(registry: &Arc<Registry>, core: &TeamCore) {
    core.started();
    // Only from a worker's top level. Found inside a wait (or another helper), the thread
    // would stay in the team until it closes while the wait it interrupted, perhaps the
    // leader's own (a nested `parallel_for`) or another team's leader, could not go on:
    // a deadlock. Such a helper just ends; the leader does its share.
    if Nested::is_nested() || !with_worker(registry, |w| w.is_some()) {
        return;
    }
    let Some(id) = core.join() else {
        return;
    };
    let _nested = Nested::enter();
    // Relaxed: a best-effort switch, as in `Registry::execute`.
    let tracing = registry.tracing.load(Ordering::Relaxed);
    with_ctx(registry, |ctx| {
        let mut idle_since: Option<u64> = None;
        let mut idle_rounds = 0u32;
        let end_idle = |idle_since: &mut Option<u64>| {
            if let Some(start) = idle_since.take() {
                crate::sync::lock(&ctx.slot().trace).push(TraceEvent {
                    thread: ctx.slot().index,
                    label: WAIT_LABEL,
                    start_ns: start,
                    end_ns: registry.now_ns(),
                });
            }
        };
        while core.is_open(id) {
            match core.work_one() {
                Claim::Ran | Claim::Contended => {
                    end_idle(&mut idle_since);
                    idle_rounds = 0;
                    continue;
                }
                Claim::Empty => {}
            }
            if let Some(job) = ctx.find_work() {
                end_idle(&mut idle_since);
                ctx.execute(job);
                idle_rounds = 0;
                continue;
            }
            if tracing && idle_since.is_none() {
                idle_since = Some(registry.now_ns());
            }
            idle_rounds += 1;
            if idle_rounds < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        end_idle(&mut idle_since);
    });
    core.leave();
}
