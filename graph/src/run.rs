//! Running a graph: counters reset, roots queued, each finishing task releases its
//! successors.
//!
//! A run's mutable state lives in one `RunState` behind an `Arc` that every queued job of
//! the run holds (a job is the `Arc` plus a task index: 16 bytes, stored inline in a
//! joule-jobs [`Job`], so queueing it allocates nothing). A run:
//!
//! 1. moves the caller's [`Context`] into the state (a `Vec` move, no allocation) and resets
//!    the dependency counters from the graph's in-degrees ([`DepCounts`]);
//! 2. queues every root but one and runs that one on the calling thread;
//! 3. each task, when complete, decrements its successors' counters; of those that reach
//!    zero it queues all but the first and runs the first itself, in a loop rather than by
//!    recursion, so a chain of 10,000 tasks is one job and no deep stack. A list of more
//!    than [`BULK`] successors is instead split into ranges, a few per thread, each
//!    released by one job that runs its ready tasks back to back (a wide fan-out costs a
//!    few jobs, not one per task);
//! 4. a parallel-for queues up to one helper job per worker; every participant claims
//!    chunks ([`ChunkRange`]); whoever finishes the last chunk completes the task. A dynamic
//!    task counts its body and its children in [`WorkUnits`]; whoever finishes the last
//!    unit completes it;
//! 5. [`JobCount`] counts the run's jobs in flight (plus one for the caller while it
//!    queues the roots). The last job to finish signals a joule-jobs [`Counter`], on which
//!    the caller waits while running jobs itself. It signals through the caller's inbox
//!    (see `RunState::exit`), which keeps a caller that fell asleep allocation-free.
//!
//! After the counter reaches zero the caller takes the state back (`Arc::get_mut`): a job
//! that has decremented the count may still be a few instructions from dropping its `Arc`,
//! so the caller yields until it is the only owner. Then it moves the context back, puts
//! the state in the graph's cache for the next run, and re-raises the first panic of any
//! task. A task that panicked stops the run from starting more bodies, but the counting
//! goes on, so the run still ends and the context comes back.
//!
//! [`Graph::run_async`] takes the same cached state and queues every root; the
//! [`RunHandle`] keeps one `Arc` of it. The last job lets go of its `Arc` and marks the
//! counter done; whoever joins the handle waits on the counter, takes the state back as
//! `run` does, returns the context and the first panic, and puts the state back in the
//! graph's cache. So a warm async run allocates nothing either. A run started while the
//! cached state is out (an earlier handle not yet joined) gets a fresh state.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use joule_jobs::{Counter, Job, JobSystem, ThreadToken};

use crate::access::Context;
use crate::counts::{ChunkRange, DepCounts, JobCount, WorkUnits};
use crate::graph::{Graph, GraphInner};
use crate::task::{Body, TaskContext};
use crate::trace::record::Recorder;
use crate::trace::{SpanKind, Trace};

type Payload = Box<dyn Any + Send + 'static>;

/// The mutable state of one run (reused by the next run of the same graph).
pub(crate) struct RunState {
    graph: Arc<GraphInner>,
    /// Set for the duration of a run only, so a cached state does not keep the job system
    /// alive.
    jobs: Option<JobSystem>,
    ctx: Context,
    deps: DepCounts,
    units: WorkUnits,
    loops: Box<[ChunkRange]>,
    outstanding: JobCount,
    done: Counter,
    aborted: AtomicBool,
    panic: Mutex<Option<Payload>>,
    tracing: bool,
    recorder: Option<Recorder>,
    /// The thread blocked in `run`; `None` for `run_async`, whose handle waits on `done`.
    caller: Option<ThreadToken>,
}

/// Successor lists longer than this are released in ranges by a few jobs (see
/// `RunState::complete`).
const BULK: usize = 64;

