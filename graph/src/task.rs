//! What a task is, and what it sees while it runs.
//!
//! Four kinds of task, all stored as shared closures so that a built graph can be embedded
//! in others (flattened) without copying the closures themselves:
//!
//! - a **task**: one call of a closure;
//! - a **parallel-for**: when the task starts it computes its index range from the
//!   resources it reads, then every thread of the job system claims chunks of it (each a
//!   multiple of the task's grain, except the last); the task is complete when the last
//!   chunk is;
//! - a **dynamic** task: its body takes a [`Spawner`](crate::Spawner) and may queue
//!   children (which may queue more); the task is complete, and its successors may start,
//!   only when the body and every child are done (Jolt's find-collision and CCD jobs);
//! - a **join**: no body; the entry and exit of an embedded subgraph.
//!
//! Every closure is stored type-erased as a `Fn(&TaskContext)`: a closure over typed
//! parameters (see `param.rs`) is wrapped in one that fetches them from the context.
//!
//! A [`TaskContext`] is the task's window on the run, internal to joule-graph: tasks
//! never see it, only their parameters' `fetch` does.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

use crate::run::RunState;

pub(crate) type TaskFn = Arc<dyn Fn(&TaskContext<'_>) + Send + Sync>;
pub(crate) type RangeFn = Arc<dyn Fn(&TaskContext<'_>) -> Range<usize> + Send + Sync>;
pub(crate) type ChunkFn = Arc<dyn Fn(&TaskContext<'_>, Range<usize>) + Send + Sync>;
/// A dynamic task's child closure for children of type `C`, stored as `dyn Any` in
/// [`Body::Dynamic`] and downcast by the child job (`build()` checked the type).
pub(crate) type ChildFn<C> = Box<dyn Fn(C, &TaskContext<'_>) + Send + Sync>;

/// A task's code.
#[derive(Clone)]
pub(crate) enum Body {
    Join,
    Single(TaskFn),
    ParallelFor {
        range: RangeFn,
        grain: usize,
        body: ChunkFn,
    },
    Dynamic {
        /// The body; it spawns through a `Spawner` parameter, which `fetch` makes.
        body: TaskFn,
        /// A [`ChildFn`] for the task's child type.
        child: Arc<dyn Any + Send + Sync>,
    },
}

impl Body {
    pub(crate) fn kind(&self) -> TaskKind {
        match self {
            Body::Join => TaskKind::Join,
            Body::Single(_) => TaskKind::Task,
            Body::ParallelFor { .. } => TaskKind::ParallelFor,
            Body::Dynamic { .. } => TaskKind::Dynamic,
        }
    }
}

/// The kind of a task, as shown in traces and DOT output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskKind {
    /// One call of a closure.
    Task,
    /// A loop whose range is computed when the task starts, run in chunks on all threads.
    ParallelFor,
    /// A task that may spawn children; its successors wait for all of them.
    Dynamic,
    /// The entry or exit of an embedded subgraph; does no work.
    Join,
}

impl TaskKind {
    /// The name used in saved traces.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Task => "task",
            TaskKind::ParallelFor => "parallel_for",
            TaskKind::Dynamic => "dynamic",
            TaskKind::Join => "join",
        }
    }

    /// Parses [`as_str`](Self::as_str)'s output.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "task" => TaskKind::Task,
            "parallel_for" => TaskKind::ParallelFor,
            "dynamic" => TaskKind::Dynamic,
            "join" => TaskKind::Join,
            _ => return None,
        })
    }
}

/// What a running task's parameters are fetched from: the run (its resources and job
/// system) and the task's index. Children of a dynamic task and chunks of a parallel-for
/// get their task's context.
///
/// Public only because [`Param::fetch`](crate::Param) takes it; it lives in a private
/// module and is not exported, so no one outside joule-graph can name or make one.
pub struct TaskContext<'a> {
    pub(crate) run: &'a Arc<RunState>,
    pub(crate) task: u32,
}

impl TaskContext<'_> {
    /// Runs the child closure of this (dynamic) task on `child`.
    pub(crate) fn run_child<C: 'static>(&self, child: C) {
        let Body::Dynamic { child: f, .. } = &self.run.graph().tasks[self.task as usize].body
        else {
            unreachable!("joule-graph: a child of a task that is not dynamic");
        };
        let f = f
            .downcast_ref::<ChildFn<C>>()
            .expect("joule-graph: `build` checks that a spawner's child type is the task's");
        f(child, self);
    }

    /// Panics unless the task declared `want` (or more) of the resource `id`.
    ///
    /// A parameter declares (when its task is added) exactly what it fetches (when the task
    /// runs), both from its type, so this cannot fail unless joule-graph itself has a bug;
    /// debug builds check it anyway (Jolt's `BodyAccess::Grant`).
    #[cfg(debug_assertions)]
    pub(crate) fn check(
        &self,
        id: std::any::TypeId,
        name: &'static str,
        want: crate::access::AccessMode,
    ) {
        use crate::access::AccessMode;
        let declared = self.run.graph().declared(self.task, id);
        let ok = match want {
            AccessMode::Read => declared.is_some(),
            AccessMode::Write => declared == Some(AccessMode::Write),
        };
        assert!(
            ok,
            "joule-graph: task '{}' fetches {want:?} access to `{name}` but declared {declared:?}; \
             parameters must declare what they fetch",
            self.run.graph().task_name(self.task)
        );
    }
}
