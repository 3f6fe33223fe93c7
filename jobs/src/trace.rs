//! Optional tracing: each thread appends (label, start, end) events to its own buffer.
//!
//! When tracing is off the cost is one relaxed load per job (in `Registry::execute`).
//! joule-graph reads these events, adds its own task events, and exports them.

/// The label of a span in which a thread waited, with nothing to run, inside
/// [`JobSystem::wait`](crate::JobSystem::wait), a scope or a parallel loop for work it
/// depends on. Such spans are not work: joule-graph's traces show them as waiting.
pub const WAIT_LABEL: &str = "(wait)";

/// The label of a span covering one parallel phase (a [`scope`](crate::JobSystem::scope),
/// a parallel loop) on the thread that started it and waited for it: the work between
/// two hand-offs. Its items are the job spans (and [`ITEM_LABEL`] spans) inside it. A
/// scaling model reads phases and items from a one-thread trace (see
/// `joule-benches`' `scaling` tool); they leave work, busy and serial time unchanged.
pub const PHASE_LABEL: &str = "(phase)";

/// The label of a span covering one stage of a [`Team`](crate::Team) on its leader, from
/// publishing the stage to the last item done (see [`PHASE_LABEL`]).
pub const TEAM_PHASE_LABEL: &str = "(team stage)";

/// The label of one item of a team stage, and of one `min_chunk` run of a parallel loop
/// that runs inline (one thread; longer runs where that would make over 256): the pieces
/// a phase can be cut into at most.
pub const ITEM_LABEL: &str = "(item)";

/// One traced job or span: which thread ran it, its label, and when (nanoseconds since
/// the job system was built).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Index of the thread that ran it (see [`JobSystem::thread_names`](crate::JobSystem::thread_names)).
    pub thread: usize,
    /// The job's label.
    pub label: &'static str,
    /// Start time in ns since the job system's epoch.
    pub start_ns: u64,
    /// End time in ns since the job system's epoch.
    pub end_ns: u64,
}

impl TraceEvent {
    /// Duration in nanoseconds.
    #[must_use]
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}