/// Chunk length for a loop of `len` indices over `participants` threads: about four
/// chunks per thread so uneven chunks balance, rounded up to a multiple of `grain`.
fn chunk_len(len: usize, grain: usize, participants: usize) -> usize {
    if participants <= 1 {
        return len.max(1);
    }
    let target = len.div_ceil(participants * 4);
    target.div_ceil(grain).max(1) * grain
}

impl RunState {
    fn new(graph: Arc<GraphInner>) -> Self {
        let n = graph.tasks.len();
        let slots = graph.slots;
        Self {
            graph,
            jobs: None,
            ctx: Context::new(),
            deps: DepCounts::new(n),
            units: WorkUnits::new(slots),
            loops: (0..slots).map(|_| ChunkRange::new()).collect(),
            outstanding: JobCount::new(),
            done: Counter::new(),
            aborted: AtomicBool::new(false),
            panic: Mutex::new(None),
            tracing: false,
            recorder: None,
            caller: None,
        }
    }

    #[inline]
    pub(crate) fn graph(&self) -> &GraphInner {
        &self.graph
    }

    #[inline]
    pub(crate) fn jobs(&self) -> &JobSystem {
        self.jobs
            .as_ref()
            .expect("joule-graph: a run state is only used during a run")
    }

    #[inline]
    pub(crate) fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// Readies the state for a run (exclusive access: before any job holds it). `caller`
    /// is the thread blocked in `run`, `None` for `run_async`.
    fn prepare(
        &mut self,
        jobs: &JobSystem,
        ctx: Context,
        tracing: bool,
        caller: Option<ThreadToken>,
    ) {
        self.jobs = Some(jobs.clone());
        self.caller = caller;
        self.ctx = ctx;
        self.deps.reset(&self.graph.initial_deps);
        self.outstanding.start(1);
        self.done.add(1);
        *self.aborted.get_mut() = false;
        self.tracing = tracing;
        if tracing {
            let threads = jobs.thread_names().len() + 1;
            let fits = self
                .recorder
                .as_ref()
                .is_some_and(|r| r.fits(self.graph.tasks.len(), threads));
            if !fits {
                self.recorder = Some(Recorder::new(self.graph.tasks.len(), threads));
            }
            if let Some(r) = &mut self.recorder {
                r.reset(jobs.now_ns());
            }
        }
    }

    /// Hands back the context, the first panic and (when traced) the trace; exclusive
    /// access: after the last job let go.
    fn conclude(&mut self) -> (Context, Option<Payload>, Option<Trace>) {
        let jobs = self
            .jobs
            .take()
            .expect("joule-graph: concluding a run that ran");
        let trace = match (&mut self.recorder, self.tracing) {
            (Some(r), true) => Some(r.collect(&self.graph.info(), jobs.thread_names())),
            _ => None,
        };
        let panic = self
            .panic
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        (self.ctx.take(), panic, trace)
    }

    /// Waits (yielding) until no job holds the state any more, then returns it.
    fn reclaim(state: &mut Arc<RunState>) -> &mut RunState {
        while Arc::get_mut(state).is_none() {
            std::thread::yield_now();
        }
        Arc::get_mut(state).expect("joule-graph: the run state is uniquely owned")
    }

