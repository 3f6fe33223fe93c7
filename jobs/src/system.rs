//! `JobSystem`: the user's handle, its builder, and the plain spawning and waiting API.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::{Duration, Instant};

use crate::job::Job;
use crate::latch::Counter;
use crate::registry::{self, Hook, Registry, with_ctx, with_worker};
use crate::shutdown::Handle;
use crate::sync::{Arc, Ordering, lock};
use crate::trace::TraceEvent;

/// The most worker threads a job system may have. A larger request is almost certainly a
/// bug (a negative number cast to `usize`, a byte count passed as a thread count), so
/// [`Builder::build`] refuses it instead of trying to start that many threads.
pub const MAX_THREADS: usize = 1024;

/// Why a job system could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// More than [`MAX_THREADS`] worker threads were requested. Ask for fewer: one per
    /// core (minus the calling thread) is the usual choice.
    TooManyThreads {
        /// The requested count.
        requested: usize,
    },
    /// The operating system refused to start a worker thread (out of memory or a thread
    /// limit). Ask for fewer threads or a smaller `stack_size`.
    Spawn(std::io::Error),
    /// `stack_size(0)` was given. Give a positive size or leave the default.
    ZeroStackSize,
    /// `num_threads(0)` was given: the calling thread always takes part, so the total is
    /// at least one. Ask for `num_threads(1)` (or `workers(0)`) to run everything on it.
    ZeroThreads,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::TooManyThreads { requested } => write!(
                f,
                "requested {requested} worker threads; at most {MAX_THREADS} are allowed"
            ),
            BuildError::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            BuildError::ZeroStackSize => write!(f, "stack size must be positive"),
            BuildError::ZeroThreads => write!(
                f,
                "num_threads(0): the total includes the calling thread, so it is at least 1"
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn(e) => Some(e),
            _ => None,
        }
    }
}

/// Configures and starts a [`JobSystem`].
pub struct Builder {
    threads: Option<usize>,
    zero_total: bool,
    name: Arc<dyn Fn(usize) -> String + Send + Sync>,
    stack_size: Option<usize>,
    on_start: Option<Hook>,
    on_exit: Option<Hook>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            threads: None,
            zero_total: false,
            name: Arc::new(|i| format!("joule-worker-{i}")),
            stack_size: None,
            on_start: None,
            on_exit: None,
        }
    }
}

impl Builder {
    /// Number of worker threads started *beside* the calling thread. The thread that
    /// waits (calls `scope`, `join`, `parallel_for`, `wait`) also runs jobs, so
    /// `workers(n)` puts `n + 1` threads to work ([`JobSystem::num_threads`]) and
    /// `workers(0)` runs everything on the calling thread. Default: one fewer than the
    /// machine's available parallelism.
    #[must_use]
    pub fn workers(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self.zero_total = false;
        self
    }

    /// The same as [`workers`](Self::workers): `n` worker threads beside the calling one
    /// (kept because existing code uses it; new code should say `workers`).
    #[must_use]
    pub fn threads(self, n: usize) -> Self {
        self.workers(n)
    }

    /// Total number of threads that run jobs, the calling thread included: starts
    /// `total - 1` workers. `num_threads(0)` makes [`build`](Self::build) fail with
    /// [`BuildError::ZeroThreads`].
    #[must_use]
    pub fn num_threads(mut self, total: usize) -> Self {
        self.threads = Some(total.saturating_sub(1));
        self.zero_total = total == 0;
        self
    }

    /// Names worker `i` (shown by debuggers, profilers and traces).
    #[must_use]
    pub fn thread_name(mut self, f: impl Fn(usize) -> String + Send + Sync + 'static) -> Self {
        self.name = Arc::new(f);
        self
    }

