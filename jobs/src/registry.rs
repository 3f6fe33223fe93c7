//! The registry: every queue and every thread of one job system, and the loop each
//! thread runs.
//!
//! Where a thread looks for work, in order: its own deque (newest first, for cache
//! locality), its inbox, the injector, then the other workers' deques in a random order
//! (oldest first); every [`FAIR_INTERVAL`]-th look starts elsewhere, so a job that keeps
//! respawning itself cannot hide the other queues from its thread. A thread that finds
//! nothing spins briefly (`Spin`), then parks via the idle set (see `sleep.rs`). A thread
//! that *waits* for a latch or counter runs the same loop, so waiting always helps. Jobs
//! spawned with high priority sit in a lane of their own that every thread looks at
//! before all of these.
//!
//! **Registration.** Workers are registered for the life of the system. Any other thread
//! that waits, helps or asks for a token is registered too (an *external* thread, such as
//! the game's main thread): it gets an index, an inbox and (for the first
//! [`MAX_EXTERNAL_DEQUES`] at a time) a deque. Its membership lives in a thread-local
//! [`ExternalEntry`] and ends when the thread unregisters (`Registration` guard), exits,
//! or shuts the system down itself, at once, even while a wait further up its stack still
//! uses the entry. Ending hands the thread's queued work over ([`Registry::retire`]): its
//! inbox is closed and its jobs, with those left in its deque (once the last user of the
//! entry lets go of it), move to the shared injector, where every thread can reach
//! them. Its index and deque are then reused by the next thread that registers, so a system
//! keeps no memory for threads that have gone, and a thread keeps nothing for systems that
//! have gone (dead entries are pruned whenever it registers anywhere).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Instant;

use crate::deque::{self, Steal, Stealer};
use crate::inbox::Inbox;
use crate::injector::Injector;
use crate::job::Job;
use crate::latch::{PanicPayload, WaitTarget};
use crate::sleep::{IdleSet, Parker};
use crate::spin::Spin;
use crate::sync::{Arc, AtomicBool, AtomicUsize, Mutex, Ordering, lock};
use crate::trace::{TraceEvent, WAIT_LABEL};

/// Per-thread state visible to other threads: how to wake it, its inbox, its trace.
pub(crate) struct ThreadSlot {
    pub(crate) index: usize,
    /// Distinguishes the threads that held the same index one after another, so a token
    /// of a thread that has left never reaches its successor.
    pub(crate) generation: u64,
    pub(crate) name: String,
    pub(crate) parker: Arc<Parker>,
    pub(crate) inbox: Inbox,
    pub(crate) trace: Mutex<Vec<TraceEvent>>,
    /// With no workers, where this thread's full deque overflows (see `Overflow`).
    overflow: Overflow,
}

/// The overflow of an external thread's deque in a system with no workers. Nobody steals
/// there, so sending half a full deque through the shared injector (one allocation-heavy
/// push and pop per job) would only slow the one thread that runs everything. Instead the
/// half moves here in one batch under one lock, and comes back in batches when the deque
/// runs dry. It lives in the thread's slot, not in a thread-local, so every thread of the
/// system reaches it (`Registry::take_overflow`), and leaving hands it over like the rest.
#[derive(Default)]
struct Overflow {
    /// Mirror of `jobs.len()`, read without the lock.
    len: AtomicUsize,
    jobs: Mutex<std::collections::VecDeque<Job>>,
}

impl Overflow {
    fn is_empty(&self) -> bool {
        // SeqCst: part of the sleep protocol like the inbox's length (see `sleep.rs`).
        self.len.load(Ordering::SeqCst) == 0
    }

    /// Updates the length mirror and `nonempty` (the registry's count of non-empty
    /// overflows) after a change under the lock; transitions of one overflow are
    /// serialised by its lock, so the count is exact.
    fn publish(&self, q: &std::collections::VecDeque<Job>, before: usize, nonempty: &AtomicUsize) {
        // SeqCst: read by sleepers after their announce fence (see `sleep.rs`).
        self.len.store(q.len(), Ordering::SeqCst);
        match (before == 0, q.is_empty()) {
            (true, false) => {
                nonempty.fetch_add(1, Ordering::SeqCst);
            }
            (false, true) => {
                nonempty.fetch_sub(1, Ordering::SeqCst);
            }
            _ => {}
        }
    }

    /// Moves half of the full deque `d` here (oldest first).
    fn spill(&self, d: &deque::Worker, nonempty: &AtomicUsize) {
        let mut q = lock(&self.jobs);
        let before = q.len();
        d.take_half(|j| q.push_back(j));
        self.publish(&q, before, nonempty);
    }

    /// Moves up to half a deque of the newest jobs back into `d` and returns one more.
    #[inline(never)]
    fn refill(&self, d: &deque::Worker, nonempty: &AtomicUsize) -> Option<Job> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.jobs);
        let before = q.len();
        let job = q.pop_back();
        for _ in 0..crate::sync::DEQUE_CAPACITY / 2 {
            let Some(j) = q.pop_back() else { break };
            if let Err(j) = d.push(j) {
                q.push_back(j);
                break;
            }
        }
        self.publish(&q, before, nonempty);
        job
    }

    /// Takes the oldest job (another thread, or shutdown).
    fn pop_oldest(&self, nonempty: &AtomicUsize) -> Option<Job> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.jobs);
        let before = q.len();
        let job = q.pop_front();
        self.publish(&q, before, nonempty);
        job
    }
}

