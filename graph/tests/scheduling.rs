//! Scheduling behaviour: Jolt's job-system tests re-expressed as graphs (barriers, a chain
//! released in reverse), diamonds, a 1,000-wide fan-out/fan-in, parallel-fors, dynamic
//! tasks, nested subgraphs, pinned tasks and async runs, each at 0, 1, 3 and 8 workers and
//! run several times with the same built graph.

mod common;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use common::{Sequence, for_each_system};
use std::ops::Range;

use joule_graph::{Context, Graph, Read, Spawner, Write};

const RUNS: u32 = 5;

struct Slots(Vec<AtomicU32>);
struct RunNo(u32);
struct Checked(u32);

/// Jolt's barrier test: 128 tasks in 4 stages of 32 behind barriers; each increments its
/// own slot exactly once per run, and each stage sees the previous stage complete.
#[test]
fn barriers_128_tasks_each_increment_their_own_slot_once() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let begin = b.task("begin", |mut run: Write<RunNo>| run.0 += 1).id();
        let mut gate = b.barrier("barrier 0").after(begin).id();
        for stage in 0..4usize {
            let mut stage_tasks = Vec::new();
            for k in 0..32usize {
                let slot = stage * 32 + k;
                let id = b
                    .task(
                        format!("inc {slot}"),
                        move |slots: Read<Slots>, run: Read<RunNo>| {
                            let run = run.0;
                            // Every slot of the previous stage is done for this run.
                            for prev in (stage.saturating_sub(1) * 32)..(stage * 32) {
                                assert_eq!(slots.0[prev].load(Ordering::Relaxed), run);
                            }
                            slots.0[slot].fetch_add(1, Ordering::Relaxed);
                        },
                    )
                    .after(gate)
                    .id();
                stage_tasks.push(id);
            }
            gate = b
                .barrier(format!("barrier {}", stage + 1))
                .after(stage_tasks)
                .id();
        }
        b.task(
            "check",
            |slots: Read<Slots>, run: Read<RunNo>, mut checked: Write<Checked>| {
                assert!(slots.0.iter().all(|s| s.load(Ordering::Relaxed) == run.0));
                checked.0 += 1;
            },
        )
        .after(gate);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(Slots((0..128).map(|_| AtomicU32::new(0)).collect()))
            .with(RunNo(0))
            .with(Checked(0));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
        }
        let counts: Vec<u32> = ctx
            .get_mut::<Slots>()
            .unwrap()
            .0
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .collect();
        assert_eq!(counts, vec![RUNS; 128], "workers: {}", jobs.num_workers());
        assert_eq!(ctx.get_mut::<Checked>().unwrap().0, RUNS);
    });
}

struct Positions {
    next: AtomicUsize,
    of: Vec<AtomicUsize>,
}

/// Jolt's chain test: 128 tasks added last-first, their edges added last-first too, must
/// still run first-to-last.
#[test]
fn chain_of_128_added_in_reverse_runs_in_dependency_order() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let mut ids = vec![None; 128];
        for i in (0..128).rev() {
            let id = b
                .task(format!("link {i}"), move |p: Read<Positions>| {
                    let at = p.next.fetch_add(1, Ordering::SeqCst);
                    p.of[i].store(at, Ordering::SeqCst);
                })
                .id();
            ids[i] = Some(id);
        }
        let ids: Vec<_> = ids.into_iter().map(Option::unwrap).collect();
        for i in (1..128).rev() {
            b.edge(ids[i - 1], ids[i]);
        }
        let graph = b.build().unwrap();
        let mut ctx = Context::new().with(Positions {
            next: AtomicUsize::new(0),
            of: (0..128).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        });
        for run in 0..RUNS as usize {
            graph.run(jobs, &mut ctx);
            let p = ctx.get_mut::<Positions>().unwrap();
            let order: Vec<usize> = p.of.iter().map(|a| a.load(Ordering::SeqCst)).collect();
            let expected: Vec<usize> = (0..128).map(|i| run * 128 + i).collect();
            assert_eq!(order, expected, "workers: {}", jobs.num_workers());
        }
    });
}

struct A(u64);
struct B(u64);
struct C(u64);
struct D(u64);

