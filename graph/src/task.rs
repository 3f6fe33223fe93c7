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
//! A [`TaskContext`] is the task's window on the run. Tasks over typed parameters never
//! see it. Its `read`/`write` methods are the older context-style API, in which a task
//! declared its access in the builder and reached resources by hand in its body (twice,
//! and the two could drift apart); it is kept, hidden, only until joule-physics's step is
//! ported to typed parameters, and will be removed then.

use std::any::{Any, TypeId, type_name};
use std::ops::Range;
use std::sync::Arc;

use joule_jobs::JobSystem;

use crate::access::{AccessMode, Read, Write};
use crate::run::RunState;

pub(crate) type TaskFn = Arc<dyn Fn(&TaskContext<'_>) + Send + Sync>;
pub(crate) type RangeFn = Arc<dyn Fn(&TaskContext<'_>) -> Range<usize> + Send + Sync>;
pub(crate) type ChunkFn = Arc<dyn Fn(&TaskContext<'_>, Range<usize>) + Send + Sync>;
pub(crate) type DynamicFn = Arc<dyn Fn(&TaskContext<'_>, &ContextSpawner<'_>) + Send + Sync>;
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
        body: DynamicFn,
        /// A [`ChildFn`] (typed dynamic tasks; context-style ones spawn closures instead).
        child: Option<Arc<dyn Any + Send + Sync>>,
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

/// What a running task sees: the resources it declared, and the job system.
///
/// Children of a dynamic task and chunks of a parallel-for get their task's context.
///
/// Tasks over typed parameters never see this type; only the hidden context-style API
/// (kept until joule-physics's step is ported, see the module docs) hands it out.
#[doc(hidden)]
pub struct TaskContext<'a> {
    pub(crate) run: &'a Arc<RunState>,
    pub(crate) task: u32,
}

impl<'a> TaskContext<'a> {
    /// The task's name (for a task of an embedded subgraph: `"subgraph/task"`).
    #[must_use]
    pub fn task_name(&self) -> &'a str {
        self.run.graph().task_name(self.task)
    }

    /// The job system running the graph, for nested parallel work. Do not hold a resource
    /// guard across a blocking wait on it (`parallel_for`, `scope`, `wait`): the waiting
    /// thread runs other jobs, and one of them may want the same lock.
    #[must_use]
    pub fn jobs(&self) -> &'a JobSystem {
        self.run.jobs()
    }

    /// Runs the typed child closure of this (dynamic) task on `child`.
    pub(crate) fn run_child<C: 'static>(&self, child: C) {
        let Body::Dynamic { child: Some(f), .. } = &self.run.graph().tasks[self.task as usize].body
        else {
            unreachable!("joule-graph: a child of a task without a child closure");
        };
        let f = f
            .downcast_ref::<ChildFn<C>>()
            .expect("joule-graph: `build` checks that a spawner's child type is the task's");
        f(child, self);
    }

    /// Panics unless the task declared `want` (or more) of the resource `id`.
    pub(crate) fn check(&self, id: TypeId, name: &'static str, want: AccessMode) {
        let declared = self.run.graph().declared(self.task, id);
        match (declared, want) {
            (Some(AccessMode::Write), _) | (Some(AccessMode::Read), AccessMode::Read) => {}
            (Some(AccessMode::Read), AccessMode::Write) => panic!(
                "joule-graph: task '{}' writes `{name}` but declared only a read; take a \
                 `Write<{name}>` (context-style: .writes::<{name}>())",
                self.task_name()
            ),
            (None, AccessMode::Read) => panic!(
                "joule-graph: task '{}' reads `{name}`, which it did not declare; take a \
                 `Read<{name}>` (context-style: .reads::<{name}>())",
                self.task_name()
            ),
            (None, AccessMode::Write) => panic!(
                "joule-graph: task '{}' writes `{name}`, which it did not declare; take a \
                 `Write<{name}>` (context-style: .writes::<{name}>())",
                self.task_name()
            ),
        }
    }

    /// Shared access to the resource of type `T`.
    ///
    /// # Panics
    /// If the task did not declare `reads::<T>()` or `writes::<T>()` (the message names
    /// the task and the resource).
    #[must_use]
    pub fn read<T: Send + Sync + 'static>(&self) -> Read<'a, T> {
        self.check(TypeId::of::<T>(), type_name::<T>(), AccessMode::Read);
        self.run
            .ctx()
            .read_locked::<T>()
            .expect("joule-graph: `run` checks that every declared resource is present")
    }

    /// Exclusive access to the resource of type `T`.
    ///
    /// # Panics
    /// If the task did not declare `writes::<T>()` (the message names the task and the
    /// resource).
    #[must_use]
    pub fn write<T: Send + Sync + 'static>(&self) -> Write<'a, T> {
        self.check(TypeId::of::<T>(), type_name::<T>(), AccessMode::Write);
        self.run
            .ctx()
            .write_locked::<T>()
            .expect("joule-graph: `run` checks that every declared resource is present")
    }
}

/// Queues children of a context-style dynamic task (hidden; see the module docs). Its
/// successors start only after every child (and every grandchild queued by a child) has
/// finished.
#[doc(hidden)]
pub struct ContextSpawner<'a> {
    pub(crate) run: &'a Arc<RunState>,
    pub(crate) task: u32,
}

impl ContextSpawner<'_> {
    /// Queues `child`, which runs with its task's context and may spawn more children.
    ///
    /// A child job holds the run state, the task index and `child`; when `child` captures
    /// at most 24 bytes the job is stored inline and queueing it allocates nothing.
    pub fn spawn<F>(&self, child: F)
    where
        F: FnOnce(&TaskContext<'_>, &ContextSpawner<'_>) + Send + 'static,
    {
        RunState::spawn_child(self.run, self.task, child);
    }

    /// The name of the task whose children these are.
    #[must_use]
    pub fn task_name(&self) -> &str {
        self.run.graph().task_name(self.task)
    }
}