impl ThreadSlot {
    fn new(index: usize, generation: u64, name: String) -> Arc<Self> {
        Arc::new(Self {
            index,
            generation,
            name,
            parker: Arc::new(Parker::new()),
            inbox: Inbox::new(),
            trace: Mutex::new(Vec::new()),
            overflow: Overflow::default(),
        })
    }
}

/// External threads beyond this many still work, but push to the shared injector
/// instead of a deque of their own.
pub(crate) const MAX_EXTERNAL_DEQUES: usize = 16;

pub(crate) type Hook = Arc<dyn Fn(usize) + Send + Sync + 'static>;

/// The registered threads by index. An index freed by a thread that left is reused (with a
/// new generation), so the table is as long as the most threads registered at one time.
pub(crate) struct Threads {
    pub(crate) slots: Vec<Option<Arc<ThreadSlot>>>,
    free: Vec<usize>,
    next_generation: u64,
    /// Owner ends of the external deques whose threads left (empty), with their position
    /// in `external_stealers`; the next external thread to register takes one.
    spare_deques: Vec<(usize, deque::Worker)>,
}

impl Threads {
    /// The live threads' slots, in index order.
    pub(crate) fn live(&self) -> impl Iterator<Item = &Arc<ThreadSlot>> {
        self.slots.iter().flatten()
    }
}

pub(crate) struct Registry {
    pub(crate) id: usize,
    pub(crate) stealers: Box<[Stealer]>,
    /// Deques of registered external threads (the game's main thread...), in slot order
    /// after the workers: external thread `k` with slot `num_workers + k` owns entry `k`.
    /// Filled once each, so thieves read them without a lock.
    pub(crate) external_stealers: Box<[OnceLock<Stealer>]>,
    /// Number of filled entries of `external_stealers`.
    pub(crate) external_count: AtomicUsize,
    pub(crate) injector: Injector,
    /// High-priority jobs: every thread looks here before anywhere else.
    pub(crate) high: Injector,
    pub(crate) idle: IdleSet,
    /// Every registered thread; the first `stealers.len()` are the workers.
    pub(crate) threads: Mutex<Threads>,
    /// Trace events of threads that left, kept for `take_trace`.
    pub(crate) retired_trace: Mutex<Vec<TraceEvent>>,
    /// Payloads of panics that escaped fire-and-forget jobs, until `take_panics`.
    pub(crate) panics: Mutex<Vec<PanicPayload>>,
    pub(crate) terminate: AtomicBool,
    /// Number of external threads whose `Overflow` holds jobs; lets `has_work` and
    /// `take_overflow` skip the scan of every slot.
    overflowing: AtomicUsize,
    pub(crate) tracing: AtomicBool,
    pub(crate) epoch: Instant,
    pub(crate) unobserved_panics: AtomicUsize,
    pub(crate) on_start: Option<Hook>,
    pub(crate) on_exit: Option<Hook>,
}

static NEXT_REGISTRY_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

impl Registry {
    /// A registry for `workers` worker threads; returns the owners' ends of their deques.
    pub(crate) fn new(
        workers: usize,
        names: impl Fn(usize) -> String,
        on_start: Option<Hook>,
        on_exit: Option<Hook>,
    ) -> (Arc<Self>, Vec<deque::Worker>) {
        let mut owners = Vec::with_capacity(workers);
        let mut stealers = Vec::with_capacity(workers);
        let mut slots = Vec::with_capacity(workers + 1);
        for i in 0..workers {
            let (w, s) = deque::new();
            owners.push(w);
            stealers.push(s);
            slots.push(Some(ThreadSlot::new(i, 0, names(i))));
        }
        let registry = Arc::new(Self {
            id: NEXT_REGISTRY_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            stealers: stealers.into_boxed_slice(),
            external_stealers: (0..MAX_EXTERNAL_DEQUES).map(|_| OnceLock::new()).collect(),
            external_count: AtomicUsize::new(0),
            injector: Injector::new(),
            high: Injector::new(),
            idle: IdleSet::new(workers + 8),
            threads: Mutex::new(Threads {
                slots,
                free: Vec::new(),
                next_generation: 1,
                spare_deques: Vec::new(),
            }),
            retired_trace: Mutex::new(Vec::new()),
            panics: Mutex::new(Vec::new()),
            terminate: AtomicBool::new(false),
            overflowing: AtomicUsize::new(0),
            tracing: AtomicBool::new(false),
            epoch: Instant::now(),
            unobserved_panics: AtomicUsize::new(0),
            on_start,
            on_exit,
        });
        (registry, owners)
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.stealers.len()
    }

    pub(crate) fn slot(&self, index: usize) -> Option<Arc<ThreadSlot>> {
        lock(&self.threads).slots.get(index).cloned().flatten()
    }

    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Queues a job from any thread: the current worker's deque when called on one of our
    /// workers, the calling external thread's deque if it has one, the injector otherwise.
    /// Wakes an idle thread if there is one (see [`push_waited`](Self::push_waited)).
    #[inline]
    pub(crate) fn push(self: &Arc<Self>, job: Job) {
        self.push_with(job, false);
    }

    /// Like [`push`](Self::push), for a job whose pusher will wait for it (join, scope):
    /// progress is then guaranteed by the waiter, so waking an idle thread is only a hint
    /// for parallelism and skips the `SeqCst` fence that a guaranteed wake-up needs.
    #[inline]
    pub(crate) fn push_waited(self: &Arc<Self>, job: Job) {
        self.push_with(job, true);
    }