/// a -> (b, c) -> d: b and c may run in parallel (both only read A); d sees both.
#[test]
fn diamond_joins_both_branches() {
    for_each_system(|jobs| {
        let mut g = Graph::builder();
        let a = g.task("a", |mut a: Write<A>| a.0 += 1).id();
        let b = g
            .task("b", |a: Read<A>, mut b: Write<B>| b.0 = a.0 * 2)
            .after(a)
            .id();
        let c = g
            .task("c", |a: Read<A>, mut c: Write<C>| c.0 = a.0 * 3)
            .after(a)
            .id();
        g.task("d", |b: Read<B>, c: Read<C>, mut d: Write<D>| {
            d.0 = b.0 + c.0
        })
        .after([b, c]);
        let graph = g.build().unwrap();
        let mut ctx = Context::new().with(A(0)).with(B(0)).with(C(0)).with(D(0));
        for run in 1..=u64::from(RUNS) {
            graph.run(jobs, &mut ctx);
            // a = run, b = 2 run, c = 3 run, d = 5 run.
            assert_eq!(ctx.get_mut::<D>().unwrap().0, 5 * run);
        }
    });
}

struct Hits(Vec<AtomicU32>, AtomicUsize);
struct Joined(Vec<usize>);

/// One source, 1,000 tasks, one sink: every middle task runs once per run, and the sink
/// runs after all of them.
#[test]
fn fan_out_fan_in_of_1000() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let source = b.task("source", || {}).id();
        let middle: Vec<_> = (0..1000)
            .map(|i| {
                b.task(format!("m{i}"), move |h: Read<Hits>| {
                    h.0[i].fetch_add(1, Ordering::Relaxed);
                    h.1.fetch_add(1, Ordering::Relaxed);
                })
                .after(source)
                .id()
            })
            .collect();
        b.task("sink", |h: Read<Hits>, mut joined: Write<Joined>| {
            joined.0.push(h.1.load(Ordering::Relaxed));
        })
        .after(middle);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(Hits(
                (0..1000).map(|_| AtomicU32::new(0)).collect(),
                AtomicUsize::new(0),
            ))
            .with(Joined(Vec::new()));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
        }
        // The sink saw 1000, 2000, ... completed middle tasks.
        let expected: Vec<usize> = (1..=RUNS as usize).map(|r| r * 1000).collect();
        assert_eq!(ctx.get_mut::<Joined>().unwrap().0, expected);
        assert!(
            ctx.get_mut::<Hits>()
                .unwrap()
                .0
                .iter()
                .all(|h| h.load(Ordering::Relaxed) == RUNS)
        );
    });
}

struct Items(Vec<AtomicU32>);
struct ChunkLog(Mutex<Vec<(usize, usize)>>);
struct AfterLoop(u32);

/// A parallel-for visits each index of a range computed at start exactly once, in chunks
/// that are multiples of the grain; its successor sees every chunk done. An empty range
/// completes at once.
#[test]
fn parallel_for_covers_its_range_once_in_grain_multiples() {
    const LEN: usize = 10_007; // prime, so the last chunk is short
    const GRAIN: usize = 64;
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let lp = b
            .parallel_for(
                "loop",
                |items: Read<Items>| 0..items.0.len(),
                GRAIN,
                |r: Range<usize>, items: Read<Items>, log: Read<ChunkLog>| {
                    log.0.lock().unwrap().push((r.start, r.end));
                    for i in r {
                        items.0[i].fetch_add(1, Ordering::Relaxed);
                    }
                },
            )
            .id();
        let empty = b
            .parallel_for("empty", || 5..5, 1, |_: Range<usize>| panic!("empty range"))
            .id();
        b.task(
            "after",
            |items: Read<Items>, mut after: Write<AfterLoop>| {
                let want = after.0 + 1;
                assert!(items.0.iter().all(|a| a.load(Ordering::Relaxed) == want));
                after.0 = want;
            },
        )
        .after([lp, empty]);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(Items((0..LEN).map(|_| AtomicU32::new(0)).collect()))
            .with(ChunkLog(Mutex::new(Vec::new())))
            .with(AfterLoop(0));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
            let mut chunks =
                std::mem::take(&mut *ctx.get_mut::<ChunkLog>().unwrap().0.lock().unwrap());
            chunks.sort_unstable();
            // Chunks tile 0..LEN without gaps or overlaps, each starting at a grain multiple.
            let mut at = 0;
            for &(s, e) in &chunks {
                assert_eq!(s, at);
                assert_eq!(s % GRAIN, 0);
                assert!(e > s);
                at = e;
            }
            assert_eq!(at, LEN);
        }
        assert_eq!(ctx.get_mut::<AfterLoop>().unwrap().0, RUNS);
    });
}

