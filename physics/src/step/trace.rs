//! The trace of one step, in joule-graph's format.
//!
//! Each stage of the step records a span of its own (`JobSystem::record_span`), and every
//! job it runs is traced by the job system with its label. This module turns those
//! per-thread events into a [`joule_graph::Trace`]: one task per stage, chained in pipeline
//! order, and the jobs as spans of the stage whose time window contains them, so the
//! Perfetto view, the SVG timeline and the text summary show where the step's time went
//! on every thread. Time a thread spent waiting for a stage's jobs with nothing to run
//! becomes a wait span, so the summary's serial time counts only real work.

use joule_graph::trace::{GraphInfo, Span, SpanKind, TaskInfo, TaskRun};
use joule_graph::{TaskKind, Trace};
use joule_jobs::{JobSystem, TraceEvent, WAIT_LABEL};

/// The stages of a step, in order (their names in traces).
pub const STAGES: [&str; 12] = [
    "step listeners",
    "broadphase",
    "find collisions",
    "narrow phase",
    "contact events",
    "constraint graph",
    "solve",
    "integrate",
    "find CCD contacts",
    "resolve CCD contacts",
    "islands and sleep",
    "finalize",
];

/// Builds the trace of a step that started at `t0` (job-system time) from its events.
pub(crate) fn build(jobs: &JobSystem, t0: u64, events: Vec<TraceEvent>) -> Trace {
    let tasks: Vec<TaskInfo> = STAGES
        .iter()
        .enumerate()
        .map(|(i, name)| TaskInfo {
            name: (*name).to_string(),
            kind: TaskKind::Task,
            successors: if i + 1 < STAGES.len() {
                vec![i + 1]
            } else {
                Vec::new()
            },
            group: None,
        })
        .collect();
    let rel = |t: u64| t.saturating_sub(t0);
    let mut runs: Vec<Option<TaskRun>> = vec![None; STAGES.len()];
    let mut spans = Vec::new();
    for e in &events {
        if let Some(i) = STAGES.iter().position(|s| *s == e.label) {
            // A stage with child jobs (find CCD contacts) records several spans: its
            // run covers them all.
            let (start, end) = (rel(e.start_ns), rel(e.end_ns));
            runs[i] = Some(match runs[i] {
                Some(r) => TaskRun {
                    thread: r.thread,
                    start_ns: r.start_ns.min(start),
                    end_ns: r.end_ns.max(end),
                },
                None => TaskRun {
                    thread: e.thread,
                    start_ns: start,
                    end_ns: end,
                },
            });
            spans.push(Span {
                task: i,
                thread: e.thread,
                kind: SpanKind::Body,
                start_ns: rel(e.start_ns),
                end_ns: rel(e.end_ns),
            });
        }
    }
    for e in &events {
        if STAGES.contains(&e.label) {
            continue;
        }
        // The stage running when the job started.
        let owner = runs.iter().position(|r| {
            r.is_some_and(|r| r.start_ns <= rel(e.start_ns) && rel(e.start_ns) <= r.end_ns)
        });
        if let Some(task) = owner {
            spans.push(Span {
                task,
                thread: e.thread,
                // A thread that waited for the stage's jobs with nothing to run.
                kind: if e.label == WAIT_LABEL {
                    SpanKind::Wait
                } else {
                    SpanKind::Child
                },
                start_ns: rel(e.start_ns),
                end_ns: rel(e.end_ns),
            });
        }
    }
    Trace::new(
        GraphInfo {
            tasks,
            groups: Vec::new(),
        },
        jobs.thread_names(),
        runs,
        spans,
    )
}
