//! joule-graph: explicit task graphs over joule-jobs, with declared data access,
//! composition and inspectable traces.
//!
//! - **Build** a graph with [`GraphBuilder`]: named tasks of four kinds (a plain task, a
//!   [parallel-for](GraphBuilder::parallel_for) whose range is computed when it starts, a
//!   [dynamic](GraphBuilder::dynamic) task that spawns children its successors wait for,
//!   and a [subgraph](GraphBuilder::subgraph): a built graph embedded as one node), ordered
//!   by [`after`](TaskMut::after). Dependency counts come from the edges.
//! - **Declare access**: each task names the resources it [`reads`](TaskMut::reads) and
//!   [`writes`](TaskMut::writes). [`build`](GraphBuilder::build) rejects cycles and any
//!   two tasks that may run at once while one writes what the other touches; at run time
//!   a task reaches only what it declared ([`TaskContext::read`] panics otherwise).
//! - **Run** with [`Graph::run`] (blocks, the calling thread works, fine with
//!   `threads(0)`, allocates nothing after the first run) or [`Graph::run_async`]
//!   (returns at once; a completion job gets the context back). A task's panic reaches the
//!   caller.
//! - **Trace** with [`Graph::set_tracing`]: every task's start, end and thread and every
//!   chunk. A [`Trace`] exports Chrome JSON (Perfetto), DOT, an SVG timeline and a
//!   [`Summary`] (work, span, critical path, parallelism, busy time, slowest tasks); the
//!   `joule-trace summary|svg|dot FILE` tool reads a saved trace.
//!
//! ```
//! use joule_graph::{Context, GraphBuilder};
//! use joule_jobs::JobSystem;
//!
//! struct Positions(Vec<f32>);
//! struct Speeds(Vec<f32>);
//! struct Total(f32);
//!
//! // A "physics" graph, built once by its crate...
//! let mut p = GraphBuilder::new();
//! p.task("integrate", |cx| {
//!     let v = cx.read::<Speeds>();
//!     for (x, v) in cx.write::<Positions>().0.iter_mut().zip(&v.0) {
//!         *x += v * 0.5;
//!     }
//! })
//! .reads::<Speeds>()
//! .writes::<Positions>();
//! let physics = p.build()?;
//!
//! // ...embedded in a game's frame graph beside the game's own tasks.
//! let mut b = GraphBuilder::new();
//! let speeds = b
//!     .parallel_for("speeds", |cx| 0..cx.read::<Speeds>().0.len(), 64, |_cx, _range| {})
//!     .reads::<Speeds>()
//!     .id();
//! let step = b.subgraph("physics", &physics).after(speeds).id();
//! b.task("sum", |cx| cx.write::<Total>().0 = cx.read::<Positions>().0.iter().sum())
//!     .reads::<Positions>()
//!     .writes::<Total>()
//!     .after(step);
//! let frame = b.build()?;
//!
//! let jobs = JobSystem::new(2).unwrap();
//! let mut ctx = Context::new()
//!     .with(Positions(vec![0.0; 100]))
//!     .with(Speeds(vec![1.0; 100]))
//!     .with(Total(0.0));
//! frame.set_tracing(true);
//! for _ in 0..4 {
//!     frame.run(&jobs, &mut ctx);
//! }
//! assert_eq!(ctx.get_mut::<Total>().unwrap().0, 200.0);
//! let trace = frame.take_trace().unwrap();
//! println!("{}", trace.summary());
//! let _perfetto = trace.to_chrome_json();
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
mod graph;
#[cfg(not(loom))]
mod run;
#[cfg(not(loom))]
mod task;
#[cfg(not(loom))]
pub mod trace;

#[cfg(not(loom))]
pub use access::{AccessMode, Context, Read, Write};
#[cfg(not(loom))]
pub use builder::{BuildError, GraphBuilder, TaskId, TaskMut};
#[cfg(not(loom))]
pub use graph::Graph;
#[cfg(not(loom))]
pub use run::RunHandle;
#[cfg(not(loom))]
pub use task::{Spawner, TaskContext, TaskKind};
#[cfg(not(loom))]
pub use trace::{Summary, Trace};
