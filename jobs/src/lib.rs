//! joule-jobs: the job system at the spine of joule.
//!
//! - **Fixed-size jobs**: a [`Job`] is one 64-byte cache line (function pointer, label,
//!   inline payload). A closure of up to [`INLINE_CAPACITY`] bytes is stored inline, so
//!   spawning it allocates nothing; a larger one is boxed.
//! - **Queues**: each worker owns a fixed-capacity Chase-Lev deque (owner LIFO, thieves
//!   FIFO, victims in random order) that spills half to a shared injector when full;
//!   threads outside the pool push to the injector; every registered thread has an inbox
//!   for jobs that must run on it ([`JobSystem::spawn_on`]).
//! - **Waiting helps**: [`JobSystem::scope`], [`JobSystem::join`],
//!   [`JobSystem::parallel_for`] and [`JobSystem::wait`] run other jobs while they wait.
//! - **Idle workers sleep**: they spin briefly, then park; each push wakes at most one.
//! - **Panics** are caught where a job runs and re-raised in whoever waits for it; the
//!   worker survives.
//! - **Tracing**: [`JobSystem::set_tracing`] records (label, start, end) per job per thread.
//!
//! `threads(n)` starts `n` workers; the thread that waits also runs jobs, so `n + 1`
//! threads work, and `threads(0)` runs everything on the calling thread.
//!
//! ```
//! use joule_jobs::{Counter, JobSystem};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! let jobs = JobSystem::builder()
//!     .threads(2)
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
//! let main = jobs.register_current_thread();
//! let counter = Counter::new();
//! let j = jobs.clone();
//! jobs.spawn_counted(&counter, move || {
//!     j.spawn_on(main, || println!("runs on the main thread")).unwrap();
//! });
//! jobs.wait(&counter);
//! jobs.run_pending();
//! # Ok::<(), joule_jobs::BuildError>(())
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
pub use trace::TraceEvent;
