//! A fixed-capacity Chase-Lev work-stealing deque.
//!
//! ```text
//!   top (thieves take here, FIFO)                 bottom (owner pushes and pops, LIFO)
//!    v                                             v
//!  [ job | job | job | job | ... ]  ring of DEQUE_CAPACITY slots, index = position & mask
//! ```
//!
//! Chase & Lev (2005) with the memory orderings of Lê, Pop, Cohen and Zappa Nardelli,
//! "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013). A fixed ring
//! never grows, so no epoch reclamation is needed; when it is full the owner moves half of
//! it to the shared injector (tokio's local queue does this) and carries on.
//!
//! **No speculative reads.** A classic Chase-Lev thief reads the slot *before* its CAS on
//! `top` and discards the value if the CAS fails. In Rust's memory model that read races
//! with the owner overwriting the slot, which is undefined behaviour even if the value is
//! thrown away. Here a thief reads nothing but the two indices before its CAS; once the
//! CAS has given it position `t` the slot is its own and it copies the job out. What stops
//! the owner from overwriting that slot (position `t + capacity`) while the thief is still
//! copying is a per-slot `full` flag: the consumer clears it with `Release` after copying,
//! and the owner only writes a slot whose flag it has seen clear with `Acquire`. If it is
//! still set, the owner treats the deque as full and spills, so it never waits for a thief.

use std::mem::MaybeUninit;

use crate::job::Job;
use crate::sync::{
    AtomicBool, AtomicUsize, CachePadded, DEQUE_CAPACITY, Ordering, UnsafeCell, fence,
};

/// The state shared by the owner and the thieves.
pub struct Inner {
    /// Next position a thief takes. Padding: written by thieves, read by the owner on
    /// every push; keeping it off `bottom`'s line avoids false sharing.
    top: CachePadded<AtomicUsize>,
    /// Next position the owner pushes to.
    bottom: CachePadded<AtomicUsize>,
    /// The jobs, one 64-byte line each. Apart from their flags: a flag beside a 64-aligned
    /// job would double each slot to 128 bytes, and the ring to 32 KiB, most of a core's
    /// L1 cache, for nothing.
    jobs: Box<[UnsafeCell<MaybeUninit<Job>>; DEQUE_CAPACITY]>,
    /// Per slot: set by the owner when it writes a job there, cleared by whoever takes it
    /// out.
    full: Box<[AtomicBool; DEQUE_CAPACITY]>,
}

// SAFETY: the slots' `UnsafeCell`s are only accessed by the thread that owns the position
// (the owner before publishing it through `bottom`, the single winner of it afterwards);
// the protocol in the module docs makes those accesses ordered, so sharing is sound.
unsafe impl Sync for Inner {}
// SAFETY: `Job` is `Send`; the deque only moves jobs between threads.
unsafe impl Send for Inner {}

/// The result of a steal attempt.
#[derive(Debug)]
pub enum Steal {
    /// The deque looked empty.
    Empty,
    /// Lost a race with another thief or the owner; trying again may succeed.
    Retry,
    /// Took a job.
    Success(Job),
}

/// The owner's end: push and pop at the bottom. Not `Sync`, not `Clone`: exactly one
/// thread owns it, which is what makes the unsynchronised slot writes sound.
pub struct Worker {
    inner: Arc<Inner>,
    _not_sync: std::marker::PhantomData<std::cell::Cell<()>>,
}

/// A thief's end: steal from the top. Cheap to clone and share.
#[derive(Clone)]
pub struct Stealer {
    inner: Arc<Inner>,
}

use crate::sync::Arc;

const MASK: usize = DEQUE_CAPACITY - 1;
const _: () = assert!(DEQUE_CAPACITY.is_power_of_two());

/// A new deque: the owner's end and a stealer.
#[must_use]
pub fn new() -> (Worker, Stealer) {
    let jobs: Box<[_]> = (0..DEQUE_CAPACITY)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let full: Box<[_]> = (0..DEQUE_CAPACITY)
        .map(|_| AtomicBool::new(false))
        .collect();
    let inner = Arc::new(Inner {
        top: CachePadded::new(AtomicUsize::new(0)),
        bottom: CachePadded::new(AtomicUsize::new(0)),
        jobs: jobs
            .try_into()
            .unwrap_or_else(|_| unreachable!("DEQUE_CAPACITY slots")),
        full: full
            .try_into()
            .unwrap_or_else(|_| unreachable!("DEQUE_CAPACITY flags")),
    });
    (
        Worker {
            inner: inner.clone(),
            _not_sync: std::marker::PhantomData,
        },
        Stealer { inner },
    )
}

