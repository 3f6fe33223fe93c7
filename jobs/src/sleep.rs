//! Parking idle threads without losing a wake-up.
//!
//! A [`Parker`] is one thread's bed: `park` blocks until a token is available and consumes
//! it; `unpark` leaves a token (a second `unpark` before the `park` is absorbed), so an
//! `unpark` that races ahead of `park` is never lost.
//!
//! The [`IdleSet`] lists the threads that are parked waiting for work. The protocol is a
//! Dekker-style handshake on two locations, each side writing one and then reading the
//! other across a `SeqCst` fence:
//!
//! ```text
//!   pusher                           sleeper
//!   publish job (queue index)        announce (idle count += 1)
//!   fence(SeqCst)                    fence(SeqCst)
//!   read idle count                  re-check the queues
//!   > 0: wake one sleeper            empty: park
//! ```
//!
//! Whatever the interleaving, either the pusher sees the announcement (and wakes someone)
//! or the sleeper sees the job (and does not park). Each push wakes at most one sleeper,
//! so a burst of work wakes only as many threads as it has jobs.

use crate::sync::{Arc, AtomicUsize, Condvar, Mutex, Ordering, fence, lock};

/// A binary semaphore on which one thread sleeps.
#[derive(Default)]
pub struct Parker {
    token: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    /// A parker with no token.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Blocks until a token is available, then consumes it.
    pub fn park(&self) {
        let mut token = lock(&self.token);
        while !*token {
            #[cfg(not(loom))]
            {
                token = self
                    .cv
                    .wait(token)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            #[cfg(loom)]
            {
                token = self.cv.wait(token).unwrap();
            }
        }
        *token = false;
    }

    /// Like [`park`](Self::park), but returns after `timeout` at the latest (with the
    /// token consumed if one came).
    #[cfg(not(loom))]
    pub fn park_timeout(&self, timeout: std::time::Duration) {
        let mut token = lock(&self.token);
        if !*token {
            token = self
                .cv
                .wait_timeout(token, timeout)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        *token = false;
    }

    /// Makes a token available and wakes the parked thread, if any.
    pub fn unpark(&self) {
        let mut token = lock(&self.token);
        *token = true;
        drop(token);
        self.cv.notify_one();
    }
}

/// The set of threads parked for lack of work.
pub struct IdleSet {
    /// Mirror of `sleepers.len()` that pushers read without the lock.
    count: AtomicUsize,
    sleepers: Mutex<Vec<Arc<Parker>>>,
}

impl IdleSet {
    /// An empty set with room for `capacity` sleepers without reallocating.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            count: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(capacity)),
        }
    }

    /// Step one of going to sleep: announce `parker` as idle. The caller must then re-check
    /// for work and either [`cancel`](Self::cancel) or park.
    pub fn announce(&self, parker: &Arc<Parker>) {
        let mut s = lock(&self.sleepers);
        s.push(parker.clone());
        // SeqCst (with the fence): the announcement must be visible before the caller's
        // re-check of the queues; pairs with the fence in `notify_one`.
        self.count.store(s.len(), Ordering::SeqCst);
        drop(s);
        fence(Ordering::SeqCst);
    }

    /// Removes `parker` if it is still listed (after finding work, or after waking for
    /// another reason). Returns whether it was listed.
    pub fn cancel(&self, parker: &Arc<Parker>) -> bool {
        let mut s = lock(&self.sleepers);
        let found = s.iter().position(|p| Arc::ptr_eq(p, parker));
        if let Some(i) = found {
            s.swap_remove(i);
            self.count.store(s.len(), Ordering::Relaxed);
        }
        found.is_some()
    }

    /// Called after publishing work: wakes one idle thread if there is one.
    #[inline]
    pub fn notify_one(&self) {
        // SeqCst fence: orders the caller's publication of the job before the read of
        // `count`; pairs with the fence in `announce`.
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        self.wake_one();
    }

    /// Wakes one idle thread if the (possibly stale) idle count says there is one. Without
    /// the fence this may miss a thread that is just falling asleep, so it is only for
    /// jobs whose progress is guaranteed otherwise (a worker's own deque, a job its pusher
    /// waits for); a later push or the pusher itself picks the job up.
    #[inline]
    pub fn notify_hint(&self) {
        if self.count.load(Ordering::Relaxed) != 0 {
            self.wake_one();
        }
    }

    #[cold]
    fn wake_one(&self) {
        let mut s = lock(&self.sleepers);
        let p = s.pop();
        self.count.store(s.len(), Ordering::Relaxed);
        drop(s);
        if let Some(p) = p {
            p.unpark();
        }
    }

    /// Wakes every idle thread (shutdown).
    pub fn notify_all(&self) {
        let mut s = lock(&self.sleepers);
        let all: Vec<_> = s.drain(..).collect();
        self.count.store(0, Ordering::SeqCst);
        drop(s);
        for p in all {
            p.unpark();
        }
    }

    /// Number of threads currently listed as idle.
    #[must_use]
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Whether no thread is listed as idle.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