    /// Stack size of each worker thread in bytes.
    #[must_use]
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Runs on each worker thread when it starts, with the worker's index.
    #[must_use]
    pub fn on_thread_start(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(f));
        self
    }

    /// Runs on each worker thread just before it exits, with the worker's index.
    #[must_use]
    pub fn on_thread_exit(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_exit = Some(Arc::new(f));
        self
    }

    /// Starts the worker threads.
    pub fn build(self) -> Result<JobSystem, BuildError> {
        let n = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |p| p.get().saturating_sub(1))
        });
        if self.zero_total {
            return Err(BuildError::ZeroThreads);
        }
        if n > MAX_THREADS {
            return Err(BuildError::TooManyThreads { requested: n });
        }
        if self.stack_size == Some(0) {
            return Err(BuildError::ZeroStackSize);
        }
        let name = self.name.clone();
        let (registry, owners) = Registry::new(n, |i| name(i), self.on_start, self.on_exit);
        let handle = Handle::new(registry.clone(), n);
        for (i, deque) in owners.into_iter().enumerate() {
            let mut b = std::thread::Builder::new().name((self.name)(i));
            if let Some(size) = self.stack_size {
                b = b.stack_size(size);
            }
            let r = registry.clone();
            match b.spawn(move || registry::worker_main(r, i, deque)) {
                Ok(t) => handle.add_thread(t),
                // Dropping `handle` stops and joins the workers started so far.
                Err(e) => return Err(BuildError::Spawn(e)),
            }
        }
        Ok(JobSystem {
            handle: Arc::new(handle),
        })
    }
}

/// A job system: worker threads with work-stealing queues.
///
/// Cheap to clone (an `Arc`). See the [crate docs](crate) for an overview, and
/// [`shutdown`](Self::shutdown) for how it ends: dropping the last clone shuts it down the
/// same way, except on one of its own workers, which cannot join itself.
#[derive(Clone)]
pub struct JobSystem {
    handle: Arc<Handle>,
}

impl fmt::Debug for JobSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobSystem")
            .field("workers", &self.num_workers())
            .finish()
    }
}

/// A thread registered with a job system, the target of [`JobSystem::spawn_on`].
///
/// A token names one registration: once that thread exits or unregisters, `spawn_on` with
/// it fails, even if a later thread reuses the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadToken {
    pub(crate) registry: usize,
    pub(crate) index: usize,
    pub(crate) generation: u64,
}

impl ThreadToken {
    /// The thread's index in this job system (workers are `0..num_workers`).
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }
}

/// Why [`JobSystem::spawn_on`] could not queue a job. The job is handed back, unrun.
#[derive(Debug)]
pub struct SpawnOnError {
    /// The job that was not queued.
    pub job: Job,
    /// Why.
    pub reason: SpawnOnReason,
}

/// The reason in a [`SpawnOnError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpawnOnReason {
    /// The token belongs to another job system. Use a token from this one.
    OtherSystem,
    /// The thread has exited or unregistered (its inbox is closed). Register the thread
    /// again and use the new token.
    NotRegistered,
    /// The system was shut down. Spawn on a live system.
    ShutDown,
}

impl fmt::Display for SpawnOnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.reason {
            SpawnOnReason::OtherSystem => "the thread token belongs to another job system",
            SpawnOnReason::NotRegistered => {
                "the target thread has exited or unregistered from this job system"
            }
            SpawnOnReason::ShutDown => "the job system was shut down",
        })
    }
}

impl std::error::Error for SpawnOnError {}

/// Why [`JobSystem::shutdown`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownError {
    /// Called from a job running on one of the system's own workers, which cannot join
    /// itself. Call it from the thread that owns the system (or drop the handle there).
    OnOwnWorker,
    /// Called from a job that the thread shutting the system down runs while it waits
    /// for the workers. Nothing to do: the shutdown under way finishes the job.
    InsideShutdown,
}

impl fmt::Display for ShutdownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShutdownError::OnOwnWorker => "shutdown called on one of the job system's own workers",
            ShutdownError::InsideShutdown => {
                "shutdown called from a job run by the shutdown already under way"
            }
        })
    }
}

impl std::error::Error for ShutdownError {}

/// A handle that does not keep the job system alive; see [`JobSystem::downgrade`].
#[derive(Clone)]
pub struct WeakJobSystem {
    handle: std::sync::Weak<Handle>,
}

impl fmt::Debug for WeakJobSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakJobSystem").finish_non_exhaustive()
    }
}