struct Done(AtomicUsize);
struct SeenDone(Vec<usize>);

/// A dynamic task spawns 4 children, each 4 grandchildren, each 4 great-grandchildren
/// (4 + 16 + 64 = 84); its successor starts only after all 84 are done.
#[test]
fn dynamic_task_successors_wait_for_every_descendant() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let spawner = b
            .dynamic(
                "spawn tree",
                |sp: Spawner<u32>| (0..4).for_each(|_| sp.spawn(3)),
                |depth: u32, done: Read<Done>, sp: Spawner<u32>| {
                    done.0.fetch_add(1, Ordering::Relaxed);
                    if depth > 1 {
                        (0..4).for_each(|_| sp.spawn(depth - 1));
                    }
                },
            )
            .id();
        b.task(
            "after tree",
            |done: Read<Done>, mut seen: Write<SeenDone>| {
                seen.0.push(done.0.load(Ordering::Relaxed));
            },
        )
        .after(spawner);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(Done(AtomicUsize::new(0)))
            .with(SeenDone(Vec::new()));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
        }
        let expected: Vec<usize> = (1..=RUNS as usize).map(|r| r * 84).collect();
        assert_eq!(ctx.get_mut::<SeenDone>().unwrap().0, expected);
    });
}

struct Log(Sequence);

/// A graph inside a graph inside a graph: names are prefixed with the subgraph path, and
/// edges into and out of a subgraph node order all of its tasks.
#[test]
fn nested_subgraphs_run_in_order_and_share_the_context() {
    let mut inner = Graph::builder();
    let a = inner.task("a", |log: Read<Log>| log.0.log("a")).id();
    inner.task("b", |log: Read<Log>| log.0.log("b")).after(a);
    let inner = inner.build().unwrap();

    let mut middle = Graph::builder();
    let x = middle.task("x", |log: Read<Log>| log.0.log("x")).id();
    let sub = middle.subgraph("inner", &inner).after(x).id();
    middle.task("y", |log: Read<Log>| log.0.log("y")).after(sub);
    let middle = middle.build().unwrap();

    let mut outer = Graph::builder();
    let start = outer
        .task("start", |log: Read<Log>| log.0.log("start"))
        .id();
    let mid = outer.subgraph("middle", &middle).after(start).id();
    outer
        .task("end", |log: Read<Log>| log.0.log("end"))
        .after(mid);
    let outer = outer.build().unwrap();

    let names: Vec<&str> = outer.task_names().collect();
    for want in ["middle/inner/a", "middle/inner/b", "middle/x", "middle/y"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for_each_system(|jobs| {
        let mut ctx = Context::new().with(Log(Sequence::default()));
        for _ in 0..RUNS {
            outer.run(jobs, &mut ctx);
            let log = ctx.get_mut::<Log>().unwrap().0.take_log();
            assert_eq!(log, ["start", "x", "a", "b", "y", "end"]);
        }
        // The embedded graphs still run on their own.
        inner.run(jobs, &mut ctx);
        assert_eq!(ctx.get_mut::<Log>().unwrap().0.take_log(), ["a", "b"]);
    });
}

struct MainThread(Mutex<Vec<std::thread::ThreadId>>);
struct AfterMain(Vec<usize>);

/// A pinned task runs on the registered thread (here the one calling `run`), and its
/// successors wait for it.
#[test]
fn pinned_task_runs_on_the_main_thread() {
    for_each_system(|jobs| {
        let main = jobs.register_current_thread();
        let mut b = Graph::builder();
        let work = b
            .parallel_for("work", || 0..1000, 10, |_: Range<usize>| {})
            .id();
        let pinned = b
            .task("main only", |seen: Read<MainThread>| {
                seen.0.lock().unwrap().push(std::thread::current().id());
            })
            .on_thread(main)
            .after(work)
            .id();
        b.task(
            "after main",
            |seen: Read<MainThread>, mut after: Write<AfterMain>| {
                after.0.push(seen.0.lock().unwrap().len());
            },
        )
        .after(pinned);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(MainThread(Mutex::new(Vec::new())))
            .with(AfterMain(Vec::new()));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
        }
        let here = std::thread::current().id();
        let seen = ctx
            .get_mut::<MainThread>()
            .unwrap()
            .0
            .lock()
            .unwrap()
            .clone();
        assert_eq!(seen, vec![here; RUNS as usize]);
        let after: Vec<usize> = (1..=RUNS as usize).collect();
        assert_eq!(ctx.get_mut::<AfterMain>().unwrap().0, after);
    });
}

