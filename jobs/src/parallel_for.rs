//! `parallel_for` and `parallel_for_async` (Edyn's design, seeds 000 and 001).
//!
//! The range is cut into chunks of at least `min_chunk` indices. Participants claim chunk
//! indices from a shared atomic (`ChunkClaimer`) until none are left, so the loop makes
//! progress even when some helper jobs sit in busy queues: whoever runs claims the rest.
//!
//! - `parallel_for` blocks; the calling thread claims chunks too, then helps with other
//!   jobs until the helpers it spawned have finished. With one thread it is a plain call.
//! - `parallel_for_async` returns at once with a [`Counter`]; the participant that finishes
//!   the last chunk dispatches the completion job, exactly once (also for an empty range,
//!   where the completion is dispatched immediately). The shared context is an `Arc`; the
//!   last participant to let go frees it.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::job::Job;
use crate::latch::{ChunkClaimer, Counter};
use crate::registry::Registry;
use crate::sync::{Arc, Mutex, lock};
use crate::system::JobSystem;
use crate::trace::{ITEM_LABEL, PHASE_LABEL};

/// Chunk size for `len` items over `participants` threads: at least `min_chunk`, and about
/// four chunks per participant so uneven chunks balance out.
fn chunk_size(len: usize, min_chunk: usize, participants: usize) -> usize {
    let target = len.div_ceil(participants * 4);
    target.max(min_chunk).max(1)
}

/// Most items a traced one-thread loop records: as fine as any thread count up to 64
/// cuts it (four chunks per participant), and a bounded trace for a long loop with a
/// small `min_chunk`.
const MAX_TRACED_ITEMS: usize = 256;

/// Length of a traced one-thread loop's items: `min_chunk`, or longer so that there are
/// at most [`MAX_TRACED_ITEMS`].
fn traced_item(len: usize, min_chunk: usize) -> usize {
    min_chunk.max(len.div_ceil(MAX_TRACED_ITEMS)).max(1)
}

struct AsyncFor<F, C> {
    claimer: ChunkClaimer,
    start: usize,
    end: usize,
    chunk: usize,
    f: F,
    completion: Mutex<Option<C>>,
    handle: Counter,
    registry: Arc<Registry>,
}

impl<F, C> AsyncFor<F, C>
where
    F: Fn(Range<usize>) + Send + Sync + 'static,
    C: FnOnce() + Send + 'static,
{
    fn participate(self: &Arc<Self>) {
        while let Some(i) = self.claimer.claim() {
            let s = self.start + i * self.chunk;
            // `end - s` first: `s + chunk` may pass usize::MAX for a range that ends
            // near it.
            let e = s + self.chunk.min(self.end - s);
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| (self.f)(s..e))) {
                self.handle.store_panic(p);
            }
            if self.claimer.finish() {
                Self::dispatch_completion(self.clone());
            }
        }
    }

    fn dispatch_completion(this: Arc<Self>) {
        let registry = this.registry.clone();
        registry.push(Job::new("parallel_for completion", move || {
            let completion = lock(&this.completion).take();
            if let Some(c) = completion
                && let Err(p) = catch_unwind(AssertUnwindSafe(c))
            {
                this.handle.store_panic(p);
            }
            this.handle.done();
        }));
    }
}

/// A slice cut into chunks that participants claim by index through a `ChunkClaimer`.
pub(crate) struct ClaimedChunks<'a, T> {
    ptr: *mut T,
    len: usize,
    chunk: usize,
    _marker: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: the only access is `chunk_mut`, whose contract (each index claimed once) makes
// the `&mut [T]` it hands to different threads disjoint; that needs `T: Send`.
unsafe impl<T: Send> Sync for ClaimedChunks<'_, T> {}

impl<'a, T> ClaimedChunks<'a, T> {
    pub(crate) fn new(data: &'a mut [T], chunk: usize) -> Self {
        Self {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            chunk,
            _marker: std::marker::PhantomData,
        }
    }

    /// Chunk `i`.
    ///
    /// # Safety
    /// Each index may be passed once in the lifetime of `self` (a `ChunkClaimer` claims
    /// each index once), so no two returned slices overlap.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn chunk_mut(&self, i: usize) -> &'a mut [T] {
        let start = i * self.chunk;
        assert!(start < self.len, "chunk index out of range");
        let n = self.chunk.min(self.len - start);
        // SAFETY: `start + n <= len`, the slice is exclusively borrowed for 'a, and per the
        // contract no other live reference covers this chunk.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), n) }
    }
}

