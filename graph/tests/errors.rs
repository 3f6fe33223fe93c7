//! Every error case, with its message checked: cycles, conflicting access derived from
//! parameter types (also across a subgraph boundary), a resource taken twice, misused
//! spawners, duplicate names, misused modifiers, a missing resource, and panics in each
//! kind of task reaching the caller of `run`.
//!
//! There is no test of undeclared access at run time because there can be none: a task
//! reaches resources only through its parameters, and the types of those parameters are
//! its declaration, so no task can touch a resource it did not declare (debug builds still
//! check each fetch against the declaration, which only a bug in joule-graph could fail).
//! What is tested instead is that the declared set is exactly the parameter types, for
//! every kind of task and through a subgraph (`declared_access_is_exactly_the_parameter_types`).

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::ops::Range;

use common::{for_each_system, panic_message};
use joule_graph::{AccessMode, BuildError, Context, Graph, GraphBuilder, Read, Spawner, Write};
use joule_jobs::JobSystem;

struct Bodies(u32);
struct Contacts;

fn build_err(b: GraphBuilder) -> BuildError {
    match b.build() {
        Ok(_) => panic!("the graph should have been rejected"),
        Err(e) => e,
    }
}

#[test]
fn a_cycle_is_rejected_naming_its_tasks_in_edge_order() {
    let mut b = Graph::builder();
    let start = b.task("start", || {}).id();
    let a = b.task("a", || {}).after(start).id();
    let bb = b.task("b", || {}).after(a).id();
    let c = b.task("c", || {}).after(bb).id();
    b.task("outside", || {}).after(c);
    b.edge(c, a);
    let e = build_err(b);
    assert_eq!(
        e,
        BuildError::Cycle {
            tasks: vec!["a".into(), "b".into(), "c".into()]
        }
    );
    assert_eq!(
        e.to_string(),
        "the edges form a cycle: 'a' -> 'b' -> 'c' -> 'a'; remove one of these edges"
    );

    let mut b = Graph::builder();
    let s = b.task("self", || {}).id();
    b.edge(s, s);
    assert_eq!(
        build_err(b),
        BuildError::Cycle {
            tasks: vec!["self".into()]
        }
    );
}

#[test]
fn a_cycle_through_a_subgraph_names_the_subgraph_node() {
    let mut inner = Graph::builder();
    inner.task("x", || {});
    let inner = inner.build().unwrap();
    let mut b = Graph::builder();
    let sub = b.subgraph("physics", &inner).id();
    let after = b.task("render", || {}).after(sub).id();
    b.edge(after, sub);
    assert_eq!(
        build_err(b),
        BuildError::Cycle {
            tasks: vec!["physics".into(), "render".into()]
        }
    );
}

