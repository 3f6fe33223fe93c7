//! `GraphBuilder`: named tasks, edges, declared access; `build()` checks and flattens.
//!
//! Users add nodes (tasks of each kind, or whole built graphs as subgraphs) and say which
//! node runs after which; dependency counts are computed from the edges, never written by
//! hand. A task's declared access is derived from the parameter types of its closures
//! (`param.rs`) when it is added. `build()`:
//!
//! 1. rejects what adding a node recorded (a closure that takes one resource twice, a
//!    spawner outside a dynamic task or of the wrong child type, a pinned non-task), edges
//!    to nodes of another builder, and cycles (naming the nodes on one);
//! 2. flattens subgraphs into the task list: a subgraph node becomes an entry join, the
//!    child's tasks (renamed `"node/task"`, with their own edges and declared access) and
//!    an exit join; edges into the node go to the entry, edges out of it leave the exit.
//!    Flattening lets the child's tasks run beside the parent's and be checked against
//!    them resource by resource, which is what a game embedding a physics step needs;
//! 3. rejects duplicate task names, then any two tasks not ordered by a path of edges
//!    when either writes what the other touches (naming both and the resource);
//! 4. stores the result as flat arrays (see `graph.rs`).
//!
//! The access check costs one forward and one backward traversal per writer of each
//! resource; tasks that declare nothing cost nothing.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use joule_jobs::ThreadToken;

use crate::access::{AccessDecl, AccessMode};
use crate::graph::{Graph, GraphInner, GroupDef, TaskDef};
use crate::param::Declared;
use crate::task::{Body, ChildFn, ContextSpawner, TaskContext};
use crate::task_fn::{TaskFn, TaskFnWith};

/// The default style of a [`GraphBuilder`]: tasks are closures over typed parameters
/// ([`Read`](crate::Read), [`Write`](crate::Write), `&JobSystem`,
/// [`Spawner`](crate::Spawner)), which declare the task's access.
#[derive(Debug)]
pub enum TypedParams {}

/// The older style of [`GraphBuilder`], made by `GraphBuilder::new()`: tasks take a
/// [`TaskContext`] and declare their access a second time with `reads`/`writes`. Kept,
/// hidden, only until joule-physics's step is ported; it will be removed then.
#[doc(hidden)]
#[derive(Debug)]
pub enum ContextStyle {}

/// Identifies a node (task or subgraph) of a [`GraphBuilder`], for edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId {
    builder: u32,
    index: u32,
}

