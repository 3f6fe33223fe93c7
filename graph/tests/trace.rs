//! Traces: what a traced run records, the Chrome JSON (parsed back with a JSON parser),
//! the analysis (checked exactly on a hand-made trace), SVG and DOT output, and the
//! `joule-trace` command-line tool on a saved file.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::for_each_system;
use joule_graph::trace::{GraphInfo, Span, SpanKind, TaskInfo, TaskRun};
use std::ops::Range;

use joule_graph::{Context, Graph, Read, Spawner, TaskKind, Trace};
use serde_json::Value;

fn spin(us: u64) {
    let end = Instant::now() + Duration::from_micros(us);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

struct Agents(Vec<u32>);

/// input -> ai (parallel-for) -> (anim, audio) -> physics subgraph -> render (dynamic).
fn frame_graph() -> Graph {
    let mut p = Graph::builder();
    let broad = p.task("broad", || spin(20)).id();
    p.task("solve", || spin(30)).after(broad);
    let physics = p.build().unwrap();

    let mut b = Graph::builder();
    let input = b.task("input", || spin(10)).id();
    let ai = b
        .parallel_for(
            "ai",
            |agents: Read<Agents>| 0..agents.0.len(),
            16,
            |r: Range<usize>| spin(r.len() as u64),
        )
        .after(input)
        .id();
    let anim = b.task("anim", || spin(15)).after(ai).id();
    let audio = b.task("audio", || spin(5)).after(ai).id();
    let step = b.subgraph("physics", &physics).after([anim, audio]).id();
    b.dynamic(
        "render",
        |sp: Spawner<u64>| (0..3).for_each(|_| sp.spawn(10)),
        |us: u64| spin(us),
    )
    .after(step);
    b.build().unwrap()
}

fn traced_run(jobs: &joule_jobs::JobSystem) -> Trace {
    let graph = frame_graph();
    let mut ctx = Context::new().with(Agents(vec![0; 200]));
    graph.run(jobs, &mut ctx);
    assert!(graph.take_trace().is_none(), "tracing is off by default");
    graph.set_tracing(true);
    graph.run(jobs, &mut ctx);
    graph.run(jobs, &mut ctx);
    let trace = graph.take_trace().expect("traced run");
    graph.set_tracing(false);
    graph.run(jobs, &mut ctx);
    assert!(graph.take_trace().is_none());
    trace
}

#[test]
fn a_traced_run_records_every_task_chunk_and_child() {
    for_each_system(|jobs| {
        let trace = traced_run(jobs);
        let names: Vec<&str> = trace.graph.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "input",
                "ai",
                "anim",
                "audio",
                "physics",
                "physics/broad",
                "physics/solve",
                "physics (end)",
                "render"
            ]
        );
        // Every task ran once, on a thread of the system, and ended after it started.
        for (i, run) in trace.tasks.iter().enumerate() {
            let run = run.unwrap_or_else(|| panic!("{} did not run", names[i]));
            assert!(run.thread < jobs.num_threads() + 1, "{run:?}");
            assert!(run.end_ns >= run.start_ns);
        }
        // Each edge: the successor started after the predecessor ended.
        for (i, t) in trace.graph.tasks.iter().enumerate() {
            for &s in &t.successors {
                assert!(trace.tasks[s].unwrap().start_ns >= trace.tasks[i].unwrap().end_ns);
            }
        }
        // The chunks of `ai` tile 0..200; `render` had three children.
        let mut chunks: Vec<(usize, usize)> = trace
            .spans
            .iter()
            .filter_map(|s| match s.kind {
                SpanKind::Chunk { start, end } if s.task == 1 => Some((start, end)),
                _ => None,
            })
            .collect();
        chunks.sort_unstable();
        assert_eq!(chunks.first().unwrap().0, 0);
        assert_eq!(chunks.last().unwrap().1, 200);
        assert!(chunks.windows(2).all(|w| w[0].1 == w[1].0));
        let children = trace
            .spans
            .iter()
            .filter(|s| s.task == 8 && s.kind == SpanKind::Child)
            .count();
        assert_eq!(children, 3);
        // Spans lie within their task's run.
        for s in &trace.spans {
            let run = trace.tasks[s.task].unwrap();
            assert!(
                s.start_ns >= run.start_ns && s.end_ns <= run.end_ns,
                "{s:?} {run:?}"
            );
        }
        // The critical path follows edges and its length is the sum of its tasks' times.
        let (path, span) = trace.critical_path();
        assert!(
            path.windows(2)
                .all(|w| trace.graph.tasks[w[0]].successors.contains(&w[1]))
        );
        let sum: u64 = path
            .iter()
            .map(|&t| trace.tasks[t].unwrap().elapsed_ns())
            .sum();
        assert_eq!(span, sum);
        // input -> ai -> ... -> render is the only way through: every path has them.
        assert_eq!(path.first(), Some(&0));
        assert_eq!(path.last(), Some(&8));
        let summary = trace.summary();
        assert_eq!(summary.span_ns, span);
        assert_eq!(summary.tasks_run, 9);
        assert!(summary.work_ns > 0);
        assert!(summary.slowest.len() <= 10);
        let text = summary.to_string();
        assert!(text.contains("critical path input -> ai -> "), "{text}");
    });
}

