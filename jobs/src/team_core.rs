//! The lock-free core of a team: a leader thread runs a sequence of stages, each a set of
//! `n` items, and helpers that joined the team claim items of the current stage while
//! the leader claims them too. Box2D v3's solver stages are the model: a stage boundary is
//! one atomic store and one counter to wait on, not a job per block and a wake-up per
//! stage, so a solver with hundreds of stages per step pays almost nothing per stage.
//!
//! ```text
//!  state   = seq (31 bits) | ordered (1) | back (16) | front (16)   one word: claims of
//!            a stale stage fail
//!  leader: write stage fn -> done = 0 -> state = (seq + 1, ordered, n, 0)   [Release]
//!          claim from the front + run items ... wait done == n    [Acquire]
//!  helper: CAS state (seq, b, f) -> (seq, b - 1, f)                [AcqRel]
//!          read stage fn, run item b - 1, done += 1               [Release]
//! ```
//!
//! The unclaimed items of a stage are `front..back`. The leader claims from the front and
//! helpers from the back, so from stage to stage each thread tends to get the same end
//! of the item range. A solver's blocks follow the constraint order in every colour, so
//! the bodies a thread writes in one stage are mostly the ones it wrote in the last, and
//! stay in its core's cache instead of moving between cores at every stage (Box2D v3
//! starts each worker at its own block for the same reason). Which thread runs an item
//! never changes what the item computes.
//!
//! **Why a helper never runs a stale stage's function.** The claim and the stage's number
//! are one word, so a claim succeeds only while its stage still has unclaimed items. The
//! leader writes the next stage's function only after `done == n`, that is after every
//! item of this stage, the helper's included, has finished, and so after the helper read
//! the function (it reads it right after its successful claim). The loom models
//! (`loom-tests/tests/team.rs`) check this through the stage cell, an `UnsafeCell` whose
//! every access loom tracks.
//!
//! **Why the leader may return.** Helpers count themselves in `active` when they join
//! and out when they leave; the leader closes the team (one `SeqCst` store) and waits for
//! `active == 0`. A helper that joins after the close sees it (the `SeqCst` order of its
//! increment and its check against the close and the leader's read of `active`) and leaves
//! without touching a stage, or finds the next run open and serves that one.
//!
//! **Ordered stages** ([`TeamCore::run_ordered`]): the items of an ordered stage come with
//! a [`StageOrder`], per item the earlier items it must follow (a solver pass over all its
//! colours: a block of one colour follows the blocks of earlier colours that wrote its
//! bodies). Every thread claims an ordered stage from the front, so items are claimed in
//! index order; an item first waits until each of its dependencies has finished (an epoch
//! stored with Release when an item ends, read with Acquire by the waiter, so whatever the
//! dependency wrote happens before the item runs), then runs. No deadlock: dependencies
//! have lower indices, so they were claimed earlier, and the lowest claimed unfinished
//! item has all its dependencies finished and runs. One ordered stage replaces a chain
//! of stages (one per colour) and its barriers; results are the same because each item
//! still sees exactly the writes of the items it followed before.
//!
//! **Sleeping helpers.** A helper that found no item for a while (`team.rs` spins, then
//! yields, then gives up after a bounded time) sleeps in [`TeamCore::sleep`] until the
//! leader publishes a stage or closes the run, so an idle worker in a team whose leader
//! does long serial work does not burn its core. The handshake is Dekker's, as in
//! `sleep.rs`: the helper counts itself in `sleepers`, then (after a `SeqCst` fence)
//! re-checks for items or the close under the bed's lock and waits there; the leader
//! publishes, then (after a `SeqCst` fence) reads `sleepers` and, if any, bumps the bed's
//! generation under the lock and wakes them all. Either the helper's re-check sees the
//! stage, or the leader sees the helper counted; and the lock keeps the bump from falling
//! between the re-check and the wait. A stage published while nobody sleeps costs the
//! leader one fence and one load.
//!
//! This module is compiled under loom (the job-system glue that spawns helpers is in
//! `team.rs`, which is not).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::sync::{
    AtomicU64, AtomicUsize, Condvar, Mutex, Ordering, UnsafeCell, fence, lock, spin_hint,
};

/// The most items one stage may have (`back` and `front` are 16 bits of the state word).
pub const MAX_STAGE_ITEMS: usize = u16::MAX as usize;

