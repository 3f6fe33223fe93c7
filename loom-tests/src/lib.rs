//! loom models of joule's lock-free parts live in `tests/`.
//!
//! Under `--cfg loom`, joule-jobs takes its atomics, locks and cells from loom (through
//! `jobs/src/sync.rs`) and shrinks its deque to `DEQUE_CAPACITY = 2`, so the models drive
//! the real deque, inbox, injector, parker, idle set, latch, counter and chunk claimer, and
//! loom explores their interleavings (and reports data races on the deque slots). Every
//! model file is `#![cfg(loom)]`, so a normal build compiles it to nothing. CI runs:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p loom-tests --release
//! ```
//!
//! This library holds what the models share: [`Tally`], the observer that records which
//! test jobs ran, how often and in which order; [`Seen`], which checks that a model
//! reached the case it is about; and (under loom) `Model`, `model` and `nudge`,
//! which run a model and widen loom's search (see `Model` for why).
#![deny(missing_docs)]

#[cfg(loom)]
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use joule_jobs::Job;

/// The most jobs one [`Tally`] tracks.
pub const MAX_JOBS: usize = 8;

/// Records which test jobs ran and were dropped, how many times each, and in which order.
///
/// Lives in a `static` (one per model) and is [`reset`](Self::reset) at the start of each
/// execution, so a job carries only a `&'static` and its id, plain data: if a bug hands
/// out one job twice, the second copy runs and records a second run (a clean assertion)
/// instead of releasing an `Arc` twice (a crash). Built from `std` types on purpose: it
/// observes the code under test and is no part of it, so it adds no scheduling points and
/// no synchronisation for loom to explore. The checks run after the model has joined its
/// threads, so they see every record.
#[derive(Debug)]
pub struct Tally {
    len: AtomicUsize,
    runs: [AtomicUsize; MAX_JOBS],
    drops: [AtomicUsize; MAX_JOBS],
    order: Mutex<Vec<usize>>,
}

impl Default for Tally {
    fn default() -> Self {
        Self::new()
    }
}

/// Marks one drop of a job's closure, whether it ran or was dropped unrun.
struct DropMark {
    tally: &'static Tally,
    id: usize,
}

impl Drop for DropMark {
    fn drop(&mut self) {
        self.tally.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

impl Tally {
    /// An empty tally, for a `static`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            len: AtomicUsize::new(0),
            runs: [const { AtomicUsize::new(0) }; MAX_JOBS],
            drops: [const { AtomicUsize::new(0) }; MAX_JOBS],
            order: Mutex::new(Vec::new()),
        }
    }