/// A single id is a one-element list of predecessors, so `after(a)` and `after([a, b])`
/// both read naturally.
impl IntoIterator for TaskId {
    type Item = TaskId;
    type IntoIter = std::iter::Once<TaskId>;
    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(self)
    }
}

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
    /// `reads`/`writes` was used on a subgraph node; its tasks declare their own access.
    AccessOnSubgraph {
        /// The subgraph node.
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
            BuildError::AccessOnSubgraph { task } => write!(
                f,
                "subgraph '{task}' declares access; its own tasks declare theirs"
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

enum NodeKind {
    Task(Body),
    Subgraph(Arc<GraphInner>),
}

struct Node {
    name: String,
    kind: NodeKind,
    accesses: Vec<AccessDecl>,
    preds: Vec<TaskId>,
    thread: Option<ThreadToken>,
}

static NEXT_BUILDER: AtomicU32 = AtomicU32::new(1);

/// Builds a [`Graph`]: add tasks, whose closures' parameter types declare what they read
/// and write, order them with [`TaskMut::after`], then [`build`](Self::build).
///
/// Make one with [`Graph::builder`] (or `GraphBuilder::default()`).
///
/// ```
/// use joule_graph::{Context, Graph, Read, Write};
/// struct Input(u32);
/// struct Score(u32);
///
/// let mut b = Graph::builder();
/// let read = b.task("read input", |mut input: Write<Input>| input.0 = 7).id();
/// b.task("score", |input: Read<Input>, mut score: Write<Score>| score.0 += input.0)
///     .after(read);
/// let graph = b.build()?;
///
/// let jobs = joule_jobs::JobSystem::new(1).unwrap();
/// let mut ctx = Context::new().with(Input(0)).with(Score(0));
/// graph.run(&jobs, &mut ctx);
/// graph.run(&jobs, &mut ctx);
/// assert_eq!(ctx.get_mut::<Score>().unwrap().0, 14);
/// # Ok::<(), joule_graph::BuildError>(())
/// ```
///
/// The style parameter `S` exists only while the older, hidden context-style API
/// (`GraphBuilder::new()`, tasks over a [`TaskContext`] with `reads`/`writes`) is kept for
/// joule-physics's step; leave it at its default.
pub struct GraphBuilder<S = TypedParams> {
    id: u32,
    nodes: Vec<Node>,
    error: Option<BuildError>,
    _style: PhantomData<fn() -> S>,
}

impl Default for GraphBuilder<TypedParams> {
    fn default() -> Self {
        Self::with_style()
    }
}

impl<S> fmt::Debug for GraphBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphBuilder")
            .field(
                "nodes",
                &self.nodes.iter().map(|n| &n.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A node just added (or looked up with [`GraphBuilder::task_mut`]): its predecessors and
/// where it runs.
pub struct TaskMut<'b, S = TypedParams> {
    builder: &'b mut GraphBuilder<S>,
    index: usize,
}

impl<S> TaskMut<'_, S> {
    /// The node's id, for edges.
    #[must_use]
    pub fn id(&self) -> TaskId {
        TaskId {
            builder: self.builder.id,
            index: self.index as u32,
        }
    }

    fn node(&mut self) -> &mut Node {
        &mut self.builder.nodes[self.index]
    }

    /// The node starts only after every node in `preds` is complete (`after(a)` or
    /// `after([a, b])`).
    pub fn after(mut self, preds: impl IntoIterator<Item = TaskId>) -> Self {
        let node = self.node();
        node.preds.extend(preds);
        self
    }

    /// Runs the task only on the thread of `token` (a game's main thread, registered with
    /// [`JobSystem::register_current_thread`](joule_jobs::JobSystem::register_current_thread)).
    /// That thread runs it from its inbox while it waits in `run` or calls `run_pending`.
    /// Only plain tasks can be pinned.
    pub fn on_thread(mut self, token: ThreadToken) -> Self {
        if !matches!(self.node().kind, NodeKind::Task(Body::Single(_))) {
            let task = self.node().name.clone();
            self.builder
                .error
                .get_or_insert(BuildError::PinnedNotTask { task });
            return self;
        }
        self.node().thread = Some(token);
        self
    }
}

/// The context-style declarations, hidden: see [`ContextStyle`].
impl TaskMut<'_, ContextStyle> {
    fn access(mut self, decl: AccessDecl) -> Self {
        if matches!(self.node().kind, NodeKind::Subgraph(_)) {
            let task = self.node().name.clone();
            self.builder
                .error
                .get_or_insert(BuildError::AccessOnSubgraph { task });
            return self;
        }
        self.node().accesses.push(decl);
        self
    }

    /// Declares that the task reads the resource of type `T`.
    #[doc(hidden)]
    pub fn reads<T: Send + Sync + 'static>(self) -> Self {
        self.access(AccessDecl::of::<T>(AccessMode::Read))
    }

    /// Declares that the task writes (and may read) the resource of type `T`.
    #[doc(hidden)]
    pub fn writes<T: Send + Sync + 'static>(self) -> Self {
        self.access(AccessDecl::of::<T>(AccessMode::Write))
    }
}