impl Inner {
    fn len(&self) -> usize {
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Relaxed);
        (b.wrapping_sub(t) as isize).max(0) as usize
    }

    /// Moves the job out of the slot of position `pos` and marks the slot free.
    ///
    /// # Safety
    /// The caller must have won position `pos` (by the owner's pop or a successful CAS on
    /// `top`), so the slot holds a job published to it and nobody else will read it.
    #[inline]
    unsafe fn take(&self, pos: usize, release: bool) -> Job {
        let i = pos & MASK;
        // SAFETY: per the contract the slot holds an initialised job that only we read; the
        // write happened before the `Release` store of `bottom` that we synchronised with.
        let job = self.jobs[i].with(|p| unsafe { (*p).assume_init_read() });
        // Release: our read of the slot happens-before the owner's next write to it, which
        // first loads this flag with Acquire (see `push`).
        self.full[i].store(
            false,
            if release {
                Ordering::Release
            } else {
                Ordering::Relaxed
            },
        );
        job
    }
}

impl Worker {
    /// A stealer for this deque.
    #[must_use]
    pub fn stealer(&self) -> Stealer {
        Stealer {
            inner: self.inner.clone(),
        }
    }

    /// Number of jobs (a snapshot; thieves may change it at any time).
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the deque looked empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes a job at the bottom, or gives it back when the ring is full (or the slot it
    /// needs is still being copied out by a thief).
    #[inline]
    pub fn push(&self, job: Job) -> Result<(), Job> {
        let inner = &*self.inner;
        let b = inner.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the thieves' successful CAS on `top`, so a position we see as
        // consumed is really consumed.
        let t = inner.top.load(Ordering::Acquire);
        if b.wrapping_sub(t) as isize >= DEQUE_CAPACITY as isize {
            return Err(job);
        }
        let i = b & MASK;
        // Acquire: pairs with the Release in `take`; the previous occupant has been copied
        // out before we overwrite it.
        if inner.full[i].load(Ordering::Acquire) {
            return Err(job);
        }
        // SAFETY: position `b` is not yet published (bottom == b), the slot's flag is clear
        // so no thief is reading it, and only the owner (us) writes slots.
        inner.jobs[i].with_mut(|p| unsafe { (*p).write(job) });
        inner.full[i].store(true, Ordering::Relaxed);
        // Release: publishes the slot write; pairs with the Acquire load of `bottom` in
        // `steal`.
        inner.bottom.store(b.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// The position the next push will use (positions grow by one per push).
    #[must_use]
    pub fn next_position(&self) -> usize {
        self.inner.bottom.load(Ordering::Relaxed)
    }

    /// Pops the newest job only if it is the one pushed at `position`, that is when
    /// nothing pushed after it is still in the deque. `None` when it was stolen (or is
    /// not on top). `join` uses this to take back its own job and run it inline.
    #[inline]
    pub fn pop_at(&self, position: usize) -> Option<Job> {
        if self.inner.bottom.load(Ordering::Relaxed) != position.wrapping_add(1) {
            return None;
        }
        self.pop()
    }

    /// Pops the most recently pushed job (LIFO).
    #[inline]
    pub fn pop(&self) -> Option<Job> {
        let inner = &*self.inner;
        let b = inner.bottom.load(Ordering::Relaxed).wrapping_sub(1);
        inner.bottom.store(b, Ordering::Relaxed);
        // SeqCst fence: the store of `bottom` above and the load of `top` below must not be
        // reordered (store-load); pairs with the fence in `steal` (Lê et al., fig. 1).
        fence(Ordering::SeqCst);
        let t = inner.top.load(Ordering::Relaxed);
        let size = b.wrapping_sub(t) as isize;
        if size < 0 {
            inner.bottom.store(b.wrapping_add(1), Ordering::Relaxed);
            return None;
        }
        if size > 0 {
            // SAFETY: more than one job is left, so no thief can reach position `b`: the
            // fence above guarantees every later thief sees `bottom == b`.
            return Some(unsafe { inner.take(b, false) });
        }
        // The last job: race the thieves for it with a CAS on `top`.
        let won = inner
            .top
            .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
            .is_ok();
        inner.bottom.store(b.wrapping_add(1), Ordering::Relaxed);
        // SAFETY: the CAS gave us position `t == b`.
        won.then(|| unsafe { inner.take(b, false) })
    }

    /// Takes up to half of the jobs from the top (the oldest), for spilling to a shared
    /// queue when the ring is full. Competes with thieves through the same CAS.
    pub fn take_half(&self, mut sink: impl FnMut(Job)) -> usize {
        let inner = &*self.inner;
        loop {
            let t = inner.top.load(Ordering::Acquire);
            let b = inner.bottom.load(Ordering::Relaxed);
            let n = (b.wrapping_sub(t) as isize) / 2;
            if n <= 0 {
                return 0;
            }
            let n = n as usize;
            // SeqCst as in `steal`: positions t..t+n become ours if nobody moved `top`.
            if inner
                .top
                .compare_exchange(t, t.wrapping_add(n), Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                for i in 0..n {
                    // SAFETY: the CAS gave us positions t..t+n; more than n remain below,
                    // so the owner's pop (us, on this thread) cannot reach them either.
                    sink(unsafe { inner.take(t.wrapping_add(i), false) });
                }
                return n;
            }
        }
    }
}

impl Stealer {
    /// Tries to take the oldest job (FIFO).
    #[inline]
    pub fn steal(&self) -> Steal {
        let inner = &*self.inner;
        // Acquire: pairs with the Release of successful CASes by other thieves.
        let t = inner.top.load(Ordering::Acquire);
        // SeqCst fence: the load of `top` must precede the load of `bottom`; pairs with the
        // fence in `pop` so that the owner and a thief cannot both take the last job.
        fence(Ordering::SeqCst);
        // Acquire: pairs with the Release store in `push`, making the slot write visible.
        let b = inner.bottom.load(Ordering::Acquire);
        if b.wrapping_sub(t) as isize <= 0 {
            return Steal::Empty;
        }
        // SeqCst: the single point where position `t` is claimed; orders us against the
        // owner's CAS for the last job.
        if inner
            .top
            .compare_exchange(t, t.wrapping_add(1), Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Steal::Retry;
        }
        // SAFETY: the CAS gave us position `t`; see the module docs for why the owner cannot
        // overwrite it until `take` clears the flag with Release.
        Steal::Success(unsafe { inner.take(t, true) })
    }

    /// Whether the deque looked empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// Number of jobs (a snapshot).
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Every position in [top, bottom) still holds a job that nobody took: drop each
        // exactly once. `&mut self` means no other thread can touch the deque.
        let t = self.top.load(Ordering::Relaxed);
        let b = self.bottom.load(Ordering::Relaxed);
        let mut pos = t;
        while (b.wrapping_sub(pos) as isize) > 0 {
            // SAFETY: positions in [top, bottom) were published and never taken.
            drop(unsafe { self.take(pos, false) });
            pos = pos.wrapping_add(1);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdAtomic;

    fn counting_job(c: &'static StdAtomic, v: usize) -> Job {
        Job::new("t", move || {
            c.fetch_add(v, std::sync::atomic::Ordering::Relaxed);
        })
    }

    #[test]
    fn lifo_for_owner_fifo_for_thief() {
        static C: StdAtomic = StdAtomic::new(0);
        let (w, s) = new();
        for i in 1..=3 {
            w.push(counting_job(&C, i)).unwrap();
        }
        match s.steal() {
            Steal::Success(j) => j.run(),
            other => panic!("expected a job, got {other:?}"),
        }
        assert_eq!(
            C.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "thief takes the oldest"
        );
        w.pop().unwrap().run();
        assert_eq!(
            C.load(std::sync::atomic::Ordering::Relaxed),
            4,
            "owner takes the newest"
        );
        w.pop().unwrap().run();
        assert!(w.pop().is_none());
        assert!(matches!(s.steal(), Steal::Empty));
    }

    #[test]
    fn full_ring_refuses_and_take_half_frees() {
        static C: StdAtomic = StdAtomic::new(0);
        let (w, _s) = new();
        for _ in 0..DEQUE_CAPACITY {
            w.push(counting_job(&C, 1)).unwrap();
        }
        let back = w.push(counting_job(&C, 1000)).unwrap_err();
        let mut spilled = Vec::new();
        assert_eq!(w.take_half(|j| spilled.push(j)), DEQUE_CAPACITY / 2);
        w.push(back).unwrap();
        for j in spilled {
            j.run();
        }
        while let Some(j) = w.pop() {
            j.run();
        }
        assert_eq!(
            C.load(std::sync::atomic::Ordering::Relaxed),
            DEQUE_CAPACITY + 1000
        );
    }
}