    /// Runs `f` unless the run was aborted by a panic; a panic of `f` is kept for the
    /// caller of `run` and aborts the run.
    #[inline]
    fn guard<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        if self.aborted.load(Ordering::Relaxed) {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(p) => {
                self.store_panic(p);
                None
            }
        }
    }

    fn store_panic(&self, p: Payload) {
        let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(p);
        }
        self.aborted.store(true, Ordering::Relaxed);
    }

    #[inline]
    fn now(&self) -> u64 {
        self.jobs().now_ns()
    }

    #[inline]
    fn recorder(&self) -> &Recorder {
        self.recorder
            .as_ref()
            .expect("joule-graph: tracing runs have a recorder")
    }

    fn span(&self, task: u32, kind: SpanKind, start: u64) {
        let thread = self.jobs().current_thread_index();
        self.recorder().span(task, thread, kind, start, self.now());
    }

    /// Queues task `t` as a job (on its pinned thread, if it has one).
    fn spawn_task(self: &Arc<Self>, t: u32) {
        self.outstanding.add();
        let this = Arc::clone(self);
        let job = Job::new("graph task", move || {
            this.drive(Some(t));
            RunState::exit(this);
        });
        match self.graph.tasks[t as usize].thread {
            None => self.jobs().spawn_job(job),
            Some(token) => {
                if let Err(e) = self.jobs().spawn_job_on(token, job) {
                    self.store_panic(Box::new(format!(
                        "joule-graph: task '{}' is pinned to a thread that is not registered \
                         with this job system",
                        self.graph.task_name(t)
                    )));
                    // Aborted now: the job skips the body and only does the counting.
                    e.job.run();
                }
            }
        }
    }

    /// Runs tasks on this thread, each returning the successor to run next.
    fn drive(self: &Arc<Self>, mut next: Option<u32>) {
        while let Some(t) = next {
            next = self.start(t);
        }
    }

    /// A job of the run is done; the last one ends the run.
    fn exit(this: Arc<Self>) {
        if !this.outstanding.finish() {
            return;
        }
        // Let go of the state before waking the caller, who will want it back.
        let done = this.done.clone();
        let Some(caller) = this.caller else {
            // A `run_async`: whoever joins the handle waits on `done` (from any thread, so
            // no inbox to go through) and then takes the state back.
            drop(this);
            done.done();
            return;
        };
        let jobs = this.jobs().clone();
        drop(this);
        if jobs.current_thread_index() == caller.index() {
            done.done();
            return;
        }
        // Wake the caller through its inbox and let it mark the counter done itself: a
        // waiter that sleeps on a joule-jobs `Counter` makes `Counter::done` allocate (it
        // collects the sleepers into a new `Vec`), while the woken caller unregisters
        // before it runs this job, so `done` then finds nobody to collect.
        if let Err(e) = jobs.spawn_on(caller, move || done.done()) {
            e.job.run();
        }
    }

    /// Starts task `t`; returns a ready successor for this thread to run next, if any.
    fn start(self: &Arc<Self>, t: u32) -> Option<u32> {
        let task = &self.graph.tasks[t as usize];
        let cx = TaskContext { run: self, task: t };
        let t0 = if self.tracing {
            let now = self.now();
            let thread = self.jobs().current_thread_index();
            self.recorder().task_start(t, thread, now);
            now
        } else {
            0
        };
        match &task.body {
            Body::Join => {}
            Body::Single(f) => {
                self.guard(|| f(&cx));
                if self.tracing {
                    self.span(t, SpanKind::Body, t0);
                }
            }
            Body::Dynamic { body: f, .. } => {
                let slot = task.slot as usize;
                self.units.start(slot, 1);
                self.guard(|| f(&cx));
                if self.tracing {
                    self.span(t, SpanKind::Body, t0);
                }
                if !self.units.finish(slot) {
                    return None;
                }
            }
            Body::ParallelFor { range, grain, .. } => {
                let r = self.guard(|| range(&cx)).unwrap_or(0..0);
                let jobs = self.jobs();
                let chunk = chunk_len(r.len(), *grain, jobs.num_threads());
                let slot = task.slot as usize;
                let chunks = self.loops[slot].set(r, chunk);
                if self.tracing {
                    // Before the helpers are queued: they may complete the task before
                    // this thread records anything more, and the body span must end
                    // within the task.
                    self.span(t, SpanKind::Body, t0);
                }
                if chunks > 0 {
                    self.units.start(slot, chunks);
                    for _ in 0..jobs.num_workers().min(chunks - 1) {
                        self.spawn_helper(t);
                    }
                }
                if chunks > 0 && !self.run_chunks(t) {
                    return None;
                }
            }
        }
        self.complete(t)
    }

    /// Claims and runs chunks of parallel-for `t` until none are left; true when this
    /// thread finished the last one (and so must complete the task).
    fn run_chunks(self: &Arc<Self>, t: u32) -> bool {
        let task = &self.graph.tasks[t as usize];
        let Body::ParallelFor { body, .. } = &task.body else {
            unreachable!("joule-graph: chunks of a task that is not a parallel-for");
        };
        let slot = task.slot as usize;
        let cx = TaskContext { run: self, task: t };
        while let Some(r) = self.loops[slot].claim() {
            let t0 = if self.tracing { self.now() } else { 0 };
            let (s, e) = (r.start, r.end);
            self.guard(|| body(&cx, r));
            if self.tracing {
                self.span(t, SpanKind::Chunk { start: s, end: e }, t0);
            }
            if self.units.finish(slot) {
                return true;
            }
        }
        false
    }

    fn spawn_helper(self: &Arc<Self>, t: u32) {
        self.outstanding.add();
        let this = Arc::clone(self);
        self.jobs()
            .spawn_job(Job::new("graph parallel_for", move || {
                if this.run_chunks(t) {
                    let next = this.complete(t);
                    this.drive(next);
                }
                RunState::exit(this);
            }));
    }

    /// Queues a child of dynamic task `t`: a job that runs the task's child closure on
    /// `child`.
    pub(crate) fn spawn_child<C: Send + 'static>(this: &Arc<Self>, t: u32, child: C) {
        let slot = this.graph.tasks[t as usize].slot as usize;
        this.units.add(slot);
        this.outstanding.add();
        let run = Arc::clone(this);
        // The job captures the run, the task index and `child` only (the slot is looked
        // up again), so a child of up to 24 bytes keeps it inline.
        this.jobs().spawn_job(Job::new("graph child", move || {
            let slot = run.graph.tasks[t as usize].slot as usize;
            let t0 = if run.tracing { run.now() } else { 0 };
            {
                let cx = TaskContext { run: &run, task: t };
                run.guard(|| cx.run_child(child));
            }
            if run.tracing {
                run.span(t, SpanKind::Child, t0);
            }
            if run.units.finish(slot) {
                let next = run.complete(t);
                run.drive(next);
            }
            RunState::exit(run);
        }));
    }

    /// Task `t` is complete: release its successors. Returns a successor that became
    /// ready (unless pinned elsewhere) for this thread to run next; queues the others.
    ///
    /// Up to [`BULK`] successors are released here: the first ready one is returned, the
    /// others become jobs. A longer list is cut into ranges, about four per thread (one
    /// when there are no workers); each range is released by a job of its own, which runs
    /// the tasks that became ready one after another, so a 10,000-wide fan-out costs a few
    /// jobs instead of 10,000. (Queueing every range, rather than releasing one here,
    /// keeps the stack flat: a range job runs tasks whose own bulk releases are queued.)
    fn complete(self: &Arc<Self>, t: u32) -> Option<u32> {
        if self.tracing {
            self.recorder().task_end(t, self.now());
        }
        let succ = self.graph.successors(t);
        if succ.len() > BULK {
            let threads = self.jobs().num_threads();
            let ranges = if threads == 1 { 1 } else { 4 * threads };
            let len = succ.len().div_ceil(ranges);
            for lo in (0..succ.len()).step_by(len) {
                self.spawn_range(t, lo, (lo + len).min(succ.len()));
            }
            return None;
        }
        let mut keep = None;
        self.deps.release_successors(succ, |s| {
            if keep.is_none() && self.graph.tasks[s as usize].thread.is_none() {
                keep = Some(s);
            } else {
                self.spawn_task(s);
            }
        });
        keep
    }

    /// Releases `successors(t)[lo..hi]` and runs those that became ready, one after
    /// another; the continuation of each but the last is queued, the last's returned.
    fn release_range(self: &Arc<Self>, t: u32, lo: usize, hi: usize) -> Option<u32> {
        let mut pending: Option<u32> = None;
        self.deps
            .release_successors(&self.graph.successors(t)[lo..hi], |s| {
                if self.graph.tasks[s as usize].thread.is_some() {
                    self.spawn_task(s);
                } else if let Some(prev) = pending.replace(s)
                    && let Some(next) = self.start(prev)
                {
                    self.spawn_task(next);
                }
            });
        pending
    }

    fn spawn_range(self: &Arc<Self>, t: u32, lo: usize, hi: usize) {
        self.outstanding.add();
        let this = Arc::clone(self);
        let (lo, hi) = (lo as u32, hi as u32);
        self.jobs().spawn_job(Job::new("graph release", move || {
            let next = this.release_range(t, lo as usize, hi as usize);
            this.drive(next);
            RunState::exit(this);
        }));
    }
}

