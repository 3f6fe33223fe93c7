//! Disjoint writes into one slice from many threads, without locks and without unsafe in
//! the caller.
//!
//! A solver colour updates the velocities of many bodies from many threads; colouring
//! guarantees that no two constraints of a colour share a body. A [`DisjointPlan`] turns
//! that guarantee into a checked one: it holds a list of element indices verified, once,
//! to be in bounds and pairwise distinct (one pass: an order check for an ascending list, a
//! bitset otherwise). Applied to a slice, the plan splits the list into consecutive
//! position ranges ([`DisjointChunk`]s); each chunk hands out `&mut` to the elements at its
//! positions. Chunks cover disjoint positions and positions name distinct elements, so no
//! element is ever reachable from two chunks, and within a chunk `&mut self` borrows keep
//! the usual aliasing rules. Chunks are `Send`, one per job.
//!
//! The plan is reusable: refilling it keeps its buffers (no allocation once warm), and it
//! can be applied many times (every substep of a solve) without re-verifying.

use std::marker::PhantomData;
use std::ops::Range;

/// Why a [`DisjointPlan`] was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisjointError {
    /// An index is out of bounds of the slice length the plan is for. Fix the index list.
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
    /// The plan was applied to a slice of another length than it was verified for, or the
    /// chunk boundaries were not increasing within the index list.
    Mismatch,
}

impl std::fmt::Display for DisjointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisjointError::OutOfBounds { index, len } => {
                write!(f, "index {index} is out of bounds for a slice of {len}")
            }
            DisjointError::Duplicate { index } => write!(f, "index {index} appears twice"),
            DisjointError::Mismatch => {
                write!(f, "plan applied to a slice or bounds it was not made for")
            }
        }
    }
}

impl std::error::Error for DisjointError {}

/// A verified list of pairwise-distinct indices into a slice of a given length.
#[derive(Clone, Debug, Default)]
pub struct DisjointPlan {
    indices: Vec<usize>,
    len: usize,
    bits: Vec<u64>,
}

impl DisjointPlan {
    /// An empty plan.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the plan with `indices` for a slice of `len` elements, verifying them.
    /// On error the plan is left empty.
    ///
    /// Strictly ascending indices (a sorted id list) are distinct by that alone: they are
    /// verified with one comparison each. Others are checked against a bit per element.
    pub fn set(
        &mut self,
        len: usize,
        indices: impl IntoIterator<Item = usize>,
    ) -> Result<(), DisjointError> {
        self.indices.clear();
        self.indices.extend(indices);
        self.len = len;
        let ascending = self.indices.windows(2).all(|w| w[0] < w[1])
            && self.indices.last().is_none_or(|&last| last < len);
        let result = if ascending {
            Ok(())
        } else {
            self.verify_with_bits()
        };
        if result.is_err() {
            self.indices.clear();
            self.len = 0;
        }
        result
    }

    /// Checks the indices in bounds and pairwise distinct, with a bit per element.
    fn verify_with_bits(&mut self) -> Result<(), DisjointError> {
        let len = self.len;
        self.bits.clear();
        self.bits.resize(len.div_ceil(64), 0);
        for &index in &self.indices {
            if index >= len {
                return Err(DisjointError::OutOfBounds { index, len });
            }
            let (w, b) = (index / 64, 1u64 << (index % 64));
            if self.bits[w] & b != 0 {
                return Err(DisjointError::Duplicate { index });
            }
            self.bits[w] |= b;
        }
        Ok(())
    }

    /// The verified indices, by position.
    #[must_use]
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Splits `slice` into chunks covering the positions `bounds[k]..bounds[k + 1]` of the
    /// plan. `bounds` must start at 0, be non-decreasing and end at `indices().len()`.
    pub fn chunks<'a, T: Send>(
        &'a self,
        slice: &'a mut [T],
        bounds: &'a [usize],
    ) -> Result<impl Iterator<Item = DisjointChunk<'a, T>> + 'a, DisjointError> {
        let ok = slice.len() == self.len
            && u32::try_from(self.indices.len()).is_ok()
            && bounds.first() == Some(&0)
            && bounds.last() == Some(&self.indices.len())
            && bounds.windows(2).all(|w| w[0] <= w[1]);
        if !ok {
            return Err(DisjointError::Mismatch);
        }
        let ptr = slice.as_mut_ptr();
        Ok(bounds.windows(2).map(move |w| {
            let indices = &self.indices[w[0]..w[1]];
            DisjointChunk {
                ptr,
                indices: indices.as_ptr(),
                // Both fit: the plan's length was checked against u32 above.
                first: w[0] as u32,
                len: indices.len() as u32,
                _marker: PhantomData,
            }
        }))
    }
}

/// Mutable access to the elements at a range of a plan's positions.
///
/// A chunk is 24 bytes (a slice pointer, an index pointer and two `u32`s) so that a job
/// capturing one chunk and a shared reference fits a job's inline payload: spawning one
/// job per chunk allocates nothing.
pub struct DisjointChunk<'a, T> {
    ptr: *mut T,
    /// Start of the plan's indices at this chunk's positions (`len` of them), borrowed
    /// from the plan for `'a`.
    indices: *const usize,
    first: u32,
    len: u32,
    _marker: PhantomData<(&'a mut [T], &'a [usize])>,
}

