//! A whole-frame trace: the job system's raw events (game jobs, physics stages and their
//! jobs, spans recorded with `JobSystem::record_span`) written as Chrome trace-event JSON,
//! on the job system's one clock (`JobSystem::now_ns`), for <https://ui.perfetto.dev>.
//!
//! joule-graph's [`Trace`](joule_graph::Trace) exports one graph run with a clock relative
//! to its start (as `World::step_traced` does for a step); a game frame is more than one
//! run (a step beside the game's own jobs and main-thread work), so this writes the events
//! as they are: one complete event (`"ph": "X"`, `ts` and `dur` in µs) per event, on the
//! thread that ran it, with a thread-name metadata event per thread. The category (`cat`)
//! says what it was: `physics` for a stage of the step ([`joule_physics::STAGES`]),
//! `wait` for a thread waiting with nothing to run ([`WAIT_LABEL`]), `job` otherwise.
//!
//! ```
//! use joule_examples::frame_trace;
//! use joule_jobs::JobSystem;
//!
//! let jobs = JobSystem::new(1)?;
//! jobs.set_tracing(true);
//! let start = jobs.now_ns();
//! jobs.scope(|s| s.spawn_labeled("ai", |_| {}));
//! jobs.record_span("render", start, jobs.now_ns());
//! jobs.set_tracing(false);
//! let json = frame_trace::to_chrome_json(&jobs.take_trace(), &jobs.thread_names());
//! assert!(json.contains("\"ai\"") && json.contains("\"render\""));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use joule_jobs::{TraceEvent, WAIT_LABEL};
use serde_json::{Value, json};

/// The events' category in the trace: `physics`, `wait` or `job` (see the module header).
#[must_use]
pub fn category(label: &str) -> &'static str {
    if joule_physics::STAGES.contains(&label) {
        "physics"
    } else if label == WAIT_LABEL {
        "wait"
    } else {
        "job"
    }
}

/// Chrome trace-event JSON (the object format, `{"traceEvents": [...]}`) of `events`
/// (from `JobSystem::take_trace`), their times in µs of the job system's clock;
/// `thread_names` (from `JobSystem::thread_names`) names the threads, an empty or missing
/// name becoming `thread N`.
#[must_use]
pub fn to_chrome_json(events: &[TraceEvent], thread_names: &[String]) -> String {
    let threads = events
        .iter()
        .map(|e| e.thread + 1)
        .max()
        .unwrap_or(0)
        .max(thread_names.len());
    let mut out: Vec<Value> = (0..threads)
        .map(|tid| {
            let name = thread_names
                .get(tid)
                .filter(|n| !n.is_empty())
                .cloned()
                .unwrap_or_else(|| format!("thread {tid}"));
            json!({
                "name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                "args": { "name": name },
            })
        })
        .collect();
    out.extend(events.iter().map(|e| {
        json!({
            "name": e.label,
            "cat": category(e.label),
            "ph": "X",
            "ts": e.start_ns as f64 / 1e3,
            "dur": e.duration_ns() as f64 / 1e3,
            "pid": 1,
            "tid": e.thread,
        })
    }));
    json!({ "displayTimeUnit": "ns", "traceEvents": out }).to_string()
}
