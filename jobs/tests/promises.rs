//! The promises a game relies on when it uses joule-jobs for its own tasks (issue 12):
//! no job is ever lost or stranded, whoever spawns it and however the system goes away.
//! Each test was written against the code before its fix and failed there. They
//! oversubscribe (more threads than the CI machine's 2 cores) and count: every job ran
//! exactly once, every payload was dropped exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use joule_jobs::JobSystem;

fn system(workers: usize) -> JobSystem {
    JobSystem::builder()
        .threads(workers)
        .build()
        .expect("job system")
}

/// Counts its own drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Marks each index of `range` it is given; afterwards every index of the whole range must
/// have been marked exactly once. Indices are stored relative to `base` so a range that
/// ends at `usize::MAX` fits in a small table.
struct Coverage {
    base: usize,
    hits: Vec<AtomicUsize>,
}

impl Coverage {
    fn new(range: &std::ops::Range<usize>) -> Self {
        Self {
            base: range.start,
            hits: (0..range.len()).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    fn mark(&self, r: std::ops::Range<usize>) {
        assert!(r.start >= self.base, "chunk {r:?} starts before the range");
        for i in r {
            self.hits[i - self.base].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn assert_each_once(&self, what: &str) {
        for (k, h) in self.hits.iter().enumerate() {
            let n = h.load(Ordering::Relaxed);
            assert_eq!(n, 1, "{what}: index base+{k} visited {n} times");
        }
    }
}

// ---- Item 5: every index exactly once, also next to usize::MAX. ----

#[test]
fn parallel_for_near_usize_max_visits_every_index_once() {
    // The last chunk's end used to be computed as `start + chunk`, which wraps past
    // usize::MAX in release builds, so the chunk came out empty and its indices were
    // skipped. Expected: each index of the range exactly once (the definition of the API).
    let ranges = [
        usize::MAX - 1000..usize::MAX,
        usize::MAX - 7..usize::MAX,
        usize::MAX - 999..usize::MAX - 1,
    ];
    for workers in [0, 1, 3] {
        let jobs = system(workers);
        for range in ranges.clone() {
            for min_chunk in [1, 3, 64, 4096] {
                let cov = Coverage::new(&range);
                jobs.parallel_for(range.clone(), min_chunk, |r| cov.mark(r));
                cov.assert_each_once(&format!("parallel_for {range:?} min {min_chunk}"));

                let cov = Arc::new(Coverage::new(&range));
                let c = cov.clone();
                let done =
                    jobs.parallel_for_async(range.clone(), min_chunk, move |r| c.mark(r), || {});
                jobs.wait(&done);
                cov.assert_each_once(&format!("parallel_for_async {range:?} min {min_chunk}"));
            }
        }
    }
}