    #[inline]
    fn push_with(self: &Arc<Self>, job: Job, waited: bool) {
        if with_worker(self, |w| w.is_some()) {
            with_worker(self, |w| {
                let w = w.expect("joule-jobs: the worker checked just above");
                let was_empty = w.deque.is_empty();
                w.push_local(job);
                // A worker always comes back to its own deque, so a job there can never
                // be stranded: waking a sleeper is only for parallelism, and only the
                // first job of a burst needs to do it.
                if was_empty {
                    self.idle.notify_hint();
                }
            });
            return;
        }
        // The job is not moved into a closure (the thread-local's `with` is not inlined):
        // every move of a 64-byte job costs, and this is the path of every spawn.
        let was_empty = match self.external_entry() {
            Some(entry) => {
                let was_empty = !entry.has_local_work();
                entry.push(self, job);
                was_empty
            }
            None => {
                self.injector.push(job);
                true
            }
        };
        if !waited {
            self.idle.notify_one();
        } else if was_empty {
            // As on a worker: the waiter guarantees progress, and the first job of a burst
            // wakes one helper; helpers that find more wake the next (`wake_more`).
            self.idle.notify_hint();
        }
    }

    /// Work spreads by a chain of wake-ups rather than one per job: a thread that took a
    /// job from a shared place (another thread's deque, the injector) and sees more left
    /// there wakes one more sleeper, which does the same. A burst of n jobs so wakes up to
    /// n sleepers, one wake-up latency apart, while a burst of one wakes at most one, and
    /// the pusher pays for one wake-up per burst, not per job (Go's scheduler spreads
    /// work the same way: a spinning thread that finds work wakes another).
    #[inline]
    fn wake_more(&self, more_left: bool) {
        if more_left {
            self.idle.notify_hint();
        }
    }

    /// A job from the injector, waking another sleeper when more are queued there.
    #[inline]
    pub(crate) fn pop_injected(&self) -> Option<Job> {
        let job = self.injector.pop()?;
        self.wake_more(!self.injector.is_empty());
        Some(job)
    }

    /// The calling external thread's deque, if it registered and got one.
    pub(crate) fn external_entry(&self) -> Option<Rc<ExternalEntry>> {
        EXTERNAL.with(|ext| ext.borrow().iter().find(|e| e.id == self.id).cloned())
    }

    /// Every deque thieves may take from: the workers', then the external threads'.
    fn for_each_stealer(&self, mut f: impl FnMut(usize, &Stealer) -> bool) {
        for (i, s) in self.stealers.iter().enumerate() {
            if !f(i, s) {
                return;
            }
        }
        // Acquire: pairs with the Release increment in `external_slot`, so the entries
        // below the count are initialised.
        let n = self.external_count.load(Ordering::Acquire);
        for (k, s) in self.external_stealers[..n].iter().enumerate() {
            if let Some(s) = s.get()
                && !f(self.stealers.len() + k, s)
            {
                return;
            }
        }
    }

    /// A job from some external thread's overflow (only systems without workers have
    /// any), oldest first.
    pub(crate) fn take_overflow(&self) -> Option<Job> {
        if self.num_workers() != 0 || self.overflowing.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let slots: Vec<_> = lock(&self.threads).live().cloned().collect();
        slots
            .iter()
            .find_map(|s| s.overflow.pop_oldest(&self.overflowing))
    }

    /// Whether any queue a thread with inbox `inbox` could take from is non-empty.
    pub(crate) fn has_work(&self, inbox: &Inbox) -> bool {
        if !inbox.is_empty() || !self.injector.is_empty() || !self.high.is_empty() {
            return true;
        }
        // SeqCst: read after the sleeper's announce fence, like the queues above.
        if self.overflowing.load(Ordering::SeqCst) != 0 {
            return true;
        }
        let mut found = false;
        self.for_each_stealer(|_, s| {
            found = !s.is_empty();
            !found
        });
        found
    }

    /// Where a thread looks for work (see [`FAIR_INTERVAL`]): the high-priority lane,
    /// then its own deque's newest job (`own`), its inbox, the injector, the other
    /// threads' deques (`skip` is its own place among the stealers); but every
    /// `FAIR_INTERVAL`-th look is a fair turn that skips the newest end of its own deque
    /// and starts at one of the other four sources in turn: inbox, injector, the other
    /// deques, the oldest job of its own deque (`own_stealer`).
    #[inline]
    fn find_work_for(
        &self,
        fair: &FairTick,
        own: impl FnOnce() -> Option<Job>,
        own_stealer: Option<&Stealer>,
        inbox: &Inbox,
        skip: usize,
        rng: &Cell<u64>,
    ) -> Option<Job> {
        // The common case (no high-priority job, no fair turn, a job in the own deque) is
        // kept small, with the rest out of line, so that a job moves as few times as
        // possible on its way from the deque to the caller (a 64-byte copy each time).
        let first = fair.next();
        if first.is_some() || !self.high.is_empty() {
            let job = self.find_work_first(first.map(|f| (f, own_stealer)), inbox, skip, rng);
            if job.is_some() {
                return job;
            }
        }
        let job = own();
        if job.is_some() {
            return job;
        }
        self.find_work_after_own(inbox, skip, rng)
    }

    /// What [`find_work_for`](Self::find_work_for) looks at before the own deque: the
    /// high-priority lane, then the fair turn if this look is one (`fair`: the source it
    /// starts at and the own deque's stealer).
    #[inline(never)]
    fn find_work_first(
        &self,
        fair: Option<(u32, Option<&Stealer>)>,
        inbox: &Inbox,
        skip: usize,
        rng: &Cell<u64>,
    ) -> Option<Job> {
        if let Some(job) = self.high.pop() {
            return Some(job);
        }
        let (first, own_stealer) = fair?;
        self.fair_turn(first, own_stealer, inbox, skip, rng)
    }

