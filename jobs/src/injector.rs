//! The shared queue for jobs spawned from outside the pool and for deque overflow.
//!
//! Normal builds use crossbeam-deque's lock-free `Injector`. Under loom, whose scheduler
//! cannot see crossbeam's internal atomics, a mutex-protected `VecDeque` with the same
//! interface stands in, so models that spill into the injector still run.

use crate::job::Job;

/// A multi-producer multi-consumer FIFO of jobs.
pub struct Injector {
    #[cfg(not(loom))]
    queue: crossbeam_deque::Injector<Job>,
    #[cfg(loom)]
    queue: crate::sync::Mutex<std::collections::VecDeque<Job>>,
}

impl Default for Injector {
    fn default() -> Self {
        Self::new()
    }
}

impl Injector {
    /// An empty injector.
    #[must_use]
    pub fn new() -> Self {
        Self {
            #[cfg(not(loom))]
            queue: crossbeam_deque::Injector::new(),
            #[cfg(loom)]
            queue: crate::sync::Mutex::new(std::collections::VecDeque::new()),
        }
    }

    /// Appends a job.
    pub fn push(&self, job: Job) {
        #[cfg(not(loom))]
        self.queue.push(job);
        #[cfg(loom)]
        crate::sync::lock(&self.queue).push_back(job);
    }

    /// Takes the oldest job, retrying internal races; `None` when empty.
    pub fn pop(&self) -> Option<Job> {
        // crossbeam's `steal` pays a SeqCst fence even on an empty queue; every thread
        // looks at two injectors (the high-priority lane first) each time it looks for
        // work, so check with plain loads first. A push racing with this check is found
        // by the caller's next look, or by the sleep protocol's re-check.
        #[cfg(not(loom))]
        if self.queue.is_empty() {
            return None;
        }
        #[cfg(not(loom))]
        loop {
            match self.queue.steal() {
                crossbeam_deque::Steal::Success(job) => return Some(job),
                crossbeam_deque::Steal::Empty => return None,
                crossbeam_deque::Steal::Retry => crate::sync::spin_hint(),
            }
        }
        #[cfg(loom)]
        crate::sync::lock(&self.queue).pop_front()
    }

    /// Whether it looked empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        #[cfg(not(loom))]
        {
            self.queue.is_empty()
        }
        #[cfg(loom)]
        {
            crate::sync::lock(&self.queue).is_empty()
        }
    }
}