/// `run_async` returns at once; the handle gives the context back with every task's
/// effect in it.
#[test]
fn run_async_hands_the_context_back_through_the_handle() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let a = b.task("a", |mut a: Write<A>| a.0 += 1).id();
        b.parallel_for(
            "double",
            || 0..100,
            8,
            |r: Range<usize>, hits: Read<Hits>| {
                hits.1.fetch_add(r.len(), Ordering::Relaxed);
            },
        )
        .after(a);
        let graph = b.build().unwrap();
        let mut ctx = Context::new()
            .with(A(0))
            .with(Hits(Vec::new(), AtomicUsize::new(0)));
        for run in 1..=3u64 {
            let handle = graph.run_async(jobs, ctx);
            ctx = if run == 2 {
                // Polled to completion, as a frame loop would.
                while !handle.is_done() {
                    jobs.run_pending();
                    std::thread::yield_now();
                }
                let (ctx, panic) = handle.join();
                assert!(panic.is_none());
                ctx
            } else {
                handle.wait()
            };
            assert_eq!(ctx.get_mut::<A>().unwrap().0, run);
            let hits = ctx.get_mut::<Hits>().unwrap().1.load(Ordering::Relaxed);
            assert_eq!(hits, 100 * run as usize);
        }
        // And the same graph runs blocking afterwards.
        graph.run(jobs, &mut ctx);
        assert_eq!(ctx.get_mut::<A>().unwrap().0, 4);
    });
}

/// A second `run_async` of a graph whose first run is not joined yet gets a state of its
/// own: both runs finish with their own contexts, joined in either order, and the graph
/// runs on (blocking and async) afterwards.
#[test]
fn overlapping_async_runs_of_one_graph_keep_their_own_contexts() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        let a = b.task("a", |mut a: Write<A>| a.0 += 1).id();
        b.parallel_for(
            "sum",
            || 0..64,
            4,
            |r: Range<usize>, hits: Read<Hits>| {
                hits.1.fetch_add(r.len(), Ordering::Relaxed);
            },
        )
        .after(a);
        let graph = b.build().unwrap();
        let context = |a: u64| {
            Context::new()
                .with(A(a))
                .with(Hits(Vec::new(), AtomicUsize::new(0)))
        };
        for first_joined_first in [true, false] {
            let first = graph.run_async(jobs, context(10));
            let second = graph.run_async(jobs, context(20));
            let (mut x, mut y) = if first_joined_first {
                let x = first.wait();
                (x, second.wait())
            } else {
                let y = second.wait();
                (first.wait(), y)
            };
            assert_eq!(x.get_mut::<A>().unwrap().0, 11);
            assert_eq!(y.get_mut::<A>().unwrap().0, 21);
            for ctx in [&mut x, &mut y] {
                assert_eq!(ctx.get_mut::<Hits>().unwrap().1.load(Ordering::Relaxed), 64);
            }
            graph.run(jobs, &mut x);
            assert_eq!(x.get_mut::<A>().unwrap().0, 12);
            let mut y = graph.run_async(jobs, y).wait();
            assert_eq!(y.get_mut::<A>().unwrap().0, 22);
        }
    });
}