    /// What [`find_work_for`](Self::find_work_for) looks at after the own deque.
    #[inline(never)]
    fn find_work_after_own(&self, inbox: &Inbox, skip: usize, rng: &Cell<u64>) -> Option<Job> {
        inbox
            .pop()
            .or_else(|| self.pop_injected())
            .or_else(|| self.steal(skip, rng))
    }

    /// A fair turn: the four sources other than the newest end of the thread's own deque,
    /// in cyclic order from `first`.
    fn fair_turn(
        &self,
        first: u32,
        own_stealer: Option<&Stealer>,
        inbox: &Inbox,
        skip: usize,
        rng: &Cell<u64>,
    ) -> Option<Job> {
        (0..FAIR_SOURCES).find_map(|k| match (first + k) % FAIR_SOURCES {
            0 => inbox.pop(),
            1 => self.pop_injected(),
            2 => self.steal(skip, rng),
            _ => own_stealer.and_then(steal_settled),
        })
    }

    /// Steals from the other threads' deques, starting at a random victim.
    fn steal(&self, skip: usize, rng: &Cell<u64>) -> Option<Job> {
        let n = self.stealers.len() + self.external_count.load(Ordering::Acquire);
        if n == 0 {
            return None;
        }
        let start = next_random(rng) as usize % n;
        loop {
            let mut retry = false;
            let mut found = None;
            // Two passes over the index space so the scan starts at `start`.
            for pass in 0..2 {
                self.for_each_stealer(|i, s| {
                    let in_pass = if pass == 0 { i >= start } else { i < start };
                    if !in_pass || i == skip {
                        return true;
                    }
                    match s.steal() {
                        Steal::Success(job) => {
                            self.wake_more(!s.is_empty());
                            found = Some(job);
                            false
                        }
                        Steal::Retry => {
                            retry = true;
                            true
                        }
                        Steal::Empty => true,
                    }
                });
                if found.is_some() {
                    return found;
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Runs a job on the current thread, recording a trace event when tracing is on.
    /// A panic that escapes the job (plain `spawn` has nobody waiting) is counted, and the
    /// thread carries on.
    #[inline]
    pub(crate) fn execute(&self, job: Job, slot: &ThreadSlot) {
        // Relaxed: tracing is a best-effort switch; this is the one load per job it costs.
        if self.tracing.load(Ordering::Relaxed) {
            let label = job.label();
            let start = self.now_ns();
            self.run_catching(job);
            let end = self.now_ns();
            lock(&slot.trace).push(TraceEvent {
                thread: slot.index,
                label,
                start_ns: start,
                end_ns: end,
            });
        } else {
            self.run_catching(job);
        }
    }

    #[inline]
    pub(crate) fn run_catching(&self, job: Job) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| job.run())) {
            self.unobserved_panics.fetch_add(1, Ordering::Relaxed);
            lock(&self.panics).push(p);
        }
    }

    /// Registers the calling (non-worker) thread, or returns its existing entry.
    pub(crate) fn external(self: &Arc<Self>) -> Rc<ExternalEntry> {
        if let Some(e) = self.external_entry() {
            return e;
        }
        let mut threads = lock(&self.threads);
        let generation = threads.next_generation;
        threads.next_generation += 1;
        let index = threads.free.pop().unwrap_or(threads.slots.len());
        let name = std::thread::current()
            .name()
            .map_or_else(|| format!("external-{index}"), str::to_owned);
        let slot = ThreadSlot::new(index, generation, name);
        if index == threads.slots.len() {
            threads.slots.push(Some(slot.clone()));
        } else {
            threads.slots[index] = Some(slot.clone());
        }
        let deque = threads.spare_deques.pop().or_else(|| {
            // Registration is serialised by the `threads` lock, so `k` is ours alone.
            let k = self.external_count.load(Ordering::Relaxed);
            (k < MAX_EXTERNAL_DEQUES).then(|| {
                let (w, s) = deque::new();
                let _ = self.external_stealers[k].set(s);
                // Release: publishes the entry just set; pairs with the Acquire loads of
                // `external_count` by thieves.
                self.external_count.store(k + 1, Ordering::Release);
                (k, w)
            })
        });
        drop(threads);
        let entry = Rc::new(ExternalEntry {
            registry: Arc::downgrade(self),
            id: self.id,
            slot,
            deque,
            guarded: Cell::new(false),
            fair: FairTick::default(),
        });
        let dead = EXTERNAL.with(|ext| {
            let mut ext = ext.borrow_mut();
            let (live, dead): (Vec<_>, Vec<_>) = std::mem::take(&mut *ext)
                .into_iter()
                .partition(|e| e.registry.strong_count() > 0);
            *ext = live;
            ext.push(entry.clone());
            dead
        });
        // Dropped outside the borrow: a dead system's jobs may run arbitrary destructors.
        drop(dead);
        entry
    }

    /// Ends the calling thread's registration, if it has one (see [`Registry::retire`]).
    /// Returns whether it had one.
    pub(crate) fn unregister_current(&self) -> bool {
        let entry = EXTERNAL.with(|ext| {
            let mut ext = ext.borrow_mut();
            let i = ext.iter().position(|e| e.id == self.id)?;
            Some(ext.swap_remove(i))
        });
        // Outside the borrow: retiring moves jobs, which may run destructors.
        let Some(entry) = entry else {
            return false;
        };
        // The membership ends now, also when a `scope` or wait further up this thread's
        // stack still holds the entry (issue 28): its inbox closes and its index is freed
        // at once. Its deque stays with that holder, which may still push to it (thieves
        // still see it), and is handed over when the last holder lets go of the entry
        // (`ExternalEntry::drop` retires again; retiring twice is harmless).
        self.retire(&entry.slot, None);
        drop(entry);
        true
    }

    /// Ends the calling thread's registration if it is the one of `generation` (a guard
    /// must not end a later registration of the same thread).
    pub(crate) fn unregister_generation(&self, generation: u64) {
        if self
            .external_entry()
            .is_some_and(|e| e.slot.generation == generation)
        {
            self.unregister_current();
        }
    }

    /// Marks the calling thread's registration as guarded; false when it already was.
    pub(crate) fn guard_current(self: &Arc<Self>) -> bool {
        let entry = self.external();
        !entry.guarded.replace(true)
    }

    /// Hands over the queued work of a thread that leaves: closes its inbox (later
    /// `spawn_on` calls get an error) and moves its inbox's and deque's jobs to the
    /// injector, where every thread can reach them, then frees its index and deque for
    /// reuse and keeps its trace events. Idempotent: a second call for the same slot
    /// (with the deque, once its last user let go) hands over only what came since.
    fn retire(&self, slot: &Arc<ThreadSlot>, deque: Option<(usize, deque::Worker)>) {
        let mut moved = false;
        for job in slot.inbox.close() {
            self.injector.push(job);
            moved = true;
        }
        while let Some(job) = slot.overflow.pop_oldest(&self.overflowing) {
            self.injector.push(job);
            moved = true;
        }
        let mut threads = lock(&self.threads);
        if let Some((k, w)) = deque {
            while let Some(job) = w.pop() {
                self.injector.push(job);
                moved = true;
            }
            threads.spare_deques.push((k, w));
        }
        let i = slot.index;
        if threads
            .slots
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|s| Arc::ptr_eq(s, slot))
        {
            threads.slots[i] = None;
            threads.free.push(i);
        }
        drop(threads);
        let events = std::mem::take(&mut *lock(&slot.trace));
        if !events.is_empty() {
            lock(&self.retired_trace).extend(events);
        }
        if moved {
            // Whoever sleeps must look again: the jobs were invisible to it until now.
            self.idle.notify_all();
        }
    }