/// What one closure of a new task declares, checked for a resource taken twice.
fn declared_by<F: FnOnce(&mut Declared)>(task: &str, declare: F) -> Result<Declared, BuildError> {
    let mut d = Declared::default();
    declare(&mut d);
    match d.repeated() {
        Some(resource) => Err(BuildError::ResourceTwice {
            task: task.to_owned(),
            resource,
        }),
        None => Ok(d),
    }
}

impl GraphBuilder<TypedParams> {
    /// Adds a task that calls `f` once per run. `f`'s parameters ([`Read`](crate::Read),
    /// [`Write`](crate::Write), `&JobSystem`) are all it can touch, and are its declared
    /// access.
    pub fn task<F, M>(&mut self, name: impl Into<String>, f: F) -> TaskMut<'_>
    where
        F: TaskFn<(), M>,
    {
        let name = name.into();
        let declared = declared_by(&name, F::declare);
        let body = Body::Single(Arc::new(move |cx: &TaskContext<'_>| f.call(cx)));
        self.push_typed(name, body, [declared], None)
    }

    /// Adds a parallel loop. When the task starts, `range` computes the index range (from
    /// the resources it takes); then every thread claims chunks of it and calls `body` on
    /// each chunk's index range. Chunks are whole multiples of `grain` indices (except the
    /// last), so data split into blocks of `grain` items can be locked block by block
    /// without contention. The task is complete when its last chunk is.
    ///
    /// The task's declared access is what `range` and `body` take. Each chunk takes
    /// `body`'s parameters for its duration: chunks that take a [`Write`](crate::Write)
    /// run one at a time. A loop that writes through per-item slots or per-block locks
    /// takes the resource as a `Write` in `range` (so the task is a writer for `build`'s
    /// check) and as a [`Read`](crate::Read) in `body` (so its chunks run at once).
    pub fn parallel_for<R, MR, F, MF>(
        &mut self,
        name: impl Into<String>,
        range: R,
        grain: usize,
        body: F,
    ) -> TaskMut<'_>
    where
        R: TaskFn<Range<usize>, MR>,
        F: TaskFnWith<Range<usize>, MF>,
    {
        let name = name.into();
        let declared = [
            declared_by(&name, R::declare),
            declared_by(&name, F::declare),
        ];
        let body = Body::ParallelFor {
            range: Arc::new(move |cx: &TaskContext<'_>| range.call(cx)),
            grain: grain.max(1),
            body: Arc::new(move |cx: &TaskContext<'_>, r| body.call(r, cx)),
        };
        self.push_typed(name, body, declared, None)
    }

    /// Adds a task whose `body` may queue children while the graph runs, by taking a
    /// [`Spawner<C>`](crate::Spawner) and calling [`spawn`](crate::Spawner::spawn); each
    /// child runs `child` on the value it was spawned with, on any thread, and may queue
    /// more if `child` takes a `Spawner<C>` too. The task's successors start only after
    /// the body and every child have finished (Jolt's find-collision and CCD jobs).
    ///
    /// The task's declared access is what `body` and `child` take. Children run while the
    /// body may still hold its parameters, and beside each other: a child that takes a
    /// resource the body writes waits for the body to return, and children that take a
    /// [`Write`](crate::Write) run one at a time.
    pub fn dynamic<C, B, MB, F, MF>(
        &mut self,
        name: impl Into<String>,
        body: B,
        child: F,
    ) -> TaskMut<'_>
    where
        C: Send + 'static,
        B: TaskFn<(), MB>,
        F: TaskFnWith<C, MF>,
    {
        let name = name.into();
        let declared = [
            declared_by(&name, B::declare),
            declared_by(&name, F::declare),
        ];
        let child: ChildFn<C> = Box::new(move |c, cx| child.call(c, cx));
        let child: Arc<dyn Any + Send + Sync> = Arc::new(child);
        let body = Body::Dynamic {
            body: Arc::new(move |cx: &TaskContext<'_>, _: &ContextSpawner<'_>| body.call(cx)),
            child: Some(child),
        };
        let children = (TypeId::of::<C>(), std::any::type_name::<C>());
        self.push_typed(name, body, declared, Some(children))
    }
}

/// The context-style API, hidden: see [`ContextStyle`]. Only joule-physics's step and its
/// embedding test use it, until they are ported.
impl GraphBuilder<ContextStyle> {
    /// An empty context-style builder.
    #[doc(hidden)]
    #[must_use]
    #[allow(clippy::new_without_default)] // `default()` makes the typed builder
    pub fn new() -> Self {
        Self::with_style()
    }

    /// Adds a task that calls `f` once per run; declare its access with `reads`/`writes`.
    #[doc(hidden)]
    pub fn task<F>(&mut self, name: impl Into<String>, f: F) -> TaskMut<'_, ContextStyle>
    where
        F: Fn(&TaskContext<'_>) + Send + Sync + 'static,
    {
        self.push(name.into(), NodeKind::Task(Body::Single(Arc::new(f))))
    }

    /// Adds a task whose body may queue children through its spawner; declare its access
    /// (and its children's) with `reads`/`writes`.
    #[doc(hidden)]
    pub fn dynamic<F>(&mut self, name: impl Into<String>, f: F) -> TaskMut<'_, ContextStyle>
    where
        F: Fn(&TaskContext<'_>, &ContextSpawner<'_>) + Send + Sync + 'static,
    {
        self.push(
            name.into(),
            NodeKind::Task(Body::Dynamic {
                body: Arc::new(f),
                child: None,
            }),
        )
    }
}

impl<S> GraphBuilder<S> {
    fn with_style() -> Self {
        Self {
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            nodes: Vec::new(),
            error: None,
            _style: PhantomData,
        }
    }

    /// Number of nodes added so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no node was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn push(&mut self, name: String, kind: NodeKind) -> TaskMut<'_, S> {
        self.nodes.push(Node {
            name,
            kind,
            accesses: Vec::new(),
            preds: Vec::new(),
            thread: None,
        });
        let index = self.nodes.len() - 1;
        TaskMut {
            builder: self,
            index,
        }
    }

    /// Adds a task whose closures declared `declared`; `children` is the child type of a
    /// dynamic task. Problems are kept for `build` to report.
    fn push_typed<const N: usize>(
        &mut self,
        name: String,
        body: Body,
        declared: [Result<Declared, BuildError>; N],
        children: Option<(TypeId, &'static str)>,
    ) -> TaskMut<'_, S> {
        let mut accesses = Vec::new();
        for d in declared {
            let d = match d {
                Ok(d) => d,
                Err(e) => {
                    self.error.get_or_insert(e);
                    continue;
                }
            };
            for &(id, spawner) in &d.spawns {
                if children.is_none_or(|(c, _)| c != id) {
                    self.error.get_or_insert(BuildError::WrongSpawner {
                        task: name.clone(),
                        spawner,
                        children: children.map(|(_, c)| c),
                    });
                }
            }
            accesses.extend(d.accesses);
        }
        let mut task = self.push(name, NodeKind::Task(body));
        task.node().accesses = accesses;
        task
    }

    /// Adds a node that does no work, to order groups of tasks (every task after it waits
    /// for every task before it).
    pub fn barrier(&mut self, name: impl Into<String>) -> TaskMut<'_, S> {
        self.push(name.into(), NodeKind::Task(Body::Join))
    }

    /// Embeds a built graph as one node: its tasks (named `"name/task"`) start after this
    /// node's predecessors and finish before its successors start. They run with the same
    /// [`Context`](crate::Context) as this graph's tasks and are access-checked against
    /// them.
    pub fn subgraph(&mut self, name: impl Into<String>, graph: &Graph) -> TaskMut<'_, S> {
        self.push(name.into(), NodeKind::Subgraph(graph.inner().clone()))
    }

    /// Adds the edge `before -> after`: `after` starts once `before` is complete.
    pub fn edge(&mut self, before: TaskId, after: TaskId) {
        self.task_mut(after).node().preds.push(before);
    }

    /// The node `id`, to declare more about it.
    ///
    /// # Panics
    /// If `id` comes from another builder.
    pub fn task_mut(&mut self, id: TaskId) -> TaskMut<'_, S> {
        assert!(
            id.builder == self.id && (id.index as usize) < self.nodes.len(),
            "joule-graph: task id from another builder"
        );
        TaskMut {
            builder: self,
            index: id.index as usize,
        }
    }

    /// Checks the graph and builds it; see the module docs of `builder.rs` for what is
    /// checked. The result can be run any number of times.
    pub fn build(self) -> Result<Graph, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let preds = self.node_preds()?;
        self.check_cycles(&preds)?;
        let flat = self.flatten(&preds);
        flat.check_names()?;
        flat.check_access()?;
        Ok(Graph::from_inner(flat.finish()))
    }