impl Graph {
    /// Panics unless `ctx` holds every resource some task declares.
    fn check_resources(&self, ctx: &Context) {
        let g = self.inner();
        for (decl, task) in g.resources.iter() {
            assert!(
                ctx.contains_id(decl.type_id),
                "joule-graph: task '{}' declares `{}`, which the context does not hold; \
                 insert it into the context before running",
                g.task_name(*task),
                decl.type_name
            );
        }
    }

    /// Runs the graph once and returns when every task is complete. The calling thread
    /// runs tasks too (with `threads(0)` it runs all of them).
    ///
    /// Tasks reach the resources of `ctx` through their parameters. After the first
    /// run, later runs allocate nothing (when not traced, and as long as dynamic tasks'
    /// children are small enough to be stored inline in a job).
    ///
    /// # Panics
    /// If `ctx` lacks a resource that some task declares (before any task runs), or, after
    /// the run has ended, with the first panic of any task (tasks not yet started when it
    /// happened do not run; the context is returned to `ctx` first).
    pub fn run(&self, jobs: &JobSystem, ctx: &mut Context) {
        let g = self.inner();
        if g.tasks.is_empty() {
            return;
        }
        self.check_resources(ctx);
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut state = cached.unwrap_or_else(|| Arc::new(RunState::new(g.clone())));
        Arc::get_mut(&mut state)
            .expect("joule-graph: a cached run state is uniquely owned")
            .prepare(
                jobs,
                ctx.take(),
                self.tracing(),
                Some(jobs.register_current_thread()),
            );
        let first = g
            .roots
            .iter()
            .position(|&r| g.tasks[r as usize].thread.is_none());
        for (i, &r) in g.roots.iter().enumerate() {
            if Some(i) != first {
                state.spawn_task(r);
            }
        }
        state.drive(first.map(|i| g.roots[i]));
        if state.outstanding.finish() {
            state.done.done();
        }
        jobs.wait(&state.done);
        let (back, panic, trace) = RunState::reclaim(&mut state).conclude();
        *ctx = back;
        if let Some(trace) = trace {
            *self
                .last_trace
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(trace);
        }
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(state);
        if let Some(p) = panic {
            resume_unwind(p);
        }
    }

