//! The text summary of a trace: how much work, how long the longest chain, how parallel.
//!
//! - **work**: the exclusive time of every span (bodies, chunks, children);
//! - **span**: the length of the critical path, the chain of tasks along edges with the
//!   largest sum of elapsed times (start to completion; for a parallel-for that is its
//!   parallel time, so the span is what no number of threads could beat given those
//!   tasks);
//! - **parallelism**: work / span, the speed-up the graph allows at best (Blumofe and
//!   Leiserson's work-span model, as Taskflow's profiler reports it);
//! - **serial time**: wall time during which at most one thread was working (waits, the
//!   [`SpanKind::Wait`](super::SpanKind::Wait) spans, are not work), and its share of the
//!   wall time: the part of the run more threads did not shorten;
//! - **busy time per thread**: exclusive span time on each thread less its waits, and its
//!   share of the wall time;
//! - **slowest tasks**: the ten largest elapsed times, with each one's work and serial
//!   time (the part of its run during which at most one thread worked).

use std::fmt;

use super::Trace;
use crate::task::TaskKind;

/// One task's timing, for [`Summary::slowest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskTime {
    /// Task index.
    pub task: usize,
    /// Task name.
    pub name: String,
    /// Start to completion, in ns.
    pub elapsed_ns: u64,
    /// Exclusive time of its spans (all threads), in ns.
    pub work_ns: u64,
    /// Time within its run during which at most one thread was working, in ns.
    pub serial_ns: u64,
}

/// One thread's busy time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadBusy {
    /// Thread name.
    pub name: String,
    /// Exclusive span time on the thread, in ns.
    pub busy_ns: u64,
}

/// What [`Trace::summary`] computes; `Display` prints it as a small report.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Tasks that ran (subgraph entries and exits included).
    pub tasks_run: usize,
    /// First task start to last task end, in ns.
    pub wall_ns: u64,
    /// Total work, in ns.
    pub work_ns: u64,
    /// Critical path length, in ns.
    pub span_ns: u64,
    /// The tasks on the critical path, in order (subgraph entries and exits left out).
    pub critical_path: Vec<String>,
    /// `work_ns / span_ns` (0 when the span is 0).
    pub parallelism: f64,
    /// Wall time during which at most one thread was working, in ns
    /// ([`Trace::serial_ns`]).
    pub serial_ns: u64,
    /// Time threads spent waiting for work they depended on, all threads, in ns.
    pub wait_ns: u64,
    /// Busy time per thread, by thread index.
    pub busy: Vec<ThreadBusy>,
    /// The (up to) ten slowest tasks by elapsed time, slowest first.
    pub slowest: Vec<TaskTime>,
}

pub(crate) fn summarize(trace: &Trace) -> Summary {
    let excl = trace.exclusive_ns();
    let mut work_ns = 0;
    let mut wait_ns = 0;
    for (s, e) in trace.spans.iter().zip(&excl) {
        if s.is_wait() {
            wait_ns += e;
        } else {
            work_ns += e;
        }
    }
    let mut busy: Vec<ThreadBusy> = (0..trace.lanes())
        .map(|i| ThreadBusy {
            name: trace.thread_name(i),
            busy_ns: 0,
        })
        .collect();
    for (s, e) in trace.spans.iter().zip(&excl) {
        if !s.is_wait() {
            busy[s.thread].busy_ns += e;
        }
    }
    let (path, span_ns) = trace.critical_path();
    let critical_path = path
        .iter()
        .filter(|&&t| trace.graph.tasks[t].kind != TaskKind::Join)
        .map(|&t| trace.graph.tasks[t].name.clone())
        .collect();
    let work = trace.work_per_task_ns();
    let serial = trace.serial_per_task_ns();
    let mut slowest: Vec<TaskTime> = trace
        .tasks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let r = (*r)?;
            let info = trace.graph.tasks.get(i)?;
            (info.kind != TaskKind::Join).then(|| TaskTime {
                task: i,
                name: info.name.clone(),
                elapsed_ns: r.elapsed_ns(),
                work_ns: work[i],
                serial_ns: serial[i],
            })
        })
        .collect();
    slowest.sort_by(|a, b| b.elapsed_ns.cmp(&a.elapsed_ns).then(a.task.cmp(&b.task)));
    slowest.truncate(10);
    Summary {
        tasks_run: trace.tasks.iter().flatten().count(),
        wall_ns: trace.wall_ns(),
        work_ns,
        span_ns,
        critical_path,
        parallelism: if span_ns == 0 {
            0.0
        } else {
            work_ns as f64 / span_ns as f64
        },
        serial_ns: trace.serial_ns(),
        wait_ns,
        busy,
        slowest,
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tasks run     {} on {} threads",
            self.tasks_run,
            self.busy.len()
        )?;
        writeln!(f, "wall time     {:>10.1} µs", us(self.wall_ns))?;
        writeln!(f, "total work    {:>10.1} µs", us(self.work_ns))?;
        writeln!(f, "span          {:>10.1} µs", us(self.span_ns))?;
        writeln!(f, "parallelism   {:>10.2}  (work / span)", self.parallelism)?;
        let serial_share = if self.wall_ns == 0 {
            0.0
        } else {
            100.0 * self.serial_ns as f64 / self.wall_ns as f64
        };
        writeln!(
            f,
            "serial        {:>10.1} µs  {:>5.1}% of wall (at most one thread working)",
            us(self.serial_ns),
            serial_share
        )?;
        writeln!(
            f,
            "waiting       {:>10.1} µs  (all threads)",
            us(self.wait_ns)
        )?;
        writeln!(f, "critical path {}", self.critical_path.join(" -> "))?;
        writeln!(f, "busy time per thread:")?;
        let width = self.busy.iter().map(|b| b.name.len()).max().unwrap_or(0);
        for b in &self.busy {
            let share = if self.wall_ns == 0 {
                0.0
            } else {
                100.0 * b.busy_ns as f64 / self.wall_ns as f64
            };
            writeln!(
                f,
                "  {:<width$}  {:>10.1} µs  {:>5.1}%",
                b.name,
                us(b.busy_ns),
                share
            )?;
        }
        writeln!(f, "slowest tasks (elapsed, work, serial):")?;
        let width = self.slowest.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in &self.slowest {
            writeln!(
                f,
                "  {:<width$}  {:>10.1} µs  {:>10.1} µs  {:>10.1} µs",
                t.name,
                us(t.elapsed_ns),
                us(t.work_ns),
                us(t.serial_ns)
            )?;
        }
        Ok(())
    }
}
