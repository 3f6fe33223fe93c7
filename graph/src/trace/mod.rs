//! Traces of graph runs, and the ways to look at them.
//!
//! A [`Trace`] holds the graph's structure ([`GraphInfo`]), the threads' names, when and
//! where each task ran ([`TaskRun`]: start, completion, starting thread) and every span of
//! work ([`Span`]: a task body, a parallel-for chunk, a dynamic task's child), all in
//! nanoseconds since the run started. From that:
//!
//! - [`Trace::to_chrome_json`] writes Chrome trace-event JSON (open it in
//!   <https://ui.perfetto.dev> or `chrome://tracing`); the graph's structure rides along
//!   as metadata, so [`Trace::from_chrome_json`] (and the `joule-trace` command-line
//!   tool) can read a saved trace back;
//! - [`Trace::to_dot`] writes the graph in Graphviz DOT with each task's time and the
//!   critical path in red;
//! - [`Trace::to_svg`] draws a timeline: one lane per thread, spans as labelled bars, the
//!   critical path highlighted, a time axis in µs;
//! - [`Trace::summary`] computes total work, span (critical path length) and the tasks on
//!   it, parallelism (work / span), busy time per thread and the ten slowest tasks.
//!
//! Work is counted as *exclusive* span time: a task body that waits (say in a nested
//! `parallel_for`) and meanwhile runs other spans on its thread is charged only for the
//! time not spent in those, so work never counts a nanosecond twice.

pub(crate) mod chrome;
pub(crate) mod dot;
pub(crate) mod record;
mod summary;
mod svg;

pub use chrome::TraceParseError;
pub use summary::{Summary, TaskTime, ThreadBusy};

use crate::task::TaskKind;

/// One task of a graph's structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    /// The task's name.
    pub name: String,
    /// Its kind.
    pub kind: TaskKind,
    /// Indices of the tasks that run after it.
    pub successors: Vec<usize>,
    /// The embedded subgraph it belongs to (index into [`GraphInfo::groups`]).
    pub group: Option<usize>,
}

/// An embedded subgraph (drawn as a cluster).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Its path, e.g. `"physics"` or `"physics/narrow_phase"`.
    pub name: String,
    /// The subgraph it is nested in.
    pub parent: Option<usize>,
}

/// A graph's structure: tasks (subgraphs flattened) and edges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphInfo {
    /// Tasks by index.
    pub tasks: Vec<TaskInfo>,
    /// Embedded subgraphs by index.
    pub groups: Vec<GroupInfo>,
}

impl GraphInfo {
    /// Predecessor lists, by task.
    #[must_use]
    pub fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut preds = vec![Vec::new(); self.tasks.len()];
        for (i, t) in self.tasks.iter().enumerate() {
            for &s in &t.successors {
                if let Some(p) = preds.get_mut(s) {
                    p.push(i);
                }
            }
        }
        preds
    }

    /// The tasks in a topological order (Kahn's algorithm, smallest index first among the
    /// ready ones). Tasks on a cycle, which a built graph cannot have but a hand-edited
    /// trace might, are left out.
    #[must_use]
    pub fn topological_order(&self) -> Vec<usize> {
        let n = self.tasks.len();
        let mut indeg = vec![0usize; n];
        for t in &self.tasks {
            for &s in &t.successors {
                if s < n {
                    indeg[s] += 1;
                }
            }
        }
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
            .filter(|&v| indeg[v] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse(v)) = ready.pop() {
            order.push(v);
            for &s in &self.tasks[v].successors {
                if s < n {
                    indeg[s] -= 1;
                    if indeg[s] == 0 {
                        ready.push(std::cmp::Reverse(s));
                    }
                }
            }
        }
        order
    }
}

/// Time within `t0..t1` during which at most one thread works, from sorted working edges.
fn serial_within(edges: &[(u64, i32)], t0: u64, t1: u64) -> u64 {
    let (mut working, mut at, mut serial) = (0i32, t0, 0u64);
    for &(t, d) in edges {
        if t > t1 {
            break;
        }
        if t > at {
            if working <= 1 {
                serial += t - at;
            }
            at = t;
        }
        working += d;
    }
    if working <= 1 && t1 > at {
        serial += t1 - at;
    }
    serial
}

/// When and where a task ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRun {
    /// The thread that started it (index into [`Trace::threads`]).
    pub thread: usize,
    /// When it started, in ns since the run started.
    pub start_ns: u64,
    /// When it was complete (its last chunk or child done, successors released).
    pub end_ns: u64,
}