#[test]
fn chrome_json_parses_and_lists_every_task_with_thread_start_and_duration() {
    for_each_system(|jobs| {
        let trace = traced_run(jobs);
        let json = trace.to_chrome_json();
        let root: Value = serde_json::from_str(&json).expect("valid JSON");
        let events = root["traceEvents"].as_array().expect("traceEvents");
        let threads: BTreeSet<u64> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect();
        for (i, t) in trace.graph.tasks.iter().enumerate() {
            if t.kind == TaskKind::Join {
                continue;
            }
            let run = trace.tasks[i].unwrap();
            let ev = events
                .iter()
                .find(|e| e["ph"] == "X" && e["name"] == t.name.as_str() && e["cat"] == "body")
                .unwrap_or_else(|| panic!("no event for {}", t.name));
            let tid = ev["tid"].as_u64().unwrap();
            assert_eq!(tid as usize, run.thread, "{}", t.name);
            assert!(threads.contains(&tid), "thread {tid} has no name event");
            // ts and dur are µs: they match the recorded ns to the nanosecond.
            let ts = ev["ts"].as_f64().unwrap();
            let dur = ev["dur"].as_f64().unwrap();
            assert!(
                (ts * 1000.0 - run.start_ns as f64).abs() < 0.5,
                "{ts} vs {run:?}"
            );
            assert!(dur >= 0.0);
        }
        let chunk_events = events.iter().filter(|e| e["cat"] == "chunk").count();
        let chunk_spans = trace
            .spans
            .iter()
            .filter(|s| matches!(s.kind, SpanKind::Chunk { .. }))
            .count();
        assert_eq!(chunk_events, chunk_spans);
        assert_eq!(Trace::from_chrome_json(&json).expect("read back"), trace);
    });
}

#[test]
fn reading_something_else_is_an_error() {
    let e = Trace::from_chrome_json("{\"traceEvents\": []}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "not a joule-graph trace: no `jouleGraph` metadata (was it written by joule-graph?)"
    );
    assert!(Trace::from_chrome_json("not json").is_err());
}

fn task(name: &str, kind: TaskKind, successors: Vec<usize>) -> TaskInfo {
    TaskInfo {
        name: name.into(),
        kind,
        successors,
        group: None,
    }
}

fn run(thread: usize, start_us: u64, end_us: u64) -> Option<TaskRun> {
    Some(TaskRun {
        thread,
        start_ns: start_us * 1000,
        end_ns: end_us * 1000,
    })
}

fn span(task: usize, thread: usize, kind: SpanKind, start_us: u64, end_us: u64) -> Span {
    Span {
        task,
        thread,
        kind,
        start_ns: start_us * 1000,
        end_ns: end_us * 1000,
    }
}

