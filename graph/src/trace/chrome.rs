//! Chrome trace-event JSON: written by hand (a few event shapes), read back with
//! `serde_json`.
//!
//! The file is the JSON object format of the trace-event spec: `traceEvents` holds one
//! thread-name metadata event (`"ph": "M"`) per thread and one complete event
//! (`"ph": "X"`, `ts` and `dur` in µs) per span of work, named after its task, with
//! category `body`, `chunk` or `child`. Perfetto nests events of one thread by time, so a
//! body that ran other spans while it waited shows them inside it. Any other top-level key
//! is metadata to trace viewers; `jouleGraph` carries the graph (tasks, kinds, edges,
//! groups) and each task's run, which is what reading a saved trace back needs. Span
//! times also sit in `args` as integer ns so the round trip is exact.

use std::fmt::{self, Write as _};

use serde_json::Value;

use super::{GraphInfo, GroupInfo, Span, SpanKind, TaskInfo, TaskRun, Trace};
use crate::task::TaskKind;

/// Why a saved trace could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceParseError {
    message: String,
}

impl TraceParseError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a joule-graph trace: {}", self.message)
    }
}

impl std::error::Error for TraceParseError {}

/// Appends `s` as a JSON string literal.
pub(crate) fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// ns as µs with three decimals (exact).
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn opt(v: Option<usize>) -> String {
    v.map_or_else(|| "null".to_owned(), |v| v.to_string())
}

pub(crate) fn to_json(trace: &Trace) -> String {
    let mut out = String::with_capacity(256 + 160 * (trace.spans.len() + trace.tasks.len()));
    out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
    };
    for i in 0..trace.lanes().max(trace.threads.len()) {
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{i},\"args\":{{\"name\":"
        );
        push_json_str(&mut out, &trace.thread_name(i));
        out.push_str("}}");
    }
    for s in &trace.spans {
        sep(&mut out);
        let name = trace
            .graph
            .tasks
            .get(s.task)
            .map_or("?", |t| t.name.as_str());
        let cat = match s.kind {
            SpanKind::Body => "body",
            SpanKind::Chunk { .. } => "chunk",
            SpanKind::Child => "child",
            SpanKind::Wait => "wait",
        };
        out.push_str("{\"name\":");
        push_json_str(&mut out, name);
        let _ = write!(
            out,
            ",\"cat\":\"{cat}\",\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\
             \"args\":{{\"task\":{},\"start_ns\":{},\"end_ns\":{}",
            s.thread,
            us(s.start_ns),
            us(s.duration_ns()),
            s.task,
            s.start_ns,
            s.end_ns
        );
        if let SpanKind::Chunk { start, end } = s.kind {
            let _ = write!(out, ",\"first\":{start},\"end\":{end}");
        }
        out.push_str("}}");
    }
    out.push_str("\n],\n\"jouleGraph\":{\"version\":1,\"threads\":[");
    for (i, t) in trace.threads.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json_str(&mut out, t);
    }
    out.push_str("],\"groups\":[");
    for (i, g) in trace.graph.groups.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        push_json_str(&mut out, &g.name);
        let _ = write!(out, ",\"parent\":{}}}", opt(g.parent));
    }
    out.push_str("],\"tasks\":[\n");
    for (i, t) in trace.graph.tasks.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str("{\"name\":");
        push_json_str(&mut out, &t.name);
        let succ: Vec<String> = t.successors.iter().map(usize::to_string).collect();
        let _ = write!(
            out,
            ",\"kind\":\"{}\",\"group\":{},\"successors\":[{}],\"run\":",
            t.kind.as_str(),
            opt(t.group),
            succ.join(",")
        );
        match trace.tasks.get(i).copied().flatten() {
            Some(r) => {
                let _ = write!(
                    out,
                    "{{\"thread\":{},\"start_ns\":{},\"end_ns\":{}}}}}",
                    r.thread, r.start_ns, r.end_ns
                );
            }
            None => out.push_str("null}"),
        }
    }
    out.push_str("\n]}}\n");
    out
}

fn field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Value, TraceParseError> {
    v.get(key)
        .ok_or_else(|| TraceParseError::new(format!("{what} has no `{key}`")))
}