    /// Closes every external thread's inbox (shutdown) and returns the jobs they held,
    /// which were meant for those threads only and so are dropped, not run elsewhere.
    pub(crate) fn close_external_inboxes(&self) -> Vec<Job> {
        let slots: Vec<_> = lock(&self.threads)
            .live()
            .filter(|s| s.index >= self.num_workers())
            .cloned()
            .collect();
        slots.iter().flat_map(|s| s.inbox.close()).collect()
    }

    /// Runs every job left in external threads' deques (shutdown).
    pub(crate) fn drain_external_deques(&self, mut run: impl FnMut(Job)) -> bool {
        let mut ran = false;
        let n = self.external_count.load(Ordering::Acquire);
        for s in self.external_stealers[..n].iter().filter_map(OnceLock::get) {
            loop {
                match s.steal() {
                    Steal::Success(job) => {
                        ran = true;
                        run(job);
                    }
                    Steal::Retry => {}
                    Steal::Empty => break,
                }
            }
        }
        ran
    }
}

/// Every this many looks for work, a thread takes its job from somewhere other than the
/// newest end of its own deque (a *fair turn*; tokio's scheduler checks its global queue
/// every 61 ticks, and this is its number). Without it a job that keeps respawning itself
/// (onto its thread's deque, newest first) would keep that thread from ever looking at
/// its inbox, the shared queue or the other deques (issue 28: 37 million iterations in
/// 2 s and neither a `spawn_on` job nor an outside `spawn` ran). Fair turns start at
/// each of [`FAIR_SOURCES`] sources in turn, so a job waiting in a thread's inbox or in
/// the shared queue is taken within `FAIR_SOURCES * FAIR_INTERVAL` (244) looks of that
/// thread, whatever keeps it busy. The high-priority lane stays first in every look.
pub(crate) const FAIR_INTERVAL: u32 = 61;

/// The sources a fair turn goes through: inbox, injector, other deques, own deque's
/// oldest job.
const FAIR_SOURCES: u32 = 4;

/// Counts a thread's looks for work until its next fair turn (see [`FAIR_INTERVAL`]).
/// Thread-local state (a worker's or an external entry's), hence plain cells.
#[derive(Default)]
pub(crate) struct FairTick {
    /// Looks left before the next fair turn.
    left: Cell<u32>,
    /// Which source the next fair turn starts at.
    turn: Cell<u32>,
}

impl FairTick {
    /// Counts one look; on every `FAIR_INTERVAL`-th, the source its fair turn starts at.
    #[inline]
    fn next(&self) -> Option<u32> {
        let left = self.left.get();
        if left > 0 {
            self.left.set(left - 1);
            return None;
        }
        self.left.set(FAIR_INTERVAL - 1);
        let turn = self.turn.get();
        self.turn.set((turn + 1) % FAIR_SOURCES);
        Some(turn)
    }
}

/// Steals from `s` until it hands out a job or looks empty (a `Retry` means another
/// consumer took one first, so the loop follows someone's progress).
fn steal_settled(s: &Stealer) -> Option<Job> {
    loop {
        match s.steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => crate::sync::spin_hint(),
        }
    }
}

/// Spills half of a full deque to the injector, then pushes.
/// Returns the deque position the job landed at, or `None` when it went to the injector.
#[inline]
fn push_or_spill(deque: &deque::Worker, injector: &Injector, job: Job) -> Option<usize> {
    let pos = deque.next_position();
    match deque.push(job) {
        Ok(()) => Some(pos),
        Err(job) => {
            deque.take_half(|j| injector.push(j));
            let pos = deque.next_position();
            match deque.push(job) {
                Ok(()) => Some(pos),
                Err(job) => {
                    injector.push(job);
                    None
                }
            }
        }
    }
}