impl JobSystem {
    /// Like [`parallel_for`](Self::parallel_for) over a mutable slice: `f(offset, chunk)`
    /// gets each chunk of `data` (at least `min_chunk` long, except the last) exactly once,
    /// with `offset` its start index. The calling thread takes part.
    pub fn parallel_for_slice<T, F>(&self, data: &mut [T], min_chunk: usize, f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync,
    {
        let len = data.len();
        if len == 0 {
            return;
        }
        let participants = self.num_threads();
        let chunk = chunk_size(len, min_chunk, participants);
        let chunks = len.div_ceil(chunk);
        if participants == 1 || chunks == 1 {
            if self.tracing() {
                // Traced: one item per `min_chunk` run, so a scaling model sees how
                // finely this loop could be cut (the results do not depend on the cut).
                let start = self.now_ns();
                let step = traced_item(len, min_chunk);
                for (k, piece) in data.chunks_mut(step).enumerate() {
                    let t = self.now_ns();
                    f(k * step, piece);
                    self.record_span(ITEM_LABEL, t, self.now_ns());
                }
                self.record_span(PHASE_LABEL, start, self.now_ns());
            } else {
                f(0, data);
            }
            return;
        }
        let claimer = ChunkClaimer::new(chunks);
        let cut = ClaimedChunks::new(data, chunk);
        let run = || {
            while let Some(i) = claimer.claim() {
                // SAFETY: `claim` hands out each index once.
                f(i * chunk, unsafe { cut.chunk_mut(i) });
            }
        };
        let helpers = self.num_workers().min(chunks - 1);
        self.scope(|s| {
            for _ in 0..helpers {
                s.spawn_labeled("parallel_for_slice", |_| run());
            }
            run();
        });
    }

    /// Calls `f` on chunks of `range` (each at least `min_chunk` long, except the last) in
    /// parallel, and returns when all are done. The calling thread takes part. `f` receives
    /// the index range of its chunk. A panic in `f` is re-raised here after every chunk
    /// that started has finished.
    pub fn parallel_for<F>(&self, range: Range<usize>, min_chunk: usize, f: F)
    where
        F: Fn(Range<usize>) + Sync,
    {
        let len = range.len();
        if len == 0 {
            return;
        }
        let participants = self.num_threads();
        let chunk = chunk_size(len, min_chunk, participants);
        let chunks = len.div_ceil(chunk);
        if participants == 1 || chunks == 1 {
            if self.tracing() {
                // Traced: one item per `min_chunk` run, as in `parallel_for_slice`.
                let start = self.now_ns();
                let step = traced_item(len, min_chunk);
                let mut s = range.start;
                while s < range.end {
                    let e = s + step.min(range.end - s);
                    let t = self.now_ns();
                    f(s..e);
                    self.record_span(ITEM_LABEL, t, self.now_ns());
                    s = e;
                }
                self.record_span(PHASE_LABEL, start, self.now_ns());
            } else {
                f(range);
            }
            return;
        }
        let claimer = ChunkClaimer::new(chunks);
        let run = || {
            while let Some(i) = claimer.claim() {
                let s = range.start + i * chunk;
                // `end - s` first: `s + chunk` may pass usize::MAX near the top.
                f(s..s + chunk.min(range.end - s));
            }
        };
        let helpers = self.num_workers().min(chunks - 1);
        self.scope(|s| {
            for _ in 0..helpers {
                s.spawn_labeled("parallel_for", |_| run());
            }
            run();
        });
    }

    /// Starts a parallel loop over `range` and returns at once. When the last chunk is done
    /// the `completion` job is dispatched, exactly once, also when the range is empty. The
    /// returned counter reaches zero after the completion has run; waiting on it with
    /// [`wait`](Self::wait) re-raises a panic of `f` or of the completion. A chunk that
    /// panics still counts as finished, so the completion always runs.
    pub fn parallel_for_async<F, C>(
        &self,
        range: Range<usize>,
        min_chunk: usize,
        f: F,
        completion: C,
    ) -> Counter
    where
        F: Fn(Range<usize>) + Send + Sync + 'static,
        C: FnOnce() + Send + 'static,
    {
        let handle = Counter::with_count(1);
        let len = range.len();
        let participants = self.num_workers().max(1);
        let chunk = chunk_size(len, min_chunk, participants);
        let chunks = len.div_ceil(chunk);
        let ctx = Arc::new(AsyncFor {
            claimer: ChunkClaimer::new(chunks),
            start: range.start,
            end: range.end,
            chunk,
            f,
            completion: Mutex::new(Some(completion)),
            handle: handle.clone(),
            registry: self.registry().clone(),
        });
        if chunks == 0 {
            AsyncFor::dispatch_completion(ctx);
            return handle;
        }
        for _ in 0..participants.min(chunks) {
            let c = ctx.clone();
            self.registry()
                .push(Job::new("parallel_for_async", move || c.participate()));
        }
        handle
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::chunk_size;

    #[test]
    fn chunks_respect_minimum_and_cover_range() {
        assert_eq!(chunk_size(1000, 10, 2), 125);
        assert_eq!(chunk_size(1000, 300, 2), 300);
        assert_eq!(chunk_size(3, 0, 8), 1);
    }
}
