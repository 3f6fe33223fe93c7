//! What a task can take as a parameter, and what each parameter declares.
//!
//! A task is a closure whose parameters say what it touches (the way Bevy systems do):
//!
//! | parameter            | the task gets              | declares                        |
//! |----------------------|----------------------------|---------------------------------|
//! | [`Read<T>`]          | `&T` (through `Deref`)     | a read of `T`                   |
//! | [`Write<T>`]         | `&mut T` (`DerefMut`)      | a write of `T`                  |
//! | `&JobSystem`         | the job system of the run  | nothing                         |
//! | [`Spawner<C>`]       | a queue for children `C`   | nothing (dynamic tasks only)    |
//!
//! The builder calls each parameter's `declare` once, when the task is added, and the
//! union over the task's closures is its declared access; `build()` checks it against the
//! other tasks. When the task runs, each parameter's `fetch` takes its lock (uncontended in
//! a valid graph, see `access.rs`). Declaring and fetching come from the same type, so
//! they cannot drift apart: a task cannot reach a resource it did not declare. Debug builds
//! still check each fetch against the declaration (Jolt's `BodyAccess::Grant`), to catch
//! a bug in joule-graph itself.
//!
//! The trait's methods take types private to this crate, so only the parameters above
//! exist.

use std::any::{TypeId, type_name};
use std::marker::PhantomData;
use std::sync::Arc;

use joule_jobs::JobSystem;

use crate::access::{AccessDecl, AccessMode, Read, Write};
use crate::run::RunState;
use crate::task::TaskContext;

/// What one closure of a task declares: its accesses and the child type of the spawner it
/// takes, if any. Filled in by [`Param::declare`].
#[derive(Default, Debug)]
pub struct Declared {
    pub(crate) accesses: Vec<AccessDecl>,
    /// `(type id, type name)` of the `C` of each `Spawner<C>` taken.
    pub(crate) spawns: Vec<(TypeId, &'static str)>,
}

impl Declared {
    /// The first resource this closure takes twice (a closure holds each of its
    /// parameters' locks at once, so `Read<A>` with `Write<A>` would wait on itself).
    pub(crate) fn repeated(&self) -> Option<&'static str> {
        self.accesses.iter().enumerate().find_map(|(i, a)| {
            self.accesses[..i]
                .iter()
                .any(|b| b.type_id == a.type_id)
                .then_some(a.type_name)
        })
    }
}

/// A parameter of a task's closure; its type is what the task declares.
///
/// | parameter            | the task gets              | declares                        |
/// |----------------------|----------------------------|---------------------------------|
/// | [`Read<T>`]          | `&T` (through `Deref`)     | a read of `T`                   |
/// | [`Write<T>`]         | `&mut T` (`DerefMut`)      | a write of `T`                  |
/// | `&JobSystem`         | the job system of the run  | nothing                         |
/// | [`Spawner<C>`]       | a queue for children `C`   | nothing (dynamic tasks only)    |
///
/// Only these four exist (the methods take types private to joule-graph). Write each
/// parameter's type out in the closure; a closure returned as `impl Fn(..)` from a
/// function is not accepted (write the closure where the task is added, or use a `fn`).
pub trait Param {
    /// The parameter's type for a run that lends resources for `'r`.
    type Item<'r>;

    /// Adds this parameter's access to `out`.
    #[doc(hidden)]
    fn declare(out: &mut Declared);

    /// Takes the parameter for a running task.
    #[doc(hidden)]
    fn fetch<'r>(cx: &TaskContext<'r>) -> Self::Item<'r>;
}

impl<T: Send + Sync + 'static> Param for Read<'_, T> {
    type Item<'r> = Read<'r, T>;

    fn declare(out: &mut Declared) {
        out.accesses.push(AccessDecl::of::<T>(AccessMode::Read));
    }

    #[inline]
    fn fetch<'r>(cx: &TaskContext<'r>) -> Read<'r, T> {
        #[cfg(debug_assertions)]
        cx.check(TypeId::of::<T>(), type_name::<T>(), AccessMode::Read);
        cx.run
            .ctx()
            .read_locked::<T>()
            .expect("joule-graph: `run` checks that every declared resource is present")
    }
}

impl<T: Send + Sync + 'static> Param for Write<'_, T> {
    type Item<'r> = Write<'r, T>;

    fn declare(out: &mut Declared) {
        out.accesses.push(AccessDecl::of::<T>(AccessMode::Write));
    }

    #[inline]
    fn fetch<'r>(cx: &TaskContext<'r>) -> Write<'r, T> {
        #[cfg(debug_assertions)]
        cx.check(TypeId::of::<T>(), type_name::<T>(), AccessMode::Write);
        cx.run
            .ctx()
            .write_locked::<T>()
            .expect("joule-graph: `run` checks that every declared resource is present")
    }
}

/// The job system running the graph, for nested parallel work inside a task. Do not wait
/// on it (`parallel_for`, `scope`, `wait`) while a chunk or child of the same task may
/// want a [`Write`] this closure holds: the waiting thread runs other jobs, and one of them
/// may be that chunk or child.
impl Param for &JobSystem {
    type Item<'r> = &'r JobSystem;

    fn declare(_: &mut Declared) {}

    #[inline]
    fn fetch<'r>(cx: &TaskContext<'r>) -> &'r JobSystem {
        cx.run.jobs()
    }
}

/// Queues children of a [dynamic](crate::GraphBuilder::dynamic) task while the graph runs:
/// each [`spawn`](Self::spawn) runs the task's child closure once on `child`. The task's
/// successors start only after its body and every child (and every grandchild a child
/// queued) have finished.
///
/// Only the body and the child closure of a dynamic task may take a `Spawner`, and `C`
/// must be the type the child closure takes first; `build()` checks both.
pub struct Spawner<'r, C> {
    run: &'r Arc<RunState>,
    task: u32,
    _child: PhantomData<fn(C)>,
}

impl<C: Send + 'static> Spawner<'_, C> {
    /// Queues one child, which runs the task's child closure on `child` on some thread.
    ///
    /// A child job holds the run state, the task index and `child`; when `C` is at most
    /// 24 bytes the job is stored inline and queueing it allocates nothing.
    pub fn spawn(&self, child: C) {
        RunState::spawn_child(self.run, self.task, child);
    }

    /// The name of the task whose children these are.
    #[must_use]
    pub fn task_name(&self) -> &str {
        self.run.graph().task_name(self.task)
    }
}

impl<C: Send + 'static> Param for Spawner<'_, C> {
    type Item<'r> = Spawner<'r, C>;

    fn declare(out: &mut Declared) {
        out.spawns.push((TypeId::of::<C>(), type_name::<C>()));
    }

    #[inline]
    fn fetch<'r>(cx: &TaskContext<'r>) -> Spawner<'r, C> {
        Spawner {
            run: cx.run,
            task: cx.task,
            _child: PhantomData,
        }
    }
}