/// This thread's membership in one registry it joined as an external thread. Dropping it
/// ends the membership and hands the thread's queued work over (see the module docs).
pub(crate) struct ExternalEntry {
    /// Weak: a thread that outlives a system must not keep it (or its memory) alive.
    registry: std::sync::Weak<Registry>,
    id: usize,
    slot: Arc<ThreadSlot>,
    /// The thread's deque and its position in `external_stealers`, if it got one.
    deque: Option<(usize, deque::Worker)>,
    /// Whether a `Registration` guard owns this membership.
    guarded: Cell<bool>,
    /// When this thread's next fair turn comes (see [`FAIR_INTERVAL`]).
    fair: FairTick,
}

impl ExternalEntry {
    /// Queues a job of this thread; returns its deque position when it landed there. A
    /// full deque spills to the shared injector, where every thread of the system (also a
    /// later `run_pending` on another thread, with no workers) can reach it.
    #[inline]
    fn push(&self, registry: &Registry, job: Job) -> Option<usize> {
        let Some((_, d)) = &self.deque else {
            registry.injector.push(job);
            return None;
        };
        let pos = d.next_position();
        match d.push(job) {
            Ok(()) => Some(pos),
            Err(job) => self.push_full(registry, d, job),
        }
    }

    /// [`push`](Self::push) when the deque refused the job (full).
    #[cold]
    #[inline(never)]
    fn push_full(&self, registry: &Registry, d: &deque::Worker, job: Job) -> Option<usize> {
        // With workers, thieves look in the injector. So does everyone for a thread that
        // left (its inbox is closed) but whose wait still holds this entry: its slot is no
        // longer listed, so other threads would not find its overflow.
        if registry.num_workers() != 0 || self.slot.inbox.is_closed() {
            return push_or_spill(d, &registry.injector, job);
        }
        self.slot.overflow.spill(d, &registry.overflowing);
        let pos = d.next_position();
        match d.push(job) {
            Ok(()) => Some(pos),
            Err(job) => {
                registry.injector.push(job);
                None
            }
        }
    }

    #[inline]
    fn pop(&self, registry: &Registry) -> Option<Job> {
        let (_, d) = self.deque.as_ref()?;
        match d.pop() {
            Some(job) => Some(job),
            None => self.slot.overflow.refill(d, &registry.overflowing),
        }
    }

    /// A job from this thread's own deque or inbox.
    pub(crate) fn pop_own(&self, registry: &Registry) -> Option<Job> {
        self.pop(registry).or_else(|| self.slot.inbox.pop())
    }

    fn has_local_work(&self) -> bool {
        self.deque.as_ref().is_some_and(|(_, d)| !d.is_empty()) || !self.slot.overflow.is_empty()
    }

    /// The thieves' end of this thread's deque, if it has one.
    fn stealer<'r>(&self, registry: &'r Registry) -> Option<&'r Stealer> {
        let (k, _) = self.deque.as_ref()?;
        registry.external_stealers[*k].get()
    }

    /// This thread's position among the stealers (`usize::MAX` without a deque).
    fn stealer_index(&self, registry: &Registry) -> usize {
        self.deque
            .as_ref()
            .map_or(usize::MAX, |(k, _)| registry.num_workers() + k)
    }
}

impl Drop for ExternalEntry {
    fn drop(&mut self) {
        let deque = self.deque.take();
        if let Some(r) = self.registry.upgrade() {
            r.retire(&self.slot, deque);
        }
        // Otherwise the system is gone: dropping the slot and the deque here drops any
        // job they still hold (its destructor runs).
    }
}