// SAFETY: a chunk reaches only the elements at its own positions, which no other chunk of
// the same application reaches (see the module docs); sending it to another thread is like
// sending `&mut T`s, which needs `T: Send`.
unsafe impl<T: Send> Send for DisjointChunk<'_, T> {}

impl<T> DisjointChunk<'_, T> {
    /// The plan positions this chunk covers.
    #[must_use]
    pub fn positions(&self) -> Range<usize> {
        self.first as usize..self.first as usize + self.len as usize
    }

    fn element(&self, position: usize) -> *mut T {
        let local = position
            .checked_sub(self.first as usize)
            .filter(|&l| l < self.len as usize)
            .unwrap_or_else(|| {
                panic!(
                    "position {position} is outside chunk {:?}",
                    self.positions()
                )
            });
        // SAFETY: `local < len`, and `indices` points at `len` initialised indices of the
        // plan, which the chunk borrows for `'a` (the plan cannot change meanwhile).
        let index = unsafe { *self.indices.add(local) };
        // SAFETY: the plan verified `index < len == slice.len()`, so the offset is in
        // bounds of the slice this chunk borrows.
        unsafe { self.ptr.add(index) }
    }

    /// The element at plan position `position`. Panics if the position is not this
    /// chunk's.
    pub fn get_mut(&mut self, position: usize) -> &mut T {
        let p = self.element(position);
        // SAFETY: the element belongs to this chunk alone (distinct indices, disjoint
        // position ranges), and `&mut self` prevents a second borrow through this chunk.
        unsafe { &mut *p }
    }

    /// Two different elements at once. Panics if `a == b` or either is not this chunk's.
    pub fn pair_mut(&mut self, a: usize, b: usize) -> (&mut T, &mut T) {
        assert_ne!(a, b, "pair_mut needs two different positions");
        let (pa, pb) = (self.element(a), self.element(b));
        // SAFETY: as in `get_mut`; distinct positions of a plan name distinct elements, so
        // the two references do not alias.
        unsafe { (&mut *pa, &mut *pb) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_duplicates_out_of_bounds_and_mismatched_slices() {
        let mut plan = DisjointPlan::new();
        assert_eq!(
            plan.set(10, [1, 2, 1]),
            Err(DisjointError::Duplicate { index: 1 })
        );
        assert_eq!(
            plan.set(10, [10]),
            Err(DisjointError::OutOfBounds { index: 10, len: 10 })
        );
        plan.set(10, [3, 4]).unwrap();
        let mut short = vec![0; 9];
        assert!(plan.chunks(&mut short, &[0, 2]).is_err());
        let mut v = vec![0; 10];
        assert!(
            plan.chunks(&mut v, &[0, 1]).is_err(),
            "bounds must cover the plan"
        );
    }

    #[test]
    fn ascending_lists_are_checked_by_order_and_others_by_bits() {
        let mut plan = DisjointPlan::new();
        // Ascending: accepted, or refused at the bound.
        plan.set(10, [0, 3, 9]).unwrap();
        assert_eq!(plan.indices(), [0, 3, 9]);
        assert_eq!(
            plan.set(10, [0, 3, 10]),
            Err(DisjointError::OutOfBounds { index: 10, len: 10 })
        );
        assert!(plan.indices().is_empty(), "a refused plan is empty");
        // Repeats break strict order, so the bits find them, also after a descent.
        assert_eq!(
            plan.set(10, [2, 2]),
            Err(DisjointError::Duplicate { index: 2 })
        );
        assert_eq!(
            plan.set(10, [1, 5, 2, 5]),
            Err(DisjointError::Duplicate { index: 5 })
        );
        plan.set(10, [5, 1, 2, 9]).unwrap();
        assert_eq!(plan.indices(), [5, 1, 2, 9]);
        plan.set(10, std::iter::empty()).unwrap();
        assert!(plan.indices().is_empty());
    }

    #[test]
    fn a_chunk_and_a_reference_fit_a_jobs_inline_payload() {
        // A job's closure also carries its scope's reference (8 bytes).
        assert_eq!(size_of::<DisjointChunk<'_, u64>>(), 24);
        assert!(size_of::<DisjointChunk<'_, u64>>() + 16 <= crate::job::INLINE_CAPACITY);
    }

    #[test]
    fn parallel_disjoint_writes() {
        let mut v = vec![0usize; 1000];
        let mut plan = DisjointPlan::new();
        plan.set(1000, (0..1000).rev().step_by(3)).unwrap();
        let n = plan.indices().len();
        let bounds: Vec<usize> = (0..=4).map(|k| k * n / 4).collect();
        std::thread::scope(|s| {
            for mut chunk in plan.chunks(&mut v, &bounds).unwrap() {
                s.spawn(move || {
                    for p in chunk.positions() {
                        *chunk.get_mut(p) += p + 1;
                    }
                });
            }
        });
        for (p, &i) in plan.indices().iter().enumerate() {
            assert_eq!(v[i], p + 1);
        }
        assert_eq!(v.iter().filter(|&&x| x == 0).count(), 1000 - n);
    }

    #[test]
    #[should_panic(expected = "outside chunk")]
    fn a_chunk_cannot_reach_another_chunks_positions() {
        let mut v = vec![0; 4];
        let mut plan = DisjointPlan::new();
        plan.set(4, [0, 1, 2, 3]).unwrap();
        let mut chunks = plan.chunks(&mut v, &[0, 2, 4]).unwrap();
        let mut first = chunks.next().unwrap();
        let _ = first.get_mut(2);
    }
}
