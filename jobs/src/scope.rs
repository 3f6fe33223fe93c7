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
use crate::latch::{Latch, PanicPayload};
use crate::registry::{Registry, with_ctx};
use crate::sleep::Parker;
use crate::sync::{Arc, AtomicUsize, Mutex, Ordering, UnsafeCell, lock};
use crate::system::JobSystem;

/// The slot where `join`'s second job leaves its result for the owner.
struct ResultSlot<T>(UnsafeCell<Option<T>>);

// SAFETY: the slot is written by exactly one job and read by the owner only after that job
// set the latch (Release/Acquire), so the two accesses never overlap; the value crosses
// threads, hence `T: Send`.
unsafe impl<T: Send> Sync for ResultSlot<T> {}

impl<T> ResultSlot<T> {
    /// # Safety
    /// No other access to the slot may happen concurrently (see `join`).
    unsafe fn put(&self, value: T) {
        // SAFETY: exclusive access per the caller's contract.
        self.0.with_mut(|p| unsafe { *p = Some(value) });
    }

    /// # Safety
    /// No other access to the slot may happen concurrently (see `join`).
    unsafe fn take(&self) -> Option<T> {
        // SAFETY: exclusive access per the caller's contract.
        self.0.with_mut(|p| unsafe { (*p).take() })
    }
}

/// A scope in which jobs may borrow from the enclosing stack frame; see
/// [`JobSystem::scope`].
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    /// Jobs not yet finished, plus one for the scope's body.
    pending: AtomicUsize,
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
        self.pending.fetch_add(1, Ordering::Relaxed);
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
        // AcqRel: the last finisher acquires every job's effects before setting the latch,
        // whose Release publishes them to the waiting owner.
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.latch.set();
        }
    }
}

// SAFETY-free note: `Scope` is `Sync` because all its fields are; jobs on other threads
// only touch its atomics, its mutex and its latch.

impl JobSystem {
    /// Runs `op` with a scope in which jobs can borrow from the caller's stack, and returns
    /// once every job spawned into it is done. The calling thread runs jobs while it waits.
    /// A panic in `op` or in any job is re-raised here after all jobs have finished.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        with_ctx(self.registry(), |ctx| {
            let scope = Scope {
                registry: ctx.registry().clone(),
                pending: AtomicUsize::new(1),
                latch: Latch::new(ctx.parker().clone()),
                panic: Mutex::new(None),
                _marker: PhantomData,
            };
            let result = catch_unwind(AssertUnwindSafe(|| op(&scope)));
            scope.job_done();
            ctx.wait_until(&scope.latch);
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
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        if self.num_workers() == 0 {
            // Nobody could run `b` in parallel: skip the queue.
            let ra = a();
            return (ra, b());
        }
        with_ctx(self.registry(), |ctx| {
            let result_b = ResultSlot::<std::thread::Result<RB>>(UnsafeCell::new(None));
            let latch = Latch::new(ctx.parker());
            let job_b = || {
                let r = catch_unwind(AssertUnwindSafe(b));
                // SAFETY: only this job writes `result_b`, once, and the owner reads it only
                // after `latch.set()` below, whose Release pairs with the Acquire in the
                // owner's `is_set`; so the accesses are ordered and never concurrent.
                unsafe { result_b.put(r) };
                latch.set();
            };
            // SAFETY: `job_b` borrows `result_b`, `latch` and whatever `b` borrows. We wait
            // for `latch` below before returning or unwinding (a panic in `a` is caught),
            // and `latch.set()` is the job's last access to borrowed data.
            let job = unsafe { Job::new_unchecked("join", job_b) };
            ctx.registry().push_waited(job);
            let ra = catch_unwind(AssertUnwindSafe(a));
            ctx.wait_until(&latch);
            // SAFETY: the latch is set, so the job has written `result_b` and will not
            // touch it again (see above).
            let rb = unsafe { result_b.take() }
                .expect("joule-jobs: join's second job finished without a result");
            match (ra, rb) {
                (Ok(ra), Ok(rb)) => (ra, rb),
                (Err(p), _) | (_, Err(p)) => resume_unwind(p),
            }
        })
    }
}
