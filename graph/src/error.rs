//! `BuildError`: why `GraphBuilder::build` rejected a graph, each message naming the tasks
//! involved.

use std::fmt;

use crate::access::AccessMode;

/// Why a graph could not be built. Each message names the tasks involved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The edges form a cycle, so no task on it could ever start. `tasks` lists the nodes
    /// on one cycle in edge order (each runs after the one before it, and the first after
    /// the last). Remove one of those edges.
    Cycle {
        /// Names of the nodes on the cycle.
        tasks: Vec<String>,
    },
    /// Two tasks that no path of edges orders may run at the same time, and at least one
    /// writes `resource` while the other touches it. Add an edge between them (or between
    /// tasks before and after them), or split the resource.
    Conflict {
        /// The task added first (in flattened order).
        first: String,
        /// How `first` accesses the resource.
        first_mode: AccessMode,
        /// The other task.
        second: String,
        /// How `second` accesses the resource.
        second_mode: AccessMode,
        /// The resource's type name.
        resource: &'static str,
    },
    /// Two tasks have the same name (after subgraph tasks were prefixed with their
    /// subgraph's name). Rename one: names identify tasks in errors and traces.
    DuplicateName {
        /// The name used twice.
        name: String,
    },
    /// An edge of `task` names a node of another builder. Use ids from this builder.
    UnknownTask {
        /// The node whose edge is wrong.
        task: String,
    },
    /// `on_thread` was used on a node that is not a plain task (a parallel-for, dynamic
    /// task or subgraph spreads over many threads). Pin a plain task instead.
    PinnedNotTask {
        /// The node that was pinned.
        task: String,
    },
    /// One closure of `task` takes `resource` twice (say `Read<A>` and `Write<A>`). A
    /// closure holds all its parameters at once, so it would wait on itself; take it once
    /// (a `Write` also reads).
    ResourceTwice {
        /// The task.
        task: String,
        /// The resource's type name.
        resource: &'static str,
    },
    /// A closure of `task` takes a `Spawner<spawner>`, but the task is not a dynamic task
    /// (`children` is `None`) or its child closure takes `children` instead. Only a dynamic
    /// task's body and child closure may spawn, and only children of the child closure's
    /// type.
    WrongSpawner {
        /// The task.
        task: String,
        /// The type name of the spawner's children.
        spawner: &'static str,
        /// The type name the child closure takes, for a dynamic task.
        children: Option<&'static str>,
    },
}

fn mode_verb(m: AccessMode) -> &'static str {
    match m {
        AccessMode::Read => "reads",
        AccessMode::Write => "writes",
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Cycle { tasks } => {
                write!(f, "the edges form a cycle: ")?;
                for t in tasks {
                    write!(f, "'{t}' -> ")?;
                }
                write!(
                    f,
                    "'{}'; remove one of these edges",
                    tasks.first().map_or("", String::as_str)
                )
            }
            BuildError::Conflict {
                first,
                first_mode,
                second,
                second_mode,
                resource,
            } => write!(
                f,
                "tasks '{first}' and '{second}' may run at the same time, but '{first}' {} \
                 `{resource}` and '{second}' {} it; order them with an edge",
                mode_verb(*first_mode),
                mode_verb(*second_mode)
            ),
            BuildError::DuplicateName { name } => {
                write!(f, "two tasks are named '{name}'; task names must be unique")
            }
            BuildError::UnknownTask { task } => write!(
                f,
                "an edge of '{task}' names a task of another graph builder"
            ),
            BuildError::PinnedNotTask { task } => write!(
                f,
                "'{task}' is pinned to a thread, but only plain tasks can be pinned"
            ),
            BuildError::ResourceTwice { task, resource } => write!(
                f,
                "a closure of task '{task}' takes `{resource}` twice; take it once (a Write \
                 also reads)"
            ),
            BuildError::WrongSpawner {
                task,
                spawner,
                children: None,
            } => write!(
                f,
                "task '{task}' takes a `Spawner<{spawner}>`, but only dynamic tasks spawn"
            ),
            BuildError::WrongSpawner {
                task,
                spawner,
                children: Some(children),
            } => write!(
                f,
                "task '{task}' takes a `Spawner<{spawner}>`, but its child closure takes \
                 `{children}`"
            ),
        }
    }
}

impl std::error::Error for BuildError {}
