//! Scoped jobs and `join`: jobs that borrow from the caller's stack.
//!
//! This is the one place where a job's closure is allowed to borrow non-`'static` data
//! (`Job::new_unchecked`). It is sound because the borrowing function does not return, and
//! does not unwind, before every job that borrows has finished: `scope` and `join` catch a
//! panic of their own body, wait on a latch that the last job sets after it is done with
//! the borrowed data, and only then return or re-raise.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::job::Job;
use crate::latch::{Latch, PanicPayload, ScopeCount};
use crate::registry::{Registry, with_ctx};
use crate::sleep::Parker;
use crate::sync::{Arc, AtomicBool, Mutex, Ordering, UnsafeCell, lock};
use crate::system::JobSystem;
use crate::trace::{PHASE_LABEL, TraceEvent};

/// How many jobs a thread keeps offered to thieves in its deque before `join` stops
/// queueing its second half and runs it inline (lazy task creation, Mohr, Kranz and
/// Halstead 1991; chili's heartbeat scheduling exposes work just as sparingly).
const JOIN_EXPOSE: usize = 1;

/// A scope in which jobs may borrow from the enclosing stack frame; see
/// [`JobSystem::scope`].
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    /// Jobs not yet finished, the owner's spawns during the body counted apart.
    count: ScopeCount,
    /// Whether the body still runs (read and written by the owner thread only).
    body_running: AtomicBool,
    /// The owner thread: the address of its [`THREAD_MARK`].
    owner: usize,
    latch: Latch<Arc<Parker>>,
    panic: Mutex<Option<PanicPayload>>,
    /// Invariant in `'scope`, like `std::thread::Scope`.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl<'scope> Scope<'scope> {
    /// Spawns a job that may borrow anything that outlives the scope. It receives the scope
    /// so it can spawn more jobs into it.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.spawn_labeled("scope", f);
    }

    /// [`spawn`](Self::spawn) with a label shown in traces.
    pub fn spawn_labeled<F>(&self, label: &'static str, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        // Relaxed: only the owner thread reads or writes `body_running`.
        if self.owner == thread_mark() && self.body_running.load(Ordering::Relaxed) {
            self.count.owner_spawned();
        } else {
            self.count.spawned();
        }
        let job = move || {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self))) {
                self.store_panic(p);
            }
            self.job_done();
        };
        // SAFETY: the job borrows `self` and data outliving `'scope`. `JobSystem::scope`
        // waits until `pending` reaches zero (this job's `job_done` is its last access to
        // anything borrowed) before it returns or unwinds, so every borrow outlives the job.
        let job = unsafe { Job::new_unchecked(label, job) };
        self.registry.push_waited(job);
    }

    fn store_panic(&self, p: PanicPayload) {
        let mut slot = lock(&self.panic);
        if slot.is_none() {
            *slot = Some(p);
        }
    }

    fn job_done(&self) {
        if self.count.job_done() {
            self.latch.set();
        }
    }

    /// The owner's end of the body: from now on the owner thread's spawns (by jobs it
    /// runs while it waits) count like any other thread's.
    fn body_done(&self) {
        self.body_running.store(false, Ordering::Relaxed);
        if self.count.body_done() {
            self.latch.set();
        }
    }
}

thread_local! {
    /// A byte whose address names the calling thread (unique among the threads alive,
    /// and a scope's owner is alive while its scope is).
    static THREAD_MARK: u8 = const { 0 };
}

fn thread_mark() -> usize {
    THREAD_MARK.with(|m| std::ptr::from_ref(m) as usize)
}

// `Scope` is `Sync` because all its fields are; jobs on other threads only touch its
// atomics, its mutex and its latch.

