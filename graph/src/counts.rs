//! The counters a run is made of: when a task may start, when it is finished, when the run
//! is over.
//!
//! ```text
//!   pred A ──release──┐                      dynamic / parallel-for task T
//!                     ├─► deps[C]: 2 → 1 → 0 ─► C starts (exactly once: the one who saw 0)
//!   pred B ──release──┘
//!
//!   T starts: units[T] = 1 (its body)  or  = chunks (a parallel-for)
//!   each child spawned: units[T] += 1;  each child / chunk / the body done: units[T] -= 1
//!   units[T] reaches 0  ─►  T is complete  ─►  release T's successors
//! ```
//!
//! - [`DepCounts`]: one counter per task, reset from the graph's initial in-degrees at the
//!   start of every run (no allocation). A finishing task decrements each successor's
//!   counter; whoever takes it from 1 to 0 owns starting that successor. `AcqRel` makes
//!   the starter see the effects of *every* predecessor (the decrements form one release
//!   sequence on the counter).
//! - [`WorkUnits`]: for tasks whose work outlives their body, one counter per such task
//!   (a "slot"): a dynamic task counts its body plus each child it spawned, a parallel-for
//!   counts its chunks. The thread that takes it to zero completes the task, so successors
//!   start only after every child and chunk is done. A unit is only ever added by someone
//!   who holds one (the body, or a child spawning a grandchild), so the count cannot touch
//!   zero while work remains.
//! - [`ChunkRange`]: the claim counter of a parallel-for (Edyn's design): participants take
//!   chunk indices with `fetch_add` until none are left.
//! - [`JobCount`]: jobs of a run still in flight; the last one to finish ends the run.
//!
//! These types take their atomics from `sync`, so under `cfg(loom)` the loom models in
//! `loom-tests/tests/graph.rs` drive exactly this code.

use std::ops::Range;

use crate::sync::{AtomicU32, AtomicUsize, Ordering};

/// Remaining unfinished predecessors of each task.
#[derive(Debug)]
pub struct DepCounts {
    counts: Box<[AtomicU32]>,
}