/// A stage's function, type-erased: `call(data, i)` runs item `i` of the closure at `data`.
#[derive(Clone, Copy)]
struct StageFn {
    data: *const (),
    call: unsafe fn(*const (), usize),
}

/// Calls the closure of type `F` at `data`.
///
/// # Safety
/// `data` points to a live `F`.
unsafe fn trampoline<F: Fn(usize) + Sync>(data: *const (), i: usize) {
    // SAFETY: the caller promises `data` is a live `F` (see `TeamCore::run`).
    let f = unsafe { &*data.cast::<F>() };
    f(i);
}

/// Spins a little, then gives the core away: the thread waited for may have lost its
/// core on an oversubscribed machine.
#[inline]
fn backoff(spins: &mut u32) {
    spin_hint();
    *spins += 1;
    #[cfg(not(loom))]
    if *spins > 64 {
        std::thread::yield_now();
    }
}

/// What one claim attempt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Claimed and ran an item.
    Ran,
    /// Another thread moved the state first; try again.
    Contended,
    /// The current stage has no unclaimed item.
    Empty,
}

/// The stage number's bits in the state word (it wraps; a claim compares whole words).
const SEQ_MASK: u64 = (1 << 31) - 1;
/// The state word's bit for an ordered stage (every thread claims it from the front).
const ORDERED: u64 = 1 << 32;

const fn pack(seq: u64, back: u64, front: u64) -> u64 {
    (seq << 33) | (back << 16) | front
}

/// The stage number (with the ordered bit: a new stage always changes it), the back and
/// the front.
const fn unpack(state: u64) -> (u64, u64, u64) {
    (state >> 32, (state >> 16) & 0xffff, state & 0xffff)
}

/// Per item of an ordered stage, the earlier items it waits for; see the [module
/// docs](self). Build it once per layout (it keeps its buffers) and pass it to
/// [`TeamCore::run_ordered`] (or [`TeamScope::run_ordered`](crate::TeamScope::run_ordered))
/// as often as the layout holds.
#[derive(Default)]
pub struct StageOrder {
    /// Item `i`'s dependencies are `deps[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    deps: Vec<u32>,
    /// The epoch of the run in which each item last finished.
    done: Vec<AtomicU64>,
    /// The current run's epoch (every run takes a new one, so `done` is never reset).
    epoch: u64,
}

impl Clone for StageOrder {
    /// The same items and dependencies; no item has finished in the copy's runs yet.
    fn clone(&self) -> Self {
        Self {
            starts: self.starts.clone(),
            deps: self.deps.clone(),
            done: self.done.iter().map(|_| AtomicU64::new(0)).collect(),
            epoch: 0,
        }
    }
}

impl std::fmt::Debug for StageOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageOrder")
            .field("items", &self.len())
            .field("dependencies", &self.deps.len())
            .finish_non_exhaustive()
    }
}

impl StageOrder {
    /// An order of no items.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every item (keeps the buffers).
    pub fn clear(&mut self) {
        self.starts.clear();
        self.deps.clear();
    }

    /// Items in the order.
    #[must_use]
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether the order has no item.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends an item that runs after each item of `deps`, and returns its index.
    ///
    /// # Panics
    /// When a dependency is not an earlier item (a caller bug: it could deadlock), or
    /// there are more than `u32::MAX` dependencies in all.
    pub fn push(&mut self, deps: &[u32]) -> usize {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let item = self.starts.len() - 1;
        for &d in deps {
            assert!(
                (d as usize) < item,
                "item {item} may only wait for earlier items, got {d}"
            );
        }
        self.deps.extend_from_slice(deps);
        let end = u32::try_from(self.deps.len()).expect("at most u32::MAX dependencies");
        self.starts.push(end);
        if self.done.len() <= item {
            self.done.push(AtomicU64::new(0));
        }
        item
    }

    /// The items that item `i` waits for.
    #[must_use]
    pub fn deps(&self, i: usize) -> &[u32] {
        &self.deps[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Waits until every dependency of item `i` has finished in the current run; returns
    /// whether it had to wait.
    fn wait(&self, i: usize) -> bool {
        let mut waited = false;
        for &d in self.deps(i) {
            let mut spins = 0u32;
            // Acquire: pairs with the Release store in `Finish::drop`, so what item `d`
            // wrote (and what it saw of its own dependencies) happens before item `i`.
            while self.done[d as usize].load(Ordering::Acquire) != self.epoch {
                waited = true;
                backoff(&mut spins);
            }
        }
        waited
    }
}

/// Marks an item of an ordered stage finished when it ends, also by a panic (its
/// dependants must not wait forever; the panic is re-raised after the stage).
struct Finish<'a>(&'a AtomicU64, u64);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        // Release: the item's writes happen before a dependant's Acquire load sees this.
        self.0.store(self.1, Ordering::Release);
    }
}

