//! The one door through which joule-graph reaches atomics.
//!
//! Normal builds use `std`; under `cfg(loom)` the same names come from `loom`, so the
//! models in `loom-tests/tests/graph.rs` drive the real dependency and work-unit counters
//! of [`counts`](crate::counts), not a copy (the pattern joule-jobs' `sync.rs` follows).

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