    /// Starts a run and returns at once. The context moves into the run and comes back
    /// from the handle: [`RunHandle::wait`] or [`RunHandle::join`] waits until every task
    /// is complete (running jobs meanwhile) and returns it, with the first panic of a task
    /// (`wait` re-raises it). With `threads(0)` nothing runs until the calling thread waits
    /// or calls [`JobSystem::run_pending`].
    ///
    /// The run takes the graph's cached run state, as [`run`](Self::run) does, and joining
    /// the handle puts it back, so after the first run, starting a run and joining it
    /// allocate nothing (with the same provisos as `run`). If the cached state is out
    /// because an earlier run of this graph has not been joined yet, this run gets a fresh
    /// state (an allocation) rather than waiting for the other or sharing its state; the
    /// state of whichever is joined last is kept for the next run.
    ///
    /// # Panics
    /// If `ctx` lacks a resource that some task declares (before any task runs).
    pub fn run_async(&self, jobs: &JobSystem, ctx: Context) -> RunHandle {
        self.check_resources(&ctx);
        let g = self.inner();
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut state = cached.unwrap_or_else(|| Arc::new(RunState::new(g.clone())));
        Arc::get_mut(&mut state)
            .expect("joule-graph: a cached run state is uniquely owned")
            .prepare(jobs, ctx, self.tracing(), None);
        let handle = RunHandle {
            state: Some(Arc::clone(&state)),
            cache: Arc::clone(&self.cache),
            last_trace: Arc::clone(&self.last_trace),
        };
        for &r in g.roots.iter() {
            state.spawn_task(r);
        }
        // The count started at one for this thread while it queued the roots.
        RunState::exit(state);
        handle
    }
}