/// a -> (b, c) -> d. b is dynamic: its body (10..40 µs on thread 0) waited, running one
/// child inside itself (12..30), while another child ran on thread 1 (20..38) after c
/// (10..20). Worked out by hand:
/// exclusive times a 10, b body 30 - 18 = 12, b children 18 + 18, c 10, d 10: work 78 µs;
/// thread 0 busy 10 + 12 + 18 + 10 = 50, thread 1 busy 10 + 18 = 28;
/// critical path a (10) -> b (30) -> d (10) = 50 µs (via c: 30); parallelism 78 / 50.
fn hand_made() -> Trace {
    let graph = GraphInfo {
        tasks: vec![
            task("a", TaskKind::Task, vec![1, 2]),
            task("b", TaskKind::Dynamic, vec![3]),
            task("c", TaskKind::Task, vec![3]),
            task("d", TaskKind::Task, vec![]),
        ],
        groups: vec![],
    };
    Trace::new(
        graph,
        vec!["main".into(), "worker".into()],
        vec![
            run(0, 0, 10),
            run(0, 10, 40),
            run(1, 10, 20),
            run(0, 40, 50),
        ],
        vec![
            span(3, 0, SpanKind::Body, 40, 50),
            span(1, 1, SpanKind::Child, 20, 38),
            span(0, 0, SpanKind::Body, 0, 10),
            span(1, 0, SpanKind::Child, 12, 30),
            span(1, 0, SpanKind::Body, 10, 40),
            span(2, 1, SpanKind::Body, 10, 20),
        ],
    )
}

#[test]
fn summary_of_a_hand_made_trace_matches_the_hand_computation() {
    let trace = hand_made();
    assert_eq!(trace.work_per_task_ns(), [10_000, 48_000, 10_000, 10_000]);
    let s = trace.summary();
    assert_eq!(s.work_ns, 78_000);
    assert_eq!(s.span_ns, 50_000);
    assert_eq!(s.wall_ns, 50_000);
    assert_eq!(s.critical_path, ["a", "b", "d"]);
    assert!((s.parallelism - 1.56).abs() < 1e-12);
    let busy: Vec<(String, u64)> = s.busy.iter().map(|b| (b.name.clone(), b.busy_ns)).collect();
    assert_eq!(busy, [("main".into(), 50_000), ("worker".into(), 28_000)]);
    let slowest: Vec<&str> = s.slowest.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(slowest, ["b", "a", "c", "d"]);
    // Both threads work during 10..38 µs; the other 22 µs of the 50 only thread 0 does.
    assert_eq!(s.serial_ns, 22_000);
    assert_eq!(s.wait_ns, 0);
    // a and d alone; b overlaps thread 1's work during 10..38 of its 10..40; c all along.
    assert_eq!(trace.serial_per_task_ns(), [10_000, 2_000, 0, 10_000]);
    let text = s.to_string();
    assert!(
        text.contains("serial              22.0 µs   44.0% of wall"),
        "{text}"
    );
    assert!(text.contains("span                50.0 µs"), "{text}");
    assert!(text.contains("parallelism         1.56"), "{text}");
    assert!(text.contains("critical path a -> b -> d"), "{text}");
}

/// The hand-made trace, with b's body on thread 0 waiting (nothing to run) from 30 to
/// 38 µs for the child on thread 1. Worked out by hand: b's body is now 30 - 18 - 8 = 4 µs
/// of work, so work is 70 µs, thread 0 is busy 42 µs and 8 µs are waiting; thread 0 works
/// during 0..30 and 38..50, thread 1 during 10..38, so both work during 10..30 only and
/// the serial time is 50 - 20 = 30 µs.
#[test]
fn waiting_is_neither_work_nor_parallel_time() {
    let mut trace = hand_made();
    trace.spans.push(span(1, 0, SpanKind::Wait, 30, 38));
    let trace = Trace::new(trace.graph, trace.threads, trace.tasks, trace.spans);
    assert_eq!(trace.work_per_task_ns(), [10_000, 40_000, 10_000, 10_000]);
    let s = trace.summary();
    assert_eq!(s.work_ns, 70_000);
    assert_eq!(s.wait_ns, 8_000);
    assert_eq!(s.serial_ns, 30_000);
    assert_eq!(trace.serial_per_task_ns(), [10_000, 10_000, 0, 10_000]);
    let busy: Vec<u64> = s.busy.iter().map(|b| b.busy_ns).collect();
    assert_eq!(busy, [42_000, 28_000]);
    // The wait survives a round trip through Chrome JSON and is drawn as waiting.
    let back = Trace::from_chrome_json(&trace.to_chrome_json()).expect("parses");
    assert_eq!(back.summary().serial_ns, 30_000);
    assert!(trace.to_svg().contains("b waiting"), "{}", trace.to_svg());
}