#[test]
fn unordered_writers_conflict_naming_both_tasks_and_the_resource() {
    let mut b = Graph::builder();
    b.task("integrate", |_: Write<Bodies>| {});
    b.task("sleep", |_: Write<Bodies>| {});
    let e = build_err(b);
    assert_eq!(
        e,
        BuildError::Conflict {
            first: "integrate".into(),
            first_mode: AccessMode::Write,
            second: "sleep".into(),
            second_mode: AccessMode::Write,
            resource: std::any::type_name::<Bodies>(),
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains("'integrate'") && msg.contains("'sleep'"),
        "{msg}"
    );
    assert!(msg.contains("errors::Bodies"), "{msg}");
}

#[test]
fn a_reader_beside_a_writer_conflicts_but_readers_together_do_not() {
    let mut b = Graph::builder();
    b.task("query", |_: Read<Bodies>| {});
    b.task("raycast", |_: Read<Bodies>, _: &JobSystem| {});
    assert!(b.build().is_ok());

    let mut b = Graph::builder();
    b.task("query", |_: Read<Bodies>| {});
    b.task("solve", |_: Read<Contacts>, _: Write<Bodies>| {});
    let e = build_err(b);
    assert_eq!(
        e.to_string(),
        format!(
            "tasks 'query' and 'solve' may run at the same time, but 'query' reads `{}` \
             and 'solve' writes it; order them with an edge",
            std::any::type_name::<Bodies>()
        )
    );
}

#[test]
fn a_path_of_edges_orders_accesses() {
    // write -> (unrelated) -> read: ordered through the middle task.
    let mut b = Graph::builder();
    let w = b.task("write", |_: Write<Bodies>| {}).id();
    let m = b.task("middle", |_: Write<Contacts>| {}).after(w).id();
    b.task("read", |_: Read<Bodies>, _: Read<Contacts>| {})
        .after(m);
    assert!(b.build().is_ok());
    // Two branches after the same task are not ordered with each other.
    let mut b = Graph::builder();
    let w = b.task("root", || {}).id();
    b.task("left", |_: Write<Contacts>| {}).after(w);
    b.task("right", |_: Read<Contacts>| {}).after(w);
    assert!(matches!(build_err(b), BuildError::Conflict { .. }));
}

#[test]
fn a_parent_task_conflicts_with_an_unordered_subgraph_task() {
    let mut p = Graph::builder();
    let broad = p.task("broad_phase", |_: Read<Bodies>| {}).id();
    p.task("solve", |_: Write<Bodies>| {}).after(broad);
    let physics = p.build().unwrap();

    let mut game = Graph::builder();
    game.subgraph("physics", &physics);
    game.task("ai", |_: Read<Bodies>| {});
    let e = build_err(game);
    assert_eq!(
        e,
        BuildError::Conflict {
            first: "physics/solve".into(),
            first_mode: AccessMode::Write,
            second: "ai".into(),
            second_mode: AccessMode::Read,
            resource: std::any::type_name::<Bodies>(),
        }
    );

    // Ordered after the subgraph, the same task is fine.
    let mut game = Graph::builder();
    let step = game.subgraph("physics", &physics).id();
    game.task("ai", |_: Read<Bodies>| {}).after(step);
    assert!(game.build().is_ok());
}

#[test]
fn a_closure_that_takes_a_resource_twice_is_rejected() {
    let mut b = Graph::builder();
    b.task("greedy", |_: Read<Bodies>, _: Write<Bodies>| {});
    let e = build_err(b);
    assert_eq!(
        e,
        BuildError::ResourceTwice {
            task: "greedy".into(),
            resource: std::any::type_name::<Bodies>(),
        }
    );
    assert_eq!(
        e.to_string(),
        format!(
            "a closure of task 'greedy' takes `{}` twice; take it once (a Write also reads)",
            std::any::type_name::<Bodies>()
        )
    );
    // Across the two closures of one task it is fine: they do not run at once.
    let mut b = Graph::builder();
    b.parallel_for(
        "loop",
        |bodies: Read<Bodies>| 0..bodies.0 as usize,
        1,
        |_: Range<usize>, _: Write<Bodies>| {},
    );
    assert!(b.build().is_ok());
}

#[test]
fn a_spawner_outside_a_dynamic_task_or_of_the_wrong_type_is_rejected() {
    let mut b = Graph::builder();
    b.task("plain", |_: Spawner<u32>| {});
    assert_eq!(
        build_err(b).to_string(),
        "task 'plain' takes a `Spawner<u32>`, but only dynamic tasks spawn"
    );
    let mut b = Graph::builder();
    b.dynamic("ccd", |_: Spawner<u64>| {}, |_: u32| {});
    assert_eq!(
        build_err(b),
        BuildError::WrongSpawner {
            task: "ccd".into(),
            spawner: "u64",
            children: Some("u32"),
        }
    );
    let mut b = Graph::builder();
    b.dynamic("ccd", || {}, |_: u32, _: Spawner<i32>| {});
    assert_eq!(
        build_err(b).to_string(),
        "task 'ccd' takes a `Spawner<i32>`, but its child closure takes `u32`"
    );
}

#[test]
fn duplicate_names_and_misused_modifiers_are_rejected() {
    let mut b = Graph::builder();
    b.task("twice", || {});
    b.task("twice", || {});
    assert_eq!(
        build_err(b).to_string(),
        "two tasks are named 'twice'; task names must be unique"
    );

    let mut inner = Graph::builder();
    inner.task("x", || {});
    let inner = inner.build().unwrap();
    let mut b = Graph::builder();
    b.subgraph("sub", &inner);
    b.task("sub/x", || {});
    assert_eq!(
        build_err(b),
        BuildError::DuplicateName {
            name: "sub/x".into()
        }
    );

    let jobs = JobSystem::new(0).unwrap();
    let main = jobs.register_current_thread();
    let mut b = Graph::builder();
    b.parallel_for("loop", || 0..1, 1, |_: Range<usize>| {})
        .on_thread(main);
    assert_eq!(
        build_err(b).to_string(),
        "'loop' is pinned to a thread, but only plain tasks can be pinned"
    );

    let mut other = Graph::builder();
    let foreign = other.task("elsewhere", || {}).id();
    let mut b = Graph::builder();
    b.task("here", || {}).after(foreign);
    assert_eq!(
        build_err(b).to_string(),
        "an edge of 'here' names a task of another graph builder"
    );
}

fn run_expecting_panic(jobs: &JobSystem, graph: &joule_graph::Graph, ctx: &mut Context) -> String {
    let r = catch_unwind(AssertUnwindSafe(|| graph.run(jobs, ctx)));
    match r {
        Ok(()) => panic!("the run should have panicked"),
        Err(p) => panic_message(&*p),
    }
}

/// A resource no closure of the task under test takes.
struct Untouched;

/// Adds the task under test to a builder.
type AddTask = fn(&mut GraphBuilder);

/// How the task `name` added by `add` declares `R`, seen through `build`'s access check: a
/// probe task that writes `R` and is not ordered with it conflicts with the task exactly
/// when it declares `R`, and the conflict says in which mode.
fn declared<R: Send + Sync + 'static>(name: &str, add: AddTask) -> Option<AccessMode> {
    let mut b = GraphBuilder::new();
    add(&mut b);
    b.task("probe", |_: Write<R>| {});
    match b.build() {
        Ok(_) => None,
        Err(BuildError::Conflict {
            first,
            first_mode,
            second,
            resource,
            ..
        }) => {
            assert_eq!((first.as_str(), second.as_str()), (name, "probe"));
            assert_eq!(resource, std::any::type_name::<R>());
            Some(first_mode)
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Every kind of task declares a read of each resource it takes as a `Read`, a write of
/// each it takes as a `Write` in any of its closures (a write covers a read), and nothing
/// else: not `&JobSystem`, not a `Spawner`, not a chunk range or child value, and no
/// resource it does not take. A subgraph's tasks keep their declarations.
#[test]
fn declared_access_is_exactly_the_parameter_types() {
    fn task(b: &mut GraphBuilder) {
        b.task("t", |_: Read<Bodies>, _: Write<Contacts>, _: &JobSystem| {});
    }
    fn parallel_for(b: &mut GraphBuilder) {
        b.parallel_for(
            "t",
            |_: Read<Bodies>, _: Write<Contacts>| 0..4,
            1,
            |_: Range<usize>, _: Read<Bodies>, _: Read<Contacts>, _: &JobSystem| {},
        );
    }
    fn dynamic(b: &mut GraphBuilder) {
        b.dynamic(
            "t",
            |_: Read<Bodies>, _: Spawner<u32>| {},
            |_: u32, _: Write<Contacts>, _: Spawner<u32>, _: &JobSystem| {},
        );
    }
    fn subgraph(b: &mut GraphBuilder) {
        let mut inner = GraphBuilder::new();
        dynamic(&mut inner);
        b.subgraph("sub", &inner.build().unwrap());
    }
    let kinds: [(&str, AddTask); 4] = [
        ("t", task),
        ("t", parallel_for),
        ("t", dynamic),
        ("sub/t", subgraph),
    ];
    for (name, add) in kinds {
        assert_eq!(
            declared::<Bodies>(name, add),
            Some(AccessMode::Read),
            "{name}"
        );
        assert_eq!(
            declared::<Contacts>(name, add),
            Some(AccessMode::Write),
            "{name}"
        );
        assert_eq!(declared::<Untouched>(name, add), None, "{name}");
    }
}

#[test]
fn a_missing_resource_is_reported_before_anything_runs() {
    let jobs = JobSystem::new(1).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let mut b = Graph::builder();
    b.task("first", move || {
        r.fetch_add(1, Ordering::Relaxed);
    });
    b.task("needs contacts", |_: Read<Contacts>| {});
    let graph = b.build().unwrap();
    let mut ctx = Context::new().with(Bodies(0));
    let msg = run_expecting_panic(&jobs, &graph, &mut ctx);
    assert_eq!(
        msg,
        format!(
            "joule-graph: task 'needs contacts' declares `{}`, which the context does not \
             hold; insert it into the context before running",
            std::any::type_name::<Contacts>()
        )
    );
    assert_eq!(ran.load(Ordering::Relaxed), 0);
}

struct Fail(bool);
struct Reached(usize);

/// A panic in a plain task, a chunk or a dynamic child reaches the caller of `run`; the
/// failed task's successors do not run; the context comes back; the graph runs again.
#[test]
fn panics_reach_the_caller_and_the_graph_stays_usable() {
    type Build = fn(&mut GraphBuilder) -> joule_graph::TaskId;
    let kinds: [(&str, Build); 3] = [
        ("task", |b| {
            b.task("fragile", |fail: Read<Fail>| {
                assert!(!fail.0, "boom in task")
            })
            .id()
        }),
        ("chunk", |b| {
            b.parallel_for(
                "fragile",
                || 0..1000,
                10,
                |r: Range<usize>, fail: Read<Fail>| {
                    assert!(!(fail.0 && r.contains(&500)), "boom in chunk");
                },
            )
            .id()
        }),
        ("child", |b| {
            b.dynamic(
                "fragile",
                |sp: Spawner<u32>| (0..8).for_each(|i| sp.spawn(i)),
                |i: u32, fail: Read<Fail>| assert!(!(fail.0 && i == 5), "boom in child"),
            )
            .id()
        }),
    ];
    for (kind, make) in kinds {
        for_each_system(|jobs| {
            let mut b = Graph::builder();
            let fragile = make(&mut b);
            b.task("after", |mut reached: Write<Reached>| reached.0 += 1)
                .after(fragile);
            let graph = b.build().unwrap();
            let mut ctx = Context::new().with(Fail(true)).with(Reached(0));
            let msg = run_expecting_panic(jobs, &graph, &mut ctx);
            assert_eq!(msg, format!("boom in {kind}"));
            assert_eq!(
                ctx.get_mut::<Reached>().unwrap().0,
                0,
                "{kind}: successor ran"
            );
            ctx.get_mut::<Fail>().unwrap().0 = false;
            graph.run(jobs, &mut ctx);
            assert_eq!(ctx.get_mut::<Reached>().unwrap().0, 1, "{kind}");
        });
    }
}

#[test]
fn a_panic_in_an_async_run_reaches_the_waiter_and_the_context_comes_back() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        b.task("fragile", |fail: Read<Fail>| {
            if fail.0 {
                panic!("async boom");
            }
        });
        let graph = b.build().unwrap();
        // `wait` re-raises the panic.
        let handle = graph.run_async(jobs, Context::new().with(Fail(true)));
        let r = catch_unwind(AssertUnwindSafe(|| handle.wait()));
        assert_eq!(panic_message(&*r.unwrap_err()), "async boom");
        // `join` returns it beside the context.
        let (mut ctx, panic) = graph
            .run_async(jobs, Context::new().with(Fail(true)))
            .join();
        assert_eq!(
            panic_message(&*panic.expect("the task panicked")),
            "async boom"
        );
        assert!(ctx.get_mut::<Fail>().unwrap().0);
        // Dropping an unjoined handle waits and re-raises it.
        let r = catch_unwind(AssertUnwindSafe(|| {
            drop(graph.run_async(jobs, Context::new().with(Fail(true))));
        }));
        assert_eq!(panic_message(&*r.unwrap_err()), "async boom");
        // The state the panicking runs left in the cache runs cleanly.
        ctx.get_mut::<Fail>().unwrap().0 = false;
        let (_, panic) = graph.run_async(jobs, ctx).join();
        assert!(panic.is_none());
    });
}
