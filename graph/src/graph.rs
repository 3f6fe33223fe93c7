//! A built graph: flat arrays, shared by every run and every graph that embeds it.
//!
//! ```text
//!   tasks:        [ t0 | t1 | t2 | t3 ]        name, body, pinned thread, group,
//!                   │    │                      successor range, access range, slot
//!   successors:   [ 1, 2 | 3 | 3 | ]           task i's successors: successors[succ.0..succ.1]
//!   initial_deps: [ 0, 1, 1, 2 ]               in-degrees, copied into the run's counters
//!   roots:        [ 0 ]                        tasks with no predecessor
//! ```
//!
//! Nothing here changes after `build`; a run keeps its mutable state (counters, the
//! context, trace buffers) in a `RunState` that the [`Graph`] caches and reuses, so the
//! second and later runs allocate nothing.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use joule_jobs::ThreadToken;

use crate::access::AccessDecl;
use crate::run::RunState;
use crate::task::Body;
use crate::trace::{GraphInfo, GroupInfo, TaskInfo, Trace};

pub(crate) struct TaskDef {
    pub(crate) name: Box<str>,
    pub(crate) body: Body,
    pub(crate) thread: Option<ThreadToken>,
    /// Range into `GraphInner::successors`.
    pub(crate) succ: (u32, u32),
    /// Range into `GraphInner::accesses`.
    pub(crate) access: (u32, u32),
    /// Index into the run's work-unit and chunk counters (parallel-for and dynamic tasks
    /// only; `u32::MAX` otherwise).
    pub(crate) slot: u32,
    /// The embedded subgraph the task came from.
    pub(crate) group: Option<u32>,
}

pub(crate) struct GroupDef {
    pub(crate) name: Box<str>,
    pub(crate) parent: Option<u32>,
}

pub(crate) struct GraphInner {
    pub(crate) tasks: Box<[TaskDef]>,
    pub(crate) successors: Box<[u32]>,
    pub(crate) accesses: Box<[AccessDecl]>,
    pub(crate) initial_deps: Box<[u32]>,
    pub(crate) roots: Box<[u32]>,
    /// Every resource some task declares, with the first such task (for error messages).
    pub(crate) resources: Box<[(AccessDecl, u32)]>,
    pub(crate) groups: Box<[GroupDef]>,
    pub(crate) slots: usize,
}

impl GraphInner {
    #[inline]
    pub(crate) fn successors(&self, task: u32) -> &[u32] {
        let (s, e) = self.tasks[task as usize].succ;
        &self.successors[s as usize..e as usize]
    }

    pub(crate) fn accesses_of(&self, task: u32) -> &[AccessDecl] {
        let (s, e) = self.tasks[task as usize].access;
        &self.accesses[s as usize..e as usize]
    }

    pub(crate) fn task_name(&self, task: u32) -> &str {
        &self.tasks[task as usize].name
    }

    /// How `task` declared the resource `id`, if at all (for the debug check of
    /// `TaskContext::check`).
    #[cfg(debug_assertions)]
    #[inline]
    pub(crate) fn declared(
        &self,
        task: u32,
        id: std::any::TypeId,
    ) -> Option<crate::access::AccessMode> {
        self.accesses_of(task)
            .iter()
            .find(|a| a.type_id == id)
            .map(|a| a.mode)
    }

    pub(crate) fn info(&self) -> GraphInfo {
        GraphInfo {
            tasks: self
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| TaskInfo {
                    name: t.name.to_string(),
                    kind: t.body.kind(),
                    successors: self
                        .successors(i as u32)
                        .iter()
                        .map(|&s| s as usize)
                        .collect(),
                    group: t.group.map(|g| g as usize),
                })
                .collect(),
            groups: self
                .groups
                .iter()
                .map(|g| GroupInfo {
                    name: g.name.to_string(),
                    parent: g.parent.map(|p| p as usize),
                })
                .collect(),
        }
    }
}

/// A checked task graph, ready to run any number of times; made by
/// [`GraphBuilder::build`](crate::GraphBuilder::build).
///
/// See [`run`](Self::run) and [`run_async`](Self::run_async). Tracing is off until
/// [`set_tracing`](Self::set_tracing) turns it on.
pub struct Graph {
    inner: Arc<GraphInner>,
    /// The run state of the last finished run, reused by the next (no allocation). Shared
    /// with each [`RunHandle`](crate::RunHandle), which puts its state back when joined.
    pub(crate) cache: Arc<Mutex<Option<Arc<RunState>>>>,
    tracing: AtomicBool,
    pub(crate) last_trace: Arc<Mutex<Option<Trace>>>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field(
                "tasks",
                &self
                    .inner
                    .tasks
                    .iter()
                    .map(|t| &*t.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Graph {
    /// A builder for a new graph (the same as `GraphBuilder::new()`).
    #[must_use]
    pub fn builder() -> crate::GraphBuilder {
        crate::GraphBuilder::new()
    }

    pub(crate) fn from_inner(inner: GraphInner) -> Self {
        Self {
            inner: Arc::new(inner),
            cache: Arc::new(Mutex::new(None)),
            tracing: AtomicBool::new(false),
            last_trace: Arc::new(Mutex::new(None)),
        }
    }

    pub(crate) fn inner(&self) -> &Arc<GraphInner> {
        &self.inner
    }

    /// Number of tasks, counting the entry and exit of each embedded subgraph.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.tasks.len()
    }

    /// Whether the graph has no task.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.tasks.is_empty()
    }

    /// The task names, in the graph's (flattened) order.
    pub fn task_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tasks.iter().map(|t| &*t.name)
    }

    /// Turns tracing of later runs on or off. When on, each run records every task's
    /// start, end and thread and every chunk and child; [`take_trace`](Self::take_trace)
    /// returns the last run's record. When off a run checks one flag per task.
    pub fn set_tracing(&self, on: bool) {
        self.tracing.store(on, Ordering::Relaxed);
    }

    /// Whether runs are traced.
    #[must_use]
    pub fn tracing(&self) -> bool {
        self.tracing.load(Ordering::Relaxed)
    }

    /// The trace of the last traced run that finished, if any (taking it out).
    pub fn take_trace(&self) -> Option<Trace> {
        self.last_trace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The graph's structure (names, kinds, edges, subgraph groups).
    #[must_use]
    pub fn info(&self) -> GraphInfo {
        self.inner.info()
    }

    /// The graph in Graphviz DOT, subgraphs drawn as clusters
    /// (`dot -Tsvg graph.dot > graph.svg`).
    #[must_use]
    pub fn to_dot(&self) -> String {
        crate::trace::dot::to_dot(&self.info(), None)
    }
}