/// The shared state of a team; see the [module docs](self). One leader at a time.
pub struct TeamCore {
    state: AtomicU64,
    /// Items of the current stage that have finished.
    done: AtomicUsize,
    /// The current stage's function: written by the leader before it publishes a stage,
    /// read by a helper after a successful claim.
    stage: UnsafeCell<Option<StageFn>>,
    /// `run id << 1 | open`.
    run: AtomicUsize,
    /// Helpers inside the team.
    active: AtomicUsize,
    /// Helper jobs spawned and not started.
    pending: AtomicUsize,
    /// The first panic of an item in the current stage.
    panic: Mutex<Option<Box<dyn Any + Send + 'static>>>,
    /// Helpers in [`sleep`](Self::sleep) (counted before they re-check for work).
    sleepers: AtomicUsize,
    /// The bed's generation: the leader bumps it (under this lock) to wake sleepers.
    bed: Mutex<u64>,
    /// Where sleeping helpers wait.
    wake: Condvar,
}

// SAFETY: the raw pointer in `stage` is only dereferenced under the protocol above, while
// the closure it points to is alive, and that closure is `Sync` (`run` requires it); the
// rest is atomics and a mutex.
unsafe impl Send for TeamCore {}
// SAFETY: as for `Send`: `stage` is written only by the leader between stages and read by
// a helper only after a claim that orders the read after the write and before the next
// write (loom-checked).
unsafe impl Sync for TeamCore {}

impl Default for TeamCore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for TeamCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (seq, back, front) = unpack(self.state.load(Ordering::Relaxed));
        f.debug_struct("TeamCore")
            .field("stage", &seq)
            .field("unclaimed", &(front..back))
            .field("active", &self.active.load(Ordering::Relaxed))
            .finish()
    }
}

