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
//!    when either writes what the other touches (naming both and the resource;
//!    `conflict.rs`);
//! 4. stores the result as flat arrays (`flat.rs`, `graph.rs`).
//!
//! The errors are in `error.rs`.

use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use joule_jobs::ThreadToken;

use crate::access::AccessDecl;
use crate::error::BuildError;
use crate::flat::Flat;
use crate::graph::{Graph, GraphInner};
use crate::param::Declared;
use crate::task::{Body, ChildFn, TaskContext};
use crate::task_fn::{TaskFn, TaskFnWith};

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
/// Make one with [`Graph::builder`] (or `GraphBuilder::new()`, or `default()`).
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
pub struct GraphBuilder {
    id: u32,
    nodes: Vec<Node>,
    error: Option<BuildError>,
}

impl Default for GraphBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for GraphBuilder {
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
pub struct TaskMut<'b> {
    builder: &'b mut GraphBuilder,
    index: usize,
}

impl TaskMut<'_> {
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

impl GraphBuilder {
    /// An empty builder; the same as [`Graph::builder`].
    #[must_use]
    pub fn new() -> Self {
        Self {
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            nodes: Vec::new(),
            error: None,
        }
    }

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
            body: Arc::new(move |cx: &TaskContext<'_>| body.call(cx)),
            child,
        };
        let children = (TypeId::of::<C>(), std::any::type_name::<C>());
        self.push_typed(name, body, declared, Some(children))
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

    fn push(&mut self, name: String, kind: NodeKind) -> TaskMut<'_> {
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
    ) -> TaskMut<'_> {
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
    pub fn barrier(&mut self, name: impl Into<String>) -> TaskMut<'_> {
        self.push(name.into(), NodeKind::Task(Body::Join))
    }

    /// Embeds a built graph as one node: its tasks (named `"name/task"`) start after this
    /// node's predecessors and finish before its successors start. They run with the same
    /// [`Context`](crate::Context) as this graph's tasks and are access-checked against
    /// them.
    pub fn subgraph(&mut self, name: impl Into<String>, graph: &Graph) -> TaskMut<'_> {
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
    pub fn task_mut(&mut self, id: TaskId) -> TaskMut<'_> {
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