impl JobSystem {
    /// Runs `op` with a scope in which jobs can borrow from the caller's stack, and returns
    /// once every job spawned into it is done. The calling thread runs jobs while it waits.
    /// A panic in `op` or in any job is re-raised here after all jobs have finished.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        with_ctx(self.registry(), |ctx| {
            // Relaxed: tracing is a best-effort switch (as in `Registry::execute`).
            let tracing = ctx.registry().tracing.load(Ordering::Relaxed);
            let start = if tracing { ctx.registry().now_ns() } else { 0 };
            let scope = Scope {
                registry: ctx.registry().clone(),
                count: ScopeCount::new(),
                body_running: AtomicBool::new(true),
                owner: thread_mark(),
                latch: Latch::new(ctx.parker().clone()),
                panic: Mutex::new(None),
                _marker: PhantomData,
            };
            let result = catch_unwind(AssertUnwindSafe(|| op(&scope)));
            scope.body_done();
            ctx.wait_until(&scope.latch);
            if tracing {
                lock(&ctx.slot().trace).push(TraceEvent {
                    thread: ctx.slot().index,
                    label: PHASE_LABEL,
                    start_ns: start,
                    end_ns: ctx.registry().now_ns(),
                });
            }
            if let Some(p) = lock(&scope.panic).take() {
                resume_unwind(p);
            }
            match result {
                Ok(r) => r,
                Err(p) => resume_unwind(p),
            }
        })
    }

    /// Runs `a` and `b`, potentially in parallel, and returns both results. The calling
    /// thread runs `a` and then helps until `b` is done (often running `b` itself). A panic
    /// in either is re-raised after both have finished.
    ///
    /// `b` is offered to other threads only while the calling thread's deque is empty;
    /// otherwise thieves already have older (larger) work to take from this thread, and
    /// `b` runs right after `a` without touching a queue. Recursive fork-join (fib,
    /// quicksort) so pays for queueing only where work actually moves between threads.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if self.num_workers() == 0 {
            // Nobody could run `b` in parallel: skip the queue. Both halves still run when
            // one panics, as with workers.
            let ra = catch_unwind(AssertUnwindSafe(a));
            let rb = catch_unwind(AssertUnwindSafe(b));
            return match (ra, rb) {
                (Ok(ra), Ok(rb)) => (ra, rb),
                (Err(p), _) | (_, Err(p)) => resume_unwind(p),
            };
        }
        with_ctx(self.registry(), |ctx| {
            if ctx.exposed_jobs() >= JOIN_EXPOSE {
                // Lazy exposure: this thread already offers thieves work (the oldest,
                // largest jobs sit at the top of its deque), so queueing `b` as well would
                // only cost a push and a pop. Run both halves here, as with no workers;
                // once thieves have emptied the deque, the next join offers its `b` again.
                let ra = catch_unwind(AssertUnwindSafe(a));
                let rb = catch_unwind(AssertUnwindSafe(b));
                return match (ra, rb) {
                    (Ok(ra), Ok(rb)) => (ra, rb),
                    (Err(p), _) | (_, Err(p)) => resume_unwind(p),
                };
            }
            let state = JoinState {
                b: UnsafeCell::new(Some(b)),
                result: UnsafeCell::new(None),
                latch: Latch::new(ctx.parker()),
            };
            let state_ref = &state;
            // SAFETY: the job borrows `state` (and, through `b`, whatever `b` borrows). It is
            // either taken back below with `pop_own_at` and dropped unrun, or run by some
            // thread, in which case we wait for `state.latch`, which the job sets as its
            // last access to `state`; both happen before we return or unwind (a panic in
            // `a` is caught).
            let job = unsafe { Job::new_unchecked("join", move || state_ref.run_stolen()) };
            let pos = ctx.push_own(job);
            let ra = catch_unwind(AssertUnwindSafe(a));
            let rb = match pos.and_then(|p| ctx.pop_own_at(p)) {
                Some(job) => {
                    // Nobody took it: discard the job (its closure only holds `&state`,
                    // so forgetting it leaks nothing) and run `b` right here, with no
                    // latch or result slot involved.
                    std::mem::forget(job);
                    // SAFETY: the job was never run and is gone, so we are the only one
                    // with access to `state.b`.
                    let b = unsafe { state.take_b() };
                    catch_unwind(AssertUnwindSafe(b))
                }
                None => {
                    ctx.wait_until(&state.latch);
                    // SAFETY: the latch is set, so the job wrote `result` and no longer
                    // touches `state` (see `run_stolen`).
                    unsafe { state.take_result() }
                }
            };
            match (ra, rb) {
                (Ok(ra), Ok(rb)) => (ra, rb),
                (Err(p), _) | (_, Err(p)) => resume_unwind(p),
            }
        })
    }
}

/// What `join`'s second half shares with whoever runs it: the closure (taken by exactly
/// one party: the thread that runs the job, or the owner after taking the job back), the
/// result slot, and the latch that hands the result to the owner.
struct JoinState<'p, B, RB> {
    b: UnsafeCell<Option<B>>,
    result: UnsafeCell<Option<std::thread::Result<RB>>>,
    latch: Latch<&'p Arc<Parker>>,
}

// SAFETY: `b` is moved out by exactly one thread (whoever won the job), `result` is written
// by that thread before the latch's Release and read by the owner after its Acquire, so no
// field is ever accessed concurrently. Values cross threads, hence `B: Send, RB: Send`.
unsafe impl<B: Send, RB: Send> Sync for JoinState<'_, B, RB> {}

impl<B: FnOnce() -> RB, RB> JoinState<'_, B, RB> {
    /// Takes the closure.
    ///
    /// # Safety
    /// Only the single party that won the job may call this, once.
    unsafe fn take_b(&self) -> B {
        // SAFETY: exclusive access per the caller's contract.
        self.b
            .with_mut(|p| unsafe { (*p).take() })
            .expect("joule-jobs: join's second closure taken twice")
    }

    /// Takes the result written by `run_stolen`.
    ///
    /// # Safety
    /// The latch must be set (the job is done with `self`).
    unsafe fn take_result(&self) -> std::thread::Result<RB> {
        // SAFETY: per the contract the writer is done; the latch's Acquire made its write
        // visible.
        self.result
            .with_mut(|p| unsafe { (*p).take() })
            .expect("joule-jobs: join's second job finished without a result")
    }

    /// The job body when another thread (or the owner's wait loop) runs it.
    fn run_stolen(&self) {
        // SAFETY: running the job means we won it from the queue; the owner then cannot
        // take it back, so we are the only party touching `b` and `result` until `set`.
        let b = unsafe { self.take_b() };
        let r = catch_unwind(AssertUnwindSafe(b));
        // SAFETY: as above; the owner reads `result` only after the latch is set.
        self.result.with_mut(|p| unsafe { *p = Some(r) });
        self.latch.set();
    }
}