impl TaskRun {
    /// Start to completion, in ns.
    #[must_use]
    pub fn elapsed_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// What a span of work was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A task's body (for a parallel-for: computing its range and queueing helpers).
    Body,
    /// One chunk of a parallel-for: indices `start..end`.
    Chunk {
        /// First index.
        start: usize,
        /// One past the last index.
        end: usize,
    },
    /// One child of a dynamic task.
    Child,
    /// Time a thread spent waiting, with nothing to run, for work it depends on (a
    /// parallel-for's last chunks, a scope's jobs). Nested in the span that waited; it is
    /// not work: [`Trace::exclusive_ns`] takes it out of its parent, and work, busy time
    /// and the summary's serial time leave it out.
    Wait,
}

/// A span of work on one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The task it belongs to.
    pub task: usize,
    /// The thread that ran it.
    pub thread: usize,
    /// Body, chunk or child.
    pub kind: SpanKind,
    /// Start, in ns since the run started.
    pub start_ns: u64,
    /// End, in ns since the run started.
    pub end_ns: u64,
}

impl Span {
    /// Whether it is a [`SpanKind::Wait`].
    #[must_use]
    pub fn is_wait(&self) -> bool {
        self.kind == SpanKind::Wait
    }

    /// Duration in ns.
    #[must_use]
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// The record of one traced run; see the [module docs](self).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The graph that ran.
    pub graph: GraphInfo,
    /// Thread names, by the job system's thread index.
    pub threads: Vec<String>,
    /// Per task, when it ran (`None`: it did not, e.g. after a panic).
    pub tasks: Vec<Option<TaskRun>>,
    /// Work spans, sorted by thread, then start (outer spans before those nested in them).
    pub spans: Vec<Span>,
}

impl Trace {
    /// A trace from its parts; sorts the spans.
    #[must_use]
    pub fn new(
        graph: GraphInfo,
        threads: Vec<String>,
        tasks: Vec<Option<TaskRun>>,
        mut spans: Vec<Span>,
    ) -> Self {
        spans.sort_by(|a, b| {
            (a.thread, a.start_ns, std::cmp::Reverse(a.end_ns), a.task).cmp(&(
                b.thread,
                b.start_ns,
                std::cmp::Reverse(b.end_ns),
                b.task,
            ))
        });
        Self {
            graph,
            threads,
            tasks,
            spans,
        }
    }

