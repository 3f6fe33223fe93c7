//! Latches and counters: the things a thread waits on while it helps run jobs.
//!
//! A [`Latch`] is set once and waited on by one known thread (its owner), which may live on
//! the owner's stack (`join`, `scope`). The setter never touches the latch after the store
//! that sets it, because the owner may return and free it at that instant: when the owner
//! is asleep the setter first clones the owner's parker, then sets, then wakes it.
//!
//! A [`Counter`] is shared (`Arc`), counts outstanding jobs, may be waited on by any number
//! of threads and reused after reaching zero. It also carries the first panic of its jobs
//! to whoever waits.

use std::any::Any;
use std::borrow::Borrow;

use crate::sleep::Parker;
use crate::sync::{Arc, AtomicU8, AtomicUsize, Mutex, Ordering, lock};

const UNSET: u8 = 0;
const SLEEPING: u8 = 1;
const SET: u8 = 2;

/// A panic payload carried from the job that panicked to the thread that waits.
pub(crate) type PanicPayload = Box<dyn Any + Send + 'static>;

/// Something a thread can wait for while helping.
pub(crate) trait WaitTarget {
    /// Whether the wait is over.
    #[cfg_attr(loom, allow(dead_code))]
    fn is_set(&self) -> bool;
    /// Registers `parker` to be woken when the wait ends; false when it has already ended.
    fn prepare_sleep(&self, parker: &Arc<Parker>) -> bool;
    /// Unregisters `parker` after waking (for whatever reason).
    fn finish_sleep(&self, parker: &Arc<Parker>);
}

/// A one-shot latch with a fixed owner, safe to keep on the owner's stack.
pub struct Latch<P: Borrow<Arc<Parker>>> {
    state: AtomicU8,
    owner: P,
}

impl<P: Borrow<Arc<Parker>>> Latch<P> {
    /// An unset latch whose owner sleeps on `owner`.
    pub fn new(owner: P) -> Self {
        Self {
            state: AtomicU8::new(UNSET),
            owner,
        }
    }

    /// Sets the latch and wakes the owner if it sleeps. After the store that sets it this
    /// function touches nothing of `self`.
    pub fn set(&self) {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            match state {
                UNSET => {
                    // AcqRel: Release publishes everything done before `set` (a job's result)
                    // to the owner's Acquire load in `is_set`.
                    match self.state.compare_exchange(
                        UNSET,
                        SET,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => return,
                        Err(s) => state = s,
                    }
                }
                SLEEPING => {
                    // Clone first: once the CAS succeeds the latch may be gone.
                    let parker: Arc<Parker> = self.owner.borrow().clone();
                    match self.state.compare_exchange(
                        SLEEPING,
                        SET,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            parker.unpark();
                            return;
                        }
                        Err(s) => state = s,
                    }
                }
                _ => panic!("joule-jobs: a latch was set twice (a job ran twice?)"),
            }
        }
    }

    /// Whether the latch is set.
    #[inline]
    pub fn is_set(&self) -> bool {
        // Acquire: pairs with the AcqRel CAS in `set`.
        self.state.load(Ordering::Acquire) == SET
    }

    /// Owner only: moves UNSET to SLEEPING before parking. False when already set.
    pub fn try_sleep(&self) -> bool {
        // SeqCst RMW: totally ordered with the setter's CAS on the same location, so either
        // we see SET or the setter sees SLEEPING and wakes us.
        self.state
            .compare_exchange(UNSET, SLEEPING, Ordering::SeqCst, Ordering::Acquire)
            .is_ok()
    }

    /// Owner only: back from parking; SLEEPING returns to UNSET unless the latch was set.
    pub fn wake(&self) {
        let _ = self
            .state
            .compare_exchange(SLEEPING, UNSET, Ordering::SeqCst, Ordering::Acquire);
    }
}

impl<P: Borrow<Arc<Parker>>> WaitTarget for Latch<P> {
    fn is_set(&self) -> bool {
        Latch::is_set(self)
    }
    fn prepare_sleep(&self, _parker: &Arc<Parker>) -> bool {
        self.try_sleep()
    }
    fn finish_sleep(&self, _parker: &Arc<Parker>) {
        self.wake();
    }
}

