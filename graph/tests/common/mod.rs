//! Shared fixture of the joule-graph behaviour tests: job systems at the thread counts the
//! tests run at (0: everything on the calling thread; 8: oversubscribed on a small
//! machine, which shakes out ordering bugs), and a sequence recorder.
#![allow(dead_code)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use joule_jobs::JobSystem;

/// Worker counts every behaviour test runs at.
pub const WORKERS: [usize; 4] = [0, 1, 3, 8];

/// Runs `f` once per worker count in [`WORKERS`], with a fresh job system.
pub fn for_each_system(mut f: impl FnMut(&JobSystem)) {
    for n in WORKERS {
        let jobs = JobSystem::builder()
            .threads(n)
            .thread_name(|i| format!("test-worker-{i}"))
            .build()
            .expect("job system");
        f(&jobs);
    }
}

/// Records the order in which things happen: each `tick` returns the next sequence number.
#[derive(Default)]
pub struct Sequence {
    next: AtomicUsize,
    log: Mutex<Vec<&'static str>>,
}

impl Sequence {
    pub fn tick(&self) -> usize {
        self.next.fetch_add(1, Ordering::SeqCst)
    }

    pub fn log(&self, what: &'static str) {
        self.log.lock().unwrap().push(what);
        self.tick();
    }

    pub fn take_log(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// The message of a caught panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic>".to_owned()
    }
}