/// A run started by [`Graph::run_async`]; it holds the run's context until joined.
///
/// [`wait`](Self::wait) and [`join`](Self::join) wait for the run (on the run's job
/// system, running its jobs meanwhile) and return the context; once
/// [`is_done`](Self::is_done) they return at once. Dropping a handle that was not joined
/// waits in the same way and drops the context; a task's panic is then re-raised unless
/// the thread is already unwinding.
pub struct RunHandle {
    /// `None` once joined.
    state: Option<Arc<RunState>>,
    /// The graph's cache, where a joined run leaves its state for the next.
    cache: Arc<Mutex<Option<Arc<RunState>>>>,
    /// Where a traced run leaves its trace ([`Graph::take_trace`]).
    last_trace: Arc<Mutex<Option<Trace>>>,
}

impl std::fmt::Debug for RunHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunHandle")
            .field("done", &self.is_done())
            .finish()
    }
}

impl RunHandle {
    /// Whether every task of the run is complete (joining then returns at once).
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.state.as_ref().is_none_or(|s| s.done.is_done())
    }

    /// Waits until the run is over, running jobs on this thread meanwhile, and returns
    /// the context.
    ///
    /// # Panics
    /// With the first panic of a task of the run (the context is dropped); use
    /// [`join`](Self::join) to get the context back as well.
    pub fn wait(self) -> Context {
        let (ctx, panic) = self.join();
        if let Some(p) = panic {
            resume_unwind(p);
        }
        ctx
    }

    /// Waits until the run is over, running jobs on this thread meanwhile, and returns
    /// the context with the first panic of a task, if any (not re-raised: the caller
    /// decides, after it has put the context's contents back).
    pub fn join(mut self) -> (Context, Option<Box<dyn Any + Send + 'static>>) {
        self.finish()
            .expect("joule-graph: a handle is joined once (join takes it by value)")
    }

    /// Waits for the run, takes the state back, puts it in the graph's cache and returns
    /// the context and the panic; `None` once joined.
    fn finish(&mut self) -> Option<(Context, Option<Payload>)> {
        let mut state = self.state.take()?;
        state.jobs().wait(&state.done);
        let (ctx, panic, trace) = RunState::reclaim(&mut state).conclude();
        if let Some(trace) = trace {
            *self
                .last_trace
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(trace);
        }
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(state);
        Some((ctx, panic))
    }
}

impl Drop for RunHandle {
    /// Waits for a run that was not joined (the context is dropped); re-raises a task's
    /// panic unless the thread is already unwinding (a second panic would abort).
    fn drop(&mut self) {
        if let Some((_, Some(p))) = self.finish()
            && !std::thread::panicking()
        {
            resume_unwind(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::chunk_len;

    #[test]
    fn chunks_are_grain_multiples_about_four_per_thread() {
        // 10,000 over 4 threads: 625 per chunk, rounded up to a multiple of 64 → 640.
        assert_eq!(chunk_len(10_000, 64, 4), 640);
        assert_eq!(chunk_len(10_000, 1, 4), 625);
        // A grain above the target wins.
        assert_eq!(chunk_len(100, 256, 4), 256);
        // One thread: the whole range in one chunk.
        assert_eq!(chunk_len(100, 8, 1), 100);
        assert_eq!(chunk_len(0, 8, 1), 1);
    }
}
