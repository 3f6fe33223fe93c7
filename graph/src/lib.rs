//! joule-graph: explicit task graphs over joule-jobs, with declared data access,
//! composition and inspectable traces.
//!
//! - **Build** a graph with [`Graph::builder`]: named tasks of four kinds (a plain
//!   [task](GraphBuilder::task), a [parallel-for](GraphBuilder::parallel_for) whose range is
//!   computed when it starts, a [dynamic](GraphBuilder::dynamic) task that spawns children
//!   its successors wait for, and a [subgraph](GraphBuilder::subgraph): a built graph
//!   embedded as one node), ordered by [`after`](TaskMut::after). Dependency counts come
//!   from the edges.
//! - **Declare access once**, by the types of a task's parameters (as Bevy systems do): a
//!   task is a closure such as `|bodies: Read<Bodies>, mut bp: Write<BroadPhase>| ...`,
//!   and [`Read<T>`] (derefs to `&T`), [`Write<T>`] (`&mut T`), `&JobSystem` and
//!   [`Spawner<C>`] are all it can touch (see [`Param`]). [`build`](GraphBuilder::build)
//!   rejects cycles and any two tasks that may run at once while one writes what the other
//!   touches, naming both and the resource. A task cannot reach a resource it did not
//!   declare: its parameters are both. Every parameter needs its type written out,
//!   including a chunk's `Range<usize>` and a child's value (Rust infers a closure's
//!   parameter types only from a plain `Fn` bound).
//! - **Run** with [`Graph::run`] (blocks, the calling thread works, fine with
//!   `threads(0)`, allocates nothing after the first run) or [`Graph::run_async`]
//!   (returns at once; the [`RunHandle`] gives the context back when joined, and a warm
//!   async run allocates nothing either). A task's panic reaches the caller.
//! - **Trace** with [`Graph::set_tracing`]: every task's start, end and thread and every
//!   chunk. A [`Trace`] exports Chrome JSON (Perfetto), DOT, an SVG timeline and a
//!   [`Summary`] (work, span, critical path, parallelism, busy time, slowest tasks); the
//!   `joule-trace summary|svg|dot FILE` tool reads a saved trace.
//!
//! ```
//! use std::ops::Range;
//!
//! use joule_graph::{Context, Graph, Read, Spawner, Write};
//! use joule_jobs::JobSystem;
//!
//! struct Positions(Vec<f32>);
//! struct Speeds(Vec<f32>);
//! struct Total(f32);
//! struct Hits(Vec<usize>);
//!
//! // A "physics" graph, built once by its crate...
//! let mut p = Graph::builder();
//! p.task("integrate", |v: Read<Speeds>, mut x: Write<Positions>| {
//!     for (x, v) in x.0.iter_mut().zip(&v.0) {
//!         *x += v * 0.5;
//!     }
//! });
//! let physics = p.build()?;
//!
//! // ...embedded in a game's frame graph beside the game's own tasks.
//! let mut b = Graph::builder();
//! let speeds = b
//!     .parallel_for(
//!         "speeds",
//!         |v: Read<Speeds>| 0..v.0.len(),
//!         64,
//!         |range: Range<usize>, v: Read<Speeds>| assert!(v.0[range].iter().all(|&s| s == 1.0)),
//!     )
//!     .id();
//! let step = b.subgraph("physics", &physics).after(speeds).id();
//! let sum = b
//!     .task("sum", |x: Read<Positions>, mut total: Write<Total>| {
//!         total.0 = x.0.iter().sum();
//!     })
//!     .after(step)
//!     .id();
//! // A dynamic task: one child per far-away body, spawned while the graph runs.
//! b.dynamic(
//!     "far",
//!     |x: Read<Positions>, children: Spawner<usize>| {
//!         (0..x.0.len()).filter(|&i| x.0[i] >= 1.5).for_each(|i| children.spawn(i));
//!     },
//!     |i: usize, mut hits: Write<Hits>| hits.0.push(i),
//! )
//! .after(step);
//! let frame = b.build()?;
//!
//! let jobs = JobSystem::new(2).unwrap();
//! let mut ctx = Context::new()
//!     .with(Positions(vec![0.0; 100]))
//!     .with(Speeds(vec![1.0; 100]))
//!     .with(Total(0.0))
//!     .with(Hits(Vec::new()));
//! frame.set_tracing(true);
//! for _ in 0..4 {
//!     frame.run(&jobs, &mut ctx);
//! }
//! assert_eq!(ctx.get_mut::<Total>().unwrap().0, 200.0);
//! assert_eq!(ctx.get_mut::<Hits>().unwrap().0.len(), 200); // runs 3 and 4, 100 each
//! let trace = frame.take_trace().unwrap();
//! println!("{}", trace.summary());
//! let _perfetto = trace.to_chrome_json();
//! # let _ = sum;
//! # Ok::<(), joule_graph::BuildError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[doc(hidden)]
pub mod counts;
mod sync;

#[cfg(not(loom))]
mod access;
#[cfg(not(loom))]
mod builder;
#[cfg(not(loom))]
mod conflict;
#[cfg(not(loom))]
mod error;
#[cfg(not(loom))]
mod flat;
#[cfg(not(loom))]
mod graph;
#[cfg(not(loom))]
mod param;
#[cfg(not(loom))]
mod run;
#[cfg(not(loom))]
mod task;
#[cfg(not(loom))]
mod task_fn;
#[cfg(not(loom))]
pub mod trace;

#[cfg(not(loom))]
pub use access::{AccessMode, Context, Read, Write};
#[cfg(not(loom))]
pub use builder::{GraphBuilder, TaskId, TaskMut};
#[cfg(not(loom))]
pub use error::BuildError;
#[cfg(not(loom))]
pub use graph::Graph;
#[cfg(not(loom))]
pub use param::{Param, Spawner};
#[cfg(not(loom))]
pub use run::RunHandle;
#[cfg(not(loom))]
pub use task::TaskKind;
#[cfg(not(loom))]
pub use task_fn::{TaskFn, TaskFnWith};
#[cfg(not(loom))]
pub use trace::{Summary, Trace};
