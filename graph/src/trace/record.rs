//! Recording a traced run.
//!
//! Each task's start, end and starting thread go into per-task atomics, allocated once
//! with the run state (no lock, no allocation per event). Work spans (task bodies, chunks,
//! children) go into one buffer per thread, indexed by the job system's thread index, so
//! threads do not contend; a thread registered after the run started shares the last
//! buffer. Tracing is decided per run: when off, the run checks one plain `bool` per event
//! site and records nothing.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{GraphInfo, Span, SpanKind, TaskRun, Trace};

const NOT_RUN: usize = usize::MAX;

pub(crate) struct Recorder {
    start: Box<[AtomicU64]>,
    end: Box<[AtomicU64]>,
    thread: Box<[AtomicUsize]>,
    spans: Box<[Mutex<Vec<Span>>]>,
    t0: u64,
}

impl Recorder {
    pub(crate) fn new(tasks: usize, threads: usize) -> Self {
        Self {
            start: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
            end: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
            thread: (0..tasks).map(|_| AtomicUsize::new(NOT_RUN)).collect(),
            spans: (0..threads.max(1))
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
            t0: 0,
        }
    }

    /// Whether this recorder has room for `tasks` tasks and `threads` threads.
    pub(crate) fn fits(&self, tasks: usize, threads: usize) -> bool {
        self.start.len() == tasks && self.spans.len() >= threads
    }

    /// Forgets the last run (keeping buffers); `t0` is the new run's start.
    pub(crate) fn reset(&mut self, t0: u64) {
        self.t0 = t0;
        for t in self.thread.iter_mut() {
            *t.get_mut() = NOT_RUN;
        }
        for s in self.spans.iter_mut() {
            s.get_mut().unwrap_or_else(PoisonError::into_inner).clear();
        }
    }

    // Relaxed throughout: the run's end (a counter the caller acquires) publishes every
    // record before `collect` reads them.

    pub(crate) fn task_start(&self, task: u32, thread: usize, now: u64) {
        self.start[task as usize].store(now, Ordering::Relaxed);
        self.thread[task as usize].store(thread, Ordering::Relaxed);
    }

    pub(crate) fn task_end(&self, task: u32, now: u64) {
        self.end[task as usize].store(now, Ordering::Relaxed);
    }

    pub(crate) fn span(&self, task: u32, thread: usize, kind: SpanKind, start: u64, end: u64) {
        let buffer = &self.spans[thread.min(self.spans.len() - 1)];
        buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Span {
                task: task as usize,
                thread,
                kind,
                start_ns: start.saturating_sub(self.t0),
                end_ns: end.saturating_sub(self.t0),
            });
    }

    /// The run's trace, times relative to its start.
    pub(crate) fn collect(&mut self, graph: &GraphInfo, threads: Vec<String>) -> Trace {
        let t0 = self.t0;
        let tasks = (0..self.start.len())
            .map(|i| {
                let thread = *self.thread[i].get_mut();
                (thread != NOT_RUN).then(|| TaskRun {
                    thread,
                    start_ns: self.start[i].get_mut().saturating_sub(t0),
                    end_ns: self.end[i].get_mut().saturating_sub(t0),
                })
            })
            .collect();
        let mut spans = Vec::new();
        for s in self.spans.iter_mut() {
            spans.append(s.get_mut().unwrap_or_else(PoisonError::into_inner));
        }
        Trace::new(graph.clone(), threads, tasks, spans)
    }
}
