//! `JobSystem`: the user's handle, its builder, and the plain spawning and waiting API.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::thread::JoinHandle;

use crate::job::Job;
use crate::latch::Counter;
use crate::registry::{self, Hook, Registry, with_ctx, with_worker};
use crate::sync::{Arc, Mutex, Ordering, lock};
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
    name: Arc<dyn Fn(usize) -> String + Send + Sync>,
    stack_size: Option<usize>,
    on_start: Option<Hook>,
    on_exit: Option<Hook>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            threads: None,
            name: Arc::new(|i| format!("joule-worker-{i}")),
            stack_size: None,
            on_start: None,
            on_exit: None,
        }
    }
}

impl Builder {
    /// Number of worker threads. The thread that waits (calls `scope`, `join`,
    /// `parallel_for`, `wait`) also runs jobs, so `threads(n)` puts `n + 1` threads to work,
    /// and `threads(0)` runs everything on the calling thread. Default: one fewer than the
    /// machine's available parallelism.
    #[must_use]
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
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
        if n > MAX_THREADS {
            return Err(BuildError::TooManyThreads { requested: n });
        }
        if self.stack_size == Some(0) {
            return Err(BuildError::ZeroStackSize);
        }
        let name = self.name.clone();
        let (registry, owners) = Registry::new(n, |i| name(i), self.on_start, self.on_exit);
        let handle = Handle {
            registry: registry.clone(),
            threads: Mutex::new(Vec::with_capacity(n)),
        };
        for (i, deque) in owners.into_iter().enumerate() {
            let mut b = std::thread::Builder::new().name((self.name)(i));
            if let Some(size) = self.stack_size {
                b = b.stack_size(size);
            }
            let r = registry.clone();
            match b.spawn(move || registry::worker_main(r, i, deque)) {
                Ok(t) => lock(&handle.threads).push(t),
                // Dropping `handle` stops and joins the workers started so far.
                Err(e) => return Err(BuildError::Spawn(e)),
            }
        }
        Ok(JobSystem {
            handle: Arc::new(handle),
        })
    }
}

/// Owns the worker threads; dropped with the last `JobSystem` clone.
struct Handle {
    registry: Arc<Registry>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let r = &self.registry;
        // Release: pairs with the Acquire load in the workers' idle loop.
        r.terminate.store(true, Ordering::SeqCst);
        r.idle.notify_all();
        for i in 0..r.num_workers() {
            if let Some(slot) = r.slot(i) {
                slot.parker.unpark();
            }
        }
        // The last handle may be dropped by a job running on one of our own workers; that
        // thread cannot join itself, so the workers then finish and exit on their own.
        let on_own_worker = with_worker(r, |w| w.is_some());
        if on_own_worker {
            return;
        }
        for t in lock(&self.threads).drain(..) {
            // A worker only ends by returning from `worker_main`; job panics are caught.
            let _ = t.join();
        }
        // Workers exit only with their own deques empty, but a job running on one worker
        // may have queued work for another that had already left: finish it here.
        let threads: Vec<_> = lock(&r.threads).clone();
        let me = &threads;
        loop {
            let mut ran = false;
            while let Some(job) = r.injector.pop() {
                ran = true;
                run_detached(r, job);
            }
            for slot in me.iter().take(r.num_workers()) {
                while let Some(job) = slot.inbox.pop() {
                    ran = true;
                    run_detached(r, job);
                }
            }
            ran |= r.drain_external_deques(|job| run_detached(r, job));
            ran |= r.drain_own_overflow(|job| run_detached(r, job));
            if !ran {
                break;
            }
        }
    }
}

fn run_detached(r: &Registry, job: Job) {
    if catch_unwind(AssertUnwindSafe(|| job.run())).is_err() {
        r.unobserved_panics.fetch_add(1, Ordering::Relaxed);
    }
}

/// A job system: worker threads with work-stealing queues.
///
/// Cheap to clone (an `Arc`); dropping the last clone runs the jobs still queued and joins
/// every worker. See the [crate docs](crate) for an overview.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadToken {
    registry: usize,
    index: usize,
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
}

impl fmt::Display for SpawnOnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the target thread is not registered with this job system (a token from another system?)"
        )
    }
}

impl std::error::Error for SpawnOnError {}

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
    /// The job system, if a strong handle still exists.
    #[must_use]
    pub fn upgrade(&self) -> Option<JobSystem> {
        self.handle.upgrade().map(|handle| JobSystem { handle })
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
        &self.handle.registry
    }

    /// Number of worker threads.
    #[must_use]
    pub fn num_workers(&self) -> usize {
        self.registry().num_workers()
    }

    /// Number of threads that run jobs while a caller waits: the workers plus the caller.
    #[must_use]
    pub fn num_threads(&self) -> usize {
        self.num_workers() + 1
    }

    /// Runs `f` on some thread of the system, fire and forget. A panic in `f` is caught
    /// (the thread survives) and counted in [`unobserved_panics`](Self::unobserved_panics);
    /// use [`spawn_counted`](Self::spawn_counted) or a scope to observe it.
    ///
    /// With `threads(0)` the job runs when the calling thread waits or calls
    /// [`run_pending`](Self::run_pending).
    #[inline]
    pub fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        self.registry().push(Job::new("job", f));
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

    /// Registers the calling thread so jobs can be sent to it with
    /// [`spawn_on`](Self::spawn_on). On a worker, returns that worker's token.
    pub fn register_current_thread(&self) -> ThreadToken {
        let index = with_ctx(self.registry(), |ctx| ctx.slot().index);
        ThreadToken {
            registry: self.registry().id,
            index,
        }
    }

    /// The token of worker `i`, if it exists.
    #[must_use]
    pub fn worker_token(&self, i: usize) -> Option<ThreadToken> {
        (i < self.num_workers()).then_some(ThreadToken {
            registry: self.registry().id,
            index: i,
        })
    }

    /// Queues `f` to run on one specific registered thread: a worker runs it among its
    /// other jobs; an external thread (the game's main thread) runs it in
    /// [`run_pending`](Self::run_pending) or while it waits.
    pub fn spawn_on<F: FnOnce() + Send + 'static>(
        &self,
        thread: ThreadToken,
        f: F,
    ) -> Result<(), SpawnOnError> {
        self.spawn_job_on(thread, Job::new("job", f))
    }

    /// [`spawn_on`](Self::spawn_on) for a prepared job.
    pub fn spawn_job_on(&self, thread: ThreadToken, job: Job) -> Result<(), SpawnOnError> {
        let r = self.registry();
        if thread.registry != r.id {
            return Err(SpawnOnError { job });
        }
        let Some(slot) = r.slot(thread.index) else {
            return Err(SpawnOnError { job });
        };
        slot.inbox.push(job);
        slot.parker.unpark();
        Ok(())
    }

    /// Runs the jobs queued for the calling thread by [`spawn_on`](Self::spawn_on) (and,
    /// when the system has no workers, every queued job). Returns how many ran.
    pub fn run_pending(&self) -> usize {
        with_ctx(self.registry(), |ctx| ctx.run_pending())
    }

    /// Number of panics in fire-and-forget jobs, which had nobody to re-raise them.
    #[must_use]
    pub fn unobserved_panics(&self) -> usize {
        self.registry().unobserved_panics.load(Ordering::Relaxed)
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
        let threads: Vec<_> = lock(&self.registry().threads).clone();
        let mut events = Vec::new();
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

    /// Names of the registered threads, by index (workers first).
    #[must_use]
    pub fn thread_names(&self) -> Vec<String> {
        lock(&self.registry().threads)
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }
}
