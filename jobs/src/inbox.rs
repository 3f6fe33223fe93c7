//! Inboxes: the queue of jobs bound to one registered thread (`spawn_on`).
//!
//! Game code has work that must run on one thread (the main thread's graphics context,
//! a non-`Send` resource). Such jobs go to that thread's inbox and run only there: when it
//! calls `run_pending()` or while it waits. Inbox traffic is light, so a mutex-protected
//! ring is enough; an atomic length lets the hot "anything for me?" check skip the lock.
//!
//! An inbox is *closed* when its thread unregisters or exits, or its system shuts down.
//! Closing and pushing take the same lock, so every job is either taken by
//! [`Inbox::close`] (which hands it on) or refused by [`Inbox::push`] (which gives it back
//! to the caller): none can slip in after the last look and be stranded.

use std::collections::VecDeque;

use crate::job::Job;
use crate::sync::{AtomicUsize, Mutex, Ordering, lock};

/// A multi-producer, single-consumer queue of jobs for one thread.
pub struct Inbox {
    len: AtomicUsize,
    queue: Mutex<Queue>,
}

struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

/// Jobs an inbox holds before its ring grows. Allocated up front: which thread finishes a
/// graph run last (and so posts to the waiting caller's inbox) depends on timing, so a
/// lazily allocated ring could allocate for the first time long after warm-up.
const INBOX_CAPACITY: usize = 16;

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    /// An empty inbox.
    #[must_use]
    pub fn new() -> Self {
        Self {
            len: AtomicUsize::new(0),
            queue: Mutex::new(Queue {
                jobs: VecDeque::with_capacity(INBOX_CAPACITY),
                closed: false,
            }),
        }
    }

    /// Appends a job (any thread), or gives it back when the inbox is closed.
    pub fn push(&self, job: Job) -> Result<(), Job> {
        let mut q = lock(&self.queue);
        if q.closed {
            return Err(job);
        }
        q.jobs.push_back(job);
        // Release under the lock; the SeqCst store also takes part in the sleep protocol
        // (a sleeper re-checks `len` after announcing itself; see `sleep.rs`).
        self.len.store(q.jobs.len(), Ordering::SeqCst);
        Ok(())
    }

    /// Refuses every later push and returns the jobs still queued, oldest first.
    pub fn close(&self) -> VecDeque<Job> {
        let mut q = lock(&self.queue);
        q.closed = true;
        self.len.store(0, Ordering::Relaxed);
        std::mem::take(&mut q.jobs)
    }

    /// Whether [`close`](Self::close) was called.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        lock(&self.queue).closed
    }

    /// Takes the oldest job (the owning thread).
    pub fn pop(&self) -> Option<Job> {
        if self.len.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut q = lock(&self.queue);
        let job = q.jobs.pop_front();
        self.len.store(q.jobs.len(), Ordering::Relaxed);
        job
    }

    /// Whether it looked empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len.load(Ordering::SeqCst) == 0
    }
}