impl TeamCore {
    /// A closed team with no stage.
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            stage: UnsafeCell::new(None),
            run: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
            sleepers: AtomicUsize::new(0),
            bed: Mutex::new(0),
            wake: Condvar::new(),
        }
    }

    /// Helper: sleeps until the leader publishes a stage or closes run `id` (see the
    /// [module docs](self)); returns at once if the current stage has unclaimed items or
    /// the run is closed. May also return for a stage another helper was woken for:
    /// callers loop.
    pub fn sleep(&self, id: usize) {
        // SeqCst and the fence: the count is visible before the re-check below; pairs
        // with the fence in `wake_sleepers`.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let mut bed = lock(&self.bed);
        let generation = *bed;
        // The re-check, under the lock: a leader that published before it finds us
        // counted and bumps the generation under this lock, so not before we wait.
        let (_, back, front) = unpack(self.state.load(Ordering::Acquire));
        let open = self.run.load(Ordering::SeqCst) == (id << 1) | 1;
        if open && front >= back {
            while *bed == generation {
                #[cfg(not(loom))]
                {
                    bed = self
                        .wake
                        .wait(bed)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                #[cfg(loom)]
                {
                    bed = self.wake.wait(bed).unwrap();
                }
            }
        }
        drop(bed);
        // Relaxed: only the leader's wake reads it, and a stale count only costs it a
        // needless wake.
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
    }

    /// Leader: after publishing a stage or closing the run, wakes the helpers asleep in
    /// [`sleep`](Self::sleep), if any.
    #[inline]
    fn wake_sleepers(&self) {
        // SeqCst fence: orders the publication before the read of `sleepers`; pairs with
        // the fence in `sleep`.
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) == 0 {
            return;
        }
        self.wake_all();
    }

    #[cold]
    fn wake_all(&self) {
        let mut bed = lock(&self.bed);
        *bed = bed.wrapping_add(1);
        drop(bed);
        self.wake.notify_all();
    }

    /// Leader: opens a new run of the team; returns its id, which helpers pass to
    /// [`join`](Self::join).
    pub fn open(&self) -> usize {
        // Relaxed load: only the leader writes `run`.
        let id = ((self.run.load(Ordering::Relaxed) >> 1) + 1) & (usize::MAX >> 1);
        // SeqCst: ordered against helpers' `join` (see `close`).
        self.run.store((id << 1) | 1, Ordering::SeqCst);
        id
    }

    /// Helper: enters the run that is open now, if any, and returns its id. After `Some`,
    /// call [`leave`](Self::leave) exactly once. A helper spawned for an earlier run
    /// serves a later one just as well: nothing it does depends on which run it joins.
    pub fn join(&self) -> Option<usize> {
        // SeqCst increment, then SeqCst check: either the leader's `close` comes later in
        // the SeqCst order (then its read of `active` sees us and it waits for our
        // `leave`), or before (then we see the run closed here, or the next one open,
        // whose `close` will wait for us in turn).
        self.active.fetch_add(1, Ordering::SeqCst);
        let run = self.run.load(Ordering::SeqCst);
        if run & 1 == 1 {
            Some(run >> 1)
        } else {
            self.leave();
            None
        }
    }

    /// Leader: counts a helper job it spawned and has not seen start; returns how many
    /// are pending now, so that the leader of the next run spawns only what is missing.
    pub fn add_pending(&self, n: usize) -> usize {
        // Relaxed: a hint for how many helpers to spawn; correctness never depends on it.
        self.pending.fetch_add(n, Ordering::Relaxed) + n
    }

    /// Helper jobs spawned and not started yet.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Helper: its job has started (before [`join`](Self::join)).
    pub fn started(&self) {
        self.pending.fetch_sub(1, Ordering::Relaxed);
    }

    /// Helper: whether run `id` is still open (a helper loops while it is).
    pub fn is_open(&self, id: usize) -> bool {
        // Relaxed: a stale "open" only costs another look; the claim protocol, not this,
        // orders stage data.
        self.run.load(Ordering::Relaxed) == (id << 1) | 1
    }

    /// Helper: leaves the team.
    pub fn leave(&self) {
        // Release: everything this helper did happens before the leader's `close` returns
        // (its SeqCst read of `active` is an acquire).
        self.active.fetch_sub(1, Ordering::Release);
    }

    /// Leader: closes run `id` and returns once every helper has left it.
    pub fn close(&self, id: usize) {
        self.run.store(id << 1, Ordering::SeqCst);
        self.wake_sleepers();
        let mut spins = 0u32;
        while self.active.load(Ordering::SeqCst) != 0 {
            backoff(&mut spins);
        }
    }

    /// Helper: claims one item of the current stage, from the back, and runs it.
    pub fn work_one(&self) -> Claim {
        self.claim(true)
    }

    /// Claims one item of the current stage, from the back (helpers) or the front (the
    /// leader), and runs it.
    fn claim(&self, from_back: bool) -> Claim {
        // Acquire: pairs with the leader's Release publication of the stage (and, through
        // the CAS chain, with earlier claims), so the stage function is visible.
        let state = self.state.load(Ordering::Acquire);
        let (_, back, front) = unpack(state);
        if front >= back {
            return Claim::Empty;
        }
        // An ordered stage is claimed from the front by every thread (see the module docs).
        let from_back = from_back && state & ORDERED == 0;
        let (claimed, next) = if from_back {
            (back - 1, (state & !0xffff_0000) | ((back - 1) << 16))
        } else {
            (front, (state & !0xffff) | (front + 1))
        };
        // AcqRel: acquire as above; release so the next claimer's acquire continues the
        // chain back to the publication.
        if self
            .state
            .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return Claim::Contended;
        }
        let stage = self.stage.with(|p| {
            // SAFETY: our claim succeeded on a stage with an unclaimed item, after the
            // leader published that stage (acquired above), and the leader writes the
            // cell again only after this item is done (it waits for `done == n`), which
            // our Release increment below orders after this read.
            unsafe { *p }
        });
        let stage = stage.expect("a published stage has a function");
        let ran = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: `data` is the leader's closure of the type `call` was made for;
            // it lives until the leader sees `done == n` (`run` does not return before),
            // which is after this call. `claimed` is below `n` (it was in the stage's
            // unclaimed range `front..back`, and `back` starts at `n`), and the CAS above
            // gave it to this thread alone, whichever end it was taken from.
            unsafe { (stage.call)(stage.data, claimed as usize) }
        }));
        if let Err(payload) = ran {
            lock(&self.panic).get_or_insert(payload);
        }
        // Release: this item's writes happen before the leader's Acquire read of `done`.
        self.done.fetch_add(1, Ordering::Release);
        Claim::Ran
    }

    /// Leader: runs `f(i)` for every `i` in `0..n`, each exactly once, on this thread and
    /// any helpers in the team, and returns when all are done. A panic of any item is
    /// re-raised here, after the whole stage has finished.
    ///
    /// # Panics
    /// When `n` exceeds [`MAX_STAGE_ITEMS`] (a caller bug: split the work coarser).
    pub fn run<F: Fn(usize) + Sync>(&self, n: usize, f: &F) {
        self.run_timed(n, f, || 0);
    }

    /// [`run`](Self::run) that also returns when the leader started and stopped waiting
    /// for helpers to finish their items, by the clock `now` (equal when it did not wait):
    /// a trace shows that time as waiting, not work.
    ///
    /// # Panics
    /// As [`run`](Self::run).
    pub fn run_timed<F: Fn(usize) + Sync>(
        &self,
        n: usize,
        f: &F,
        now: impl Fn() -> u64,
    ) -> (u64, u64) {
        self.run_stage(n, false, f, now)
    }

    /// Leader: runs `f(i)` for every item `i` of `order`, each exactly once and only after
    /// its dependencies have finished, on this thread and any helpers (all claiming from
    /// the front). A panic of any item is re-raised here, after the whole stage.
    ///
    /// # Panics
    /// As [`run`](Self::run).
    pub fn run_ordered<F: Fn(usize) + Sync>(&self, order: &mut StageOrder, f: &F) {
        self.run_ordered_timed(order, f, || 0, |_, _| {});
    }

    /// [`run_ordered`](Self::run_ordered) with the clock of
    /// [`run_timed`](Self::run_timed), which it returns as that does; `waited(start,
    /// end)` is called on the thread that waited whenever an item waited for its
    /// dependencies (a trace books that as waiting, not work).
    ///
    /// # Panics
    /// As [`run`](Self::run).
    pub fn run_ordered_timed<F: Fn(usize) + Sync>(
        &self,
        order: &mut StageOrder,
        f: &F,
        now: impl Fn() -> u64 + Sync,
        waited: impl Fn(u64, u64) + Sync,
    ) -> (u64, u64) {
        // Only the leader changes the epoch, between stages (no item reads it meanwhile).
        order.epoch += 1;
        let order = &*order;
        let epoch = order.epoch;
        let item = |i: usize| {
            let _finish = Finish(&order.done[i], epoch);
            let start = now();
            if order.wait(i) {
                waited(start, now());
            }
            f(i);
        };
        self.run_stage(order.len(), true, &item, &now)
    }

    fn run_stage<F: Fn(usize) + Sync>(
        &self,
        n: usize,
        ordered: bool,
        f: &F,
        now: impl Fn() -> u64,
    ) -> (u64, u64) {
        assert!(
            n <= MAX_STAGE_ITEMS,
            "a team stage has at most {MAX_STAGE_ITEMS} items, got {n}"
        );
        if n == 0 {
            return (0, 0);
        }
        let stage = StageFn {
            data: std::ptr::from_ref(f).cast::<()>(),
            call: trampoline::<F>,
        };
        self.stage.with_mut(|p| {
            // SAFETY: the previous stage is complete (`done == n` was seen, or there was
            // none), so no helper reads the cell until the Release store below publishes
            // this stage and it claims an item of it.
            unsafe { *p = Some(stage) };
        });
        // Relaxed: published by the Release store of `state`.
        self.done.store(0, Ordering::Relaxed);
        // Relaxed load: only the leader starts stages, and the last stage is exhausted.
        let (seq, _, _) = unpack(self.state.load(Ordering::Relaxed));
        let mode = if ordered { ORDERED } else { 0 };
        self.state.store(
            pack(((seq >> 1) + 1) & SEQ_MASK, n as u64, 0) | mode,
            Ordering::Release,
        );
        self.wake_sleepers();
        loop {
            match self.claim(false) {
                Claim::Empty => break,
                Claim::Ran | Claim::Contended => {}
            }
        }
        // Acquire: pairs with every item's Release increment. A helper that claimed the
        // last item may have lost its core: after a short spin, give the core away.
        let mut waited = (0, 0);
        if self.done.load(Ordering::Acquire) < n {
            let start = now();
            let mut spins = 0u32;
            while self.done.load(Ordering::Acquire) < n {
                backoff(&mut spins);
            }
            waited = (start, now());
        }
        if let Some(payload) = lock(&self.panic).take() {
            resume_unwind(payload);
        }
        waited
    }
}
