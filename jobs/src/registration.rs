//! Registration with a lifetime: [`JobSystem::register`] returns a guard whose drop
//! unregisters the calling thread.
//!
//! A thread other than a worker is registered with a system (it gets an index, an inbox
//! for [`JobSystem::spawn_on`] and, while fewer than 16 such threads are registered, a
//! deque of its own) by any call that waits or helps on it, implicitly and until it exits:
//! `scope`, `join` and `parallel_for`/`parallel_for_slice` (on a system with workers),
//! `wait`, `wait_timeout`, `run_pending`, `register_current_thread`,
//! `current_thread_index` and `record_span`. Plain spawning does not register.
//!
//! A game that hands systems around, or a thread pool of its own whose threads use ours
//! only for a while, takes a [`Registration`] instead: when it is dropped the thread's
//! queued work is handed over (its inbox closes, so later `spawn_on` calls with its token
//! fail with [`SpawnOnReason::NotRegistered`](crate::SpawnOnReason::NotRegistered); the
//! jobs already in its inbox and deque move to the shared queue, where any thread runs
//! them) and its index and memory are reused. A thread that exits while registered does
//! the same.

use std::fmt;
use std::marker::PhantomData;

use crate::registry::{Registry, with_worker};
use crate::system::{JobSystem, ThreadToken};

/// A thread's registration with a job system; dropping it unregisters the thread. Not
/// `Send`: it must be dropped on the thread it registered.
#[must_use = "dropping the guard unregisters the thread at once"]
pub struct Registration {
    registry: std::sync::Weak<Registry>,
    token: ThreadToken,
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("token", &self.token)
            .finish()
    }
}

impl Registration {
    /// The token for [`JobSystem::spawn_on`]; valid while this guard lives.
    #[must_use]
    pub fn token(&self) -> ThreadToken {
        self.token
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(r) = self.registry.upgrade() {
            r.unregister_generation(self.token.generation);
        }
    }
}

/// Why [`JobSystem::register`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError {
    /// The calling thread is one of the system's workers, registered for the system's
    /// whole life. Use [`JobSystem::worker_token`] for its token.
    Worker,
    /// A [`Registration`] guard for this thread and system is alive already. Keep using
    /// that one.
    AlreadyRegistered,
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RegisterError::Worker => "the calling thread is a worker of this job system",
            RegisterError::AlreadyRegistered => {
                "the calling thread already holds a registration guard for this job system"
            }
        })
    }
}

impl std::error::Error for RegisterError {}

impl JobSystem {
    /// Registers the calling thread until the returned guard is dropped. A thread that is
    /// not a worker is also registered implicitly, for good (until it exits), by every
    /// call that waits or helps: `scope`, `join` and `parallel_for`/`parallel_for_slice`
    /// (with workers), `wait`, `wait_timeout`, `run_pending`, `register_current_thread`,
    /// `current_thread_index` and `record_span`; plain spawning does not register.
    ///
    /// When the guard is dropped the thread's queued work is handed over: its inbox
    /// closes (later `spawn_on` calls with its token fail with
    /// [`SpawnOnReason::NotRegistered`](crate::SpawnOnReason::NotRegistered)) and the jobs
    /// left in its inbox and deque move to the shared queue, where any thread runs them;
    /// its index and memory are reused. This happens at once, also when the guard is
    /// dropped inside a [`scope`](Self::scope) body or a job the thread runs while it
    /// waits; only the deque that wait still pushes to moves over when the wait returns
    /// (its jobs stay reachable by every thread meanwhile). A thread that was registered
    /// implicitly keeps its index, and the guard now decides when the registration ends.
    pub fn register(&self) -> Result<Registration, RegisterError> {
        let r = self.registry();
        if with_worker(r, |w| w.is_some()) {
            return Err(RegisterError::Worker);
        }
        if !r.guard_current() {
            return Err(RegisterError::AlreadyRegistered);
        }
        Ok(Registration {
            registry: std::sync::Arc::downgrade(r),
            token: self.register_current_thread(),
            _not_send: PhantomData,
        })
    }
}

/// How many systems the calling thread is registered with as an external thread (live
/// ones, and dead ones not yet pruned). For tests of the promise that a thread keeps
/// nothing of a system that has gone.
#[doc(hidden)]
#[must_use]
pub fn registrations_on_this_thread() -> usize {
    crate::registry::external_entries_on_this_thread()
}