    /// The name of thread `i` (`"thread i"` if unnamed).
    #[must_use]
    pub fn thread_name(&self, i: usize) -> String {
        self.threads
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("thread {i}"))
    }

    /// Number of thread lanes: one past the highest thread index that ran anything.
    #[must_use]
    pub fn lanes(&self) -> usize {
        let from_spans = self.spans.iter().map(|s| s.thread + 1).max().unwrap_or(0);
        let from_tasks = self.tasks.iter().flatten().map(|t| t.thread + 1).max();
        from_spans.max(from_tasks.unwrap_or(0))
    }

    /// From the first task start to the last task end, in ns.
    #[must_use]
    pub fn wall_ns(&self) -> u64 {
        let runs = self.tasks.iter().flatten();
        let start = runs.clone().map(|r| r.start_ns).min().unwrap_or(0);
        let end = runs.map(|r| r.end_ns).max().unwrap_or(0);
        end.saturating_sub(start)
    }

    /// Each span's exclusive time: its duration less that of spans nested directly in it
    /// on the same thread (same order as [`spans`](Self::spans)).
    #[must_use]
    pub fn exclusive_ns(&self) -> Vec<u64> {
        let mut excl: Vec<u64> = self.spans.iter().map(Span::duration_ns).collect();
        let mut stack: Vec<usize> = Vec::new();
        for (i, s) in self.spans.iter().enumerate() {
            while let Some(&top) = stack.last() {
                let t = &self.spans[top];
                if t.thread != s.thread || t.end_ns <= s.start_ns {
                    stack.pop();
                } else {
                    break;
                }
            }
            if let Some(&parent) = stack.last() {
                excl[parent] = excl[parent].saturating_sub(s.duration_ns());
            }
            stack.push(i);
        }
        excl
    }

    /// Work per task: the exclusive time of its spans, in ns.
    #[must_use]
    pub fn work_per_task_ns(&self) -> Vec<u64> {
        let mut work = vec![0u64; self.graph.tasks.len()];
        for (s, e) in self.spans.iter().zip(self.exclusive_ns()) {
            if s.is_wait() {
                continue;
            }
            if let Some(w) = work.get_mut(s.task) {
                *w += e;
            }
        }
        work
    }

    /// The critical path: the chain of tasks along edges whose elapsed times (start to
    /// completion) add up to the most, and that sum in ns. Tasks that did not run weigh 0.
    #[must_use]
    pub fn critical_path(&self) -> (Vec<usize>, u64) {
        let n = self.graph.tasks.len();
        let weight: Vec<u64> = (0..n)
            .map(|i| {
                self.tasks
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or(0, |r| r.elapsed_ns())
            })
            .collect();
        let mut incoming = vec![0u64; n];
        let mut from = vec![usize::MAX; n];
        let mut dist = vec![0u64; n];
        for v in self.graph.topological_order() {
            dist[v] = incoming[v] + weight[v];
            for &s in &self.graph.tasks[v].successors {
                if s < n && (dist[v] > incoming[s] || from[s] == usize::MAX) {
                    incoming[s] = dist[v];
                    from[s] = v;
                }
            }
        }
        let Some(last) = (0..n).max_by_key(|&v| (dist[v], std::cmp::Reverse(v))) else {
            return (Vec::new(), 0);
        };
        let mut path = vec![last];
        let mut v = last;
        while from[v] != usize::MAX {
            v = from[v];
            path.push(v);
        }
        path.reverse();
        (path, dist[last])
    }

    /// Time, within the run's wall window, during which at most one thread was working
    /// (inside a span and not waiting), in ns: the part of the run no extra thread sped
    /// up. A thread's working time is the union of its spans less its wait spans.
    #[must_use]
    pub fn serial_ns(&self) -> u64 {
        let runs = self.tasks.iter().flatten();
        let Some(t0) = runs.clone().map(|r| r.start_ns).min() else {
            return 0;
        };
        let t1 = runs.map(|r| r.end_ns).max().unwrap_or(t0);
        serial_within(&self.working_edges(), t0, t1)
    }

    /// Per task, the time within its run (start to completion) during which at most one
    /// thread was working, in ns (0 for a task that did not run). Tasks that overlap in
    /// time share the moments they overlap.
    #[must_use]
    pub fn serial_per_task_ns(&self) -> Vec<u64> {
        let edges = self.working_edges();
        self.tasks
            .iter()
            .map(|r| r.map_or(0, |r| serial_within(&edges, r.start_ns, r.end_ns)))
            .collect()
    }

    /// The (time, +1 / -1) edges of every thread's working intervals, sorted (ends before
    /// starts at the same instant, so touching intervals do not overlap).
    fn working_edges(&self) -> Vec<(u64, i32)> {
        let mut edges: Vec<(u64, i32)> = Vec::new();
        for lane in 0..self.lanes() {
            for (a, b) in self.working_intervals(lane) {
                edges.push((a, 1));
                edges.push((b, -1));
            }
        }
        edges.sort_unstable();
        edges
    }

    /// One thread's working time as sorted, disjoint intervals: the union of its non-wait
    /// spans less the union of its wait spans.
    fn working_intervals(&self, lane: usize) -> Vec<(u64, u64)> {
        let union = |wait: bool| {
            let mut v: Vec<(u64, u64)> = self
                .spans
                .iter()
                .filter(|s| s.thread == lane && s.is_wait() == wait && s.end_ns > s.start_ns)
                .map(|s| (s.start_ns, s.end_ns))
                .collect();
            v.sort_unstable();
            let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
            for (a, b) in v {
                match out.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => out.push((a, b)),
                }
            }
            out
        };
        let busy = union(false);
        let waits = union(true);
        let mut out = Vec::with_capacity(busy.len());
        let mut w = 0;
        for (mut a, b) in busy {
            while w < waits.len() && waits[w].1 <= a {
                w += 1;
            }
            let mut k = w;
            while k < waits.len() && waits[k].0 < b {
                if waits[k].0 > a {
                    out.push((a, waits[k].0));
                }
                a = a.max(waits[k].1);
                k += 1;
            }
            if a < b {
                out.push((a, b));
            }
        }
        out
    }

    /// Whether each task is on the critical path.
    pub(crate) fn critical_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.graph.tasks.len()];
        for t in self.critical_path().0 {
            mask[t] = true;
        }
        mask
    }

    /// Total work, span, parallelism, busy time per thread and the slowest tasks.
    #[must_use]
    pub fn summary(&self) -> Summary {
        summary::summarize(self)
    }

    /// The graph in Graphviz DOT, each task labelled with its elapsed time and the
    /// critical path drawn in red.
    #[must_use]
    pub fn to_dot(&self) -> String {
        dot::to_dot(&self.graph, Some(self))
    }

    /// A timeline in SVG: one lane per thread, spans as bars labelled with their task's
    /// name, critical-path tasks highlighted, a time axis in µs.
    #[must_use]
    pub fn to_svg(&self) -> String {
        svg::to_svg(self)
    }

    /// Chrome trace-event JSON (Perfetto, `chrome://tracing`), with the graph's structure
    /// as metadata so that [`from_chrome_json`](Self::from_chrome_json) can read it back.
    #[must_use]
    pub fn to_chrome_json(&self) -> String {
        chrome::to_json(self)
    }

    /// Reads a trace written by [`to_chrome_json`](Self::to_chrome_json).
    pub fn from_chrome_json(json: &str) -> Result<Trace, TraceParseError> {
        chrome::from_json(json)
    }
}