    /// Predecessor lists per node, validated and without duplicates.
    fn node_preds(&self) -> Result<Vec<Vec<usize>>, BuildError> {
        self.nodes
            .iter()
            .map(|n| {
                let mut p = Vec::with_capacity(n.preds.len());
                for id in &n.preds {
                    if id.builder != self.id || id.index as usize >= self.nodes.len() {
                        return Err(BuildError::UnknownTask {
                            task: n.name.clone(),
                        });
                    }
                    p.push(id.index as usize);
                }
                p.sort_unstable();
                p.dedup();
                Ok(p)
            })
            .collect()
    }

    /// Kahn's algorithm over the nodes; on failure, walks predecessors among the nodes
    /// left over (each has one there) until a node repeats, which closes a cycle.
    fn check_cycles(&self, preds: &[Vec<usize>]) -> Result<(), BuildError> {
        let n = self.nodes.len();
        let mut indeg: Vec<usize> = preds.iter().map(Vec::len).collect();
        let mut succ = vec![Vec::new(); n];
        for (v, ps) in preds.iter().enumerate() {
            for &p in ps {
                succ[p].push(v);
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut done = vec![false; n];
        while let Some(v) = stack.pop() {
            done[v] = true;
            for &s in &succ[v] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    stack.push(s);
                }
            }
        }
        let Some(start) = (0..n).find(|&v| !done[v]) else {
            return Ok(());
        };
        let mut seen_at = vec![usize::MAX; n];
        let mut walk = Vec::new();
        let mut v = start;
        while seen_at[v] == usize::MAX {
            seen_at[v] = walk.len();
            walk.push(v);
            v = *preds[v]
                .iter()
                .find(|&&p| !done[p])
                .expect("joule-graph: a node left by Kahn's algorithm has a predecessor left");
        }
        // `walk[seen_at[v]..]` follows predecessor links; reversed it follows edges.
        let mut cycle: Vec<usize> = walk[seen_at[v]..].iter().rev().copied().collect();
        let min = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
        cycle.rotate_left(min);
        Err(BuildError::Cycle {
            tasks: cycle.iter().map(|&i| self.nodes[i].name.clone()).collect(),
        })
    }