struct CounterInner {
    pending: AtomicUsize,
    waiters: Mutex<Vec<Arc<Parker>>>,
    #[cfg_attr(loom, allow(dead_code))]
    panic: Mutex<Option<PanicPayload>>,
}

/// A count of outstanding jobs that threads can wait on while helping.
///
/// Cheap to clone (an `Arc`). [`JobSystem::spawn_counted`](crate::JobSystem::spawn_counted)
/// adds one and the job removes it when done; [`JobSystem::wait`](crate::JobSystem::wait)
/// runs other jobs until the count is zero and re-raises the first panic of a counted
/// job. A counter that reached zero can be used again.
#[derive(Clone)]
pub struct Counter {
    inner: Arc<CounterInner>,
}

impl Default for Counter {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("pending", &self.pending())
            .finish()
    }
}

impl Counter {
    /// A counter at zero.
    #[must_use]
    pub fn new() -> Self {
        Self::with_count(0)
    }

    /// A counter starting at `n`.
    #[must_use]
    pub fn with_count(n: usize) -> Self {
        Self {
            inner: Arc::new(CounterInner {
                pending: AtomicUsize::new(n),
                // Room for a few waiters up front: the first sleep then allocates nothing.
                waiters: Mutex::new(Vec::with_capacity(4)),
                panic: Mutex::new(None),
            }),
        }
    }

    /// Adds `n` outstanding units of work.
    pub fn add(&self, n: usize) {
        self.inner.pending.fetch_add(n, Ordering::Relaxed);
    }

    /// Marks one unit done; the last one wakes every waiter.
    pub fn done(&self) {
        // SeqCst: the decrement must be ordered before our read of `waiters` (under the
        // lock) against a waiter that registers and then reads `pending` (`prepare_sleep`).
        // Release also publishes the job's effects to whoever sees zero with Acquire.
        let before = self.inner.pending.fetch_sub(1, Ordering::SeqCst);
        assert!(
            before > 0,
            "joule-jobs: Counter::done called more often than add"
        );
        if before == 1 {
            // Wake in place: draining keeps the list's capacity, so a counter reused
            // every frame allocates nothing once warm. Unparking under this lock is fine:
            // a parker's lock is never taken while holding it the other way round.
            for w in lock(&self.inner.waiters).drain(..) {
                w.unpark();
            }
        }
    }

    /// Outstanding units.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.inner.pending.load(Ordering::Acquire)
    }

    /// Whether every unit is done.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.pending() == 0
    }

    /// Records a panic of a counted job (the first one is kept).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn store_panic(&self, payload: PanicPayload) {
        let mut slot = lock(&self.inner.panic);
        if slot.is_none() {
            *slot = Some(payload);
        }
    }

    /// Takes the recorded panic, if any.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn take_panic(&self) -> Option<PanicPayload> {
        lock(&self.inner.panic).take()
    }
}

impl WaitTarget for Counter {
    fn is_set(&self) -> bool {
        self.is_done()
    }

    fn prepare_sleep(&self, parker: &Arc<Parker>) -> bool {
        lock(&self.inner.waiters).push(parker.clone());
        // SeqCst: see `done`. If `done` took the waiter list before we pushed, its decrement
        // happened before its unlock, which happened before our lock: we see zero here.
        if self.inner.pending.load(Ordering::SeqCst) == 0 {
            self.finish_sleep(parker);
            return false;
        }
        true
    }

    fn finish_sleep(&self, parker: &Arc<Parker>) {
        let mut w = lock(&self.inner.waiters);
        if let Some(i) = w.iter().position(|p| Arc::ptr_eq(p, parker)) {
            w.swap_remove(i);
        }
    }
}

/// Chunk bookkeeping shared by the participants of a `parallel_for`: each claims chunk
/// indices with `fetch_add` until the range is exhausted (Edyn's design), and the one that
/// finishes the last chunk learns it is last, exactly once.
pub struct ChunkClaimer {
    next: AtomicUsize,
    finished: AtomicUsize,
    total: usize,
}