fn uint(v: &Value, key: &str, what: &str) -> Result<u64, TraceParseError> {
    field(v, key, what)?
        .as_u64()
        .ok_or_else(|| TraceParseError::new(format!("`{key}` of {what} is not an integer")))
}

fn index(v: &Value, key: &str, what: &str) -> Result<usize, TraceParseError> {
    usize::try_from(uint(v, key, what)?)
        .map_err(|_| TraceParseError::new(format!("`{key}` of {what} is too large")))
}

fn opt_index(v: &Value, key: &str, what: &str) -> Result<Option<usize>, TraceParseError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => index(v, key, what).map(Some),
    }
}

fn string(v: &Value, key: &str, what: &str) -> Result<String, TraceParseError> {
    field(v, key, what)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| TraceParseError::new(format!("`{key}` of {what} is not a string")))
}

fn array<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Vec<Value>, TraceParseError> {
    field(v, key, what)?
        .as_array()
        .ok_or_else(|| TraceParseError::new(format!("`{key}` of {what} is not an array")))
}

pub(crate) fn from_json(json: &str) -> Result<Trace, TraceParseError> {
    let root: Value =
        serde_json::from_str(json).map_err(|e| TraceParseError::new(format!("bad JSON: {e}")))?;
    let meta = root.get("jouleGraph").ok_or_else(|| {
        TraceParseError::new("no `jouleGraph` metadata (was it written by joule-graph?)")
    })?;
    let threads = array(meta, "threads", "jouleGraph")?
        .iter()
        .map(|t| {
            t.as_str()
                .map(str::to_owned)
                .ok_or_else(|| TraceParseError::new("a thread name is not a string"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut groups = Vec::new();
    for g in array(meta, "groups", "jouleGraph")? {
        groups.push(GroupInfo {
            name: string(g, "name", "a group")?,
            parent: opt_index(g, "parent", "a group")?,
        });
    }
    let mut tasks = Vec::new();
    let mut runs = Vec::new();
    let list = array(meta, "tasks", "jouleGraph")?;
    for t in list {
        let name = string(t, "name", "a task")?;
        let what = format!("task '{name}'");
        let kind = string(t, "kind", &what)?;
        let kind = TaskKind::parse(&kind)
            .ok_or_else(|| TraceParseError::new(format!("{what} has unknown kind `{kind}`")))?;
        let mut successors = Vec::new();
        for s in array(t, "successors", &what)? {
            let s = s
                .as_u64()
                .and_then(|s| usize::try_from(s).ok())
                .filter(|&s| s < list.len())
                .ok_or_else(|| TraceParseError::new(format!("{what} has a bad successor")))?;
            successors.push(s);
        }
        let run = match t.get("run") {
            None | Some(Value::Null) => None,
            Some(r) => Some(TaskRun {
                thread: index(r, "thread", &what)?,
                start_ns: uint(r, "start_ns", &what)?,
                end_ns: uint(r, "end_ns", &what)?,
            }),
        };
        runs.push(run);
        tasks.push(TaskInfo {
            name,
            kind,
            successors,
            group: opt_index(t, "group", &what)?,
        });
    }
    let mut spans = Vec::new();
    for e in array(&root, "traceEvents", "the trace")? {
        if e.get("ph").and_then(Value::as_str) != Some("X") {
            continue;
        }
        let Some(args) = e.get("args").filter(|a| a.get("task").is_some()) else {
            continue;
        };
        let task = index(args, "task", "an event")?;
        if task >= tasks.len() {
            return Err(TraceParseError::new(format!(
                "an event names task {task} of {}",
                tasks.len()
            )));
        }
        let kind = match e.get("cat").and_then(Value::as_str) {
            Some("chunk") => SpanKind::Chunk {
                start: index(args, "first", "a chunk event")?,
                end: index(args, "end", "a chunk event")?,
            },
            Some("child") => SpanKind::Child,
            Some("wait") => SpanKind::Wait,
            _ => SpanKind::Body,
        };
        spans.push(Span {
            task,
            thread: index(e, "tid", "an event")?,
            kind,
            start_ns: uint(args, "start_ns", "an event")?,
            end_ns: uint(args, "end_ns", "an event")?,
        });
    }
    Ok(Trace::new(
        GraphInfo { tasks, groups },
        threads,
        runs,
        spans,
    ))
}