impl DepCounts {
    /// Counters for `n` tasks, all zero.
    #[must_use]
    pub fn new(n: usize) -> Self {
        Self {
            counts: (0..n).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Number of tasks.
    #[must_use]
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether there are no tasks.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Sets every counter to its task's in-degree. Relaxed: the run publishes the values by
    /// queueing the root jobs afterwards (a queue push releases, the pop acquires).
    ///
    /// # Panics
    /// If `initial` does not have one entry per task.
    pub fn reset(&self, initial: &[u32]) {
        assert_eq!(
            initial.len(),
            self.counts.len(),
            "joule-graph: one initial dependency count per task"
        );
        for (c, &n) in self.counts.iter().zip(initial) {
            c.store(n, Ordering::Relaxed);
        }
    }

    /// One predecessor of `task` finished; true for exactly one caller, the last.
    #[inline]
    pub fn release(&self, task: usize) -> bool {
        // AcqRel: Release publishes the finished predecessor's effects; the caller that
        // reads 1 acquires every earlier decrement's release, so the task it then starts
        // sees the effects of all its predecessors.
        let before = self.counts[task].fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "joule-graph: task {task} released too often");
        before == 1
    }

    /// A task finished: releases each of its `successors`, calling `ready` with those that
    /// became ready (each exactly once over the whole run), in list order.
    #[inline]
    pub fn release_successors(&self, successors: &[u32], mut ready: impl FnMut(u32)) {
        for &s in successors {
            if self.release(s as usize) {
                ready(s);
            }
        }
    }

    /// The current count of `task` (diagnostics and tests).
    #[must_use]
    pub fn get(&self, task: usize) -> u32 {
        self.counts[task].load(Ordering::Relaxed)
    }
}

/// Outstanding units of work of each dynamic or parallel-for task ("slot").
#[derive(Debug)]
pub struct WorkUnits {
    units: Box<[AtomicUsize]>,
}

impl WorkUnits {
    /// Counters for `n` slots, all zero.
    #[must_use]
    pub fn new(n: usize) -> Self {
        Self {
            units: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    /// The task of `slot` starts with `n` units (its body: 1; a parallel-for: its chunks).
    /// Relaxed: only the starting thread has seen the task so far; whoever receives a unit
    /// later gets it through a queued job, which publishes this store.
    pub fn start(&self, slot: usize, n: usize) {
        self.units[slot].store(n, Ordering::Relaxed);
    }

    /// Adds a unit (a child about to be queued). Must be called by a holder of a unit.
    #[inline]
    pub fn add(&self, slot: usize) {
        // Relaxed: the caller still holds a unit, so this cannot race the count to zero;
        // the new child's own `finish` releases its effects.
        self.units[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// A unit is done; true for exactly one caller, the one that completes the task.
    #[inline]
    pub fn finish(&self, slot: usize) -> bool {
        // AcqRel: the last finisher acquires every other unit's effects (children, chunks,
        // the body) before it releases the task's successors.
        let before = self.units[slot].fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before > 0, "joule-graph: slot {slot} finished too often");
        before == 1
    }
}

/// The chunks of one parallel-for, claimed with `fetch_add` by every participant.
#[derive(Debug)]
pub struct ChunkRange {
    next: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    chunk: AtomicUsize,
}

impl Default for ChunkRange {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkRange {
    /// An empty range.
    #[must_use]
    pub fn new() -> Self {
        Self {
            next: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            chunk: AtomicUsize::new(1),
        }
    }

    /// Cuts `range` into chunks of `chunk` indices (the last may be shorter) and returns
    /// how many. Relaxed: set by the starting thread before it queues the helper jobs,
    /// whose queue hand-off publishes the values.
    ///
    /// # Panics
    /// If `chunk` is zero.
    pub fn set(&self, range: Range<usize>, chunk: usize) -> usize {
        assert!(chunk > 0, "joule-graph: chunk length must be positive");
        self.start.store(range.start, Ordering::Relaxed);
        self.end.store(range.end, Ordering::Relaxed);
        self.chunk.store(chunk, Ordering::Relaxed);
        self.next.store(0, Ordering::Relaxed);
        range.len().div_ceil(chunk)
    }

    /// Claims the next chunk, or `None` when every chunk is taken.
    #[inline]
    pub fn claim(&self) -> Option<Range<usize>> {
        let start = self.start.load(Ordering::Relaxed);
        let end = self.end.load(Ordering::Relaxed);
        let chunk = self.chunk.load(Ordering::Relaxed);
        let chunks = (end - start).div_ceil(chunk);
        if self.next.load(Ordering::Relaxed) >= chunks {
            return None;
        }
        // Relaxed: an index only has to be unique; chunk effects are published by
        // `WorkUnits::finish`.
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < chunks).then(|| {
            let s = start + i * chunk;
            s..(s + chunk).min(end)
        })
    }
}

/// Jobs of a run that have been queued and not yet finished (plus one for the thread that
/// started the run, until it has queued the roots).
#[derive(Debug)]
pub struct JobCount {
    n: AtomicUsize,
}

impl Default for JobCount {
    fn default() -> Self {
        Self::new()
    }
}

impl JobCount {
    /// Zero jobs.
    #[must_use]
    pub fn new() -> Self {
        Self {
            n: AtomicUsize::new(0),
        }
    }

    /// Starts a run with `n` units (the starter's own). Relaxed: published by the queue
    /// pushes of the first jobs.
    pub fn start(&self, n: usize) {
        self.n.store(n, Ordering::Relaxed);
    }

    /// One more job is about to be queued. Called by the holder of a unit (a running job
    /// or the starter), so the count cannot reach zero meanwhile.
    #[inline]
    pub fn add(&self) {
        self.n.fetch_add(1, Ordering::Relaxed);
    }

    /// A job (or the starter) is done; true for exactly one caller, the last, which ends
    /// the run.
    #[inline]
    pub fn finish(&self) -> bool {
        // AcqRel: the last job acquires every job's effects before it hands the run's
        // results (context, panic, trace) back to the caller.
        self.n.fetch_sub(1, Ordering::AcqRel) == 1
    }
}
