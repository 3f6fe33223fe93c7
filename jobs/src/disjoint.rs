//! Disjoint writes into one slice from many threads, without locks and without unsafe in
//! the caller.
//!
//! A solver colour updates the velocities of many bodies from many threads; colouring
//! guarantees that no two constraints of a colour share a body. [`DisjointSlice`] turns
//! that guarantee into a checked one: it is built from a slice and a list of indices that
//! it verifies to be pairwise distinct (one pass over a bitset), and then hands out `&mut`
//! to the element of each listed index, by position in the list, to any thread. Because
//! every position maps to a distinct element and each position can be claimed once, no
//! element is ever aliased.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a [`DisjointSlice`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisjointError {
    /// An index is out of bounds of the slice. Fix the index list.
    OutOfBounds {
        /// The offending index.
        index: usize,
        /// The slice length.
        len: usize,
    },
    /// An index appears twice: two writers would alias one element. The colouring (or
    /// whatever built the list) is wrong.
    Duplicate {
        /// The repeated index.
        index: usize,
    },
}

impl std::fmt::Display for DisjointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisjointError::OutOfBounds { index, len } => {
                write!(f, "index {index} is out of bounds for a slice of {len}")
            }
            DisjointError::Duplicate { index } => write!(f, "index {index} appears twice"),
        }
    }
}

impl std::error::Error for DisjointError {}

/// A mutable slice whose elements at a verified set of distinct indices can be borrowed
/// mutably from several threads at once, each index at most once.
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    indices: &'a [usize],
    taken: Box<[AtomicBool]>,
    _marker: PhantomData<&'a mut [T]>,
}

// SAFETY: the structure only hands out `&mut T` to distinct elements (checked at
// construction, each position claimed once through an atomic swap), so sharing it across
// threads is like sharing disjoint `&mut T`s, which needs `T: Send`.
unsafe impl<T: Send> Sync for DisjointSlice<'_, T> {}
// SAFETY: as above; moving it moves the exclusive borrow of the slice.
unsafe impl<T: Send> Send for DisjointSlice<'_, T> {}

impl<'a, T> DisjointSlice<'a, T> {
    /// Borrows `slice` exclusively and checks that `indices` are in bounds and distinct.
    pub fn new(slice: &'a mut [T], indices: &'a [usize]) -> Result<Self, DisjointError> {
        let len = slice.len();
        let mut seen = vec![0u64; len.div_ceil(64)];
        for &index in indices {
            if index >= len {
                return Err(DisjointError::OutOfBounds { index, len });
            }
            let (w, b) = (index / 64, 1u64 << (index % 64));
            if seen[w] & b != 0 {
                return Err(DisjointError::Duplicate { index });
            }
            seen[w] |= b;
        }
        Ok(Self {
            ptr: slice.as_mut_ptr(),
            indices,
            taken: indices.iter().map(|_| AtomicBool::new(false)).collect(),
            _marker: PhantomData,
        })
    }

    /// Number of indices.
    #[must_use]
    pub fn len(&self) -> usize {
        self.indices.len()
    }

    /// Whether there are no indices.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The element at `indices[position]`, mutably. Panics if `position` was already
    /// claimed (a programming error: two writers for one element).
    #[allow(clippy::mut_from_ref)]
    pub fn get_mut(&self, position: usize) -> &mut T {
        let index = self.indices[position];
        // Relaxed: the swap only has to be atomic to detect a double claim; the data is
        // handed between threads by whatever synchronises the claimers (a scope's join).
        assert!(
            !self.taken[position].swap(true, Ordering::Relaxed),
            "joule-jobs: DisjointSlice position {position} claimed twice"
        );
        // SAFETY: `index < len` and distinct from every other listed index (checked in
        // `new`); this position is claimed once (the swap above), so no other `&mut` to
        // this element exists, and the slice is exclusively borrowed for `'a`.
        unsafe { &mut *self.ptr.add(index) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_duplicates_and_out_of_bounds() {
        let mut v = vec![0; 10];
        assert_eq!(
            DisjointSlice::new(&mut v, &[1, 2, 1]).err(),
            Some(DisjointError::Duplicate { index: 1 })
        );
        assert_eq!(
            DisjointSlice::new(&mut v, &[10]).err(),
            Some(DisjointError::OutOfBounds { index: 10, len: 10 })
        );
    }

    #[test]
    fn parallel_disjoint_writes() {
        let mut v = vec![0usize; 1000];
        let idx: Vec<usize> = (0..1000).rev().step_by(3).collect();
        let d = DisjointSlice::new(&mut v, &idx).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let d = &d;
                s.spawn(move || {
                    for p in (t..d.len()).step_by(4) {
                        *d.get_mut(p) += p + 1;
                    }
                });
            }
        });
        for (p, &i) in idx.iter().enumerate() {
            assert_eq!(v[i], p + 1);
        }
        assert_eq!(v.iter().filter(|&&x| x == 0).count(), 1000 - idx.len());
    }

    #[test]
    #[should_panic(expected = "claimed twice")]
    fn double_claim_panics() {
        let mut v = vec![0; 4];
        let d = DisjointSlice::new(&mut v, &[0, 1]).unwrap();
        let _a = d.get_mut(0);
        let _b = d.get_mut(0);
    }
}