    fn flatten(self, preds: &[Vec<usize>]) -> Flat {
        let mut flat = Flat::default();
        // Each node's (entry, exit) task in the flat list.
        let mut ends = Vec::with_capacity(self.nodes.len());
        for node in self.nodes {
            match node.kind {
                NodeKind::Task(body) => {
                    let t = flat.push(node.name, body, node.accesses, node.thread, None);
                    ends.push((t, t));
                }
                NodeKind::Subgraph(child) => ends.push(flat.embed(&node.name, &child)),
            }
        }
        for (v, ps) in preds.iter().enumerate() {
            for &p in ps {
                flat.succ[ends[p].1].push(ends[v].0);
            }
        }
        flat
    }
}

/// Per resource: its type name and its users with their modes, in task order.
type Users = BTreeMap<TypeId, (&'static str, Vec<(usize, AccessMode)>)>;

/// The graph while it is being flattened: one entry per task, successors as lists.
#[derive(Default)]
struct Flat {
    names: Vec<String>,
    bodies: Vec<Body>,
    accesses: Vec<Vec<AccessDecl>>,
    threads: Vec<Option<ThreadToken>>,
    groups_of: Vec<Option<u32>>,
    succ: Vec<Vec<usize>>,
    groups: Vec<GroupDef>,
}

impl Flat {
    fn push(
        &mut self,
        name: String,
        body: Body,
        mut accesses: Vec<AccessDecl>,
        thread: Option<ThreadToken>,
        group: Option<u32>,
    ) -> usize {
        // One entry per resource; a write covers a read of the same resource.
        accesses.sort_by(|a, b| a.type_id.cmp(&b.type_id).then(b.mode.cmp(&a.mode)));
        accesses.dedup_by_key(|a| a.type_id);
        self.names.push(name);
        self.bodies.push(body);
        self.accesses.push(accesses);
        self.threads.push(thread);
        self.groups_of.push(group);
        self.succ.push(Vec::new());
        self.names.len() - 1
    }

    /// Copies `child` in as group `name`, between an entry and an exit join; returns
    /// (entry, exit). The child's own groups (its subgraphs) nest inside the new group.
    fn embed(&mut self, name: &str, child: &GraphInner) -> (usize, usize) {
        let group = self.groups.len() as u32;
        let group_base = group + 1;
        self.groups.push(GroupDef {
            name: name.into(),
            parent: None,
        });
        for g in child.groups.iter() {
            self.groups.push(GroupDef {
                name: format!("{name}/{}", g.name).into(),
                parent: Some(g.parent.map_or(group, |p| p + group_base)),
            });
        }
        let entry = self.push(name.to_owned(), Body::Join, Vec::new(), None, Some(group));
        let base = self.names.len();
        for (i, t) in child.tasks.iter().enumerate() {
            let g = t.group.map_or(group, |g| g + group_base);
            let accesses = child.accesses_of(i as u32).to_vec();
            self.push(
                format!("{name}/{}", t.name),
                t.body.clone(),
                accesses,
                t.thread,
                Some(g),
            );
        }
        let exit = self.push(
            format!("{name} (end)"),
            Body::Join,
            Vec::new(),
            None,
            Some(group),
        );
        for (i, _) in child.tasks.iter().enumerate() {
            let succ = child.successors(i as u32);
            if child.initial_deps[i] == 0 {
                self.succ[entry].push(base + i);
            }
            if succ.is_empty() {
                self.succ[base + i].push(exit);
            }
            self.succ[base + i].extend(succ.iter().map(|&s| base + s as usize));
        }
        if child.tasks.is_empty() {
            self.succ[entry].push(exit);
        }
        (entry, exit)
    }

    fn check_names(&self) -> Result<(), BuildError> {
        let mut seen = BTreeMap::new();
        for name in &self.names {
            if seen.insert(name.as_str(), ()).is_some() {
                return Err(BuildError::DuplicateName { name: name.clone() });
            }
        }
        Ok(())
    }

    /// Every pair of tasks where one writes a resource the other touches must be ordered
    /// by a path. For each writer: mark what it reaches forward and backward, then look at
    /// the resource's other users.
    fn check_access(&self) -> Result<(), BuildError> {
        let n = self.names.len();
        // Users of each resource, resources in order of first declaration.
        let mut order: Vec<TypeId> = Vec::new();
        let mut users: Users = BTreeMap::new();
        for (t, accesses) in self.accesses.iter().enumerate() {
            for a in accesses {
                let e = users.entry(a.type_id).or_insert_with(|| {
                    order.push(a.type_id);
                    (a.type_name, Vec::new())
                });
                e.1.push((t, a.mode));
            }
        }
        if order.is_empty() {
            return Ok(());
        }
        let mut preds = vec![Vec::new(); n];
        for (v, ss) in self.succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(v);
            }
        }
        let mut fwd = vec![0u32; n];
        let mut bwd = vec![0u32; n];
        let mut stamp = 0u32;
        let mut stack = Vec::new();
        for id in order {
            let (resource, list) = &users[&id];
            for &(w, wmode) in list {
                if wmode != AccessMode::Write || list.len() < 2 {
                    continue;
                }
                stamp += 1;
                mark(w, &self.succ, &mut fwd, stamp, &mut stack);
                mark(w, &preds, &mut bwd, stamp, &mut stack);
                for &(a, amode) in list {
                    // A pair of writers is looked at once, from the earlier one.
                    if a == w || (amode == AccessMode::Write && a < w) {
                        continue;
                    }
                    if fwd[a] != stamp && bwd[a] != stamp {
                        let ((first, fm), (second, sm)) = if w < a {
                            ((w, wmode), (a, amode))
                        } else {
                            ((a, amode), (w, wmode))
                        };
                        return Err(BuildError::Conflict {
                            first: self.names[first].clone(),
                            first_mode: fm,
                            second: self.names[second].clone(),
                            second_mode: sm,
                            resource,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> GraphInner {
        let n = self.names.len();
        let mut initial_deps = vec![0u32; n];
        let mut successors = Vec::new();
        let mut all_accesses = Vec::new();
        let mut tasks = Vec::with_capacity(n);
        let mut slots = 0u32;
        let mut resources: Vec<(AccessDecl, u32)> = Vec::new();
        for (t, ((((name, body), accesses), thread), group)) in self
            .names
            .into_iter()
            .zip(self.bodies)
            .zip(self.accesses)
            .zip(self.threads)
            .zip(self.groups_of)
            .enumerate()
        {
            let mut succ = self.succ[t].clone();
            succ.sort_unstable();
            succ.dedup();
            for &s in &succ {
                initial_deps[s] += 1;
            }
            let succ_range = (
                successors.len() as u32,
                (successors.len() + succ.len()) as u32,
            );
            successors.extend(succ.iter().map(|&s| s as u32));
            for a in &accesses {
                if !resources.iter().any(|(r, _)| r.type_id == a.type_id) {
                    resources.push((*a, t as u32));
                }
            }
            let access_range = (
                all_accesses.len() as u32,
                (all_accesses.len() + accesses.len()) as u32,
            );
            all_accesses.extend(accesses);
            let slot = match body {
                Body::ParallelFor { .. } | Body::Dynamic { .. } => {
                    slots += 1;
                    slots - 1
                }
                _ => u32::MAX,
            };
            tasks.push(TaskDef {
                name: name.into(),
                body,
                thread,
                succ: succ_range,
                access: access_range,
                slot,
                group,
            });
        }
        let roots = (0..n as u32)
            .filter(|&t| initial_deps[t as usize] == 0)
            .collect();
        GraphInner {
            tasks: tasks.into(),
            successors: successors.into(),
            accesses: all_accesses.into(),
            initial_deps: initial_deps.into(),
            roots,
            resources: resources.into(),
            groups: self.groups.into(),
            slots: slots as usize,
        }
    }
}

/// Marks with `stamp` every task reachable from `from` along `edges` (not `from` itself
/// unless a cycle returns to it, which `build` has ruled out).
fn mark(from: usize, edges: &[Vec<usize>], marks: &mut [u32], stamp: u32, stack: &mut Vec<usize>) {
    stack.clear();
    stack.push(from);
    while let Some(v) = stack.pop() {
        for &s in &edges[v] {
            if marks[s] != stamp {
                marks[s] = stamp;
                stack.push(s);
            }
        }
    }
}
