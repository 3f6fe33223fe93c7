//! Fixed-size jobs: one 64-byte cache line holding a function pointer, a label and an
//! inline payload.
//!
//! A closure of at most [`INLINE_CAPACITY`] bytes (and alignment at most 8) is stored in
//! the payload itself, so spawning it allocates nothing. A larger closure is boxed and the
//! box pointer is stored instead. The function pointer is monomorphised per closure type
//! and knows which of the two layouts it was given; it either runs the closure or, when a
//! job is dropped without running, drops it, so every payload is dropped exactly once.
//!
//! Jobs move between queues by value (a 64-byte copy); only the thread that won the job
//! (popped or stole it) ever calls [`Job::run`].

use std::mem::{ManuallyDrop, MaybeUninit, align_of, size_of};

/// Bytes of closure state stored inline in a job.
pub const INLINE_CAPACITY: usize = 40;

type Payload = [MaybeUninit<usize>; INLINE_CAPACITY / size_of::<usize>()];

/// What the monomorphised entry point should do with the payload.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Run,
    Drop,
}

/// A unit of work: one cache line, moved by value through the queues.
#[repr(C, align(64))]
pub struct Job {
    call: unsafe fn(*mut Payload, Action),
    label: &'static str,
    payload: Payload,
}

const _: () = assert!(size_of::<Job>() == 64);

// SAFETY: a Job is only built from `Send` closures (`Job::new` and `Job::new_unchecked`
// both require `F: Send`), so moving its payload to another thread is sound.
unsafe impl Send for Job {}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("label", &self.label).finish()
    }
}

impl Job {
    /// A job that runs `f` once. Stored inline when it fits, boxed otherwise.
    #[must_use]
    #[inline]
    pub fn new<F>(label: &'static str, f: F) -> Job
    where
        F: FnOnce() + Send + 'static,
    {
        // SAFETY: `F: 'static`, so the closure borrows nothing that could die before it runs.
        unsafe { Self::new_unchecked(label, f) }
    }

    /// Builds a job from a closure that may borrow data with a limited lifetime.
    ///
    /// # Safety
    /// The caller must ensure the job is run or dropped before anything `f` borrows is
    /// invalidated (a scope does this by waiting for all its jobs, also when unwinding).
    #[inline]
    pub unsafe fn new_unchecked<F>(label: &'static str, f: F) -> Job
    where
        F: FnOnce() + Send,
    {
        let mut payload: Payload = [MaybeUninit::uninit(); INLINE_CAPACITY / size_of::<usize>()];
        let call: unsafe fn(*mut Payload, Action) =
            if size_of::<F>() <= INLINE_CAPACITY && align_of::<F>() <= align_of::<Payload>() {
                // SAFETY: size and alignment were checked just above; the payload is
                // uninitialised storage that we own.
                unsafe { payload.as_mut_ptr().cast::<F>().write(f) };
                call_inline::<F>
            } else {
                let boxed: *mut F = Box::into_raw(Box::new(f));
                // SAFETY: a thin pointer fits in the first word, which is suitably aligned.
                unsafe { payload.as_mut_ptr().cast::<*mut F>().write(boxed) };
                call_boxed::<F>
            };
        Job {
            call,
            label,
            payload,
        }
    }

    /// The label given when the job was made (shown in traces).
    #[must_use]
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// Runs the job, consuming it. A panic in the closure propagates to the caller.
    #[inline]
    pub fn run(self) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used again and never dropped, so the payload is consumed
        // exactly once, by this call.
        unsafe { (this.call)(&mut this.payload, Action::Run) }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: a job that is dropped was never run (`run` forgets it), so its payload
        // still holds a live closure that must be dropped exactly once, here.
        unsafe { (self.call)(&mut self.payload, Action::Drop) }
    }
}

/// Entry point for closures stored inline.
///
/// # Safety
/// `payload` must hold a live `F` written by `new_unchecked`, not yet consumed.
unsafe fn call_inline<F: FnOnce()>(payload: *mut Payload, action: Action) {
    // SAFETY: per this function's contract the payload holds a live `F`; reading it moves
    // it out, so a panic inside `f` cannot lead to a second drop.
    let f = unsafe { payload.cast::<F>().read() };
    if action == Action::Run {
        f();
    }
}

/// Entry point for closures stored in a box.
///
/// # Safety
/// `payload` must hold a pointer from `Box::into_raw(Box<F>)`, not yet consumed.
unsafe fn call_boxed<F: FnOnce()>(payload: *mut Payload, action: Action) {
    // SAFETY: per this function's contract the first word is a live `Box<F>` pointer.
    let f = unsafe { Box::from_raw(payload.cast::<*mut F>().read()) };
    if action == Action::Run {
        f();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn inline_and_boxed_run_once_and_drop_once() {
        let runs = Arc::new(AtomicUsize::new(0));
        let big = [7u64; 16];
        let r = runs.clone();
        let small = Job::new("small", move || {
            r.fetch_add(1, Ordering::Relaxed);
        });
        let r = runs.clone();
        let large = Job::new("large", move || {
            r.fetch_add(big.iter().sum::<u64>() as usize, Ordering::Relaxed);
        });
        small.run();
        large.run();
        assert_eq!(runs.load(Ordering::Relaxed), 1 + 112);
        // Dropped without running: the captured Arc must be released.
        let r = runs.clone();
        drop(Job::new("dropped", move || drop(r)));
        let r = runs.clone();
        drop(Job::new("dropped big", move || drop((r, big))));
        assert_eq!(Arc::strong_count(&runs), 1);
    }
}