fn next_random(rng: &Cell<u64>) -> u64 {
    // xorshift64*: victim order only needs to be spread out, not unpredictable.
    let mut x = rng.get();
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng.set(x);
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The state of a worker thread, living on its stack for its whole life.
pub(crate) struct WorkerThread {
    pub(crate) registry: Arc<Registry>,
    pub(crate) index: usize,
    pub(crate) deque: deque::Worker,
    pub(crate) slot: Arc<ThreadSlot>,
    rng: Cell<u64>,
    fair: FairTick,
}

thread_local! {
    /// The worker running on this thread, or null. Set by `worker_main` for the lifetime of
    /// its `WorkerThread` (which lives on that function's stack) and cleared before it ends.
    static WORKER: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
    /// This (non-worker) thread's entry in each registry it joined.
    static EXTERNAL: std::cell::RefCell<Vec<Rc<ExternalEntry>>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// How deep this thread is in waits and team helpers: a job found there runs nested
    /// inside something that waits for it to return (see `team.rs`, whose helpers only
    /// serve from a worker's top level).
    static NESTED: Cell<u32> = const { Cell::new(0) };
}

/// Counts this thread as nested (in a wait or a team helper) while it lives.
pub(crate) struct Nested(());

impl Nested {
    pub(crate) fn enter() -> Self {
        NESTED.with(|n| n.set(n.get() + 1));
        Self(())
    }

    /// Whether this thread is inside a wait or a team helper.
    pub(crate) fn is_nested() -> bool {
        NESTED.with(Cell::get) > 0
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTED.with(|n| n.set(n.get() - 1));
    }
}

/// Number of external registrations this thread holds (see `registrations_on_this_thread`).
pub(crate) fn external_entries_on_this_thread() -> usize {
    EXTERNAL.with(|ext| ext.borrow().len())
}

/// Runs `f` with the current thread's worker if it is one of `registry`'s workers.
#[inline]
pub(crate) fn with_worker<R>(
    registry: &Arc<Registry>,
    f: impl FnOnce(Option<&WorkerThread>) -> R,
) -> R {
    let ptr = WORKER.with(Cell::get);
    // SAFETY: a non-null pointer was set by `worker_main` on this very thread and points to
    // its `WorkerThread`, which outlives every job this thread runs (the pointer is cleared
    // before that value is dropped). The reference does not escape `f`.
    let worker = unsafe { ptr.as_ref() };
    f(worker.filter(|w| Arc::ptr_eq(&w.registry, registry)))
}

/// What a thread needs to look for work and to sleep: a worker, or a registered external
/// thread.
pub(crate) enum Ctx<'a> {
    Worker(&'a WorkerThread),
    External {
        registry: &'a Arc<Registry>,
        entry: Rc<ExternalEntry>,
        rng: Cell<u64>,
    },
}

/// Runs `f` with the calling thread's context in `registry`, registering it if needed.
pub(crate) fn with_ctx<R>(registry: &Arc<Registry>, f: impl FnOnce(&Ctx<'_>) -> R) -> R {
    with_worker(registry, |w| match w {
        Some(w) => f(&Ctx::Worker(w)),
        None => {
            let entry = registry.external();
            let seed = 0x9e37_79b9_7f4a_7c15
                ^ (entry.slot.index as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            f(&Ctx::External {
                registry,
                entry,
                rng: Cell::new(seed | 1),
            })
        }
    })
}

impl WorkerThread {
    #[inline]
    pub(crate) fn push_local(&self, job: Job) {
        push_or_spill(&self.deque, &self.registry.injector, job);
    }

    fn find_work(&self) -> Option<Job> {
        self.registry.find_work_for(
            &self.fair,
            || self.deque.pop(),
            Some(&self.registry.stealers[self.index]),
            &self.slot.inbox,
            self.index,
            &self.rng,
        )
    }
}

impl Ctx<'_> {
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        match self {
            Ctx::Worker(w) => &w.registry,
            Ctx::External { registry, .. } => registry,
        }
    }

    pub(crate) fn slot(&self) -> &Arc<ThreadSlot> {
        match self {
            Ctx::Worker(w) => &w.slot,
            Ctx::External { entry, .. } => &entry.slot,
        }
    }

    pub(crate) fn parker(&self) -> &Arc<Parker> {
        &self.slot().parker
    }

    /// The token naming this thread's registration.
    pub(crate) fn token(&self) -> crate::system::ThreadToken {
        let slot = self.slot();
        crate::system::ThreadToken {
            registry: self.registry().id,
            index: slot.index,
            generation: slot.generation,
        }
    }

    pub(crate) fn find_work(&self) -> Option<Job> {
        match self {
            Ctx::Worker(w) => w.find_work(),
            Ctx::External {
                registry,
                entry,
                rng,
            } => registry
                .find_work_for(
                    &entry.fair,
                    || entry.pop(registry),
                    entry.stealer(registry),
                    &entry.slot.inbox,
                    entry.stealer_index(registry),
                    rng,
                )
                .or_else(|| registry.take_overflow()),
        }
    }

    fn has_work(&self) -> bool {
        match self {
            Ctx::Worker(w) => !w.deque.is_empty() || w.registry.has_work(&w.slot.inbox),
            Ctx::External {
                registry, entry, ..
            } => entry.has_local_work() || registry.has_work(&entry.slot.inbox),
        }
    }

    pub(crate) fn execute(&self, job: Job) {
        self.registry().execute(job, self.slot());
    }

    /// Pushes a job this thread will wait for onto its own deque (if it has one) and
    /// returns where it landed, for [`pop_own_at`](Self::pop_own_at).
    #[inline]
    pub(crate) fn push_own(&self, job: Job) -> Option<usize> {
        let (pos, was_empty) = match self {
            Ctx::Worker(w) => {
                let was_empty = w.deque.is_empty();
                (
                    push_or_spill(&w.deque, &w.registry.injector, job),
                    was_empty,
                )
            }
            Ctx::External {
                registry, entry, ..
            } => {
                let was_empty = !entry.has_local_work();
                (entry.push(registry, job), was_empty)
            }
        };
        // Like rayon: if the deque already held work, idle threads had their chance to be
        // woken for it; only the first job of a burst wakes one.
        if was_empty {
            self.registry().idle.notify_hint();
        }
        pos
    }

    /// How many jobs this thread's own deque offers to thieves (0 for an external thread
    /// without a deque, whose jobs go to the shared injector).
    #[inline]
    pub(crate) fn exposed_jobs(&self) -> usize {
        match self {
            Ctx::Worker(w) => w.deque.len(),
            Ctx::External { entry, .. } => entry.deque.as_ref().map_or(0, |(_, d)| d.len()),
        }
    }

    /// Takes back the job pushed at `pos` by [`push_own`](Self::push_own) if no thief
    /// took it and nothing newer sits above it.
    #[inline]
    pub(crate) fn pop_own_at(&self, pos: usize) -> Option<Job> {
        match self {
            Ctx::Worker(w) => w.deque.pop_at(pos),
            Ctx::External { entry, .. } => entry.deque.as_ref().and_then(|(_, d)| d.pop_at(pos)),
        }
    }

    /// Runs jobs until `target` is set, parking when there is nothing to do.
    pub(crate) fn wait_until(&self, target: &impl WaitTarget) {
        self.wait_until_deadline(target, None);
    }

    /// [`wait_until`](Self::wait_until) that gives up at `deadline`; whether the target
    /// was set.
    pub(crate) fn wait_until_deadline(
        &self,
        target: &impl WaitTarget,
        deadline: Option<Instant>,
    ) -> bool {
        let registry = self.registry();
        let _nested = Nested::enter();
        let expired = || deadline.is_some_and(|d| Instant::now() >= d);
        let parker = self.parker();
        // A waiter sleeps in the idle set like a worker, so a pusher's `notify_one` may pick
        // it. If it then leaves (its target was set) without running a job, the wake-up the
        // push paid for would be lost and the job stranded while workers sleep: it owes that
        // wake-up and passes it on when it leaves (found by the loom model
        // `wait_until_forwarding_the_wakeup_runs_the_job`).
        let mut owed = false;
        // With tracing on, the time spent here with nothing to run is recorded as a
        // `WAIT_LABEL` span (from the first empty look to the next job or the return), so
        // a trace can tell waiting from working. Relaxed: see `Registry::execute`.
        let tracing = registry.tracing.load(Ordering::Relaxed);
        let mut idle_since: Option<u64> = None;
        let end_wait = |idle_since: &mut Option<u64>| {
            if let Some(start) = idle_since.take() {
                lock(&self.slot().trace).push(TraceEvent {
                    thread: self.slot().index,
                    label: WAIT_LABEL,
                    start_ns: start,
                    end_ns: registry.now_ns(),
                });
            }
        };
        let leave = |owed: bool, set: bool, idle_since: &mut Option<u64>| {
            end_wait(idle_since);
            if owed {
                registry.idle.notify_one();
            }
            set
        };
        loop {
            if target.is_set() {
                return leave(owed, true, &mut idle_since);
            }
            if expired() {
                return leave(owed, false, &mut idle_since);
            }
            if let Some(job) = self.find_work() {
                owed = false;
                end_wait(&mut idle_since);
                self.execute(job);
                continue;
            }
            if tracing && idle_since.is_none() {
                idle_since = Some(registry.now_ns());
            }
            // The spin phase ends at the deadline too: on a busy machine each of its
            // rounds that yields may cost a whole time slice, and ~60 of them overshot a
            // 1 ms wait by a second (issue 28).
            let mut spin = Spin::until(deadline);
            let mut found = false;
            while spin.next() {
                if target.is_set() {
                    return leave(owed, true, &mut idle_since);
                }
                if self.has_work() {
                    found = true;
                    break;
                }
            }
            if found {
                continue;
            }
            if expired() {
                return leave(owed, false, &mut idle_since);
            }
            if !target.prepare_sleep(parker) {
                return leave(owed, true, &mut idle_since);
            }
            registry.idle.announce(parker);
            if !target.is_set() && !self.has_work() {
                match deadline {
                    Some(d) => parker.park_timeout(d.saturating_duration_since(Instant::now())),
                    None => parker.park(),
                }
            }
            // Not listed any more: a pusher picked us for its job.
            owed |= !registry.idle.cancel(parker);
            target.finish_sleep(parker);
        }
    }

    /// Runs every job currently in this thread's inbox (and, with no workers, every queued
    /// job, since nobody else would). Returns how many ran.
    ///
    /// "No workers" is also a system that had workers and was shut down: they have
    /// exited (or are finishing the queues and about to), so a job spawned on a clone kept
    /// past `shutdown` has no thread but the ones that wait or call this.
    pub(crate) fn run_pending(&self) -> usize {
        let registry = self.registry();
        let mut n = 0;
        while let Some(job) = self.slot().inbox.pop() {
            self.execute(job);
            n += 1;
        }
        // Acquire: pairs with the SeqCst store in `Handle::signal`; a job spawned after
        // `shutdown` returned is then found below.
        if registry.num_workers() == 0 || registry.terminate.load(Ordering::Acquire) {
            while let Some(job) = self.find_work() {
                self.execute(job);
                n += 1;
            }
        }
        n
    }
}

/// The body of each worker thread.
pub(crate) fn worker_main(registry: Arc<Registry>, index: usize, deque: deque::Worker) {
    let slot = registry
        .slot(index)
        .expect("joule-jobs: worker slot exists");
    if let Some(hook) = &registry.on_start {
        hook(index);
    }
    let worker = WorkerThread {
        registry: registry.clone(),
        index,
        deque,
        slot,
        rng: Cell::new(0x853c_49e6_748f_ea9b ^ ((index as u64 + 1) << 17) | 1),
        fair: FairTick::default(),
    };
    WORKER.with(|w| w.set(&worker));
    loop {
        if let Some(job) = worker.find_work() {
            registry.execute(job, &worker.slot);
            continue;
        }
        if worker.idle() {
            break;
        }
    }
    WORKER.with(|w| w.set(std::ptr::null()));
    drop(worker);
    if let Some(hook) = &registry.on_exit {
        hook(index);
    }
}

impl WorkerThread {
    /// Nothing to do: spin a little, then park. Returns true when the worker should exit
    /// (shutdown requested and no work left anywhere it can reach).
    fn idle(&self) -> bool {
        let registry = &*self.registry;
        let has_work = || !self.deque.is_empty() || registry.has_work(&self.slot.inbox);
        let mut spin = Spin::new();
        while spin.next() {
            if has_work() {
                return false;
            }
        }
        // Acquire: pairs with the Release store in `JobSystem`'s shutdown.
        if registry.terminate.load(Ordering::Acquire) {
            return !has_work();
        }
        let parker = &self.slot.parker;
        registry.idle.announce(parker);
        if !has_work() && !registry.terminate.load(Ordering::SeqCst) {
            parker.park();
        }
        registry.idle.cancel(parker);
        false
    }
}