impl WeakJobSystem {
    /// The job system, if a strong handle still exists and it has not begun to shut
    /// down ([`JobSystem::shutdown`]); a job that spawns follow-up work through a weak
    /// handle therefore stops doing so once shutdown starts.
    #[must_use]
    pub fn upgrade(&self) -> Option<JobSystem> {
        self.handle
            .upgrade()
            .filter(|h| !h.is_shutting_down())
            .map(|handle| JobSystem { handle })
    }
}

impl JobSystem {
    /// A weak handle. Jobs that need to spawn more jobs should capture this rather than a
    /// clone: a queued job holding a strong handle keeps the system (and its threads)
    /// alive, so dropping "the last" user handle would not shut it down.
    #[must_use]
    pub fn downgrade(&self) -> WeakJobSystem {
        WeakJobSystem {
            handle: Arc::downgrade(&self.handle),
        }
    }

    /// A builder with default settings.
    #[must_use]
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A job system with `threads` workers and default settings.
    pub fn new(threads: usize) -> Result<JobSystem, BuildError> {
        Self::builder().threads(threads).build()
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        self.handle.registry()
    }

    /// Waits for every queued job, joins every worker and returns; whoever holds clones.
    ///
    /// While it waits the calling thread runs jobs too. What happens to queued jobs:
    /// - jobs in the shared queues, in any thread's deque and in the workers' inboxes are
    ///   **run** (those a job spawns meanwhile too);
    /// - jobs sent with [`spawn_on`](Self::spawn_on) to the calling thread are **run** on
    ///   it;
    /// - jobs sent to *another* registered (non-worker) thread that has not run them are
    ///   **dropped** unrun (their destructors run): they were promised to that thread,
    ///   which is not part of the shutdown. Later `spawn_on` calls fail with
    ///   [`SpawnOnReason::ShutDown`].
    ///
    /// Once shutdown has begun, [`WeakJobSystem::upgrade`] returns `None`. Clones stay
    /// usable afterwards but have no workers: a job spawned then runs when some thread
    /// waits or calls [`run_pending`](Self::run_pending), or at the latest when the last
    /// clone is dropped. Calling it again is harmless.
    ///
    /// Fails with [`ShutdownError::OnOwnWorker`] on one of the system's own workers, which
    /// could not join itself, and with [`ShutdownError::InsideShutdown`] in a job that the
    /// shutting-down thread runs while it helps.
    pub fn shutdown(&self) -> Result<(), ShutdownError> {
        if self.current_worker_index().is_some() {
            return Err(ShutdownError::OnOwnWorker);
        }
        if self.handle.is_shutting_down_here() {
            return Err(ShutdownError::InsideShutdown);
        }
        self.handle.shut_down();
        Ok(())
    }

    /// Number of worker threads (started beside the calling thread).
    #[must_use]
    pub fn num_workers(&self) -> usize {
        self.registry().num_workers()
    }

    /// Total number of threads that run jobs while a caller waits: the workers plus the
    /// caller (`num_workers() + 1`).
    #[must_use]
    pub fn num_threads(&self) -> usize {
        self.num_workers() + 1
    }