impl ChunkClaimer {
    /// Bookkeeping for `total` chunks.
    #[must_use]
    pub fn new(total: usize) -> Self {
        Self {
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            total,
        }
    }

    /// Number of chunks.
    #[must_use]
    pub fn total(&self) -> usize {
        self.total
    }

    /// Claims the next chunk index, or `None` when all are claimed.
    #[inline]
    pub fn claim(&self) -> Option<usize> {
        if self.next.load(Ordering::Relaxed) >= self.total {
            return None;
        }
        // Relaxed: the index only has to be unique; the chunk's data is published by the
        // AcqRel in `finish`.
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.total).then_some(i)
    }

    /// Marks a claimed chunk finished; true for exactly one caller, the last.
    #[inline]
    pub fn finish(&self) -> bool {
        // AcqRel: the last finisher acquires every other chunk's writes (released here) so
        // the completion that follows sees the whole loop's effects.
        self.finished.fetch_add(1, Ordering::AcqRel) + 1 == self.total
    }
}

/// The count of a scope's unfinished jobs, which tells the scope's owner when the last
/// one is done (`JobSystem::scope`).
///
/// The owner thread's spawns while the body runs, usually nearly all of them, are counted
/// apart in `owner_spawns` with a plain load and store (only the owner touches it), not an
/// atomic read-modify-write, which cost about a tenth of a spawn. `pending` starts at
/// [`Self::OWNER_BIAS`]; spawns from other threads add one, every finished job takes one
/// off, so while the body runs jobs can finish without having been added, and the bias
/// keeps `pending` far above zero. When the body returns, the owner takes the bias off and
/// adds its spawns in one `fetch_sub`; from then on `pending` is the number of jobs not
/// yet finished, and the `finish` that brings it to zero reports it. Before that it is at
/// least `OWNER_BIAS` less the owner's spawns, which no real count of jobs comes near.
pub struct ScopeCount {
    pending: AtomicUsize,
    /// Jobs the owner spawned while the body ran (owner thread only).
    owner_spawns: AtomicUsize,
}

impl Default for ScopeCount {
    fn default() -> Self {
        Self::new()
    }
}

impl ScopeCount {
    /// What `pending` starts at, standing for the body.
    pub const OWNER_BIAS: usize = usize::MAX / 2;

    /// A count for a body that has not returned yet.
    #[must_use]
    pub fn new() -> Self {
        Self {
            pending: AtomicUsize::new(Self::OWNER_BIAS),
            owner_spawns: AtomicUsize::new(0),
        }
    }

    /// A job spawned by the owner thread while the body runs. Owner thread only, before
    /// [`body_done`](Self::body_done).
    #[inline]
    pub fn owner_spawned(&self) {
        // Relaxed: only the owner thread reads or writes `owner_spawns`.
        let n = self.owner_spawns.load(Ordering::Relaxed);
        self.owner_spawns.store(n + 1, Ordering::Relaxed);
    }

    /// A job spawned by any other thread, or by the owner after the body returned. The
    /// spawner is a job of the scope (or the body) that has not finished yet, so the count
    /// cannot have reached zero.
    #[inline]
    pub fn spawned(&self) {
        // Relaxed: the spawner's own unfinished job keeps `pending` above zero; ordering
        // with the job's effects comes from the AcqRel `fetch_sub` in `finish`.
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// One job finished; true if it was the last and the body has returned.
    #[must_use]
    #[inline]
    pub fn job_done(&self) -> bool {
        self.finish(1)
    }

    /// The body returned (owner thread); true if every job had finished already.
    #[must_use]
    pub fn body_done(&self) -> bool {
        let spawned = self.owner_spawns.load(Ordering::Relaxed);
        self.finish(Self::OWNER_BIAS - spawned)
    }

    #[inline]
    fn finish(&self, n: usize) -> bool {
        // AcqRel: the last finisher acquires every job's effects before it reports, and the
        // latch it then sets publishes them to the waiting owner.
        self.pending.fetch_sub(n, Ordering::AcqRel) == n
    }
}
