//! The one door through which joule-jobs reaches atomics, locks and cells.
//!
//! Normal builds use `std`; under `cfg(loom)` the same names come from `loom`, so the
//! models in `loom-tests/` drive the real queue, sleep and counter code, not a copy
//! (tokio's `src/loom/` pattern). Capacities that loom must be able to fill are shrunk
//! there too (see [`DEQUE_CAPACITY`]).

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// Slots in each worker's deque. Small under loom so that "full" and "spill" are reached.
#[cfg(not(loom))]
pub const DEQUE_CAPACITY: usize = 256;
/// Slots in each worker's deque. Small under loom so that "full" and "spill" are reached.
#[cfg(loom)]
pub const DEQUE_CAPACITY: usize = 2;

/// `std::cell::UnsafeCell` with loom's closure-based access API, so code written against
/// it compiles unchanged under loom (which tracks every access for data races).
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a mutable raw pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Locks a mutex, ignoring poisoning: every critical section in this crate leaves its
/// data consistent before anything that can panic, so a poisoned lock holds valid data.
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(not(loom))]
    {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    #[cfg(loom)]
    {
        m.lock().unwrap()
    }
}

/// Pads and aligns a value to a cache line so two hot atomics written by different
/// threads (a deque's `top` and `bottom`) do not share one.
#[cfg(not(loom))]
pub(crate) use crossbeam_utils::CachePadded;

/// Under loom padding has no meaning; a transparent stand-in keeps the code identical.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct CachePadded<T>(T);

#[cfg(loom)]
impl<T> CachePadded<T> {
    pub(crate) fn new(t: T) -> Self {
        Self(t)
    }
}

#[cfg(loom)]
impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Tells the scheduler (or loom) that this thread is spinning.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Loom-only doors into the crate-private wait protocol of a [`Counter`], so that
/// `loom-tests/` can drive the real `prepare_sleep`/`finish_sleep` the way
/// `Ctx::wait_until` does (the job system itself does not compile under loom). An
/// inherent `impl` may live in any module of its crate; it lives here so that loom's
/// needs stay in the shim.
///
/// [`Counter`]: crate::latch::Counter
#[cfg(loom)]
impl crate::latch::Counter {
    /// `WaitTarget::prepare_sleep`: registers `parker` to be woken by the last `done`;
    /// false when the count is already zero (then nothing stays registered).
    #[doc(hidden)]
    pub fn loom_prepare_sleep(&self, parker: &Arc<crate::sleep::Parker>) -> bool {
        crate::latch::WaitTarget::prepare_sleep(self, parker)
    }

    /// `WaitTarget::finish_sleep`: unregisters `parker` after waking.
    #[doc(hidden)]
    pub fn loom_finish_sleep(&self, parker: &Arc<crate::sleep::Parker>) {
        crate::latch::WaitTarget::finish_sleep(self, parker);
    }
}