/// Many independent roots and an empty graph.
#[test]
fn many_roots_and_empty_graphs() {
    for_each_system(|jobs| {
        let mut b = Graph::builder();
        for i in 0..64 {
            b.task(format!("root {i}"), |done: Read<Done>| {
                done.0.fetch_add(1, Ordering::Relaxed);
            });
        }
        let graph = b.build().unwrap();
        let mut ctx = Context::new().with(Done(AtomicUsize::new(0)));
        graph.run(jobs, &mut ctx);
        graph.run(jobs, &mut ctx);
        assert_eq!(
            ctx.get_mut::<Done>().unwrap().0.load(Ordering::Relaxed),
            128
        );

        let empty = Graph::builder().build().unwrap();
        assert!(empty.is_empty());
        empty.run(jobs, &mut ctx);
        let back = empty.run_async(jobs, Context::new().with(A(7))).wait();
        assert_eq!(back.get::<A>().unwrap().0, 7);
    });
}

struct Stamps {
    next: AtomicUsize,
    first: Vec<AtomicUsize>,
    second: Vec<AtomicUsize>,
}

/// A task with 200 successors (released in ranges by a few jobs), each followed by a task
/// of its own, one of the 200 pinned to the calling thread, all joined by a sink: every
/// task runs once per run, each second-level task after its first-level one.
#[test]
fn wide_fan_out_with_continuations_and_a_pinned_task() {
    const N: usize = 200;
    for_each_system(|jobs| {
        let main = jobs.register_current_thread();
        let mut b = Graph::builder();
        let source = b.task("source", || {}).id();
        let mut seconds = Vec::new();
        for i in 0..N {
            let mut first = b
                .task(format!("first {i}"), move |s: Read<Stamps>| {
                    let at = s.next.fetch_add(1, Ordering::SeqCst);
                    s.first[i].store(at, Ordering::SeqCst);
                })
                .after(source);
            if i == 17 {
                first = first.on_thread(main);
            }
            let first = first.id();
            seconds.push(
                b.task(format!("second {i}"), move |s: Read<Stamps>| {
                    let at = s.next.fetch_add(1, Ordering::SeqCst);
                    s.second[i].store(at, Ordering::SeqCst);
                })
                .after(first)
                .id(),
            );
        }
        b.task("sink", |s: Read<Stamps>| {
            assert_eq!(s.next.load(Ordering::SeqCst) % (2 * N), 0);
        })
        .after(seconds);
        let graph = b.build().unwrap();
        let mut ctx = Context::new().with(Stamps {
            next: AtomicUsize::new(0),
            first: (0..N).map(|_| AtomicUsize::new(usize::MAX)).collect(),
            second: (0..N).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        });
        for run in 0..RUNS as usize {
            graph.run(jobs, &mut ctx);
            let s = ctx.get_mut::<Stamps>().unwrap();
            assert_eq!(s.next.load(Ordering::SeqCst), (run + 1) * 2 * N);
            for i in 0..N {
                let (f, g) = (
                    s.first[i].load(Ordering::SeqCst),
                    s.second[i].load(Ordering::SeqCst),
                );
                assert!(f >= run * 2 * N && f < g, "task pair {i}: {f} then {g}");
            }
        }
    });
}

/// A graph whose only root is pinned to the calling thread, followed by a parallel-for:
/// the caller runs the root from its inbox while it waits, then the loop runs everywhere.
#[test]
fn a_pinned_root_runs_from_the_callers_inbox() {
    for_each_system(|jobs| {
        let main = jobs.register_current_thread();
        let mut b = Graph::builder();
        let root = b
            .task("main first", |h: Read<Hits>| {
                assert_eq!(h.1.load(Ordering::Relaxed) % 100, 0);
                h.0[0].fetch_add(1, Ordering::Relaxed);
            })
            .on_thread(main)
            .id();
        b.parallel_for(
            "then all",
            || 0..100,
            4,
            |r: Range<usize>, hits: Read<Hits>| {
                hits.1.fetch_add(r.len(), Ordering::Relaxed);
            },
        )
        .after(root);
        let graph = b.build().unwrap();
        let mut ctx = Context::new().with(Hits(vec![AtomicU32::new(0)], AtomicUsize::new(0)));
        for _ in 0..RUNS {
            graph.run(jobs, &mut ctx);
        }
        let h = ctx.get_mut::<Hits>().unwrap();
        assert_eq!(h.0[0].load(Ordering::Relaxed), RUNS);
        assert_eq!(h.1.load(Ordering::Relaxed), 100 * RUNS as usize);
    });
}
