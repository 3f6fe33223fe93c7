//! joule-jobs: the job system at the spine of joule.
//!
//! - **Fixed-size jobs**: a [`Job`] is one 64-byte cache line (function pointer, label,
//!   inline payload). A closure of up to [`INLINE_CAPACITY`] bytes is stored inline, so
//!   spawning it allocates nothing; a larger one is boxed.
//! - **Queues**: each worker owns a fixed-capacity Chase-Lev deque (owner LIFO, thieves
//!   FIFO, victims in random order) that spills half to a shared injector when full;
//!   threads outside the pool push to the injector; every registered thread has an inbox
//!   for jobs that must run on it ([`JobSystem::spawn_on`]).
//! - **Fairness**: a thread takes the newest job of its own deque first (for locality),
//!   but every 61st time it looks for work (tokio's interval) it starts elsewhere: at its
//!   inbox, the shared queue, the other threads' deques or the oldest job of its own
//!   deque, each in turn. So a job that keeps respawning itself cannot starve the rest: a
//!   job waiting in a thread's inbox or in the shared queue is taken within 4 × 61 = 244
//!   jobs of that thread, whatever keeps it busy. High-priority jobs are exempt: they
//!   stay first in every look.
//! - **Waiting helps**: [`JobSystem::scope`], [`JobSystem::join`],
//!   [`JobSystem::parallel_for`] and [`JobSystem::wait`] run other jobs while they wait.
//! - **Idle workers sleep**: they spin briefly, then park. The first job of a burst wakes
//!   one; a thread that takes a job and sees more left wakes the next, so a burst wakes as
//!   many threads as it has work for, with no wake-up per job.
//! - **Priorities**: [`JobSystem::spawn_high`] jobs are taken before any other queued job.
//! - **Registration** ([`JobSystem::register`]) and **shutdown**
//!   ([`JobSystem::shutdown`]) are explicit and defined; no queued job is ever lost: it is
//!   run, or dropped (its destructor runs) where the docs of `shutdown` say so.
//! - **Panics** are caught where a job runs and re-raised in whoever waits for it; the
//!   worker survives. Panics of fire-and-forget jobs are kept for
//!   [`JobSystem::take_panics`].
//! - **Tracing**: [`JobSystem::set_tracing`] records (label, start, end) per job per thread,
//!   and the time a thread waited with nothing to run ([`WAIT_LABEL`]).
//! - **Teams** ([`JobSystem::team`]): a leader and helper workers run a burst of short
//!   parallel stages (a solver's colours and substeps) at one atomic store per stage, with
//!   no job and no wake-up per stage (the protocol is loom-modelled).
//!
//! `workers(n)` (also spelled `threads(n)`) starts `n` workers beside the calling thread;
//! the thread that waits also runs jobs, so `n + 1` threads work
//! ([`JobSystem::num_threads`]), and `workers(0)` runs everything on the calling thread.
//! [`Builder::num_threads`] sets the total instead.
//!
//! ```
//! use joule_jobs::{Counter, JobSystem};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let jobs = JobSystem::builder()
//!     .workers(2) // beside the calling thread: 3 threads in all (`num_threads()`)
//!     .thread_name(|i| format!("game-worker-{i}"))
//!     .build()?;
//!
//! // Jobs that borrow from the stack.
//! let mut data = vec![1.0f32; 10_000];
//! let chunks: Vec<&mut [f32]> = data.chunks_mut(1000).collect();
//! jobs.scope(|s| {
//!     for c in chunks {
//!         s.spawn(move |_| c.iter_mut().for_each(|x| *x *= 2.0));
//!     }
//! });
//! assert!(data.iter().all(|&x| x == 2.0));
//!
//! // A parallel loop; `f` gets the index range of its chunk.
//! let sum = AtomicU64::new(0);
//! jobs.parallel_for(0..1000, 64, |r| {
//!     sum.fetch_add(r.map(|i| i as u64).sum(), Ordering::Relaxed);
//! });
//! assert_eq!(sum.load(Ordering::Relaxed), 999 * 1000 / 2);
//!
//! // Fork-join.
//! fn fib(jobs: &JobSystem, n: u64) -> u64 {
//!     if n < 10 {
//!         return (1..=n).fold((0, 1), |(a, b), _| (b, a + b)).0;
//!     }
//!     let (a, b) = jobs.join(|| fib(jobs, n - 1), || fib(jobs, n - 2));
//!     a + b
//! }
//! assert_eq!(fib(&jobs, 20), 6765);
//!
//! // Jobs counted by a counter, and a job that must run on this (the main) thread.
//! let main = jobs.register()?; // a guard: dropping it unregisters this thread
//! let token = main.token();
//! let counter = Counter::new();
//! let weak = jobs.downgrade(); // jobs hold weak handles, never strong clones
//! jobs.spawn_counted(&counter, move || {
//!     if let Some(j) = weak.upgrade() {
//!         j.spawn_on(token, || println!("runs on the main thread")).unwrap();
//!     }
//! });
//! jobs.wait(&counter);
//! jobs.run_pending();
//!
//! // Latency-sensitive work jumps the queue; a bounded wait.
//! let frame = Counter::new();
//! jobs.spawn_counted_high(&frame, || println!("high priority"));
//! assert!(jobs.wait_timeout(&frame, std::time::Duration::from_secs(10)));
//!
//! drop(main);
//! jobs.shutdown()?; // runs what is queued, joins every worker
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

#[doc(hidden)]
pub mod deque;
#[doc(hidden)]
pub mod inbox;
#[doc(hidden)]
pub mod injector;
mod job;
#[doc(hidden)]
pub mod latch;
#[doc(hidden)]
pub mod sleep;
#[cfg(not(loom))]
mod spin;
mod sync;

#[cfg(not(loom))]
mod disjoint;
#[cfg(not(loom))]
mod parallel_for;
#[cfg(not(loom))]
mod registration;
#[cfg(not(loom))]
mod registry;
#[cfg(not(loom))]
mod scope;
#[cfg(not(loom))]
mod shutdown;
#[cfg(not(loom))]
mod system;
#[cfg(not(loom))]
pub mod team;
#[doc(hidden)]
pub mod team_core;
#[cfg(not(loom))]
mod trace;

pub use job::{INLINE_CAPACITY, Job};
pub use latch::Counter;
pub use sync::DEQUE_CAPACITY;

#[cfg(not(loom))]
pub use disjoint::{DisjointChunk, DisjointError, DisjointPlan};
#[cfg(not(loom))]
pub use registration::{RegisterError, Registration, registrations_on_this_thread};
#[cfg(not(loom))]
pub use scope::Scope;
#[cfg(not(loom))]
pub use system::{
    BuildError, Builder, JobSystem, MAX_THREADS, ShutdownError, SpawnOnError, SpawnOnReason,
    ThreadToken, WeakJobSystem,
};
#[cfg(not(loom))]
pub use team::{Team, TeamScope};
#[cfg(not(loom))]
pub use trace::{ITEM_LABEL, PHASE_LABEL, TEAM_PHASE_LABEL, TraceEvent, WAIT_LABEL};