#[test]
fn svg_has_a_lane_per_thread_labelled_bars_and_the_critical_path_in_red() {
    let svg = hand_made().to_svg();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<g>").count(), 6, "one group per span");
    assert_eq!(svg.matches("<g>").count(), svg.matches("</g>").count());
    assert!(svg.contains(">main</text>") && svg.contains(">worker</text>"));
    // Axis: 50 µs in 5 µs steps.
    assert!(svg.contains(">0 µs</text>") && svg.contains(">50 µs</text>"));
    // Bodies of a, b, d (critical) are red; c's is blue.
    assert_eq!(svg.matches("rx=\"2\" fill=\"#d62728\"").count(), 3);
    // b's two children are on the critical path too (lighter red).
    assert_eq!(svg.matches("rx=\"2\" fill=\"#ee7a6b\"").count(), 2);
    assert!(svg.contains("<title>c: 10.00 µs at 10.00 µs</title>"));
    let c_bar = svg.split("<title>c: ").nth(1).unwrap();
    assert!(c_bar.split("</g>").next().unwrap().contains("#4a90d9"));
}

#[test]
fn dot_shows_edges_clusters_times_and_the_critical_path() {
    let dot = hand_made().to_dot();
    assert!(dot.starts_with("digraph joule_graph {"));
    assert!(dot.contains("t0 -> t1 [color=\"#d62728\", penwidth=2.5];"));
    assert!(dot.contains("t1 -> t3 [color=\"#d62728\", penwidth=2.5];"));
    assert!(dot.contains("  t0 -> t2;\n"));
    assert!(dot.contains("t1 [label=\"b [dyn]\\n30.0 µs\""));

    let dot = frame_graph().to_dot();
    assert!(dot.contains("subgraph cluster_0 {"));
    assert!(dot.contains("label=\"physics\""));
    assert!(dot.contains("label=\"broad\""));
    assert!(dot.contains("label=\"ai [for]\""));
    // 9 tasks, edges: input->ai, ai->anim, ai->audio, anim->physics, audio->physics,
    // physics->broad, broad->solve, solve->end, end->render.
    assert_eq!(dot.matches(" -> ").count(), 9);
}

#[test]
fn the_command_line_tool_reads_a_saved_trace() {
    let jobs = joule_jobs::JobSystem::new(1).unwrap();
    let trace = traced_run(&jobs);
    let path = std::env::temp_dir().join(format!("joule-graph-trace-{}.json", std::process::id()));
    std::fs::write(&path, trace.to_chrome_json()).unwrap();
    let tool = env!("CARGO_BIN_EXE_joule-trace");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(tool)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let file = path.to_str().unwrap();
    let (code, out, _) = run(&["summary", file]);
    assert_eq!(code, Some(0));
    assert_eq!(out, trace.summary().to_string());
    let (code, out, _) = run(&["svg", file]);
    assert_eq!(code, Some(0));
    assert_eq!(out, trace.to_svg());
    let (code, out, _) = run(&["dot", file]);
    assert_eq!(code, Some(0));
    assert_eq!(out, trace.to_dot());
    let (code, _, err) = run(&["frobnicate", file]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown command `frobnicate`"));
    let (code, _, err) = run(&["summary"]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("usage: joule-trace"));
    let missing = format!("{file}.missing");
    let (code, _, err) = run(&["summary", &missing]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot read"));
    std::fs::remove_file(&path).unwrap();
}
