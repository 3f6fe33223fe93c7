//! The lock-free core of a team: a leader thread runs a sequence of stages, each a set of
//! `n` items, and helpers that joined the team claim items of the current stage while
//! the leader claims them too. Box2D v3's solver stages are the model: a stage boundary is
//! one atomic store and one counter to wait on, not a job per block and a wake-up per
//! stage, so a solver with hundreds of stages per step pays almost nothing per stage.
//!
//! ```text
//!  state   = seq (32 bits) | back (16) | front (16)   one word: claims of a stale stage fail
//!  leader: write stage fn -> done = 0 -> state = (seq + 1, n, 0)   [Release]
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
//! This module is compiled under loom (the job-system glue that spawns helpers is in
//! `team.rs`, which is not).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering, UnsafeCell, lock, spin_hint};

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

const fn pack(seq: u64, back: u64, front: u64) -> u64 {
    (seq << 32) | (back << 16) | front
}

const fn unpack(state: u64) -> (u64, u64, u64) {
    (state >> 32, (state >> 16) & 0xffff, state & 0xffff)
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
        }
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
        let (seq, back, front) = unpack(state);
        if front >= back {
            return Claim::Empty;
        }
        let (claimed, next) = if from_back {
            (back - 1, pack(seq, back - 1, front))
        } else {
            (front, pack(seq, back, front + 1))
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
        self.state.store(
            pack((seq + 1) & 0xffff_ffff, n as u64, 0),
            Ordering::Release,
        );
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
