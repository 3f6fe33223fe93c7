//! How a job system ends: [`Handle`] owns the worker threads and shuts them down, either
//! when asked (`JobSystem::shutdown`) or when the last `JobSystem` clone is dropped.
//!
//! Shutting down is one well-defined sequence, whoever holds clones:
//! 1. mark the system as shutting down (weak handles stop upgrading, so jobs that spawn
//!    follow-up work through them stop doing so);
//! 2. tell the workers to finish: each keeps running jobs until nothing it can reach is
//!    left, then exits; the calling thread helps meanwhile (a worker's job may be waiting
//!    for a job that only the caller can run) and then joins them;
//! 3. run what is still queued on the calling thread, until a pass finds nothing (jobs
//!    may spawn jobs): the shared queues, every deque, the workers' inboxes and the
//!    caller's own inbox;
//! 4. end the caller's own registration and close every inbox; jobs still waiting in
//!    another registered thread's inbox were promised to that thread and are dropped
//!    unrun (their destructors run).
//!
//! Dropping the last clone on one of the system's own workers (a job that held the last
//! strong handle) cannot join that worker: it only does the first half of step 2, and the
//! workers finish the queued jobs and exit on their own.

use std::thread::JoinHandle;
use std::time::Duration;

use crate::registry::{Registry, with_ctx, with_worker};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering, lock};

/// Owns the worker threads; dropped with the last `JobSystem` clone.
pub(crate) struct Handle {
    registry: Arc<Registry>,
    /// Held for the whole shutdown, so a second caller waits for the first to finish.
    threads: Mutex<Vec<JoinHandle<()>>>,
    shutting_down: AtomicBool,
    /// The thread running `shut_down`, while it runs: a job it runs while helping may
    /// call `shutdown` again, which must not wait for the lock its own thread holds.
    shutter: Mutex<Option<std::thread::ThreadId>>,
}

impl Handle {
    pub(crate) fn new(registry: Arc<Registry>, workers: usize) -> Self {
        Self {
            registry,
            threads: Mutex::new(Vec::with_capacity(workers)),
            shutting_down: AtomicBool::new(false),
            shutter: Mutex::new(None),
        }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub(crate) fn add_thread(&self, t: JoinHandle<()>) {
        lock(&self.threads).push(t);
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        // Acquire: pairs with the SeqCst store in `shut_down`; a thread that sees it also
        // sees that no new work should be started.
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Steps 1 and the signal of step 2 (see the module docs).
    fn signal(&self) {
        let r = &self.registry;
        // SeqCst: totally ordered with the `upgrade` checks and the workers' reads of
        // `terminate` (whose Acquire load in `idle` pairs with this store).
        self.shutting_down.store(true, Ordering::SeqCst);
        r.terminate.store(true, Ordering::SeqCst);
        r.idle.notify_all();
        for i in 0..r.num_workers() {
            if let Some(slot) = r.slot(i) {
                slot.parker.unpark();
            }
        }
    }

    /// Whether the calling thread is inside `shut_down` (running a job while it helps).
    pub(crate) fn is_shutting_down_here(&self) -> bool {
        *lock(&self.shutter) == Some(std::thread::current().id())
    }

    /// The whole sequence of the module docs, on a thread that is not one of our workers
    /// and not already inside it.
    pub(crate) fn shut_down(&self) {
        self.signal();
        let r = &self.registry;
        let mut threads = lock(&self.threads);
        *lock(&self.shutter) = Some(std::thread::current().id());
        // Help until every worker has exited: one of them may be waiting for a job in our
        // inbox or deque. Polling is fine here, shutdown is rare and short.
        while threads.iter().any(|t| !t.is_finished()) {
            match with_ctx(r, |ctx| ctx.find_work().map(|job| ctx.execute(job))) {
                Some(()) => {}
                None => std::thread::sleep(Duration::from_micros(50)),
            }
        }
        for t in threads.drain(..) {
            // A worker only ends by returning from `worker_main`; job panics are caught.
            let _ = t.join();
        }
        loop {
            if run_queued(r) {
                continue;
            }
            // Ending our own registration moves what is left of it to the injector.
            if !r.unregister_current() {
                break;
            }
        }
        let workers = r.num_workers();
        for i in 0..workers {
            if let Some(slot) = r.slot(i) {
                for job in slot.inbox.close() {
                    r.run_catching(job);
                }
            }
        }
        drop(r.close_external_inboxes());
        // Jobs that ran just now cannot have queued more where only a worker would look:
        // every queue left is one `run_queued` drains.
        while run_queued(r) {}
        *lock(&self.shutter) = None;
        drop(threads);
    }
}

/// Runs every job queued anywhere the calling thread may take it from; whether any ran.
fn run_queued(r: &Registry) -> bool {
    let mut ran = false;
    let mut run = |job| {
        ran = true;
        r.run_catching(job);
    };
    while let Some(job) = r.high.pop() {
        run(job);
    }
    while let Some(job) = r.injector.pop() {
        run(job);
    }
    for i in 0..r.num_workers() {
        if let Some(slot) = r.slot(i) {
            while let Some(job) = slot.inbox.pop() {
                run(job);
            }
        }
    }
    if let Some(entry) = r.external_entry() {
        while let Some(job) = entry.pop_own(r) {
            run(job);
        }
    }
    r.drain_external_deques(&mut run);
    while let Some(job) = r.take_overflow() {
        run(job);
    }
    ran
}

impl Drop for Handle {
    fn drop(&mut self) {
        if with_worker(&self.registry, |w| w.is_some()) {
            self.signal();
            return;
        }
        self.shut_down();
    }
}
