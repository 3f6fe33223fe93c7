//! A prefetch hint: asks the CPU to start loading a record a loop will read a few
//! iterations later. The step's passes that walk scattered records (the narrow phase's
//! contacts and bodies, the constraint build, the impulse write-back) wait on memory
//! more than on arithmetic; naming the next records ahead lets their loads overlap.
#![allow(
    unsafe_code,
    reason = "the prefetch instruction, which reads nothing into the program and never faults"
)]

/// Asks the CPU to start loading the cache lines of `value` (at most `LINES` of them). A
/// hint only: no result depends on it, and elsewhere than x86-64 it does nothing.
#[inline(always)]
pub(crate) fn prefetch<T, const LINES: usize>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let base = std::ptr::from_ref(value).cast::<i8>();
        let lines = size_of::<T>().div_ceil(64).min(LINES);
        for line in 0..lines {
            // SAFETY: SSE is part of the x86-64 baseline, so the instruction exists on
            // every CPU this code runs on. A prefetch reads nothing into the program,
            // writes nothing and never faults; the address is inside `value` anyway
            // (`line * 64 < size_of::<T>()`), computed with `wrapping_add`, which needs
            // no in-bounds proof.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(line * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
