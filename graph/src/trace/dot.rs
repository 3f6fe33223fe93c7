//! Graphviz DOT output: tasks as boxes (parallel-fors and dynamic tasks marked), embedded
//! subgraphs as nested clusters, subgraph entries and exits as dots. With a trace, each
//! task is labelled with its elapsed time and the critical path is drawn in red.

use std::fmt::Write as _;

use super::{GraphInfo, Trace};
use crate::task::TaskKind;

/// A DOT string literal.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn node_line(graph: &GraphInfo, trace: Option<&Trace>, critical: &[bool], i: usize) -> String {
    let t = &graph.tasks[i];
    if t.kind == TaskKind::Join {
        return format!(
            "t{i} [shape=point, width=0.08, tooltip={}];",
            quoted(&t.name)
        );
    }
    let short = match t.group {
        Some(g) => t
            .name
            .strip_prefix(graph.groups[g].name.as_str())
            .and_then(|s| s.strip_prefix('/'))
            .unwrap_or(&t.name),
        None => &t.name,
    };
    let mut label = short.to_owned();
    match t.kind {
        TaskKind::ParallelFor => label.push_str(" [for]"),
        TaskKind::Dynamic => label.push_str(" [dyn]"),
        _ => {}
    }
    if let Some(run) = trace.and_then(|tr| tr.tasks.get(i).copied().flatten()) {
        let _ = write!(label, "\n{:.1} µs", run.elapsed_ns() as f64 / 1000.0);
    }
    let fill = if critical.get(i).copied().unwrap_or(false) {
        "#f4b6a8"
    } else {
        "#ffffff"
    };
    format!(
        "t{i} [label={}, tooltip={}, fillcolor=\"{fill}\"];",
        quoted(&label),
        quoted(&t.name)
    )
}

fn write_cluster(
    out: &mut String,
    graph: &GraphInfo,
    trace: Option<&Trace>,
    critical: &[bool],
    group: usize,
    depth: usize,
) {
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}subgraph cluster_{group} {{");
    let _ = writeln!(
        out,
        "{pad}  label={}; style=\"rounded,dashed\";",
        quoted(&graph.groups[group].name)
    );
    for (g, info) in graph.groups.iter().enumerate() {
        if info.parent == Some(group) {
            write_cluster(out, graph, trace, critical, g, depth + 1);
        }
    }
    for (i, t) in graph.tasks.iter().enumerate() {
        if t.group == Some(group) {
            let _ = writeln!(out, "{pad}  {}", node_line(graph, trace, critical, i));
        }
    }
    let _ = writeln!(out, "{pad}}}");
}

pub(crate) fn to_dot(graph: &GraphInfo, trace: Option<&Trace>) -> String {
    let critical = trace.map(Trace::critical_mask).unwrap_or_default();
    let (path, _) = trace.map(Trace::critical_path).unwrap_or_default();
    let mut out = String::new();
    out.push_str("digraph joule_graph {\n");
    out.push_str("  rankdir=LR;\n");
    out.push_str(
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", \
         fontname=\"Helvetica\", fontsize=10];\n",
    );
    out.push_str("  edge [color=\"#555555\"];\n");
    for (g, info) in graph.groups.iter().enumerate() {
        if info.parent.is_none() {
            write_cluster(&mut out, graph, trace, &critical, g, 1);
        }
    }
    for (i, t) in graph.tasks.iter().enumerate() {
        if t.group.is_none() {
            let _ = writeln!(out, "  {}", node_line(graph, trace, &critical, i));
        }
    }
    for (i, t) in graph.tasks.iter().enumerate() {
        for &s in &t.successors {
            let on_path = path.windows(2).any(|w| w[0] == i && w[1] == s);
            if on_path {
                let _ = writeln!(out, "  t{i} -> t{s} [color=\"#d62728\", penwidth=2.5];");
            } else {
                let _ = writeln!(out, "  t{i} -> t{s};");
            }
        }
    }
    out.push_str("}\n");
    out
}