    /// Runs `f` on some thread of the system, fire and forget. A panic in `f` is caught
    /// (the thread survives), counted in [`unobserved_panics`](Self::unobserved_panics)
    /// and its payload kept for [`take_panics`](Self::take_panics); use
    /// [`spawn_counted`](Self::spawn_counted) or a scope to have it re-raised instead.
    ///
    /// With `threads(0)` the job runs when the calling thread waits or calls
    /// [`run_pending`](Self::run_pending).
    #[inline]
    pub fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        self.registry().push(Job::new("job", f));
    }

    /// Runs `f` with high priority: every thread takes high-priority jobs before any other
    /// queued job (latency-sensitive frame work). Jobs already running are not
    /// interrupted, and high-priority jobs run in the order they were spawned. Panics are
    /// handled as in [`spawn`](Self::spawn).
    pub fn spawn_high<F: FnOnce() + Send + 'static>(&self, f: F) {
        self.spawn_job_high(Job::new("high", f));
    }

    /// [`spawn_high`](Self::spawn_high) for a prepared job.
    pub fn spawn_job_high(&self, job: Job) {
        let r = self.registry();
        r.high.push(job);
        r.idle.notify_one();
    }

    /// [`spawn_counted`](Self::spawn_counted) with high priority (see
    /// [`spawn_high`](Self::spawn_high)).
    pub fn spawn_counted_high<F: FnOnce() + Send + 'static>(&self, counter: &Counter, f: F) {
        counter.add(1);
        let c = counter.clone();
        self.spawn_job_high(Job::new("counted high", move || {
            if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
                c.store_panic(p);
            }
            c.done();
        }));
    }

    /// Queues a prepared job (for example one built with a label by [`Job::new`]).
    #[inline]
    pub fn spawn_job(&self, job: Job) {
        self.registry().push(job);
    }

    /// Runs `f` on some thread and counts it in `counter`: [`wait`](Self::wait) on the
    /// counter returns when every counted job is done, and re-raises the first panic.
    pub fn spawn_counted<F: FnOnce() + Send + 'static>(&self, counter: &Counter, f: F) {
        counter.add(1);
        let c = counter.clone();
        self.registry().push(Job::new("counted", move || {
            if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
                c.store_panic(p);
            }
            c.done();
        }));
    }

    /// Blocks until `counter` reaches zero, running other jobs meanwhile (on a registered
    /// thread, its inbox too). Re-raises the first panic of a counted job.
    pub fn wait(&self, counter: &Counter) {
        with_ctx(self.registry(), |ctx| ctx.wait_until(counter));
        if let Some(p) = counter.take_panic() {
            resume_unwind(p);
        }
    }

    /// Like [`wait`](Self::wait), but gives up after `timeout`: returns true when the
    /// counter reached zero (re-raising the first panic of a counted job, as `wait`
    /// does), false when the time ran out first (the jobs carry on). A job the calling
    /// thread started while helping is finished first, so the call can return later than
    /// `timeout` by the length of one job.
    #[must_use]
    pub fn wait_timeout(&self, counter: &Counter, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        let done = with_ctx(self.registry(), |ctx| {
            ctx.wait_until_deadline(counter, deadline)
        });
        if done && let Some(p) = counter.take_panic() {
            resume_unwind(p);
        }
        done
    }

    /// Registers the calling thread, permanently: until it exits (or shuts this system
    /// down), so jobs can be sent to it with [`spawn_on`](Self::spawn_on). On a worker,
    /// returns that worker's token. For a registration with a lifetime use
    /// [`register`](Self::register).
    pub fn register_current_thread(&self) -> ThreadToken {
        with_ctx(self.registry(), |ctx| ctx.token())
    }

    /// The token of worker `i`, if it exists.
    #[must_use]
    pub fn worker_token(&self, i: usize) -> Option<ThreadToken> {
        (i < self.num_workers()).then_some(ThreadToken {
            registry: self.registry().id,
            index: i,
            generation: 0,
        })
    }

    /// Queues `f` to run on one specific registered thread: a worker runs it among its
    /// other jobs; an external thread (the game's main thread) runs it in
    /// [`run_pending`](Self::run_pending) or while it waits.
    // The error hands the 64-byte job back by value; it is rare and never on a hot path.
    #[allow(clippy::result_large_err)]
    pub fn spawn_on<F: FnOnce() + Send + 'static>(
        &self,
        thread: ThreadToken,
        f: F,
    ) -> Result<(), SpawnOnError> {
        self.spawn_job_on(thread, Job::new("job", f))
    }

    /// [`spawn_on`](Self::spawn_on) for a prepared job.
    #[allow(clippy::result_large_err)]
    pub fn spawn_job_on(&self, thread: ThreadToken, job: Job) -> Result<(), SpawnOnError> {
        let r = self.registry();
        #[allow(clippy::result_large_err)]
        fn refuse(job: Job, reason: SpawnOnReason) -> Result<(), SpawnOnError> {
            Err(SpawnOnError { job, reason })
        }
        if thread.registry != r.id {
            return refuse(job, SpawnOnReason::OtherSystem);
        }
        let live = r
            .slot(thread.index)
            .filter(|s| s.generation == thread.generation);
        let shut = || {
            if self.handle.is_shutting_down() {
                SpawnOnReason::ShutDown
            } else {
                SpawnOnReason::NotRegistered
            }
        };
        let Some(slot) = live else {
            return refuse(job, shut());
        };
        match slot.inbox.push(job) {
            Ok(()) => {
                slot.parker.unpark();
                Ok(())
            }
            Err(job) => refuse(job, shut()),
        }
    }

    /// Runs the jobs queued for the calling thread by [`spawn_on`](Self::spawn_on) (and,
    /// when the system has no workers, every queued job). Returns how many ran.
    ///
    /// A system that was [shut down](Self::shutdown) has no workers any more: on a clone
    /// kept past the shutdown, this runs every queued job (those spawned on the clone
    /// since included), as with `workers(0)`.
    pub fn run_pending(&self) -> usize {
        with_ctx(self.registry(), |ctx| ctx.run_pending())
    }

    /// Number of panics in fire-and-forget jobs, which had nobody to re-raise them (all
    /// of them, also those whose payloads [`take_panics`](Self::take_panics) took).
    #[must_use]
    pub fn unobserved_panics(&self) -> usize {
        self.registry().unobserved_panics.load(Ordering::Relaxed)
    }

    /// Takes the payloads of the panics of fire-and-forget jobs (`spawn`, `spawn_high`,
    /// `spawn_on`) recorded since the last call, oldest first. Re-raise one with
    /// [`std::panic::resume_unwind`], or read its message by downcasting to `&str` or
    /// `String`. Payloads are kept until taken.
    pub fn take_panics(&self) -> Vec<Box<dyn std::any::Any + Send + 'static>> {
        std::mem::take(&mut *lock(&self.registry().panics))
    }

    /// Turns per-job tracing on or off.
    pub fn set_tracing(&self, on: bool) {
        self.registry().tracing.store(on, Ordering::Relaxed);
    }

    /// Whether tracing is on.
    #[must_use]
    pub fn tracing(&self) -> bool {
        self.registry().tracing.load(Ordering::Relaxed)
    }

    /// Takes every recorded trace event from every thread, sorted by start time.
    pub fn take_trace(&self) -> Vec<TraceEvent> {
        let threads: Vec<_> = lock(&self.registry().threads).live().cloned().collect();
        let mut events = std::mem::take(&mut *lock(&self.registry().retired_trace));
        for t in threads {
            events.append(&mut lock(&t.trace));
        }
        events.sort_by_key(|e| (e.start_ns, e.thread));
        events
    }

    /// Records a span of the calling thread in the trace (if tracing is on), for layers
    /// above the job system that want their own labels in it.
    pub fn record_span(&self, label: &'static str, start_ns: u64, end_ns: u64) {
        if !self.tracing() {
            return;
        }
        with_ctx(self.registry(), |ctx| {
            lock(&ctx.slot().trace).push(TraceEvent {
                thread: ctx.slot().index,
                label,
                start_ns,
                end_ns,
            });
        });
    }

    /// Nanoseconds since this system was built (the time base of trace events).
    #[must_use]
    pub fn now_ns(&self) -> u64 {
        self.registry().now_ns()
    }

    /// Index of the calling thread in this system (registering it if it is not a worker).
    #[must_use]
    pub fn current_thread_index(&self) -> usize {
        with_ctx(self.registry(), |ctx| ctx.slot().index)
    }

    /// Index of the calling thread if it is one of this system's workers.
    #[must_use]
    pub fn current_worker_index(&self) -> Option<usize> {
        with_worker(self.registry(), |w| w.map(|w| w.index))
    }

    /// Names of the registered threads, by index (workers first); an index whose thread
    /// has left (and that no thread took over yet) has an empty name.
    #[must_use]
    pub fn thread_names(&self) -> Vec<String> {
        lock(&self.registry().threads)
            .slots
            .iter()
            .map(|t| t.as_ref().map_or_else(String::new, |t| t.name.clone()))
            .collect()
    }
}