    /// Starts an execution with jobs `0..n`, none run or dropped yet.
    ///
    /// # Panics
    /// When `n` exceeds [`MAX_JOBS`].
    pub fn reset(&'static self, n: usize) -> &'static Self {
        assert!(n <= MAX_JOBS, "a tally tracks at most {MAX_JOBS} jobs");
        self.len.store(n, Ordering::Relaxed);
        for c in self.runs.iter().chain(&self.drops) {
            c.store(0, Ordering::Relaxed);
        }
        self.order_log().clear();
        self
    }

    fn order_log(&self) -> MutexGuard<'_, Vec<usize>> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A job that records `id` when it runs, and its closure's drop either way. The
    /// closure is 16 bytes, so it is stored inline in the job.
    ///
    /// # Panics
    /// When `id` is not below the `n` given to [`reset`](Self::reset).
    #[must_use]
    pub fn job(&'static self, id: usize) -> Job {
        assert!(
            id < self.len.load(Ordering::Relaxed),
            "job id {id} out of range"
        );
        let mark = DropMark { tally: self, id };
        Job::new("loom", move || {
            let mark = mark;
            mark.tally.runs[mark.id].fetch_add(1, Ordering::Relaxed);
            mark.tally.order_log().push(mark.id);
        })
    }

    /// How many times job `id` ran.
    #[must_use]
    pub fn runs(&self, id: usize) -> usize {
        self.runs[id].load(Ordering::Relaxed)
    }

    /// How many times job `id`'s closure was dropped (after running or unrun).
    #[must_use]
    pub fn drops(&self, id: usize) -> usize {
        self.drops[id].load(Ordering::Relaxed)
    }

    /// The ids in the order their jobs ran.
    #[must_use]
    pub fn order(&self) -> Vec<usize> {
        self.order_log().clone()
    }

    /// Asserts that every job ran exactly once and was dropped exactly once: none lost,
    /// none run twice, none leaked.
    ///
    /// # Panics
    /// When some job ran or was dropped zero times or more than once (the message lists
    /// the counts).
    pub fn assert_each_ran_once(&self) {
        let n = self.len.load(Ordering::Relaxed);
        let runs: Vec<usize> = (0..n).map(|id| self.runs(id)).collect();
        let drops: Vec<usize> = (0..n).map(|id| self.drops(id)).collect();
        assert!(
            runs.iter().chain(&drops).all(|&c| c == 1),
            "every job must run exactly once and be dropped once; runs per id: {runs:?}, \
             drops per id: {drops:?}, order: {:?}",
            self.order()
        );
    }
}

/// Runs `f` under loom over the interleavings it explores within the preemption bound
/// (see [`Model`]); shorthand for `Model::new(name).check(|_| f())`.
#[cfg(loom)]
pub fn model<F>(name: &str, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Model::new(name).check(move |_| f());
}

/// A loom model run: a name, the numbered [`nudge`] points it has, and the least
/// preemption bound it needs.
///
/// **Preemption bound.** It comes from `LOOM_MAX_PREEMPTIONS` as usual (2 when unset,
/// what CI uses, instead of loom's unbounded search). A model may ask for more with
/// [`min_preemptions`](Self::min_preemptions) when it is small enough to afford it and a
/// known bug needs it: for example, removing the `SeqCst` fence from the deque's `pop`
/// lets owner and thief both take a job, which loom finds with 3 preemptions, not 2.
///
/// **Nudges.** loom's DPOR records only the *last* access to each atomic, so when a
/// thread's own load sits between another thread's access and its store to the same
/// atomic, the race between the two is never reversed (tokio-rs/loom#166, #392: a thread
/// that starts with a load is not explored before the other's loads at all). A Chase-Lev
/// thief is exactly that: load `top`, then CAS `top`. Measured here: with the owner's
/// `push` after the thief's spawn, plain loom never ran the thief's steal before that
/// push, not even without a preemption bound. So a model with `points` nudge points is
/// run `points + 1` times; run `at` yields at point `at` (run `points` nowhere), which
/// starts loom's search from a schedule where the other threads go first there. A yield
/// also stops loom from showing the yielding thread values it read before the yield
/// again, which is why nudged runs come in addition to the plain one, not instead of it.
/// [`Seen`] asserts that the case a model is about was reached.
#[cfg(loom)]
#[derive(Debug)]
pub struct Model {
    name: String,
    points: usize,
    min_preemptions: usize,
}

#[cfg(loom)]
impl Model {
    /// A model named `name` (printed with its execution counts under `--nocapture`).
    #[must_use]
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            points: 0,
            min_preemptions: 0,
        }
    }

    /// The model calls [`nudge`]`(at, k)` for `k` in `0..points`.
    #[must_use]
    pub fn nudges(mut self, points: usize) -> Self {
        self.points = points;
        self
    }

    /// Searches with at least `n` preemptions whatever `LOOM_MAX_PREEMPTIONS` says.
    #[must_use]
    pub fn min_preemptions(mut self, n: usize) -> Self {
        self.min_preemptions = n;
        self
    }

    /// Runs `f(at)` under loom once per nudge run, printing each run's execution count.
    pub fn check<F>(self, f: F)
    where
        F: Fn(usize) + Sync + Send + 'static,
    {
        let f = Arc::new(f);
        for at in 0..=self.points {
            let mut builder = loom::model::Builder::new();
            let bound = builder
                .preemption_bound
                .unwrap_or(2)
                .max(self.min_preemptions);
            builder.preemption_bound = Some(bound);
            let name = if self.points == 0 {
                self.name.clone()
            } else {
                format!("{} [nudge {at}/{}]", self.name, self.points)
            };
            // Shown when the model fails (the harness prints captured output), so the
            // failing run can be told apart.
            eprintln!("{name}: exploring with {bound} preemptions");
            let executions = Arc::new(AtomicUsize::new(0));
            let counted = Arc::clone(&executions);
            let f = Arc::clone(&f);
            let start = std::time::Instant::now();
            builder.check(move || {
                counted.fetch_add(1, Ordering::Relaxed);
                f(at);
            });
            eprintln!(
                "{name}: {} executions in {:.2?}",
                executions.load(Ordering::Relaxed),
                start.elapsed()
            );
        }
    }
}

/// Yields to the other threads at numbered point `point` of a model when it is the one
/// this run nudges (see [`Model`]); loom then runs the others first, until they block or
/// finish.
#[cfg(loom)]
pub fn nudge(at: usize, point: usize) {
    if at == point {
        loom::thread::yield_now();
    }
}

/// Runs this test binary's test `name` (an ignored one) in a child process and asserts
/// that it fails with loom's deadlock report.
///
/// For models that must deadlock, to show that a model can fail: loom reports a deadlock
/// by panicking, and the unwinding then drops loom objects outside their execution, which
/// panics again and aborts the process, so `#[should_panic]` cannot catch it in-process.
///
/// # Panics
/// When the child passes, fails for another reason, or cannot be started.
pub fn assert_deadlocks(name: &str) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("run the test binary again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success() && text.contains("deadlock; threads"),
        "{name} was expected to deadlock under loom; status {:?}, output:\n{text}",
        out.status
    );
}

/// Remembers, across all executions of one model, whether an interesting path was taken,
/// so a model can assert that its interleavings really reached the case it is about (a
/// model that never reaches the race it names proves nothing).
#[derive(Debug, Default)]
pub struct Seen(std::sync::atomic::AtomicBool);

impl Seen {
    /// Not seen yet.
    #[must_use]
    pub const fn new() -> Self {
        Self(std::sync::atomic::AtomicBool::new(false))
    }

    /// Records that the path was taken.
    pub fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Asserts that some execution took the path.
    ///
    /// # Panics
    /// When no execution called [`mark`](Self::mark); `what` names the path.
    pub fn assert_seen(&self, what: &str) {
        assert!(
            self.0.load(Ordering::Relaxed),
            "no execution of the model reached: {what}"
        );
    }
}
